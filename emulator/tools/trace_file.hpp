// Reading a --trace file back: the run line, the instruction lines, the end line.
#pragma once

#include <string>
#include <vector>

#include "emulator/tools/json_value.hpp"

namespace padlock::emu::trace {

struct TraceFile {
  std::string path;
  JsonValue run;                 // "type":"run" (Null if missing)
  std::vector<JsonValue> insns;  // "type":"insn", in file order
  JsonValue end;                 // "type":"end" (Null if the run did not finish)
};

// false with a one-line reason (path:line: what) when the file cannot be read or a line
// is not a trace record.
bool read_trace(const std::string& path, TraceFile& out, std::string& error);

}  // namespace padlock::emu::trace
