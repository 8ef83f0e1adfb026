// Futex words that name their owner (docs/emulator.md, "Threads"): the robust list a thread
// leaves at its exit, and PI futexes (FUTEX_LOCK_PI, FUTEX_UNLOCK_PI, FUTEX_TRYLOCK_PI).
// Such a word holds the owner's TID in bits 0..29, FUTEX_OWNER_DIED in bit 30 and
// FUTEX_WAITERS in bit 31 (Linux's futex ABI, include/uapi/linux/futex.h).
//
// Priority inheritance itself changes nothing here: every guest thread has the same
// priority in the scheduler's round robin, so a PI futex is a lock that the kernel hands to
// its oldest waiter when the owner unlocks it.
#include "emulator/linux/threads/futex_words.hpp"

#include <cerrno>

#include "emulator/linux/threads/thread_table.hpp"
#include "emulator/linux/vm/user_memory.hpp"

namespace padlock::emu {

namespace {

constexpr uint32_t kTidMask = 0x3FFFFFFF, kOwnerDied = 0x40000000, kWaiters = 0x80000000;
// Linux's ROBUST_LIST_LIMIT: a list longer than this (or a cycle) is not walked further.
constexpr int kRobustListLimit = 2048;

}  // namespace

// The oldest waiter becomes the owner and returns from FUTEX_LOCK_PI with 0. Linux keeps
// FUTEX_WAITERS set on a handed-over word (the new owner unlocks through the kernel).
bool FutexWords::pi_hand_over(uint64_t uaddr, uint32_t owner_died) {
  GuestThread* next = threads_.pi_waiter(uaddr);
  if (next == nullptr) return false;
  user_.put(uaddr, static_cast<uint32_t>(next->tid) | kWaiters | owner_died);
  threads_.wake(*next, 0);
  return true;
}

// Linux's handle_futex_death: a futex word the dead thread `tid` owned gets FUTEX_OWNER_DIED
// (FUTEX_WAITERS kept, no owner), and one waiter is woken to find it; a PI futex goes to its
// oldest waiter, with FUTEX_OWNER_DIED. The pending entry (a lock or unlock in progress)
// whose word is 0 wakes a waiter, as the lock may have been released just before the exit.
void FutexWords::owner_died(uint64_t uaddr, int tid, bool pi, bool pending) {
  uint32_t v;
  if ((uaddr & 3) != 0 || !user_.get(uaddr, v)) return;
  if (pending && !pi && v == 0) {
    threads_.futex_wake(uaddr, 1, ~0u);
    return;
  }
  if ((v & kTidMask) != static_cast<uint32_t>(tid)) return;
  if (pi && pi_hand_over(uaddr, kOwnerDied)) return;
  user_.put(uaddr, (v & kWaiters) | kOwnerDied);
  if (!pi && (v & kWaiters) != 0) threads_.futex_wake(uaddr, 1, ~0u);
}

// struct robust_list_head { struct robust_list *next; long futex_offset;
// struct robust_list *list_op_pending; }: a circular list of entries, each `futex_offset`
// bytes before its futex word; bit 0 of a pointer to an entry marks a PI futex.
void FutexWords::exit_robust_list(int tid, uint64_t head) {
  if (head == 0) return;
  const unsigned w = wide_ ? 8 : 4;
  const uint64_t addr_mask = wide_ ? ~0ull : 0xFFFFFFFFull;
  bool ok = false;
  uint64_t entry = user_.get_word(head, ok);
  if (!ok) return;
  uint64_t offset = user_.get_word(head + w, ok);
  if (!ok) return;
  if (!wide_) offset = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(offset)));
  const uint64_t pending = user_.get_word(head + 2 * w, ok);
  if (!ok) return;
  for (int n = 0; (entry & ~1ull) != head && n < kRobustListLimit; ++n) {
    const uint64_t next = user_.get_word(entry & ~1ull, ok);
    if (!ok) return;
    if ((entry & ~1ull) != (pending & ~1ull)) {
      owner_died(((entry & ~1ull) + offset) & addr_mask, tid, (entry & 1) != 0, false);
    }
    entry = next;
  }
  if (pending != 0) {
    owner_died(((pending & ~1ull) + offset) & addr_mask, tid, (pending & 1) != 0, true);
  }
}

// exit_group, death by a signal, execve: every thread ends at once, and each one's robust
// list is walked as its own exit would (Linux: each exiting thread's exit_robust_list; at
// execve exec_mm_release for the caller and de_thread's exits for the others). A thread
// that exited already walked its own; a list is walked once.
void FutexWords::exit_all_robust_lists(uint64_t& running_head) {
  for (size_t i = 0; i < threads_.size(); ++i) {
    GuestThread& t = threads_.at(i);
    if (t.state == GuestThread::State::Dead) continue;
    uint64_t& head = i == threads_.running_index() ? running_head : t.robust_list;
    const uint64_t h = head;
    head = 0;
    exit_robust_list(t.tid, h);
  }
}

// FUTEX_LOCK_PI (and FUTEX_LOCK_PI2), FUTEX_TRYLOCK_PI: the caller failed to take the word
// from 0 in user space. A word with no owner is taken here (FUTEX_OWNER_DIED kept); a word
// with an owner gets FUTEX_WAITERS and the caller waits until it is handed over or
// `deadline` passes.
int64_t FutexWords::lock_pi(uint64_t uaddr, uint64_t deadline, bool trylock, bool& blocks) {
  uint32_t v;
  if (!user_.get(uaddr, v)) return -EFAULT;
  const uint32_t me = static_cast<uint32_t>(threads_.running_tid());
  const uint32_t owner = v & kTidMask;
  if (owner == me) return -EDEADLK;
  if (owner == 0) {
    const uint32_t waiters = threads_.pi_waiter(uaddr) != nullptr ? kWaiters : 0;
    return user_.put(uaddr, me | (v & kOwnerDied) | waiters) ? 0 : -EFAULT;
  }
  if (trylock) return -EAGAIN;
  // Linux: no such task (an owner in another process, too).
  if (threads_.find_live(static_cast<int>(owner)) == nullptr) return -ESRCH;
  if (deadline <= host_.virtual_now()) return -ETIMEDOUT;
  if (!user_.put(uaddr, v | kWaiters)) return -EFAULT;
  host_.block_running(uaddr, ~0u, deadline);
  threads_.running().pi_wait = true;
  blocks = true;
  return 0;
}

void FutexWords::wait_requeue_pi(uint64_t uaddr, uint64_t uaddr2, uint64_t deadline) {
  host_.block_running(uaddr, ~0u, deadline);
  threads_.running().requeue_pi_to = uaddr2;
}

// Linux's futex_requeue with requeue_pi: the top waiter gets the PI word at once when it
// has no owner (futex_proxy_trylock_atomic), the others are moved to wait for it, and the
// word gets FUTEX_WAITERS while any wait. The result counts both.
int64_t FutexWords::cmp_requeue_pi(uint64_t uaddr, uint64_t uaddr2, int64_t n_requeue) {
  auto oldest = [&] { return threads_.requeue_pi_waiter(uaddr, uaddr2); };
  int64_t n = 0;
  GuestThread* top = oldest();
  if (top == nullptr) return 0;
  uint32_t v;
  if (!user_.get(uaddr2, v)) return -EFAULT;
  if ((v & kTidMask) == 0) {
    top->requeue_pi_to = 0;
    threads_.wake(*top, 0);
    ++n;
    const bool more = oldest() != nullptr || threads_.pi_waiter(uaddr2) != nullptr;
    v = static_cast<uint32_t>(top->tid) | (v & kOwnerDied) | (more && n_requeue > 0 ? kWaiters : 0);
    if (!user_.put(uaddr2, v)) return -EFAULT;
  }
  for (int64_t moved = 0; moved < n_requeue; ++moved) {
    GuestThread* t = oldest();
    if (t == nullptr) break;
    t->futex_addr = uaddr2;
    t->requeue_pi_to = 0;
    t->pi_wait = true;
    t->requeued_pi = true;
    if (!user_.put(uaddr2, v | kWaiters)) return -EFAULT;
    v |= kWaiters;
    ++n;
  }
  return n;
}

// FUTEX_UNLOCK_PI: only the owner may; the oldest waiter gets the lock, or the word is 0.
int64_t FutexWords::unlock_pi(uint64_t uaddr) {
  uint32_t v;
  if (!user_.get(uaddr, v)) return -EFAULT;
  if ((v & kTidMask) != static_cast<uint32_t>(threads_.running_tid())) return -EPERM;
  if (pi_hand_over(uaddr, 0)) return 0;
  return user_.put(uaddr, uint32_t{0}) ? 0 : -EFAULT;
}

int FutexWords::wake(uint64_t uaddr, int64_t n, uint32_t bitset) {
  return threads_.futex_wake(uaddr, n, bitset);
}

int FutexWords::requeue(uint64_t uaddr, int64_t n_wake, uint64_t to, int64_t n_requeue) {
  return threads_.futex_requeue(uaddr, n_wake, to, n_requeue);
}

}  // namespace padlock::emu
