// PadLock instructions reach UC_HOOK_INSN_INVALID because QEMU's translator has no case
// for 0F A6 / 0F A7. The hook gets no opcode and no length: decode at the PC, run the
// model, write the registers back and move the PC. Any other invalid opcode is SIGILL.
#include <signal.h>

#include <algorithm>

#include "emulator/padlock_call.hpp"
#include "emulator/process.hpp"
#include "emulator/trace/run_observers.hpp"

namespace padlock::emu {

// Timing of one PadLock instruction (issue #4, docs/timing.md). The model's clocks assume
// everything in L1 and no store-buffer stalls (§3.3); the data stream's cost from the cache
// model is added to both the SSE-visible and the integer-visible clocks (the integer
// pipeline "slips and stalls into step with ACE"). Integer code continues after
// int_cycles; ACE is busy until cycles (§3.3 overlap).
void Process::charge_padlock(const isa::Decoded& d, const uint64_t before[8], Outcome& o) {
  timing::MemCost mc;
  const uint64_t esi = before[static_cast<int>(Gpr::SI)];
  const uint64_t edi = before[static_cast<int>(Gpr::DI)];
  switch (d.id) {
    case isa::InsnId::XcryptEcb:
    case isa::InsnId::XcryptCbc:
    case isa::InsnId::XcryptCtr:
    case isa::InsnId::XcryptCfb:
    case isa::InsnId::XcryptOfb:
      if (o.bytes > 0) mc = cache_->stream(esi, o.bytes, edi, o.bytes);
      break;
    case isa::InsnId::Xsha1:
    case isa::InsnId::Xsha256:
      if (o.bytes > 0) mc = cache_->stream(esi, o.bytes, 0, 0);
      break;
    default:
      break;
  }
  const double total = cache_->combine(static_cast<double>(o.cycles), mc);
  const uint64_t extra =
      total > static_cast<double>(o.cycles) ? static_cast<uint64_t>(total - o.cycles + 0.5) : 0;
  o.cycles += extra;
  o.int_cycles += extra;
  stats_.cache_cycles += extra;
  const uint64_t start = vt_->now();
  vt_->set_sse_ready(std::max(vt_->sse_ready(), start + o.cycles));
  vt_->advance(o.int_cycles);
}

bool Process::on_invalid_insn() {
  drain_block_log();
  PadlockCall c;
  if (!begin_padlock_call(*cpu_, *mem_, guest64_, eflags30_, c)) {
    fault_ = GuestSiginfo{};
    fault_.signo = SIGILL;
    fault_.code = kIllIllopn;
    fault_.addr = c.pc;
    fault_.trapno = 6;
    fault_pending_ = true;
    request_stop();
    return true;  // handled by us: the run loop delivers SIGILL with the PC unchanged
  }
  const isa::Decoded& d = c.decoded;
  const uint64_t pc = c.pc;
  ArchState& s = c.state;
  ExecEnv env;
  // §3.3 overlap: a PadLock instruction waits until ACE (and the SSE unit) is free.
  if (opts_.timing) vt_->wait_for_sse();
  env.now = now();
  // Interrupt model (--irq-hz): a REP instruction stops at its next interruptible point
  // after the pending interrupt's cycle (§1.7, §6.6) and resumes after it.
  if (opts_.timing) env.interrupt_at = vt_->next_irq();
  env.mhz = mhz_;
  env.pc = pc;
  env.diag = diag_.get();
  if (obs_) obs_->before_padlock(d, s, *mem_, pc, env.now);
  Outcome o = padlock_->execute(d, s, *mem_, env);
  if (opts_.timing) {
    charge_padlock(d, c.before, o);
  } else {
    vt_->advance(o.cycles);
  }
  if (d.id != isa::InsnId::Count) stats_.record(d.id, o);
  if (obs_) obs_->after_padlock(s, o, *mem_, now());
  if (opts_.timing && vt_->now() >= vt_->next_event()) time_events();
  finish_padlock_call(*cpu_, c);

  // §1.8: REP XCRYPT sets EFLAGS[30] (after loading the key), REP XSHA clears it; the
  // models report the new value in s.eflags.
  if (s.eflags30()) {
    eflags30_ = true;
    if (!block_hook_on_) {
      // From now on PUSHF must be seen: install the block hook (once per run).
      want_block_hook_ = true;
      request_stop();
    }
  } else {
    clear_eflags30();
  }

  switch (o.status) {
    case Status::Completed:
      cpu_->set_pc(pc + d.length);
      break;
    case Status::Interrupted:
      // §1.7: the instruction resumes from the updated registers; taking the interrupt
      // stores EFLAGS, which clears bit 30.
      clear_eflags30();
      break;
    case Status::Faulted: {
      clear_eflags30();  // the exception stores EFLAGS (§1.8)
      const FaultSignal f = padlock_fault_signal(o.fault, *mem_, pc);
      fault_ = GuestSiginfo{};
      fault_.signo = f.signo;
      fault_.code = f.code;
      fault_.addr = f.addr;
      fault_.trapno = f.trapno;
      fault_.error_code = f.error_code;
      fault_pending_ = true;
      request_stop();
      break;
    }
  }
  return true;
}

}  // namespace padlock::emu
