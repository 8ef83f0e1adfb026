// The trace's digest of a PadLock instruction's result: the bytes of the output span the
// unit reported (Outcome::output: XSTORE's stored bytes, XCRYPT's output or DGEST's MAC
// block, the XSHA hash words, MONTMUL's T with its spare bits) as FNV-1a 64, and the
// chaining block at EAX afterwards (Outcome::chain), so a changed result shows in a diff
// without storing the data.
#pragma once

#include "emulator/observe/trace/padlock_event.hpp"

namespace padlock::emu::trace {

// Computes ev.result and ev.iv from ev.outcome's spans and guest memory after the
// instruction.
void capture_results(PadlockEvent& ev, GuestMemory& mem);

}  // namespace padlock::emu::trace
