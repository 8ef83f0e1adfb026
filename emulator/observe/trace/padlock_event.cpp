#include "emulator/observe/trace/padlock_event.hpp"

#include <cstring>

namespace padlock::emu::trace {

PadlockEvent& EventBuilder::build(const PadlockRecord& r) {
  PadlockEvent& ev = ev_;
  ev = PadlockEvent{};
  ev.seq = seq_++;
  ev.cycle = r.start;
  ev.end = r.end;
  ev.pc = r.pc;
  ev.d = r.decoded;
  ev.guest64 = guest64_;
  std::memcpy(ev.in, r.before.gpr, sizeof ev.in);
  std::memcpy(ev.out, r.after.gpr, sizeof ev.out);
  ev.eflags30_in = r.before.eflags30();
  ev.eflags30_out = r.after.eflags30();
  ev.outcome = r.outcome;
  ev.restarted = have_prev_ && prev_pc_ == r.pc && prev_status_ != Status::Completed;
  have_prev_ = true;
  prev_pc_ = r.pc;
  prev_status_ = r.outcome.status;
  padlock_cycles_ += r.outcome.cycles;
  return ev;
}

}  // namespace padlock::emu::trace
