// `padlock-emu trace diff A B`: the first instruction whose results or cycles differ.
// Records are compared in order, field by field (nested fields by dotted path, e.g.
// "out.ecx", "cw.rounds", "result.fnv1a64"); "seq" and the per-record "cpu" are not
// compared (the run line carries the CPU model and is compared on its own).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "emulator/trace_reader/trace_file.hpp"

namespace padlock::emu::trace {

struct FieldDiff {
  std::string path;  // dotted
  std::string a, b;  // JSON text; "(absent)" when missing
};

struct TraceDiff {
  std::vector<FieldDiff> run;  // differences in the run line
  bool insn_differs = false;
  size_t index = 0;               // first differing instruction (0-based) when insn_differs
  std::vector<FieldDiff> fields;  // its differing fields
  size_t differing = 0;           // instruction records that differ (of the common prefix)
  size_t count_a = 0, count_b = 0;
  std::vector<FieldDiff> end;  // differences in the end line

  bool same() const { return run.empty() && !insn_differs && count_a == count_b && end.empty(); }
};

// `ignore`: dotted paths (or their prefixes) not to compare, e.g. {"pc", "in", "out"} to
// compare builds of a program whose addresses differ.
TraceDiff diff_traces(const TraceFile& a, const TraceFile& b,
                      const std::vector<std::string>& ignore = {});

// The report `trace diff` prints.
void print_diff(FILE* out, const TraceFile& a, const TraceFile& b, const TraceDiff& d);

}  // namespace padlock::emu::trace
