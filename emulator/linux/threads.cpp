// Guest threads and their scheduler (docs/emulator.md, "Threads"). All threads of a process
// run on its one Unicorn CPU, one at a time; a switch saves the running thread's registers
// (with its i386 TLS descriptors, signal mask and kernel words) and loads the next one's.
// Switches happen only in the run loop, between two emulation slices, at points fixed by the
// guest's own execution and the virtual clock: a thread waits (futex, sleep), exits or
// yields, or its time slice (--quantum) ends. The next thread is the next runnable one in
// creation order. Nothing depends on host time, so the same program with the same --seed
// runs the same interleaving and gives the same output and trace.
//
// A switch is a task switch for PadLock (§1.8, steps 3 and 5): the outgoing thread's
// EFLAGS is stored, which clears bit 30, and the incoming one's is loaded with bit 30 = 0,
// so its next REP XCRYPT reloads the control word and key.
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "emulator/linux/process.hpp"
#include "emulator/linux/signal/host_signals.hpp"
#include "emulator/linux/syscall/syscalls.hpp"
#include "emulator/observe/trace/run_observers.hpp"

namespace padlock::emu {

int Process::live_threads() const {
  return threads_.live();
}

int64_t Process::clone_thread(uint64_t flags, uint64_t sp, uint64_t child_tid, uint64_t tls,
                              unsigned tls_index, uint64_t tls_desc) {
  if (clone_.active) return -EAGAIN;  // cannot happen: the run loop starts it first
  clone_ = PendingClone{true, flags, sp, child_tid, tls, tls_desc, tls_index, next_tid_++};
  if (flags & CLONE_CHILD_SETTID) user_.put(child_tid, static_cast<uint32_t>(clone_.tid));
  request_stop();
  return clone_.tid;
}

// The caller's registers are final now (the PC after its system call): the new thread
// starts from them with RAX 0 and its own stack and TLS.
void Process::start_cloned_thread() {
  const PendingClone pc = clone_;
  clone_.active = false;
  auto t = std::make_unique<GuestThread>();
  t->tid = pc.tid;
  save_thread(*t);  // the caller's registers, TLS array and signal mask
  t->ctx.gpr[0] = 0;
  if (pc.sp != 0) t->ctx.gpr[4] = pc.sp;
  if (pc.flags & CLONE_SETTLS) {
    if (guest64_) {
      t->ctx.fs_base = pc.tls;
    } else {
      t->tls[pc.tls_index - kGdtTlsMin] = pc.tls_desc;
    }
  }
  // Linux: a new thread has no pending signals, no alternate stack (CLONE_VM) and its own
  // kernel words.
  t->pending = 0;
  t->altstack_sp = t->altstack_size = 0;
  t->altstack_flags = kSsDisable;
  t->has_saved_mask = false;
  t->clear_child_tid = (pc.flags & CLONE_CHILD_CLEARTID) ? pc.child_tid : 0;
  t->robust_list = t->robust_list_len = 0;
  t->rep = RepRun{};
  threads_.add(std::move(t));
  ++stats_.threads_created;
  // From now on the trace names each instruction's thread (TIDs count from the PID).
  if (obs_) obs_->set_thread(tid() - pid_);
  // The first thread's first slice starts now; a running slice is not extended.
  if (vt_->slice_end() == VirtualTime::kNever) set_slice();
}

void Process::block_thread(uint64_t futex_addr, uint32_t bitset, uint64_t deadline) {
  threads_.block(futex_addr, bitset, deadline);
  switch_pending_ = true;
  request_stop();
}

void Process::sigwait_block(uint64_t set, uint64_t deadline) {
  const uint64_t mask = sig_.blocked;
  sig_.blocked &= ~set;
  block_thread(0, 0, deadline);
  threads_.running().sigwait = true;
  threads_.running().sigwait_mask = mask;
}

void Process::host_wait(std::vector<pollfd>& fds, int64_t timeout_ms) {
  // `fds` is already the thread's own (and so is its ChildWait). A virtual timerfd's
  // expiry among them is the wait's deadline: the scheduler moves the clock there, and
  // the call is made again (wake_due).
  uint64_t deadline = VirtualTime::kNever;
  for (const pollfd& f : fds) deadline = std::min(deadline, virtual_fd_event(*this, f.fd));
  GuestThread& t = threads_.running();
  // Made again because a virtual event woke it and found nothing ready: the same wait
  // goes on, its timeout counted from when it began.
  const bool same_wait = t.virtual_retry;
  t.virtual_retry = false;
  block_thread(0, 0, deadline);
  t.host_io = true;
  if (same_wait) return;
  t.host_deadline = -1;
  t.host_wait_start = vt_->now();
  if (timeout_ms > 0) {
    t.host_deadline = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count() +
                      timeout_ms * 1000000;
  }
}

// One host poll over every host waiter's descriptors; a waiter whose descriptor is ready
// runs again and repeats its call, one whose timeout has passed repeats it for real. A
// waiter in wait4/waitid has no descriptor: its children are checked after the poll, which
// then waits at most kChildPollMs of host time (a SIGCHLD the guest ignores does not
// reach the emulator); a connect to a full AF_UNIX backlog is made again after a poll that
// waited (every thread waits: at most kChildPollMs later).
void Process::poll_host_waiters(int timeout_ms) {
  constexpr int kChildPollMs = 10;
  host_fds_.clear();
  host_owner_.clear();
  bool children = false;
  uint64_t own = 0;  // the waiters' own pending signals (the running thread's are in sig_)
  for (size_t i = 0; i < threads_.size(); ++i) {
    const GuestThread& t = threads_.at(i);
    if (t.state != GuestThread::State::Waiting || !t.host_io) continue;
    own |= i == threads_.running_index() ? sig_.pending : t.pending;
    children |= t.child.on || t.recheck;
    for (const pollfd& f : t.fds) {
      host_fds_.push_back(f);
      host_owner_.push_back(i);
    }
  }
  if (host_fds_.empty() && !children) return;
  // Signalfd readiness as the waiters see it: the process's pending signals and their own;
  // timerfds' expirations up to now.
  sync_signalfds(*this, own);
  sync_timerfds(*this);
  // A connect made again only after a poll that waited: not at every switch.
  const bool waited = timeout_ms != 0;
  if (children && (timeout_ms < 0 || timeout_ms > kChildPollMs)) timeout_ms = kChildPollMs;
  if (poll(host_fds_.data(), host_fds_.size(), timeout_ms) < 0) collect_host_signals(*this);
  for (size_t i = 0; i < threads_.size(); ++i) {
    GuestThread& t = threads_.at(i);
    if (t.state == GuestThread::State::Waiting && t.host_io &&
        ((t.recheck && waited) || (t.child.on && child_ready(t.child)))) {
      t.state = GuestThread::State::Runnable;
      t.host_io = false;
      t.child.on = t.recheck = false;
      t.retry = true;
    }
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  for (size_t k = 0; k < host_fds_.size(); ++k) {
    GuestThread& t = threads_.at(host_owner_[k]);
    if (!t.host_io) continue;
    const bool timed_out = t.host_deadline >= 0 && now >= t.host_deadline;
    if (host_fds_[k].revents != 0 || timed_out) {
      t.state = GuestThread::State::Runnable;
      t.host_io = false;
      t.retry = true;
      t.retry_real = timed_out && host_fds_[k].revents == 0;
    }
  }
}

void Process::exit_thread(int code) {
  // Linux walks the robust list first, then clears the TID word (pthread_join's).
  futexes_->exit_robust_list(tid(), kernel_.robust_list);
  if (live_threads() <= 1) {
    exit_group(main_exited_ ? main_exit_code_ : code);
    return;
  }
  if (threads_.running_index() == 0 && !main_exited_) {
    // Linux reports the thread-group leader's status when the last thread is gone.
    main_exited_ = true;
    main_exit_code_ = code;
  }
  // CLONE_CHILD_CLEARTID / set_tid_address: pthread_join waits on this word.
  if (kernel_.clear_child_tid != 0 && user_.put(kernel_.clear_child_tid, uint32_t{0})) {
    threads_.futex_wake(kernel_.clear_child_tid, 1, ~0u);
  }
  threads_.running().state = GuestThread::State::Dead;
  switch_pending_ = true;
  request_stop();
}

void Process::yield_thread() {
  if (live_threads() > 1) {
    switch_pending_ = true;
    request_stop();
  }
}

bool Process::signal_thread(int tid, const GuestSiginfo& si) {
  GuestThread* t = threads_.find_live(tid);
  if (t == nullptr) return false;
  if (t == &threads_.running()) {
    queue_signal(si);
    return true;
  }
  if (si.signo < 1 || si.signo > kNumSignals) return true;
  t->pending |= sig_bit(si.signo);
  sig_.info[si.signo] = si;
  // A waiting thread that can take it wakes from its system call with EINTR.
  if (t->state == GuestThread::State::Waiting &&
      (sig_bit(si.signo) & ~(t->blocked & ~kUnblockable)) != 0) {
    threads_.wake(*t, -EINTR);
  }
  return true;
}

void Process::save_thread(GuestThread& t) {
  cpu_->save(t.ctx);
  if (!guest64_) {
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

void Process::load_thread(GuestThread& t) {
  // The TLS descriptors first: loading the segment registers reads them.
  if (!guest64_) {
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

// The running thread's slice ends after --quantum of virtual time, or earlier at the first
// waiter's deadline; with one thread there is no slice.
void Process::set_slice() {
  uint64_t end = VirtualTime::kNever;
  if (live_threads() > 1) {
    end = vt_->now() + std::max<uint64_t>(
                           1, vt_->cycles_of_ns(static_cast<uint64_t>(opts_.quantum_us * 1000.0)));
    end = std::min(end, threads_.first_deadline());
  }
  vt_->set_slice_end(end);
}

// Every thread waits: time moves to the first deadline (a waiter's or a timer's) as a sleep
// does; with none, the process waits for a host signal, as a Linux process whose threads
// all wait forever would.
void Process::idle() {
  uint64_t first = threads_.first_deadline();
  bool host_io = false;
  int64_t host_deadline = -1;
  for (size_t i = 0; i < threads_.size(); ++i) {
    const GuestThread& t = threads_.at(i);
    if (t.state != GuestThread::State::Waiting || !t.host_io) continue;
    host_io = true;
    if (t.host_deadline >= 0 && (host_deadline < 0 || t.host_deadline < host_deadline)) {
      host_deadline = t.host_deadline;
    }
  }
  if (opts_.timing) first = std::min(first, vt_->next_timer());
  if (host_io) {
    // Host descriptors first; a virtual deadline is not put off by them.
    if (first != VirtualTime::kNever) {
      poll_host_waiters(0);
    } else {
      int ms = -1;
      if (host_deadline >= 0) {
        const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now().time_since_epoch())
                                .count();
        ms = static_cast<int>(
            std::clamp<int64_t>((host_deadline - now + 999999) / 1000000, 0, 1 << 30));
      }
      poll_host_waiters(ms);
      return;
    }
    for (size_t i = 0; i < threads_.size(); ++i) {
      if (threads_.at(i).state == GuestThread::State::Runnable) return;
    }
  }
  if (first != VirtualTime::kNever) {
    sleep_until(first);
  } else {
    wait_host_signal();
    collect_host_signals(*this);
  }
  threads_.wake_due(vt_->now());
}

// A thread that has exited loses its own pending signals (Linux flushes them); the
// process's go to the threads that are left.
void Process::route_signals() {
  if (threads_.running().state == GuestThread::State::Dead) sig_.pending = 0;
  wake_for_shared();
}

// Each signal for the process that the running thread cannot take now (it blocks it, or
// it has exited) wakes the first other thread after it in creation order that does not
// block it from its wait (EINTR; the call is made again after a sigwait or signalfd read,
// which then takes it), as Linux's complete_signal picks a thread; a runnable one takes
// it when it runs. One that every thread blocks stays pending for the process.
void Process::wake_for_shared() {
  const GuestThread& cur = threads_.running();
  uint64_t left = sig_.shared;
  if (cur.state != GuestThread::State::Dead) left &= sig_.blocked & ~kUnblockable;
  const size_t n = threads_.size();
  while (left != 0) {
    const uint64_t bit = left & -left;
    left &= left - 1;
    for (size_t i = 1; i < n; ++i) {
      GuestThread& t = threads_.at((threads_.running_index() + i) % n);
      if (t.state == GuestThread::State::Dead || (t.blocked & ~kUnblockable & bit) != 0) continue;
      if (t.state == GuestThread::State::Waiting) threads_.wake(t, -EINTR);
      break;
    }
  }
}

// The running thread's system call ends as its wait did: with the wake's result, or it is
// made again (a host wait: back to its 2-byte int 0x80 / syscall / sysenter).
void Process::resume_current() {
  GuestThread& t = threads_.running();
  if (t.has_result) {
    t.has_result = false;
    cpu_->set_reg(
        guest64_ ? UC_X86_REG_RAX : UC_X86_REG_EAX,
        guest64_ ? static_cast<uint64_t>(t.result) : static_cast<uint64_t>(t.result) & 0xFFFFFFFFu);
  }
  if (t.retry) {
    t.retry = false;
    cpu_->set_pc(cpu_->pc() - 2);
  }
}

void Process::schedule() {
  if (clone_.active) start_cloned_thread();
  GuestThread* cur = &threads_.running();
  // A waiting thread with a signal it can take wakes with EINTR (the running thread's
  // signals are in sig_).
  if (cur->state == GuestThread::State::Waiting && sig_.next_deliverable() != 0) {
    threads_.wake(*cur, -EINTR);
  }
  if (!switch_pending_) return;
  switch_pending_ = false;
  threads_.wake_due(vt_->now());
  route_signals();
  // A signal to deliver first: the running thread keeps the CPU until it is delivered.
  if (cur->state == GuestThread::State::Runnable && sig_.next_deliverable() != 0) {
    resume_current();
    set_slice();
    return;
  }
  const size_t n = threads_.size();
  size_t next = n;
  poll_host_waiters(0);
  while (!exited_ && !fatal_) {
    next = threads_.next_runnable();
    if (next != n) break;
    idle();
    route_signals();
    if (cur->state == GuestThread::State::Waiting && sig_.next_deliverable() != 0) {
      threads_.wake(*cur, -EINTR);
    }
  }
  if (next == n) return;  // the process ended while every thread waited
  if (next != threads_.running_index()) {
    if (cur->state != GuestThread::State::Dead) save_thread(*cur);
    load_thread(threads_.at(next));
    threads_.switch_to(next);
    ++stats_.thread_switches;
    if (obs_) obs_->set_thread(tid() - pid_);
    // §1.8 steps 3 and 5: the switched-in thread's EFLAGS is loaded with bit 30 = 0.
    clear_eflags30();
    // An interrupted system call's restart (SA_RESTART) belonged to the other thread.
    last_syscall_eintr_ = false;
  }
  resume_current();
  threads_.drop_dead();
  set_slice();
}

}  // namespace padlock::emu
