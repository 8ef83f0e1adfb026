#include "emulator/tools/json_value.hpp"

#include <cstdlib>

#include "emulator/observe/trace/json_text.hpp"

namespace padlock::emu::trace {

namespace {

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  bool document(JsonValue& v) {
    if (!value(v, 0)) return false;
    space();
    if (i_ != t_.size()) return fail("text after the JSON value");
    return true;
  }
  std::string error;

 private:
  static constexpr int kMaxDepth = 64;

  bool fail(const char* why) {
    error = std::string(why) + " at offset " + std::to_string(i_);
    return false;
  }
  void space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r'))
      ++i_;
  }
  bool literal(std::string_view word) {
    if (t_.substr(i_, word.size()) != word) return fail("invalid literal");
    i_ += word.size();
    return true;
  }
  bool value(JsonValue& v, int depth) {
    if (depth > kMaxDepth) return fail("nested too deeply");
    space();
    if (i_ >= t_.size()) return fail("unexpected end");
    const char c = t_[i_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v.type = JsonValue::Type::String;
      return string(v.text);
    }
    if (c == 't' || c == 'f') {
      v.type = JsonValue::Type::Bool;
      v.boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      v.type = JsonValue::Type::Null;
      return literal("null");
    }
    return number(v);
  }
  bool number(JsonValue& v) {
    const size_t start = i_;
    if (i_ < t_.size() && t_[i_] == '-') ++i_;
    size_t digits = 0;
    auto run = [&] {
      while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') ++i_, ++digits;
    };
    run();
    if (digits == 0) return fail("invalid value");
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      digits = 0;
      run();
      if (digits == 0) return fail("invalid number");
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      digits = 0;
      run();
      if (digits == 0) return fail("invalid number");
    }
    v.type = JsonValue::Type::Number;
    v.text = std::string(t_.substr(start, i_ - start));
    return true;
  }
  bool hex4(unsigned& cp) {
    if (i_ + 4 > t_.size()) return fail("short \\u escape");
    cp = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = t_[i_++];
      cp <<= 4;
      if (h >= '0' && h <= '9')
        cp |= h - '0';
      else if (h >= 'a' && h <= 'f')
        cp |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F')
        cp |= h - 'A' + 10;
      else
        return fail("bad \\u escape");
    }
    return true;
  }
  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | cp >> 6);
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | cp >> 12);
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | cp >> 18);
      out += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  bool string(std::string& out) {
    ++i_;  // opening quote
    out.clear();
    while (i_ < t_.size()) {
      const char c = t_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= t_.size()) break;
      const char e = t_[i_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && t_.substr(i_, 2) == "\\u") {
            i_ += 2;
            unsigned lo = 0;
            if (!hex4(lo)) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default:
          return fail("bad escape");
      }
    }
    return fail("unterminated string");
  }
  bool array(JsonValue& v, int depth) {
    v.type = JsonValue::Type::Array;
    ++i_;
    space();
    if (i_ < t_.size() && t_[i_] == ']') {
      ++i_;
      return true;
    }
    for (;;) {
      v.items.emplace_back();
      if (!value(v.items.back(), depth + 1)) return false;
      space();
      if (i_ < t_.size() && t_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < t_.size() && t_[i_] == ']') {
        ++i_;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }
  bool object(JsonValue& v, int depth) {
    v.type = JsonValue::Type::Object;
    ++i_;
    space();
    if (i_ < t_.size() && t_[i_] == '}') {
      ++i_;
      return true;
    }
    for (;;) {
      space();
      if (i_ >= t_.size() || t_[i_] != '"') return fail("expected a member name");
      std::string key;
      if (!string(key)) return false;
      space();
      if (i_ >= t_.size() || t_[i_] != ':') return fail("expected ':'");
      ++i_;
      v.members.emplace_back(std::move(key), JsonValue{});
      if (!value(v.members.back().second, depth + 1)) return false;
      space();
      if (i_ < t_.size() && t_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < t_.size() && t_[i_] == '}') {
        ++i_;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  std::string_view t_;
  size_t i_ = 0;
};

void dump_to(const JsonValue& v, std::string& out) {
  switch (v.type) {
    case JsonValue::Type::Null:
      out += "null";
      break;
    case JsonValue::Type::Bool:
      out += v.boolean ? "true" : "false";
      break;
    case JsonValue::Type::Number:
      out += v.text;
      break;
    case JsonValue::Type::String:
      json_string(out, v.text);
      break;
    case JsonValue::Type::Array:
      out += '[';
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i > 0) out += ',';
        dump_to(v.items[i], out);
      }
      out += ']';
      break;
    case JsonValue::Type::Object:
      out += '{';
      for (size_t i = 0; i < v.members.size(); ++i) {
        if (i > 0) out += ',';
        json_string(out, v.members[i].first);
        out += ':';
        dump_to(v.members[i].second, out);
      }
      out += '}';
      break;
  }
}

}  // namespace

const JsonValue* JsonValue::get(std::string_view key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

uint64_t JsonValue::u64(std::string_view key, uint64_t fallback) const {
  const JsonValue* v = get(key);
  if (v == nullptr || v->type != Type::Number) return fallback;
  return std::strtoull(v->text.c_str(), nullptr, 10);
}

std::string JsonValue::str(std::string_view key) const {
  const JsonValue* v = get(key);
  return v != nullptr && v->type == Type::String ? v->text : std::string();
}

bool JsonValue::flag(std::string_view key) const {
  const JsonValue* v = get(key);
  return v != nullptr && v->type == Type::Bool && v->boolean;
}

std::string JsonValue::dump() const {
  std::string out;
  dump_to(*this, out);
  return out;
}

bool JsonValue::operator==(const JsonValue& o) const {
  return type == o.type && boolean == o.boolean && text == o.text && items == o.items &&
         members == o.members;
}

bool parse_json(std::string_view text, JsonValue& out, std::string& error) {
  Parser p(text);
  out = JsonValue{};
  if (p.document(out)) return true;
  error = p.error;
  return false;
}

}  // namespace padlock::emu::trace
