// Reading a --trace file back: the run line, the instruction lines, the end line, each as
// nlohmann-json's ordered_json (members in file order, 64-bit integers exact).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace padlock::emu::trace {

using Record = nlohmann::ordered_json;

struct TraceFile {
  std::string path;
  Record run;                 // "type":"run" (null if missing)
  std::vector<Record> insns;  // "type":"insn", in file order
  Record end;                 // "type":"end" (null if the run did not finish)
};

// A record's members as the tools read them: an absent member or one of another type
// reads as 0, "" or false, as the trace format lets a member be left out (docs/profiling.md,
// "--trace").
uint64_t u64(const Record& r, std::string_view key);
std::string str(const Record& r, std::string_view key);
bool flag(const Record& r, std::string_view key);
// A record's member or nullptr.
const Record* member(const Record& r, std::string_view key);

// One line of a trace: false with a reason (nlohmann-json's, or "nested too deeply") when it
// is not one JSON object.
bool parse_record(std::string_view line, Record& out, std::string& error);

// false with a one-line reason (path:line: what) when the file cannot be read or a line
// is not a trace record.
bool read_trace(const std::string& path, TraceFile& out, std::string& error);

}  // namespace padlock::emu::trace
