// Small helpers that append JSON text to a reused std::string (the trace writers build
// each line or event in one buffer and write it with one fwrite).
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace padlock::emu::trace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0.
inline size_t utf8_length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n;
  unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
  }
  return n;
}

// A JSON string. Bytes that are not UTF-8 (a program name from a Latin-1 file system)
// become U+FFFD, so the file stays valid JSON (RFC 8259 §8.1 asks for UTF-8).
inline void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const char ch = s[i];
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else if (c >= 0x80) {
      const size_t n = utf8_length(s, i);
      if (n == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    } else {
      out += ch;
    }
    ++i;
  }
  out += '"';
}

inline void json_key(std::string& out, std::string_view key) {
  if (!out.empty() && out.back() != '{' && out.back() != '[') out += ',';
  json_string(out, key);
  out += ':';
}

inline void json_u64(std::string& out, uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%" PRIu64, v);
  out += buf;
}

inline void json_i64(std::string& out, int64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%" PRId64, v);
  out += buf;
}

// "0x" and `digits` hex digits (addresses and registers as strings: JSON numbers lose
// precision above 2^53 in most readers).
inline void json_hex(std::string& out, uint64_t v, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "\"0x%0*" PRIx64 "\"", digits, v);
  out += buf;
}

// 17 significant digits: the text reads back as the same double.
inline void json_f64(std::string& out, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  out += buf;
}

inline void json_bool(std::string& out, bool v) {
  out += v ? "true" : "false";
}

// Microseconds with a fixed number of decimals: deterministic text for the same cycles.
inline void json_micros(std::string& out, uint64_t cycles, double mhz) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(cycles) / mhz);
  out += buf;
}

}  // namespace padlock::emu::trace
