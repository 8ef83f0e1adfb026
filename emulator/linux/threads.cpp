// The process's side of its threads' scheduler (emulator/linux/threads/scheduler.hpp):
// what a switch saves and loads on the CPU, the system call a woken thread returns from,
// and the signals, time and host descriptors around a wait (ThreadHost).
#include <signal.h>

#include "emulator/linux/process.hpp"
#include "emulator/linux/signal/host_signals.hpp"
#include "emulator/linux/syscall/syscalls.hpp"
#include "emulator/observe/trace/run_observers.hpp"

namespace padlock::emu {

void Process::save_thread(GuestThread& t) {
  cpu_->save(t.ctx);
  if (!id_.guest64) {
    for (unsigned i = 0; i < kGdtTlsEntries; ++i) t.tls[i] = cpu_->gdt_entry(kGdtTlsMin + i);
  }
  t.blocked = sig_.blocked;
  t.pending = sig_.pending;
  t.altstack_sp = sig_.altstack_sp;
  t.altstack_size = sig_.altstack_size;
  t.altstack_flags = sig_.altstack_flags;
  t.has_saved_mask = sig_.has_saved_mask;
  t.saved_mask = sig_.saved_mask;
  t.clear_child_tid = kernel_.clear_child_tid;
  t.robust_list = kernel_.robust_list;
  t.robust_list_len = kernel_.robust_list_len;
  t.rep = rep_;
}

void Process::load_thread(const GuestThread& t) {
  // The TLS descriptors first: loading the segment registers reads them.
  if (!id_.guest64) {
    for (unsigned i = 0; i < kGdtTlsEntries; ++i) cpu_->set_gdt_entry(kGdtTlsMin + i, t.tls[i]);
  }
  cpu_->load(t.ctx);
  sig_.blocked = t.blocked;
  sig_.pending = t.pending;
  sig_.altstack_sp = t.altstack_sp;
  sig_.altstack_size = t.altstack_size;
  sig_.altstack_flags = t.altstack_flags;
  sig_.has_saved_mask = t.has_saved_mask;
  sig_.saved_mask = t.saved_mask;
  kernel_.clear_child_tid = t.clear_child_tid;
  kernel_.robust_list = t.robust_list;
  kernel_.robust_list_len = t.robust_list_len;
  rep_ = t.rep;
}

void Process::running_thread(int tid, bool switched) {
  // From now on the trace names each instruction's thread (TIDs count from the PID).
  if (obs_) obs_->set_thread(tid - id_.pid);
  // An interrupted system call's restart (SA_RESTART) belonged to the other thread.
  if (switched) last_syscall_eintr_ = false;
}

void Process::set_syscall_result(int64_t result) {
  cpu_->set_reg(
      id_.guest64 ? UC_X86_REG_RAX : UC_X86_REG_EAX,
      id_.guest64 ? static_cast<uint64_t>(result) : static_cast<uint64_t>(result) & 0xFFFFFFFFu);
}

void Process::restart_syscall() {
  cpu_->set_pc(cpu_->pc() - 2);
}

void Process::await_host_signal() {
  ::padlock::emu::wait_host_signal();
  collect_host_signals(*this);
}

void Process::take_host_signals() {
  ::padlock::emu::collect_host_signals(*this);
}

// Signalfd readiness as the waiters see it: the process's pending signals and their own;
// timerfds' expirations up to now.
void Process::sync_wait_descriptors(uint64_t own) {
  sync_signalfds(*this, own);
  sync_timerfds(*this);
}

bool Process::children_ready(const ChildWait& w) {
  return ::padlock::emu::child_ready(w);
}

uint64_t Process::fd_event_at(int fd) {
  return ::padlock::emu::virtual_fd_event(*this, fd);
}

}  // namespace padlock::emu
