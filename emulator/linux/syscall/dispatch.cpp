// System-call entry: int 0x80 and sysenter (i386 ABI), syscall (x86-64 ABI). Every entry
// clears EFLAGS[30] (§1.8: entering the kernel stores EFLAGS; §3.2: SYSENTER clears it).
#include <signal.h>

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>

#include "emulator/linux/process.hpp"
#include "emulator/linux/signal/host_signals.hpp"
#include "emulator/linux/strace.hpp"
#include "emulator/linux/syscall/syscalls.hpp"
#include "emulator/observe/trace/run_observers.hpp"

namespace padlock::emu {

namespace {

// Argument registers in order, per ABI.
constexpr int kArgsI386[6] = {UC_X86_REG_EBX, UC_X86_REG_ECX, UC_X86_REG_EDX,
                              UC_X86_REG_ESI, UC_X86_REG_EDI, UC_X86_REG_EBP};
constexpr int kArgsX86_64[6] = {UC_X86_REG_RDI, UC_X86_REG_RSI, UC_X86_REG_RDX,
                                UC_X86_REG_R10, UC_X86_REG_R8,  UC_X86_REG_R9};

int64_t bad_descriptor(SyscallContext&) {
  return -EBADF;
}

}  // namespace

// The emulator's own descriptors (its outputs, the gdb socket, the sandbox's roots:
// KernelState::host_fds) are no descriptors of the guest's: a call that names one as a
// descriptor argument (the tables' 'f') fails with EBADF, as for a number that is not open,
// before its handler runs. Descriptors inside guest memory (i386 mmap's and socketcall's
// argument blocks, SCM_RIGHTS) are checked by their handlers.
bool names_emulator_fd(const GuestFiles& f, const SyscallEntry& e, const uint64_t (&a)[6]) {
  for (int i = 0; i < 6 && e.args[i] != '\0'; ++i) {
    if (e.args[i] == 'f' && f.emulator_fd(static_cast<int32_t>(a[i]))) return true;
  }
  return false;
}

// Unicorn calls the SYSCALL and SYSENTER hooks before it moves the PC past the
// instruction: #UD there.
void Process::invalid_opcode_at_pc() {
  fault_ = GuestSiginfo{};
  fault_.signo = SIGILL;
  fault_.code = kIllIllopn;
  fault_.addr = cpu_->pc();
  fault_.trapno = 6;
  fault_ip_ = cpu_->pc();
  fault_ip_valid_ = true;
  fault_pending_ = true;
  request_stop();
}

void Process::on_syscall_insn() {
  drain_block_log();
  if (!id_.guest64) {
    // SYSCALL is not an i386 instruction on these chips: #UD.
    invalid_opcode_at_pc();
    return;
  }
  dispatch_syscall(kAbiX86_64, 2);
}

void Process::on_sysenter() {
  drain_block_log();
  if (id_.guest64) {
    // SYSENTER in 64-bit code: #UD where Linux runs (AMD's long mode; Unicorn's CPU says
    // Intel and would run it).
    invalid_opcode_at_pc();
    return;
  }
  // Linux enters the i386 ABI; the sixth argument is at [EBP] (the vDSO pushes it).
  // We return to the instruction after SYSENTER (there is no vDSO to return through).
  dispatch_syscall(kAbiI386, -2);
}

void Process::dispatch_syscall(const SyscallAbi& abi, int insn_len) {
  clear_eflags30();
  const bool i386 = &abi == &kAbiI386;
  const bool sysenter = insn_len < 0;
  insn_len = sysenter ? 2 : insn_len;
  SyscallContext c{*this, user_, *vm_, *sched_, sched_->futexes(), files_, abi, 0, {}};
  ThreadTable& threads = sched_->table();
  const int* regs = i386 ? kArgsI386 : kArgsX86_64;
  c.nr = cpu_->reg(id_.guest64 ? UC_X86_REG_RAX : UC_X86_REG_EAX);
  for (int i = 0; i < 6; ++i) {
    c.a[i] = cpu_->reg(regs[i]);
    if (i386) c.a[i] &= 0xFFFFFFFFu;
  }
  if (i386) c.nr &= 0xFFFFFFFFu;
  if (sysenter) {
    uint32_t arg6 = 0;
    user_.get(cpu_->reg(UC_X86_REG_EBP) & 0xFFFFFFFFu, arg6);
    c.a[5] = arg6;
  }
  const uint64_t args_at_entry[6] = {c.a[0], c.a[1], c.a[2], c.a[3], c.a[4], c.a[5]};
  const SyscallEntry* e = c.nr < kMaxSyscall ? &abi.table[c.nr] : nullptr;
  const uint64_t t0 = vt_->now();
  int64_t r = -ENOSYS;
  int64_t host_timeout = -1;
  // A host allocation that fails inside the call is the guest's ENOMEM, as a kernel
  // allocation failure is (Linux never lets it reach the process any other way).
  try {
    GuestThread& self = threads.running();
    bool again_on_eagain = false;
    SyscallHandler fn = e != nullptr ? e->fn : nullptr;
    if (fn != nullptr && names_emulator_fd(files_, *e, c.a)) fn = bad_descriptor;
    const bool threaded = fn != nullptr && threads.size() > 1 && !self.retry_real;
    // A virtual event's retry continues the wait only if this call waits again at once.
    const bool virtual_retry = self.virtual_retry;
    self.virtual_retry = false;
    // i386 socketcall: its send or recv waits as the direct call does (an unreadable
    // argument block leaves socketcall to report it).
    if (threaded && fn == sys_socketcall && socketcall_unpack(c, fn) < 0) fn = sys_socketcall;
    ConnectStep step = ConnectStep::Blocking;
    if (fn == sys_connect && (self.connecting || (threaded && threads.others_can_run()))) {
      step = host_connect(c, self.connecting, self.fds, r);
      self.connecting = step == ConnectStep::Writable;
      self.recheck = step == ConnectStep::Retry;
      if (self.recheck) self.fds.clear();
    }
    if (step == ConnectStep::Done) {
      // made without blocking (or its in-progress result asked for)
    } else if (step != ConnectStep::Blocking) {
      sched_->host_wait(self.fds, -1);  // until connected, or to try again
      c.blocks = true;
      r = 0;
    } else if (threaded &&
               (self.write_done > 0 || (threads.others_can_run() && long_pipe_write(c, fn)))) {
      // A long pipe write: a piece now; wait for room while the others run, then go on.
      if (!pipe_write_step(c, self.write_done, self.fds, r)) {
        sched_->host_wait(self.fds, -1);
        c.blocks = true;
        r = 0;
      }
    } else if (threaded && threads.others_can_run() &&
               host_wait_set(c, fn, self.fds, self.child, host_timeout, again_on_eagain)) {
      // It would block the other threads: wait in the scheduler, then call again.
      self.virtual_retry = virtual_retry;
      sched_->host_wait(self.fds, host_timeout);
      c.blocks = true;
      r = 0;
    } else if (fn != nullptr) {
      c.waited_out = self.retry_real;
      c.waited_since = self.host_wait_start;
      self.retry_real = false;
      r = fn(c);
      if (again_on_eagain && r == -EAGAIN) {  // a send made non-blocking found no room
        sched_->host_wait(self.fds, -1);
        c.blocks = true;
        r = 0;
      }
    } else {
      report_unsupported(abi, c.nr);
    }
  } catch (const std::bad_alloc&) {
    r = -ENOMEM;
  } catch (const std::length_error&) {
    r = -ENOMEM;
  }
  ++stats_.syscalls;
  if (obs_) obs_->syscall(e != nullptr ? e->name : nullptr, c.nr, r, t0, vt_->now());
  // --strace on the run's log; -d syscall on -D's file (once when both are the same).
  const bool unimplemented = e == nullptr || e->fn == nullptr;
  if (opts_.strace) {
    strace_line(opts_.log, *this, abi, c.nr, args_at_entry, e, r,
                c.no_result || c.blocks || exited_, unimplemented);
  }
  if (obs_ && obs_->debug_log() != nullptr && obs_->debug_log()->has(kLogSyscall) &&
      !(opts_.strace && obs_->debug_log()->file() == opts_.log)) {
    strace_line(obs_->debug_log()->file(), *this, abi, c.nr, args_at_entry, e, r,
                c.no_result || c.blocks || exited_, unimplemented);
  }
  if (!c.no_result && !exited_) {
    if (id_.guest64 && !i386) {
      // A waiting thread gets RAX when it wakes (threads/scheduler.cpp).
      if (!c.blocks) cpu_->set_reg(UC_X86_REG_RAX, static_cast<uint64_t>(r));
      // SYSCALL leaves the return address in RCX and RFLAGS in R11.
      cpu_->set_reg(UC_X86_REG_RCX, cpu_->pc() + 2);
      cpu_->set_reg(UC_X86_REG_R11, cpu_->reg(UC_X86_REG_RFLAGS));
    } else if (!c.blocks) {
      cpu_->set_reg(id_.guest64 ? UC_X86_REG_RAX : UC_X86_REG_EAX,
                    static_cast<uint64_t>(r) & 0xFFFFFFFFu);
    }
  }
  last_syscall_eintr_ = c.interrupted && r == -EINTR;
  last_syscall_nr_ = c.nr;
  last_syscall_len_ = insn_len;
  collect_host_signals(*this);
  if (exited_ || sigreturn_ != SigreturnKind::None || sig_.next_deliverable() != 0 ||
      want_block_hook_ || sched_->switch_due()) {
    request_stop();
  }
}

// No silent failures: the first call of each number without a handler says so on the log,
// strace or not (once per ABI and number).
void Process::report_unsupported(const SyscallAbi& abi, uint64_t nr) {
  const uint64_t key = (&abi == &kAbiI386 ? uint64_t{1} << 63 : 0) | nr;
  if (!unsupported_seen_.insert(key).second) return;
  const char* name = nr < kMaxSyscall ? abi.table[nr].name : nullptr;
  const std::string shown = name != nullptr ? name : "syscall_" + std::to_string(nr);
  std::fprintf(opts_.log, "padlock-emu: unsupported system call %s (%llu) \u2192 ENOSYS\n",
               shown.c_str(), static_cast<unsigned long long>(nr));
}

}  // namespace padlock::emu
