// `padlock-emu trace summary FILE`: PadLock instructions per kind and per function,
// with bytes, cycles and their share, key reloads, interruptions, faults, restarts and
// diagnostics, and the modelled time at the run's clock.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "emulator/trace_reader/trace_file.hpp"

namespace padlock::emu::trace {

struct KindTotals {
  uint64_t count = 0, bytes = 0, cycles = 0, reloads = 0, interrupted = 0, faulted = 0,
           restarted = 0;
  void add(const Record& insn);
};

struct TraceSummary {
  std::map<std::string, KindTotals> by_kind;                              // "REP XSHA1" -> totals
  std::map<std::pair<std::string, std::string>, KindTotals> by_function;  // (fn, kind)
  std::map<std::string, uint64_t> diagnostics;
  KindTotals total;
};

TraceSummary summarize(const TraceFile& t);
void print_summary(FILE* out, const TraceFile& t, const TraceSummary& s);

}  // namespace padlock::emu::trace
