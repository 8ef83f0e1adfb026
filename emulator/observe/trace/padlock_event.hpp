// One executed PadLock instruction as the trace, the Chrome trace and the profiler see
// it: what went in, what came out, what it cost. Filled by RunObservers around the
// model's execute(); plain data, no formatting.
#pragma once

#include <cstdint>

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
};

}  // namespace padlock::emu::trace
