#include "emulator/trace_reader/trace_file.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>

namespace padlock::emu::trace {

namespace {

// Our records nest three levels; the limit keeps a hostile line from costing deep
// recursion when a record is printed (trace diff) or compared.
constexpr int kMaxDepth = 64;

}  // namespace

const Record* member(const Record& r, std::string_view key) {
  if (!r.is_object()) return nullptr;
  const auto it = r.find(key);
  return it == r.end() ? nullptr : &*it;
}

uint64_t u64(const Record& r, std::string_view key) {
  const Record* m = member(r, key);
  return m != nullptr && m->is_number_unsigned() ? m->get<uint64_t>() : 0;
}

std::string str(const Record& r, std::string_view key) {
  const Record* m = member(r, key);
  return m != nullptr && m->is_string() ? m->get<std::string>() : std::string();
}

bool flag(const Record& r, std::string_view key) {
  const Record* m = member(r, key);
  return m != nullptr && m->is_boolean() && m->get<bool>();
}

bool parse_record(std::string_view line, Record& out, std::string& error) {
  bool too_deep = false;
  const Record::parser_callback_t depth = [&](int d, Record::parse_event_t, Record&) {
    if (d > kMaxDepth) too_deep = true;
    return !too_deep;
  };
  try {
    out = Record::parse(line, depth);
  } catch (const Record::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 5: ...": the part
    // after the library's tag. A number too large for a double ("1e874") is the library's
    // out_of_range.406, not a parse_error: catch their common base.
    const std::string_view what = e.what();
    const size_t tag = what.find("] ");
    error = std::string(tag == std::string_view::npos ? what : what.substr(tag + 2));
    return false;
  }
  if (too_deep) {
    error = "nested too deeply (more than " + std::to_string(kMaxDepth) + " levels)";
    return false;
  }
  return true;
}

bool read_trace(const std::string& path, TraceFile& out, std::string& error) {
  out = TraceFile{};
  out.path = path;
  // zlib reads a .gz trace (--trace t.jsonl.gz) and a plain one alike.
  gzFile in = gzopen(path.c_str(), "rb");
  if (in == nullptr) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  struct Closer {
    gzFile f;
    ~Closer() { gzclose(f); }
  } closer{in};
  std::string line;
  size_t n = 0;
  char buf[8192];
  auto next_line = [&]() {
    line.clear();
    while (gzgets(in, buf, sizeof buf) != nullptr) {
      line += buf;
      if (!line.empty() && line.back() == '\n') {
        line.pop_back();
        return true;
      }
    }
    return !line.empty();
  };
  while (next_line()) {
    ++n;
    if (line.empty()) continue;
    // --chrome-trace writes Trace Event JSON, one object whose first line holds its
    // "traceEvents" key: a user who mixes up the two files gets told so.
    if (n == 1 && line.find("\"traceEvents\"") != std::string::npos) {
      error = path +
              ": a Chrome trace (--chrome-trace), not a --trace file (JSON Lines); open it "
              "in Perfetto or chrome://tracing";
      return false;
    }
    Record v;
    std::string why;
    if (!parse_record(line, v, why)) {
      error = path + ":" + std::to_string(n) + ": " + why;
      return false;
    }
    const std::string type = str(v, "type");
    if (type == "insn") {
      out.insns.push_back(std::move(v));
    } else if (type == "run") {
      out.run = std::move(v);
    } else if (type == "end") {
      out.end = std::move(v);
    } else {
      error = path + ":" + std::to_string(n) + ": not a padlock-emu trace record";
      return false;
    }
  }
  if (out.run.is_null()) {
    error = path + ": no run record (not a padlock-emu --trace file?)";
    return false;
  }
  return true;
}

}  // namespace padlock::emu::trace
