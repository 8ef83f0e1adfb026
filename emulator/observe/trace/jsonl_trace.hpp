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

// A cap on a trace file's size (--trace-max): records that would pass it are left out,
// from the first one on, and the closing text always fits (it is reserved).
class SizeCap {
 public:
  static constexpr uint64_t kReserve = 512;  // the end record or the closing event
  explicit SizeCap(uint64_t max_bytes) : max_(max_bytes) {}
  // Counts `n` bytes about to be written; false (and from then on always) when they
  // would pass the cap.
  bool take(size_t n) {
    if (full_ || (max_ != 0 && written_ + n + kReserve > max_)) {
      full_ = true;
      ++dropped_;
      return false;
    }
    written_ += n;
    return true;
  }
  void take_always(size_t n) { written_ += n; }
  void left_out() { ++dropped_; }  // a record not even formatted once the cap is reached
  bool full() const { return full_; }
  uint64_t dropped() const { return dropped_; }

 private:
  uint64_t max_;
  uint64_t written_ = 0;
  uint64_t dropped_ = 0;
  bool full_ = false;
};

class JsonlTrace {
 public:
  JsonlTrace(FILE* out, const RunInfo& run, uint64_t max_bytes = 0);
  // False when --trace-max left the record out.
  bool record(const PadlockEvent& ev, const std::string& fn);
  void end(const RunEnd& e, uint64_t instructions, uint64_t padlock_cycles);
  const SizeCap& cap() const { return cap_; }
  SizeCap& cap() { return cap_; }

 private:
  FILE* out_;
  RunInfo run_;
  std::string line_;
  SizeCap cap_;
};

// Names used in the trace (and by `trace summary`): "completed", "interrupted", "faulted";
// ACE modes "ecb".."ofb". Fault kinds: fault_name() (models/unit_interface.hpp).
const char* status_name(Status s);
// The run's settings as JSON members "cpu", "mhz", "seed", "errata", in that order (the
// run line of --trace, the otherData of --chrome-trace).
void json_run_settings(std::string& out, const RunInfo& run);
const char* xcrypt_mode(isa::InsnId id);

}  // namespace padlock::emu::trace
