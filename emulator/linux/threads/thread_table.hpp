// The guest threads of one process and their scheduling state (docs/emulator.md, "Threads"):
// which one runs, which wait and on what, the futex queues and the round robin. It has no
// CPU and no guest memory: the process saves and loads registers at a switch and reads the
// futex words (threads/scheduler.cpp, threads/futex_words.cpp); this table decides who waits,
// who wakes with what result, and who runs next.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "emulator/linux/threads/guest_thread.hpp"
#include "emulator/linux/threads/guest_threads.hpp"

namespace padlock::emu {

class ThreadTable final : public GuestThreads {
 public:
  // One running thread, TID 0 until `restart`. `running_blocked` is the running thread's
  // signal mask, which lives in the process's SignalState while it runs (rt_sigtimedwait's
  // wake restores it).
  explicit ThreadTable(uint64_t& running_blocked);

  // Only the running thread is left, with TID `tid` (the first thread; a forked child's).
  void restart(int tid);
  void add(std::unique_ptr<GuestThread> t);  // last in the round robin
  size_t size() const { return threads_.size(); }
  GuestThread& at(size_t i) { return *threads_[i]; }
  size_t running_index() const { return cur_; }
  GuestThread& running() { return *threads_[cur_]; }
  const GuestThread& running() const { return *threads_[cur_]; }
  int live() const;
  GuestThread* find_live(int tid);

  // The running thread waits on the futex word `futex_addr` (0: a sleep) for a wake whose
  // bitset meets `bitset`, or until `deadline` (virtual cycles).
  void block(uint64_t futex_addr, uint32_t bitset, uint64_t deadline);
  // `t` runs again; its system call returns `result` (0: woken, -ETIMEDOUT, -EINTR), or is
  // made again where Linux restarts it.
  void wake(GuestThread& t, int64_t result);
  // FUTEX_WAKE*: wakes up to `n` (at least one) waiters on `uaddr` whose bitset meets
  // `bitset`, oldest first; the number woken.
  int futex_wake(uint64_t uaddr, int64_t n, uint32_t bitset);
  // FUTEX_(CMP_)REQUEUE: wakes `n_wake`, moves up to `n_requeue` more to `to`; the total.
  int futex_requeue(uint64_t uaddr, int64_t n_wake, uint64_t to, int64_t n_requeue);
  GuestThread* pi_waiter(uint64_t uaddr);  // the oldest FUTEX_LOCK_PI waiter on `uaddr`
  // The oldest FUTEX_WAIT_REQUEUE_PI waiter on `uaddr` for the PI word `uaddr2`.
  GuestThread* requeue_pi_waiter(uint64_t uaddr, uint64_t uaddr2);
  // Waiters whose deadline is at or before `now`: a futex wait times out, a sleep completes,
  // a host wait is made again.
  void wake_due(uint64_t now);
  uint64_t first_deadline() const;  // of the waiting threads (VirtualTime::kNever: none)
  bool others_can_run() const;      // another thread runs or will (a runnable or timed one)

  // The round robin: the next runnable thread after the running one in creation order (the
  // running one last); size() when none is.
  size_t next_runnable() const;
  void switch_to(size_t next) { cur_ = next; }
  void drop_dead();  // dead threads leave the table (the running one stays until switched out)

  // GuestThreads
  std::vector<int> live_tids() const override;
  int running_tid() const override { return running().tid; }
  const CpuContext* saved_registers(int tid) const override;
  bool set_saved_registers(int tid, const CpuContext& regs) override;

 private:
  GuestThread* switched_out(int tid) const;
  // The oldest waiter on `uaddr` that a plain FUTEX_WAKE or FUTEX_REQUEUE reaches and whose
  // bitset meets `bitset`.
  GuestThread* oldest_plain_waiter(uint64_t uaddr, uint32_t bitset) const;

  // In creation order (the round-robin order); cur_ runs. Never empty.
  std::vector<std::unique_ptr<GuestThread>> threads_;
  size_t cur_ = 0;
  uint64_t wait_seq_ = 0;
  uint64_t& running_blocked_;
};

}  // namespace padlock::emu
