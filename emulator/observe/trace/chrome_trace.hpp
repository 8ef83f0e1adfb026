// --chrome-trace FILE: the Trace Event Format (JSON object form, "traceEvents") that
// Perfetto and chrome://tracing load. The time axis is virtual time: cycles / --mhz, in
// microseconds. Events:
//   "X" (complete) for each PadLock instruction (cat "padlock") and each system call
//       (cat "syscall"), on the guest's one thread;
//   "C" (counter) after each PadLock instruction: "padlock cycles" and "padlock bytes",
//       cumulative, one series per unit (RNG, ACE, PHE, PMM);
//   "M" (metadata) naming the process and thread.
// pid and tid are 1: no host process ids, so the file is reproducible.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "emulator/observe/trace/jsonl_trace.hpp"
#include "emulator/observe/trace/padlock_event.hpp"
#include "emulator/observe/trace/run_info.hpp"

namespace padlock::emu::trace {

class ChromeTrace {
 public:
  ChromeTrace(FILE* out, const RunInfo& run, uint64_t max_bytes = 0);
  void padlock(const PadlockEvent& ev, const std::string& fn);
  void syscall(const char* name, uint64_t nr, int64_t result, uint64_t t0, uint64_t t1);
  // Closes the JSON document.
  void finish(const RunEnd& e);
  const SizeCap& cap() const { return cap_; }
  SizeCap& cap() { return cap_; }

 private:
  void event_begin(const char* name, const char* cat, const char* ph, uint64_t ts);
  void emit();  // the event in ev_, unless the cap is reached

  FILE* out_;
  RunInfo run_;
  std::string ev_;
  bool first_ = true;
  uint64_t unit_cycles_[isa::kUnitCount] = {}, unit_bytes_[isa::kUnitCount] = {};
  SizeCap cap_;
  bool closing_ = false;  // finish(): the reserved room
};

}  // namespace padlock::emu::trace
