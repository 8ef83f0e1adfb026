// Where each PadLock instruction leaves its result in memory, for the trace's digest:
//   XSTORE, REP XSTORE  the bytes stored: [EDI before, EDI after)            (§2.1)
//   REP XCRYPT*         the output: [EDI before, EDI after); in digest mode EDI does
//                       not move and the 16-byte MAC block at EDI is the result (§3.1)
//   REP XSHA1/256       the hash words at EDI: 20 / 32 bytes                  (§4.1)
//   REP MONTMUL         T (context word 3) with its 128 spare bits: ECX/8 + 16 (§5.1)
#pragma once

#include "emulator/trace/padlock_event.hpp"

namespace padlock::emu::trace {

// Also the chaining block at EAX of REP XCRYPTCBC/CFB/OFB/CTR (ev.iv).
//
// Computes ev.result and ev.iv from ev (registers, outcome) and guest memory after the
// instruction.
void capture_results(PadlockEvent& ev, GuestMemory& mem);

}  // namespace padlock::emu::trace
