#include "emulator/tools/trace_file.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>

namespace padlock::emu::trace {

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
    JsonValue v;
    std::string why;
    if (!parse_json(line, v, why)) {
      error = path + ":" + std::to_string(n) + ": " + why;
      return false;
    }
    const std::string type = v.type == JsonValue::Type::Object ? v.str("type") : "";
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
  if (out.run.type == JsonValue::Type::Null) {
    error = path + ": no run record (not a padlock-emu --trace file?)";
    return false;
  }
  return true;
}

}  // namespace padlock::emu::trace
