// Futex words that name their owner (emulator/linux/threads/futex_words.*), over the
// threads' table and guest memory with no CPU: futex(2)'s PI operations and the robust
// list Linux walks at a thread's exit (include/uapi/linux/futex.h: the owner's TID in bits
// 0..29, FUTEX_OWNER_DIED bit 30, FUTEX_WAITERS bit 31).
#include "emulator/linux/threads/futex_words.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>

#include "emulator/linux/threads/thread_table.hpp"
#include "emulator/linux/vm/user_memory.hpp"
#include "tests/unit/emulator/linux/threads/make_threads.hpp"

namespace padlock::emu::test {
namespace {

using State = GuestThread::State;

constexpr uint32_t kOwnerDied = 0x40000000, kWaiters = 0x80000000;
constexpr uint64_t kPage = AddressSpace::kPageSize;
constexpr uint64_t kBase = 0x10000, kWord = 0x10010, kWord2 = 0x10020;
constexpr int kFirstTid = 100;

class FutexWordsTest : public ::testing::Test, public FutexHost {
 protected:
  FutexWordsTest() { EXPECT_TRUE(mem.map_anonymous(kBase, kPage, kPageRead | kPageWrite)); }
  void block_running(uint64_t uaddr, uint32_t bitset, uint64_t deadline) override {
    table.block(uaddr, bitset, deadline);
  }
  uint64_t virtual_now() const override { return now; }

  // Threads kFirstTid (running), kFirstTid + 1, ... in creation order.
  void make(int n) { make_threads(table, kFirstTid, n); }
  uint32_t word(uint64_t va) {
    uint32_t v = 0;
    EXPECT_TRUE(user.get(va, v));
    return v;
  }
  void set(uint64_t va, uint32_t v) { ASSERT_TRUE(user.put(va, v)); }
  // Thread `i` waits on `va` with FUTEX_WAIT, then thread 0 runs again.
  void futex_wait(size_t i, uint64_t va) {
    table.switch_to(i);
    table.block(va, ~0u, VirtualTime::kNever);
    table.switch_to(0);
  }
  void expect_woken(size_t i, int64_t result) {
    EXPECT_EQ(table.at(i).state, State::Runnable) << table.at(i).tid;
    EXPECT_TRUE(table.at(i).has_result) << table.at(i).tid;
    EXPECT_EQ(table.at(i).result, result) << table.at(i).tid;
  }

  uint64_t now = 1000;
  AddressSpace mem{false};
  UserMemory user{mem, false};
  uint64_t blocked = 0;
  ThreadTable table{blocked};
  FutexWords words{table, user, *this, false};
};

// futex(2), FUTEX_LOCK_PI: a word with no owner is taken; EDEADLK for the owner itself;
// FUTEX_TRYLOCK_PI's EAGAIN; ESRCH for an owner that does not exist; ETIMEDOUT for a
// deadline already past; otherwise FUTEX_WAITERS and the caller waits. FUTEX_UNLOCK_PI:
// EPERM for a thread that is not the owner; the oldest waiter gets the word.
TEST_F(FutexWordsTest, LockPiTakesAFreeWordOrWaitsAndUnlockHandsItOver) {
  make(4);
  bool blocks = false;
  set(kWord, kOwnerDied);  // a dead owner's word is free, and keeps telling so
  EXPECT_EQ(words.lock_pi(kWord, VirtualTime::kNever, false, blocks), 0);
  EXPECT_FALSE(blocks);
  EXPECT_EQ(word(kWord), kOwnerDied | 100);
  EXPECT_EQ(words.lock_pi(kWord, VirtualTime::kNever, false, blocks), -EDEADLK);
  set(kWord, 100);
  table.switch_to(1);
  EXPECT_EQ(words.lock_pi(kWord, VirtualTime::kNever, true, blocks), -EAGAIN);
  EXPECT_EQ(words.lock_pi(kWord, now, false, blocks), -ETIMEDOUT);
  EXPECT_FALSE(blocks);
  set(kWord2, 999);
  EXPECT_EQ(words.lock_pi(kWord2, VirtualTime::kNever, false, blocks), -ESRCH);
  EXPECT_EQ(words.lock_pi(kWord, VirtualTime::kNever, false, blocks), 0);
  EXPECT_TRUE(blocks);
  EXPECT_EQ(word(kWord), kWaiters | 100);
  EXPECT_EQ(table.at(1).state, State::Waiting);
  EXPECT_TRUE(table.at(1).pi_wait);
  table.switch_to(2);
  blocks = false;
  EXPECT_EQ(words.lock_pi(kWord, VirtualTime::kNever, false, blocks), 0);
  EXPECT_TRUE(blocks);
  EXPECT_EQ(words.unlock_pi(kWord), -EPERM);
  table.switch_to(0);
  EXPECT_EQ(words.wake(kWord, 5, ~0u), 0);  // FUTEX_WAKE does not wake PI waiters
  EXPECT_EQ(words.unlock_pi(kWord), 0);
  EXPECT_EQ(word(kWord), kWaiters | 101);  // Linux keeps FUTEX_WAITERS on a handed word
  expect_woken(1, 0);
  EXPECT_EQ(table.at(2).state, State::Waiting);
  table.switch_to(1);
  EXPECT_EQ(words.unlock_pi(kWord), 0);
  EXPECT_EQ(word(kWord), kWaiters | 102);
  expect_woken(2, 0);
  table.switch_to(2);
  EXPECT_EQ(words.unlock_pi(kWord), 0);
  EXPECT_EQ(word(kWord), 0u);  // no waiter: free
  EXPECT_EQ(words.unlock_pi(kPage * 100), -EFAULT);
}

// Linux's exit_robust_list and handle_futex_death: each word the dying thread owns gets
// FUTEX_OWNER_DIED (FUTEX_WAITERS kept) and one waiter is woken; a PI word (bit 0 of the
// entry's pointer) goes to its oldest waiter; a word another thread owns is left; the
// pending entry whose word is 0 wakes a waiter.
TEST_F(FutexWordsTest, RobustListAtExitMarksTheDeadOwnersWords) {
  make(5);
  // An i386 robust_list_head {next, futex_offset, list_op_pending} and a circular list of
  // entries, each word 8 bytes after its entry.
  constexpr uint64_t head = 0x10100, e1 = 0x10200, e2 = 0x10300, e3 = 0x10400, e4 = 0x10500;
  set(head, e1);
  set(head + 4, 8);
  set(head + 8, e4);
  set(e1, e2);
  set(e2, e3 | 1);
  set(e3, head);
  set(e1 + 8, kWaiters | 100);  // owned, with a FUTEX_WAIT waiter
  set(e2 + 8, 101);             // another thread's
  set(e3 + 8, 100);             // a PI word, owned
  set(e4 + 8, 0);               // pending: released just before the exit
  futex_wait(1, e1 + 8);
  table.switch_to(2);
  bool blocks = false;
  ASSERT_EQ(words.lock_pi(e3 + 8, VirtualTime::kNever, false, blocks), 0);
  ASSERT_TRUE(blocks);
  table.switch_to(0);
  futex_wait(3, e4 + 8);
  futex_wait(4, e1 + 8);
  words.exit_robust_list(100, head);
  EXPECT_EQ(word(e1 + 8), kWaiters | kOwnerDied);
  expect_woken(1, 0);
  EXPECT_EQ(table.at(4).state, State::Waiting);  // one waiter only
  EXPECT_EQ(word(e2 + 8), 101u);
  EXPECT_EQ(word(e3 + 8), kWaiters | kOwnerDied | 102);
  expect_woken(2, 0);
  EXPECT_EQ(word(e4 + 8), 0u);
  expect_woken(3, 0);
}

// exit_group and execve: every live thread's list is walked once, then forgotten.
TEST_F(FutexWordsTest, ExitAllWalksEachLiveThreadsListOnce) {
  make(3);
  constexpr uint64_t h0 = 0x10100, h1 = 0x10200, h2 = 0x10300;
  for (const uint64_t h : {h0, h1, h2}) {
    set(h, h + 0x40);  // one entry
    set(h + 4, 8);
    set(h + 8, 0);
    set(h + 0x40, h);
  }
  set(h0 + 0x48, 100);
  set(h1 + 0x48, 101);
  set(h2 + 0x48, 102);
  table.at(1).robust_list = h1;
  table.at(2).robust_list = h2;
  table.at(2).state = State::Dead;  // walked at its own exit
  uint64_t running_head = h0;
  words.exit_all_robust_lists(running_head);
  EXPECT_EQ(running_head, 0u);
  EXPECT_EQ(table.at(1).robust_list, 0u);
  EXPECT_EQ(word(h0 + 0x48), kOwnerDied);
  EXPECT_EQ(word(h1 + 0x48), kOwnerDied);
  EXPECT_EQ(word(h2 + 0x48), 102u);
  set(h0 + 0x48, 100);
  words.exit_all_robust_lists(running_head);  // nothing left to walk
  EXPECT_EQ(word(h0 + 0x48), 100u);
}

// FUTEX_WAIT_REQUEUE_PI / FUTEX_CMP_REQUEUE_PI (a condition variable with a PI mutex): the
// oldest waiter takes the free PI word and is woken owning it, the others wait for it as
// FUTEX_LOCK_PI waiters; the result counts both.
TEST_F(FutexWordsTest, CmpRequeuePiGivesTheFreeWordToTheOldestAndQueuesTheRest) {
  make(3);
  set(kWord, 0);
  set(kWord2, 0);
  for (size_t i : {2, 1}) {
    table.switch_to(i);
    words.wait_requeue_pi(kWord, kWord2, VirtualTime::kNever);
  }
  table.switch_to(0);
  EXPECT_EQ(words.cmp_requeue_pi(kWord, kWord2, 1), 2);
  EXPECT_EQ(word(kWord2), kWaiters | 102);
  expect_woken(2, 0);
  EXPECT_EQ(table.at(1).state, State::Waiting);
  EXPECT_EQ(table.at(1).futex_addr, kWord2);
  EXPECT_TRUE(table.at(1).pi_wait);
  table.switch_to(2);
  EXPECT_EQ(words.unlock_pi(kWord2), 0);
  EXPECT_EQ(word(kWord2), kWaiters | 101);
  expect_woken(1, 0);
  EXPECT_EQ(words.cmp_requeue_pi(kWord, kWord2, 1), 0);  // no waiter left
}

}  // namespace
}  // namespace padlock::emu::test
