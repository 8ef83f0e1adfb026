// --trace FILE: one JSON object per line (JSON Lines). The first line describes the run
// ("type":"run"), then one line per PadLock instruction ("type":"insn"), then one line at
// exit ("type":"end"). Keys come in a fixed order and values hold no host addresses or
// wall-clock times, so two runs with the same inputs and --seed give identical files and
// a plain diff shows what changed. The schema is traces/README.md.
#pragma once

#include <cstdio>
#include <string>

#include "emulator/observe/trace/padlock_event.hpp"
#include "emulator/observe/trace/run_info.hpp"

namespace padlock::emu::trace {

inline constexpr int kTraceSchema = 1;

class JsonlTrace {
 public:
  JsonlTrace(FILE* out, const RunInfo& run);
  void record(const PadlockEvent& ev, const std::string& fn);
  void end(const RunEnd& e, uint64_t instructions, uint64_t padlock_cycles);

 private:
  FILE* out_;
  RunInfo run_;
  std::string line_;
};

// Names used in the trace (and by `trace summary`): "completed", "interrupted", "faulted";
// ACE modes "ecb".."ofb". Fault kinds: fault_name() (models/unit_interface.hpp).
const char* status_name(Status s);
// The run's settings as JSON members "cpu", "mhz", "seed", "errata", in that order (the
// run line of --trace, the otherData of --chrome-trace).
void json_run_settings(std::string& out, const RunInfo& run);
const char* xcrypt_mode(isa::InsnId id);

}  // namespace padlock::emu::trace
