// What the run loop does when Unicorn stops: sigreturn, faults turned into signals,
// pending signals delivered to handlers or acted on by default, and death by signal.
#include <signal.h>
#include <unistd.h>

#include "emulator/cpu/fault_address.hpp"
#include "emulator/linux/gdb_session.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/signal/host_signals.hpp"
#include "emulator/linux/signal/signal_frame.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

void Process::queue_signal(const GuestSiginfo& si) {
  if (si.signo < 1 || si.signo > kNumSignals) return;
  sig_.raise(si);
  if (sig_.next_deliverable() != 0) request_stop();
}

void Process::queue_process_signal(const GuestSiginfo& si) {
  if (si.signo < 1 || si.signo > kNumSignals) return;
  sig_.raise_shared(si);
  sched_->wake_for_shared();
  if (sig_.next_deliverable() != 0) request_stop();
}

void Process::handle_stop(uc_err err) {
  if (exited_) return;
  if (sigreturn_ != SigreturnKind::None) {
    const SigreturnKind k = sigreturn_;
    sigreturn_ = SigreturnKind::None;
    do_sigreturn(k);
  }
  if (want_block_hook_) enable_block_hook();
  if (fault_pending_) {
    fault_pending_ = false;
    deliver(fault_.signo, fault_, true);
  } else if (err == UC_ERR_EXCEPTION && tlb_.faulted) {
    // A page fault from our TLB fill (precise: Unicorn restored the state of the
    // faulting instruction).
    GuestSiginfo si;
    si.signo = SIGSEGV;
    const bool mapped = (mem_->flags(tlb_.fault_page) & kPageMapped) != 0;
    const bool noncanonical = id_.guest64 && tlb_.fault_page >= (uint64_t{1} << 47);
    si.trapno = noncanonical ? 13 : 14;
    if (noncanonical) {
      // #GP on hardware, or #SS through the stack segment (Linux: SIGBUS); si_addr 0.
      bool via_stack = false;
      first_faulting_byte(cs_, *cpu_, *mem_, tlb_.fault_page, tlb_.fault_type, &via_stack);
      si.code = kSiKernel;
      if (via_stack) {
        si.signo = SIGBUS;
        si.trapno = 12;
      }
    } else {
      si.code = mapped ? kSegvAccerr : kSegvMaperr;
      si.addr = first_faulting_byte(cs_, *cpu_, *mem_, tlb_.fault_page, tlb_.fault_type);
      si.error_code = page_fault_error_code(tlb_.fault_type == UC_MEM_WRITE, mapped,
                                            tlb_.fault_type == UC_MEM_FETCH);
    }
    deliver(si.signo, si, true);
  } else if (err != UC_ERR_OK) {
    // Unicorn gave up on something we did not expect (it should not happen): report it
    // to the guest as a fault at the current instruction rather than hang or crash.
    GuestSiginfo si;
    si.signo = err == UC_ERR_INSN_INVALID ? SIGILL : SIGSEGV;
    si.code = err == UC_ERR_INSN_INVALID ? kIllIllopn : kSiKernel;
    si.addr = cpu_->pc();
    std::fprintf(opts_.log, "padlock-emu: internal: unicorn stopped with \"%s\" at 0x%llx\n",
                 uc_strerror(err), static_cast<unsigned long long>(cpu_->pc()));
    deliver(si.signo, si, true);
  } else if (!stop_requested_ && !(gdb_ && gdb_->interrupt_pending()) &&
             collect_host_signals(*this) == 0 && sig_.next_deliverable() == 0) {
    // Unicorn returned without an error and without any of our hooks asking it to stop
    // (QEMU halted, e.g. after a triple fault): do not spin, end the guest.
    std::fprintf(opts_.log, "padlock-emu: internal: emulation stopped at 0x%llx: %s\n",
                 static_cast<unsigned long long>(cpu_->pc()), disassemble(cpu_->pc()).c_str());
    GuestSiginfo si;
    si.signo = SIGSEGV;
    si.code = kSiKernel;
    die(SIGSEGV, si);
  }
  collect_host_signals(*this);
}

bool Process::deliver_pending() {
  bool any = false;
  while (!fatal_ && !exited_) {
    const int sig = sig_.next_deliverable();
    if (sig == 0) break;
    sig_.take(sig);
    deliver(sig, sig_.info[sig], false);
    any = true;
  }
  // rt_sigsuspend's temporary mask outlives the call only in a handler's frame; when no
  // handler ran (the signal was ignored), the mask is restored now, as Linux does.
  if (any && sig_.has_saved_mask) {
    sig_.blocked = sig_.saved_mask;
    sig_.has_saved_mask = false;
  }
  return any;
}

bool Process::deliver(int sig, const GuestSiginfo& info, bool forced) {
  // Under gdb, every signal stops the guest first; gdb says which one it gets, if any.
  if (gdb_) {
    sig = gdb_->on_signal(sig);
    if (sig == 0 || fatal_) return false;
  }
  GuestSigaction act = sig_.action[sig];
  // A synchronous fault that is blocked or ignored kills the process (Linux
  // force_sig_fault resets the action to SIG_DFL).
  if (forced && (act.handler == kSigIgn || (sig_.blocked & sig_bit(sig)))) {
    act.handler = kSigDfl;
    sig_.action[sig].handler = kSigDfl;
    sig_.blocked &= ~sig_bit(sig);
  }
  if (act.handler == kSigIgn) return false;
  if (act.handler == kSigDfl) {
    switch (default_action(sig)) {
      case DefaultAction::Ignore:
      case DefaultAction::Continue:
        return false;
      case DefaultAction::Stop:
        kill(getpid(), SIGSTOP);
        return false;
      case DefaultAction::Terminate:
      case DefaultAction::Core:
        die(sig, info);
        return false;
    }
  }

  CpuContext ctx;
  cpu_->save(ctx);
  if (forced && fault_ip_valid_) {
    ctx.ip = fault_ip_;
  }
  if (forced && fault_ctx_valid_) ctx = fault_ctx_;
  fault_ip_valid_ = false;
  fault_ctx_valid_ = false;
  // A system call interrupted by this signal: with SA_RESTART it runs again after the
  // handler (back up over the 2-byte int 0x80 / syscall / sysenter), else it fails EINTR.
  if (!forced && last_syscall_eintr_ && (act.flags & kSaRestart)) {
    ctx.gpr[0] = last_syscall_nr_;
    ctx.ip -= static_cast<uint64_t>(last_syscall_len_);
  }
  last_syscall_eintr_ = false;
  const uint64_t saved_mask = sig_.has_saved_mask ? sig_.saved_mask : sig_.blocked;
  sig_.has_saved_mask = false;
  GuestSiginfo si = info;
  si.signo = sig;
  const bool ok = id_.guest64 ? setup_frame_x86_64(*this, sig, si, act, saved_mask, ctx)
                              : setup_frame_i386(*this, sig, si, act, saved_mask, ctx);
  if (!ok) {
    // The frame cannot be written: SIGSEGV, which kills if it was SIGSEGV already.
    GuestSiginfo segv;
    segv.signo = SIGSEGV;
    segv.code = kSiKernel;
    if (sig == SIGSEGV) {
      die(SIGSEGV, segv);
      return false;
    }
    return deliver(SIGSEGV, segv, true);
  }
  cpu_->load(ctx);
  sig_.blocked =
      (saved_mask | act.mask | ((act.flags & kSaNodefer) ? 0 : sig_bit(sig))) & ~kUnblockable;
  if (act.flags & kSaResethand) sig_.action[sig].handler = kSigDfl;
  // §1.8: signal delivery stores EFLAGS, so EFLAGS[30] is 0 in the handler.
  clear_eflags30();
  ++stats_.signals_delivered;
  return true;
}

void Process::do_sigreturn(SigreturnKind k) {
  CpuContext ctx;
  cpu_->save(ctx);
  uint64_t mask = 0;
  const bool ok = id_.guest64 ? restore_frame_x86_64(*this, ctx, mask)
                              : restore_frame_i386(*this, k == SigreturnKind::Rt, ctx, mask);
  if (!ok) {
    GuestSiginfo segv;
    segv.signo = SIGSEGV;
    segv.code = kSiKernel;
    deliver(SIGSEGV, segv, true);
    return;
  }
  cpu_->load(ctx);
  sig_.blocked = mask & ~kUnblockable;
}

void Process::die(int sig, const GuestSiginfo& si) {
  sched_->futexes().exit_all_robust_lists(kernel_.robust_list);
  fatal_ = true;
  result_ = RunResult{};
  result_.signaled = true;
  result_.signal = sig;
  result_.core = default_action(sig) == DefaultAction::Core;
  if (result_.core) print_fatal(sig, si);
}

void Process::print_fatal(int sig, const GuestSiginfo& si) {
  const uint64_t pc = (fault_ip_valid_ ? fault_ip_ : cpu_->pc());
  std::string line =
      std::string("padlock-emu: ") + signal_name(sig) + " (" + signal_description(sig) + ") at 0x";
  char hex[32];
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(pc));
  line += hex;
  line += ": " + disassemble(pc);
  if (const auto it = chip_found_.find(pc); sig == SIGILL && it != chip_found_.end()) {
    line += std::string(" (CPUID feature '") + it->second->name + "': not on CPU model " +
            opts_.cpu->name + ")";
  }
  const bool has_addr = (sig == SIGSEGV || sig == SIGBUS) && si.code != kSiKernel && si.code > 0;
  if (has_addr) {
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(si.addr));
    line += std::string(" (address 0x") + hex + ")";
  }
  std::fprintf(opts_.log, "%s\n", line.c_str());
  std::fflush(opts_.log);
}

}  // namespace padlock::emu
