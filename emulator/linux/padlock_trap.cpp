// PadLock instructions: our Unicorn patch (UC_CTL_PADLOCK_INSN) has the translator end a
// block at 0F A6 / 0F A7 and call on_padlock_insn from generated code, with the state
// precise there; without it they reach UC_HOOK_INSN_INVALID, as QEMU's translator has no
// case for them. Neither gets the length: the trap host shared with the harness
// (emulator/exec/padlock_call.hpp) decodes at the PC, runs the execution core and
// writes the registers back; this gives the PC to go on at.
// What is the Process's own: the EFLAGS[30] shadow and the block hook it needs, the
// periodic interrupts of the virtual clock, and faults as Linux signals. Any other invalid
// opcode is SIGILL.
#include <signal.h>

#include <cstdio>

#include "emulator/exec/padlock_call.hpp"
#include "emulator/linux/gdb_session.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/signal/exception_signals.hpp"

namespace padlock::emu {

bool Process::on_invalid_insn() {
  const uint64_t pc = cpu_->pc();
  if (undefined_opcode_signal(pc)) return true;
  const uint64_t next = padlock_insn();
  if (next != pc) cpu_->set_pc(next);
  return true;
}

uint64_t Process::padlock_insn(const uc_padlock_state* at) {
  drain_block_log();
  // Interrupt model (--irq-hz): a REP instruction stops at its next interruptible point
  // after the pending interrupt's cycle (§1.7, §6.6) and resumes after it.
  const uint64_t irq = opts_.timing ? vt_->next_irq() : VirtualTime::kNever;
  PadlockCall& c = padlock_call_;
  const PadlockRecord* ran = trap_->run(c, at, eflags30_, irq);
  if (ran == nullptr) {
    fault_ = GuestSiginfo{};
    if (c.decoded.cut_short) {
      // The ModRM byte (or the opcode's rest) lies on a page that cannot be fetched: the
      // chip's fetch faults there, #PF with the page's first byte, as a translated fetch.
      const uint64_t at_page =
          c.pc + mem_->accessible_with(c.pc, isa::kMaxInsnLength, kPageMapped | kPageExec);
      const bool mapped = (mem_->flags(at_page) & kPageMapped) != 0;
      fault_.signo = SIGSEGV;
      fault_.code = mapped ? kSegvAccerr : kSegvMaperr;
      fault_.addr = at_page;
      fault_.trapno = 14;
      fault_.error_code = page_fault_error_code(false, mapped, true);
      fault_pending_ = true;
      request_stop();
      return c.pc;
    }
    fault_.signo = SIGILL;
    fault_.code = kIllIllopn;
    fault_.addr = c.pc;
    fault_.trapno = 6;
    fault_pending_ = true;
    request_stop();
    return c.pc;  // the run loop delivers SIGILL with the PC unchanged
  }
  const PadlockRecord& r = *ran;
  // With --timing off the only event is a thread's slice end (threads/scheduler.hpp).
  if (vt_->now() >= vt_->next_event()) time_events();
  if (gdb_) gdb_->on_padlock(r.outcome);

  // §1.8: REP XCRYPT sets EFLAGS[30] (after loading the key), REP XSHA clears it, and so
  // does the interrupt or exception that stops an instruction (the core applies it).
  if (r.after.eflags30()) {
    eflags30_ = true;
    if (!block_hook_on_) {
      // From now on PUSHF must be seen: install the block hook (once per run).
      want_block_hook_ = true;
      request_stop();
    }
  } else {
    clear_eflags30();
  }

  switch (r.outcome.status) {
    case Status::Completed:
    case Status::Interrupted:
      break;
    case Status::Faulted: {
      if (r.outcome.fault.kind == FaultKind::NotModelled) {
        stop_not_modelled(c.pc, r.decoded, r.before);
        break;
      }
      const FaultSignal f = padlock_fault_signal(r.outcome.fault, *mem_, c.pc);
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
  return PadlockTrap::next_pc(c, r);
}

void Process::stop_not_modelled(uint64_t pc, const isa::Decoded& d, const ArchState& s) {
  const isa::InsnInfo& info = d.info();
  char line[256];
  const char* prefix = info.repne == isa::PrefixRule::Selects ? "F2 " : "F3 ";
  char what[64] = "";
  if (d.id == isa::InsnId::Sm2) {
    std::snprintf(what, sizeof what, " with EDX = %#x (only EDX = 8, verify, is public)",
                  static_cast<unsigned>(s[Gpr::DX]));
  }
  std::snprintf(line, sizeof line,
                "padlock-emu: %s (%s0F %02X %02X) at 0x%llx%s is not modelled: its semantics "
                "are not public; the guest is stopped (docs/fidelity/gmi.md)",
                info.guide_name, prefix, info.opcode2, info.modrm,
                static_cast<unsigned long long>(pc), what);
  std::fprintf(opts_.log, "%s\n", line);
  std::fflush(opts_.log);
  sched_->futexes().exit_all_robust_lists(kernel_.robust_list);
  fatal_ = true;
  result_ = RunResult{};
  result_.exit_code = kNotModelledExit;
  request_stop();
}

}  // namespace padlock::emu
