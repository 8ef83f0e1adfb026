#include "emulator/tools/trace_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace padlock::emu::trace {

bool read_trace(const std::string& path, TraceFile& out, std::string& error) {
  out = TraceFile{};
  out.path = path;
  std::ifstream in(path);
  if (!in) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
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
