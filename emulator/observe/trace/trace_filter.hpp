// Which PadLock instructions and system calls the trace files keep
// (RunOptions::TraceSelection): kinds, PC ranges and functions, a virtual-time window.
// One test per record, before the record is formatted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/options/run_options.hpp"
#include "isa/instruction_table.hpp"

namespace padlock::emu::trace {

class TraceFilter {
 public:
  TraceFilter(const RunOptions::TraceSelection& sel, double mhz);

  bool padlock(isa::InsnId id, uint64_t pc, const std::string& fn, uint64_t cycle) const;
  bool syscall(uint64_t t0) const { return syscalls_ && in_window(t0); }

 private:
  bool in_window(uint64_t cycle) const { return cycle >= from_ && cycle < to_; }

  uint32_t insn_mask_;
  bool syscalls_;
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;
  std::vector<std::string> functions_;
  uint64_t from_ = 0, to_ = UINT64_MAX;
};

// --trace-insn: comma-separated unit names (rng, ace, phe, pmm), instruction names with
// or without REP, spaces or dashes (xcryptcbc, "REP XSHA1", xstore: XSTORE and REP
// XSTORE) and "syscall". Sets `mask` (bits by InsnId) and `syscalls`; false with `error`
// naming the unknown word and the known ones.
bool parse_trace_kinds(const std::string& list, uint32_t& mask, bool& syscalls, std::string& error);

}  // namespace padlock::emu::trace
