// Futex words that name their owner (docs/emulator.md, "Threads"), over the threads' table
// and guest memory: PI futexes (FUTEX_LOCK_PI, FUTEX_TRYLOCK_PI, FUTEX_UNLOCK_PI,
// FUTEX_WAIT_REQUEUE_PI, FUTEX_CMP_REQUEUE_PI) and the robust lists threads leave at their
// exit; FUTEX_WAKE and FUTEX_REQUEUE pass through to the table. Results are Linux's.
#pragma once

#include <cstdint>

namespace padlock::emu {

class ThreadTable;  // emulator/linux/threads/thread_table.hpp
class UserMemory;   // emulator/linux/vm/user_memory.hpp

// The scheduler around the words: the running thread waits (the table's block, then a
// switch), and the virtual time a deadline is compared with.
class FutexHost {
 public:
  virtual ~FutexHost() = default;
  virtual void block_running(uint64_t uaddr, uint32_t bitset, uint64_t deadline) = 0;
  virtual uint64_t virtual_now() const = 0;
};

class FutexWords {
 public:
  // `wide`: an x86-64 guest (the robust list's pointers and offset are 8 bytes).
  FutexWords(ThreadTable& threads, UserMemory& user, FutexHost& host, bool wide)
      : threads_(threads), user_(user), host_(host), wide_(wide) {}

  // FUTEX_WAKE*: wakes up to `n` (at least one) waiters on `uaddr` whose bitset meets
  // `bitset`, oldest first; the number woken.
  int wake(uint64_t uaddr, int64_t n, uint32_t bitset);
  // FUTEX_(CMP_)REQUEUE: wakes `n_wake`, moves up to `n_requeue` more to `to`; the total.
  int requeue(uint64_t uaddr, int64_t n_wake, uint64_t to, int64_t n_requeue);
  // FUTEX_LOCK_PI/LOCK_PI2 (`trylock`: FUTEX_TRYLOCK_PI) takes the word or waits for it
  // until `deadline` (sets `blocks`).
  int64_t lock_pi(uint64_t uaddr, uint64_t deadline, bool trylock, bool& blocks);
  // FUTEX_UNLOCK_PI hands the word to the oldest waiter.
  int64_t unlock_pi(uint64_t uaddr);
  // FUTEX_WAIT_REQUEUE_PI: the caller waits on `uaddr` until FUTEX_CMP_REQUEUE_PI moves it
  // to the PI word `uaddr2` (or `deadline`); FUTEX_CMP_REQUEUE_PI: the oldest such waiter
  // takes `uaddr2` if it is free (woken owning it), up to `n_requeue` others wait for it
  // as FUTEX_LOCK_PI waiters.
  void wait_requeue_pi(uint64_t uaddr, uint64_t uaddr2, uint64_t deadline);
  int64_t cmp_requeue_pi(uint64_t uaddr, uint64_t uaddr2, int64_t n_requeue);
  // Thread `tid` exits: the robust list at `head` is walked (Linux's exit_robust_list).
  void exit_robust_list(int tid, uint64_t head);
  // exit_group, a fatal signal, execve: every live thread's robust list is walked;
  // `running_head` is the running thread's (the process's set_robust_list), zeroed.
  void exit_all_robust_lists(uint64_t& running_head);

 private:
  bool pi_hand_over(uint64_t uaddr, uint32_t owner_died);
  void owner_died(uint64_t uaddr, int tid, bool pi, bool pending);

  ThreadTable& threads_;
  UserMemory& user_;
  FutexHost& host_;
  bool wide_;
};

}  // namespace padlock::emu
