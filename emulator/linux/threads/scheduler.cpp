// A switch is a task switch for PadLock (§1.8, steps 3 and 5): the outgoing thread's
// EFLAGS is stored, which clears bit 30, and the incoming one's is loaded with bit 30 = 0,
// so its next REP XCRYPT reloads the control word and key.
#include "emulator/linux/threads/scheduler.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "emulator/linux/vm/user_memory.hpp"

namespace padlock::emu {

using State = GuestThread::State;

namespace {

int64_t host_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Scheduler::Scheduler(ThreadHost& host, SignalState& sig, VirtualTime& vt, UserMemory& user,
                     Stats& stats, const SchedulerConfig& config)
    : host_(host),
      sig_(sig),
      vt_(vt),
      user_(user),
      stats_(stats),
      config_(config),
      table_(sig.blocked),
      futexes_(table_, user, *this, config.wide) {}

void Scheduler::restart(int tid) {
  table_.restart(tid);
  next_tid_ = tid + 1;
  switch_pending_ = false;
  clone_.active = false;
  vt_.set_slice_end(VirtualTime::kNever);
}

int64_t Scheduler::clone(uint64_t flags, uint64_t sp, uint64_t child_tid, uint64_t tls,
                         unsigned tls_index, uint64_t tls_desc) {
  if (clone_.active) return -EAGAIN;  // cannot happen: the run loop starts it first
  clone_ = PendingClone{true, flags, sp, child_tid, tls, tls_desc, tls_index, next_tid_++};
  if (flags & CLONE_CHILD_SETTID) user_.put(child_tid, static_cast<uint32_t>(clone_.tid));
  host_.request_stop();
  return clone_.tid;
}

// The caller's registers are final now (the PC after its system call): the new thread
// starts from them with RAX 0 and its own stack and TLS.
void Scheduler::start_cloned_thread() {
  const PendingClone pc = clone_;
  clone_.active = false;
  auto t = std::make_unique<GuestThread>();
  t->tid = pc.tid;
  host_.save_thread(*t);  // the caller's registers, TLS array and signal mask
  t->ctx.gpr[0] = 0;
  if (pc.sp != 0) t->ctx.gpr[4] = pc.sp;
  if (pc.flags & CLONE_SETTLS) {
    if (config_.wide) {
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
  table_.add(std::move(t));
  ++stats_.threads_created;
  host_.running_thread(tid(), false);
  // The first thread's first slice starts now; a running slice is not extended.
  if (vt_.slice_end() == VirtualTime::kNever) set_slice();
}

void Scheduler::block(uint64_t futex_addr, uint32_t bitset, uint64_t deadline) {
  table_.block(futex_addr, bitset, deadline);
  switch_pending_ = true;
  host_.request_stop();
}

void Scheduler::sigwait_block(uint64_t set, uint64_t deadline) {
  const uint64_t mask = sig_.blocked;
  sig_.blocked &= ~set;
  block(0, 0, deadline);
  table_.running().sigwait = true;
  table_.running().sigwait_mask = mask;
}

void Scheduler::host_wait(std::vector<pollfd>& fds, int64_t timeout_ms) {
  // `fds` is already the thread's own (and so is its ChildWait). A virtual timerfd's
  // expiry among them is the wait's deadline: the scheduler moves the clock there, and
  // the call is made again (wake_due).
  uint64_t deadline = VirtualTime::kNever;
  for (const pollfd& f : fds) deadline = std::min(deadline, host_.fd_event_at(f.fd));
  GuestThread& t = table_.running();
  // Made again because a virtual event woke it and found nothing ready: the same wait
  // goes on, its timeout counted from when it began.
  const bool same_wait = t.virtual_retry;
  t.virtual_retry = false;
  block(0, 0, deadline);
  t.host_io = true;
  if (same_wait) return;
  t.host_deadline = -1;
  t.host_wait_start = vt_.now();
  if (timeout_ms > 0) t.host_deadline = host_now_ns() + timeout_ms * 1000000;
}

// One host poll over every host waiter's descriptors; a waiter whose descriptor is ready
// runs again and repeats its call, one whose timeout has passed repeats it for real. A
// waiter in wait4/waitid has no descriptor: its children are checked after the poll, which
// then waits at most kChildPollMs of host time (a SIGCHLD the guest ignores does not
// reach the emulator); a connect to a full AF_UNIX backlog is made again after a poll that
// waited (every thread waits: at most kChildPollMs later).
void Scheduler::poll_host_waiters(int timeout_ms) {
  constexpr int kChildPollMs = 10;
  host_fds_.clear();
  host_owner_.clear();
  bool children = false;
  uint64_t own = 0;  // the waiters' own pending signals (the running thread's are in sig_)
  for (size_t i = 0; i < table_.size(); ++i) {
    const GuestThread& t = table_.at(i);
    if (t.state != State::Waiting || !t.host_io) continue;
    own |= i == table_.running_index() ? sig_.pending : t.pending;
    children |= t.child.on || t.recheck;
    for (const pollfd& f : t.fds) {
      host_fds_.push_back(f);
      host_owner_.push_back(i);
    }
  }
  if (host_fds_.empty() && !children) return;
  host_.sync_wait_descriptors(own);
  // A connect made again only after a poll that waited: not at every switch.
  const bool waited = timeout_ms != 0;
  if (children && (timeout_ms < 0 || timeout_ms > kChildPollMs)) timeout_ms = kChildPollMs;
  if (poll(host_fds_.data(), host_fds_.size(), timeout_ms) < 0) host_.take_host_signals();
  for (size_t i = 0; i < table_.size(); ++i) {
    GuestThread& t = table_.at(i);
    if (t.state == State::Waiting && t.host_io &&
        ((t.recheck && waited) || (t.child.on && host_.children_ready(t.child)))) {
      t.state = State::Runnable;
      t.host_io = false;
      t.child.on = t.recheck = false;
      t.retry = true;
    }
  }
  const int64_t now = host_now_ns();
  for (size_t k = 0; k < host_fds_.size(); ++k) {
    GuestThread& t = table_.at(host_owner_[k]);
    if (!t.host_io) continue;
    const bool timed_out = t.host_deadline >= 0 && now >= t.host_deadline;
    if (host_fds_[k].revents != 0 || timed_out) {
      t.state = State::Runnable;
      t.host_io = false;
      t.retry = true;
      t.retry_real = timed_out && host_fds_[k].revents == 0;
    }
  }
}

void Scheduler::exit_thread(int code) {
  // Linux walks the robust list first, then clears the TID word (pthread_join's).
  futexes_.exit_robust_list(tid(), host_.robust_list());
  if (live() <= 1) {
    host_.exit_group(main_exited_ ? main_exit_code_ : code);
    return;
  }
  if (table_.running_index() == 0 && !main_exited_) {
    // Linux reports the thread-group leader's status when the last thread is gone.
    main_exited_ = true;
    main_exit_code_ = code;
  }
  // CLONE_CHILD_CLEARTID / set_tid_address: pthread_join waits on this word.
  const uint64_t word = host_.clear_child_tid();
  if (word != 0 && user_.put(word, uint32_t{0})) table_.futex_wake(word, 1, ~0u);
  table_.running().state = State::Dead;
  switch_pending_ = true;
  host_.request_stop();
}

void Scheduler::yield() {
  if (live() > 1) {
    switch_pending_ = true;
    host_.request_stop();
  }
}

bool Scheduler::signal_thread(int tid, const GuestSiginfo& si) {
  GuestThread* t = table_.find_live(tid);
  if (t == nullptr) return false;
  if (t == &table_.running()) {
    host_.queue_signal(si);
    return true;
  }
  if (si.signo < 1 || si.signo > kNumSignals) return true;
  t->pending |= sig_bit(si.signo);
  sig_.info[si.signo] = si;
  // A waiting thread that can take it wakes from its system call with EINTR.
  if (t->state == State::Waiting && (sig_bit(si.signo) & ~(t->blocked & ~kUnblockable)) != 0) {
    table_.wake(*t, -EINTR);
  }
  return true;
}

void Scheduler::end_slice() {
  vt_.set_slice_end(VirtualTime::kNever);
  switch_pending_ = true;
  host_.request_stop();
}

// The running thread's slice ends after --quantum of virtual time, or earlier at the first
// waiter's deadline; with one thread there is no slice.
void Scheduler::set_slice() {
  uint64_t end = VirtualTime::kNever;
  if (live() > 1) {
    end = vt_.now() + std::max<uint64_t>(
                          1, vt_.cycles_of_ns(static_cast<uint64_t>(config_.quantum_us * 1000.0)));
    end = std::min(end, table_.first_deadline());
  }
  vt_.set_slice_end(end);
}

// Every thread waits: time moves to the first deadline (a waiter's or a timer's) as a sleep
// does; with none, the process waits for a host signal, as a Linux process whose threads
// all wait forever would.
void Scheduler::idle() {
  uint64_t first = table_.first_deadline();
  bool host_io = false;
  int64_t host_deadline = -1;
  for (size_t i = 0; i < table_.size(); ++i) {
    const GuestThread& t = table_.at(i);
    if (t.state != State::Waiting || !t.host_io) continue;
    host_io = true;
    if (t.host_deadline >= 0 && (host_deadline < 0 || t.host_deadline < host_deadline)) {
      host_deadline = t.host_deadline;
    }
  }
  if (config_.timing) first = std::min(first, vt_.next_timer());
  if (host_io) {
    // Host descriptors first; a virtual deadline is not put off by them.
    if (first != VirtualTime::kNever) {
      poll_host_waiters(0);
    } else {
      int ms = -1;
      if (host_deadline >= 0) {
        ms = static_cast<int>(
            std::clamp<int64_t>((host_deadline - host_now_ns() + 999999) / 1000000, 0, 1 << 30));
      }
      poll_host_waiters(ms);
      return;
    }
    for (size_t i = 0; i < table_.size(); ++i) {
      if (table_.at(i).state == State::Runnable) return;
    }
  }
  if (first != VirtualTime::kNever) {
    host_.sleep_until(first);
  } else {
    host_.await_host_signal();
  }
  table_.wake_due(vt_.now());
}

// A thread that has exited loses its own pending signals (Linux flushes them); the
// process's go to the threads that are left.
void Scheduler::route_signals() {
  if (table_.running().state == State::Dead) sig_.pending = 0;
  wake_for_shared();
}

// Each signal for the process that the running thread cannot take now (it blocks it, or
// it has exited) wakes the first other thread after it in creation order that does not
// block it from its wait (EINTR; the call is made again after a sigwait or signalfd read,
// which then takes it), as Linux's complete_signal picks a thread; a runnable one takes
// it when it runs. One that every thread blocks stays pending for the process.
void Scheduler::wake_for_shared() {
  const GuestThread& cur = table_.running();
  uint64_t left = sig_.shared;
  if (cur.state != State::Dead) left &= sig_.blocked & ~kUnblockable;
  const size_t n = table_.size();
  while (left != 0) {
    const uint64_t bit = left & -left;
    left &= left - 1;
    for (size_t i = 1; i < n; ++i) {
      GuestThread& t = table_.at((table_.running_index() + i) % n);
      if (t.state == State::Dead || (t.blocked & ~kUnblockable & bit) != 0) continue;
      if (t.state == State::Waiting) table_.wake(t, -EINTR);
      break;
    }
  }
}

// The running thread's system call ends as its wait did: with the wake's result, or it is
// made again (a host wait).
void Scheduler::resume_current() {
  GuestThread& t = table_.running();
  if (t.has_result) {
    t.has_result = false;
    host_.set_syscall_result(t.result);
  }
  if (t.retry) {
    t.retry = false;
    host_.restart_syscall();
  }
}

void Scheduler::schedule() {
  if (clone_.active) start_cloned_thread();
  GuestThread* cur = &table_.running();
  // A waiting thread with a signal it can take wakes with EINTR (the running thread's
  // signals are in sig_).
  if (cur->state == State::Waiting && sig_.next_deliverable() != 0) table_.wake(*cur, -EINTR);
  if (!switch_pending_) return;
  switch_pending_ = false;
  table_.wake_due(vt_.now());
  route_signals();
  // A signal to deliver first: the running thread keeps the CPU until it is delivered.
  if (cur->state == State::Runnable && sig_.next_deliverable() != 0) {
    resume_current();
    set_slice();
    return;
  }
  const size_t n = table_.size();
  size_t next = n;
  poll_host_waiters(0);
  while (!host_.ended()) {
    next = table_.next_runnable();
    if (next != n) break;
    idle();
    route_signals();
    if (cur->state == State::Waiting && sig_.next_deliverable() != 0) table_.wake(*cur, -EINTR);
  }
  if (next == n) return;  // the process ended while every thread waited
  if (next != table_.running_index()) {
    if (cur->state != State::Dead) host_.save_thread(*cur);
    host_.load_thread(table_.at(next));
    table_.switch_to(next);
    ++stats_.thread_switches;
    host_.running_thread(tid(), true);
    // §1.8 steps 3 and 5: the switched-in thread's EFLAGS is loaded with bit 30 = 0.
    host_.clear_eflags30();
  }
  resume_current();
  table_.drop_dead();
  set_slice();
}

}  // namespace padlock::emu
