// One executed PadLock instruction as every observer sees it: the --trace and
// --chrome-trace writers, the profiler, --stats and the checker. The execution core
// (emulator/exec/core.hpp) fills it once; observers only read it.
#pragma once

#include <cstdint>

#include "isa/decoder.hpp"
#include "models/unit_interface.hpp"

namespace padlock::emu {

struct PadlockRecord {
  uint64_t pc = 0;
  isa::Decoded decoded;
  ArchState before;    // the registers and EFLAGS[30] the model read
  ArchState after;     // as the guest sees them next (EFLAGS[30] after §1.8's rules)
  Outcome outcome;     // what the unit did; cycles include the memory-side stalls
  uint64_t start = 0;  // clock when the instruction started (after waiting for ACE, §3.3)
  uint64_t end = 0;    // clock after it (integer-visible clocks charged)
};

class PadlockListener {
 public:
  virtual ~PadlockListener() = default;
  // After the model ran; `mem` holds its results.
  virtual void on_padlock(const PadlockRecord& r, GuestMemory& mem) = 0;
};

}  // namespace padlock::emu
