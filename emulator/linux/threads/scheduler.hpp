// The deterministic scheduler of a process's guest threads (docs/emulator.md, "Threads").
// All threads run on the process's one CPU, one at a time. A switch happens only in the run
// loop, between two emulation slices, at points fixed by the guest's own execution and the
// virtual clock: a thread waits (futex, sleep, a host descriptor), exits or yields, or its
// time slice (--quantum) ends. The next thread is the next runnable one in creation order.
// Nothing depends on host time, so the same program with the same --seed runs the same
// interleaving.
//
// It owns the threads' table and the futex words over it, and reaches the CPU, the
// process's control flow and the host's descriptors only through `ThreadHost`.
#pragma once

#include <poll.h>

#include <cstdint>
#include <vector>

#include "emulator/linux/signal/signals.hpp"
#include "emulator/linux/threads/futex_words.hpp"
#include "emulator/linux/threads/thread_table.hpp"
#include "emulator/observe/stats.hpp"
#include "emulator/time/virtual_time.hpp"

namespace padlock::emu {

class UserMemory;  // emulator/linux/vm/user_memory.hpp

// What the scheduler asks of its process.
class ThreadHost {
 public:
  virtual ~ThreadHost() = default;
  // A switch: the running thread's registers, i386 TLS descriptors, per-thread signal state
  // and kernel words go into `t`, or come out of it.
  virtual void save_thread(GuestThread& t) = 0;
  virtual void load_thread(const GuestThread& t) = 0;
  // §1.8 steps 3 and 5: a task switch stores the outgoing EFLAGS and loads the incoming
  // one, both with bit 30 = 0.
  virtual void clear_eflags30() = 0;
  // Thread `tid` runs from now on (`switched`: it was switched in; otherwise a clone made
  // the process multi-threaded).
  virtual void running_thread(int tid, bool switched) = 0;
  // The run loop must act: emulation stops at once.
  virtual void request_stop() = 0;
  virtual bool ended() const = 0;  // exit_group or a fatal signal
  virtual void exit_group(int code) = 0;
  // The running thread's kernel words: set_robust_list's head, set_tid_address's word.
  virtual uint64_t robust_list() const = 0;
  virtual uint64_t clear_child_tid() const = 0;
  // The running thread's system call returns `result`.
  virtual void set_syscall_result(int64_t result) = 0;
  // ... or is made again: back to its 2-byte int 0x80 / syscall / sysenter.
  virtual void restart_syscall() = 0;
  virtual void queue_signal(const GuestSiginfo& si) = 0;  // to the running thread
  // Every thread waits: time moves to `cycle` as a sleep's does (timers fire); true when a
  // signal for the guest stopped it early.
  virtual bool sleep_until(uint64_t cycle) = 0;
  virtual void await_host_signal() = 0;  // every thread waits forever: until a host signal
  virtual void take_host_signals() = 0;  // a poll was interrupted
  // Host waits (syscall/host_wait.cpp): signalfds and timerfds made ready as the waiters
  // see them (`own`: the waiters' own pending signals); a wait4/waitid waiter's children;
  // the first virtual cycle a descriptor may become ready at (VirtualTime::kNever: none).
  virtual void sync_wait_descriptors(uint64_t own) = 0;
  virtual bool children_ready(const ChildWait& w) = 0;
  virtual uint64_t fd_event_at(int fd) = 0;
};

struct SchedulerConfig {
  bool wide = false;      // an x86-64 guest (TLS by FS base, not GDT entries)
  double quantum_us = 0;  // --quantum: a time slice of virtual time
  bool timing = true;     // --timing: timers on the virtual clock end an idle wait
};

class Scheduler final : private FutexHost {
 public:
  Scheduler(ThreadHost& host, SignalState& sig, VirtualTime& vt, UserMemory& user, Stats& stats,
            const SchedulerConfig& config);

  // Only the running thread is left, with TID `tid`; clone numbers others from tid + 1 (the
  // first thread, whose TID is the PID; a forked child's).
  void restart(int tid);

  // --- what system calls ask --------------------------------------------------------
  int tid() const { return table_.running_tid(); }
  int live() const { return table_.live(); }
  // clone(CLONE_VM | CLONE_THREAD | ...): the new thread's TID. It starts from the caller's
  // registers once the system call has returned (RAX 0, the stack `sp`, TLS `tls`); for
  // i386 `tls` is the user_desc's GDT entry number and descriptor, read by the caller.
  int64_t clone(uint64_t flags, uint64_t sp, uint64_t child_tid, uint64_t tls, unsigned tls_index,
                uint64_t tls_desc);
  // The calling thread waits (FUTEX_WAIT*, a sleep) until woken or until `deadline`
  // (virtual cycles; VirtualTime::kNever: none). Its system call's result is set when it
  // wakes: 0 when woken, -ETIMEDOUT (futex) or 0 (sleep) at the deadline, -EINTR on a
  // signal. The handler sets SyscallContext::blocks.
  void block(uint64_t futex_addr, uint32_t bitset, uint64_t deadline);
  // rt_sigtimedwait with other threads: the caller waits with `set` unblocked until a
  // signal wakes it (the call is then made again, its mask restored) or `deadline`
  // passes (-EAGAIN).
  void sigwait_block(uint64_t set, uint64_t deadline);
  // A call that would block the other threads waits for `fds` here (its own, in the running
  // thread), until `timeout_ms` of host time (-1: none) or the first virtual event of its
  // descriptors (a timerfd's expiry); then it is made again.
  void host_wait(std::vector<pollfd>& fds, int64_t timeout_ms);
  // exit: this thread ends (its robust list walked; CLONE_CHILD_CLEARTID: its TID word is
  // zeroed and one waiter woken); the last one ends the process.
  void exit_thread(int code);
  void yield();  // sched_yield
  // tgkill/tkill to a thread of this process; false: no such thread.
  bool signal_thread(int tid, const GuestSiginfo& si);
  // A signal for the process (kill, a timer) the running thread cannot take now: a waiting
  // thread that can take it wakes (EINTR), one for each such signal.
  void wake_for_shared();
  // FUTEX_WAKE, FUTEX_REQUEUE, PI futexes and robust lists.
  FutexWords& futexes() { return futexes_; }

  // --- the run loop -----------------------------------------------------------------
  // After each stop: a new thread starts, a waiting thread with a signal wakes, and when a
  // switch is due the next runnable thread is switched in (every thread waits: idle).
  void schedule();
  // The running thread's slice is over: switch at the next stop.
  void end_slice();
  // A switch or a new thread waits for the run loop.
  bool switch_due() const { return switch_pending_ || clone_.active; }
  ThreadTable& table() { return table_; }
  GuestThreads& threads() { return table_; }

 private:
  // FutexHost: a futex word's waiter blocks as `block` makes it, on the guest's clock.
  void block_running(uint64_t uaddr, uint32_t bitset, uint64_t deadline) override {
    block(uaddr, bitset, deadline);
  }
  uint64_t virtual_now() const override { return vt_.now(); }

  struct PendingClone {
    bool active = false;
    uint64_t flags = 0, sp = 0, child_tid = 0, tls = 0, tls_desc = 0;
    unsigned tls_index = 0;
    int tid = 0;
  };
  void start_cloned_thread();
  void route_signals();
  void resume_current();
  void idle();  // every thread waits: advance time to the first deadline or wait for a signal
  void set_slice();
  void poll_host_waiters(int timeout_ms);  // wakes those whose descriptors are ready

  ThreadHost& host_;
  SignalState& sig_;  // the running thread's mask and pending signals, and the process's
  VirtualTime& vt_;
  UserMemory& user_;
  Stats& stats_;
  SchedulerConfig config_;
  ThreadTable table_;
  FutexWords futexes_;
  int next_tid_ = 0;
  bool switch_pending_ = false;  // the running thread waits, ended, yielded or used its slice
  PendingClone clone_;
  bool main_exited_ = false;  // the first thread called exit: its status is the process's
  int main_exit_code_ = 0;
  std::vector<pollfd> host_fds_;    // poll_host_waiters: every host waiter's descriptors
  std::vector<size_t> host_owner_;  // ... and the index of the thread each belongs to
};

}  // namespace padlock::emu
