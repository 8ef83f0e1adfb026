// One executed PadLock instruction as the trace, the Chrome trace and the profiler see
// it: what went in, what came out, what it cost. Filled by an EventBuilder from the
// execution core's record (user mode's RunObservers, system mode's observers); plain data,
// no formatting.
#pragma once

#include <cstdint>

#include "emulator/observe/padlock_record.hpp"
#include "isa/decoder.hpp"
#include "models/diagnostics.hpp"
#include "models/unit_interface.hpp"

namespace padlock::emu::trace {

// The output the instruction left in memory, as a digest, so a changed result shows in a
// diff without storing the data (Outcome::output, result_digest.hpp).
struct ResultDigest {
  bool valid = false;  // false: no output region, or not readable
  uint64_t addr = 0, len = 0;
  uint64_t fnv1a64 = 0;
};

struct PadlockEvent {
  uint64_t seq = 0;    // 0, 1, 2 ... in execution order
  uint64_t cycle = 0;  // virtual time when it started (ExecEnv.now)
  uint64_t end = 0;    // virtual time after it
  uint64_t pc = 0;
  isa::Decoded d;
  bool guest64 = false;
  uint64_t in[8] = {}, out[8] = {};  // GPRs by Gpr index, before and after
  bool eflags30_in = false, eflags30_out = false;
  Outcome outcome;         // the unit's report: cycles, spans, control word used, diagnostics
  bool restarted = false;  // the previous PadLock instruction at this PC was interrupted or
                           // faulted, so this execution resumes it (§1.7)
  ResultDigest result;
  // REP XCRYPT in a chaining mode: the 16 bytes at EAX afterwards (the IV or counter the
  // next instruction continues from; §3.1: CBC/CFB encryption move EAX, CBC decryption,
  // OFB and CTR update the memory at EAX).
  bool has_iv = false;
  uint8_t iv[16] = {};
  uint32_t fn = 0;  // profile::ObjectMap function id of the PC
  // The guest thread that ran it, by creation order (0: the first), once the process has
  // created a thread (docs/emulator.md, "Threads"); -1 before.
  int thread = -1;
};

// Turns the execution core's records into events, in order: the sequence number, the
// registers and the §1.7 resumption of an interrupted or faulted instruction at the same PC.
class EventBuilder {
 public:
  explicit EventBuilder(bool guest64) : guest64_(guest64) {}
  // The event of `r`, valid until the next call (no result digest: capture_results).
  PadlockEvent& build(const PadlockRecord& r);
  uint64_t count() const { return seq_; }
  uint64_t padlock_cycles() const { return padlock_cycles_; }

 private:
  bool guest64_;
  PadlockEvent ev_;
  uint64_t seq_ = 0;
  uint64_t padlock_cycles_ = 0;
  bool have_prev_ = false;
  uint64_t prev_pc_ = 0;
  Status prev_status_ = Status::Completed;
};

}  // namespace padlock::emu::trace
