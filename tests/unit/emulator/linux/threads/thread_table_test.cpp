// The guest threads' table (emulator/linux/threads/thread_table.*) on its own, without a CPU
// or guest memory: futex(2)'s wake and requeue counts and order, timeouts, the round robin,
// rt_sigtimedwait's mask and the view gdb gets (docs/emulator.md, "Threads").
#include "emulator/linux/threads/thread_table.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "tests/unit/emulator/linux/threads/make_threads.hpp"

namespace padlock::emu::test {
namespace {

using State = GuestThread::State;

constexpr uint64_t kWord = 0x1000, kOther = 0x2000;
constexpr int kFirstTid = 100;

class ThreadTableTest : public ::testing::Test {
 protected:
  // Threads kFirstTid (running), kFirstTid + 1, ... in creation order.
  void make(int n) { make_threads(table, kFirstTid, n); }
  // Thread `i` calls a wait (only the running thread can), then thread 0 runs again.
  void wait_on(size_t i, uint64_t addr, uint32_t bitset = ~0u,
               uint64_t deadline = VirtualTime::kNever) {
    table.switch_to(i);
    table.block(addr, bitset, deadline);
    table.switch_to(0);
  }
  std::vector<int> waiting() {
    std::vector<int> tids;
    for (size_t i = 0; i < table.size(); ++i) {
      if (table.at(i).state == State::Waiting) tids.push_back(table.at(i).tid);
    }
    return tids;
  }
  void expect_woken(size_t i, int64_t result) {
    const GuestThread& t = table.at(i);
    EXPECT_EQ(t.state, State::Runnable) << t.tid;
    EXPECT_TRUE(t.has_result) << t.tid;
    EXPECT_EQ(t.result, result) << t.tid;
  }

  uint64_t blocked = 0;  // the running thread's signal mask (the process's SignalState)
  ThreadTable table{blocked};
};

// futex(2): FUTEX_WAKE "wakes at most val of the waiters" and "returns the number of
// waiters that were woken up"; Linux wakes one when val is 0. Oldest waiter first.
TEST_F(ThreadTableTest, FutexWakeWakesAtMostNOldestFirstAndReturnsHowMany) {
  make(5);
  for (size_t i : {4, 2, 1, 3}) wait_on(i, kWord);
  EXPECT_EQ(table.futex_wake(kWord, 2, ~0u), 2);
  expect_woken(4, 0);
  expect_woken(2, 0);
  EXPECT_EQ(waiting(), (std::vector<int>{101, 103}));
  EXPECT_EQ(table.futex_wake(kWord, 0, ~0u), 1);
  expect_woken(1, 0);
  EXPECT_EQ(table.futex_wake(kWord, 5, ~0u), 1);
  EXPECT_EQ(table.futex_wake(kWord, 1, ~0u), 0);
  EXPECT_TRUE(waiting().empty());
}

TEST_F(ThreadTableTest, FutexWakeReachesOnlyItsWordAndBitset) {
  make(4);
  wait_on(1, kWord, 0x1);
  wait_on(2, kOther);
  wait_on(3, kWord, 0x6);
  EXPECT_EQ(table.futex_wake(kWord, 10, 0x8), 0);
  EXPECT_EQ(table.futex_wake(kWord, 10, 0x2), 1);  // FUTEX_WAKE_BITSET
  expect_woken(3, 0);
  EXPECT_EQ(waiting(), (std::vector<int>{101, 102}));
  EXPECT_EQ(table.futex_wake(0, 10, ~0u), 0);  // a sleep (word 0) is not a futex waiter
}

// FUTEX_CMP_REQUEUE: wakes n_wake, moves up to n_requeue of the rest to the second word;
// returns both together.
TEST_F(ThreadTableTest, FutexRequeueWakesThenMovesAndCountsBoth) {
  make(5);
  for (size_t i : {1, 2, 3, 4}) wait_on(i, kWord);
  EXPECT_EQ(table.futex_requeue(kWord, 1, kOther, 2), 3);
  expect_woken(1, 0);
  EXPECT_EQ(table.futex_wake(kOther, 10, ~0u), 2);  // 102 and 103 moved
  expect_woken(2, 0);
  expect_woken(3, 0);
  EXPECT_EQ(waiting(), (std::vector<int>{104}));
  EXPECT_EQ(table.futex_requeue(kWord, 0, kOther, 0), 0);  // wakes none, moves none
  EXPECT_EQ(waiting(), (std::vector<int>{104}));
}

TEST_F(ThreadTableTest, PiWaitersAreLeftToUnlockPi) {
  make(3);
  wait_on(1, kWord);
  table.at(1).pi_wait = true;  // FUTEX_LOCK_PI (FutexWords::lock_pi)
  wait_on(2, kWord);
  table.at(2).pi_wait = true;
  EXPECT_EQ(table.futex_wake(kWord, 10, ~0u), 0);
  EXPECT_EQ(table.pi_waiter(kWord), &table.at(1));  // the oldest gets the lock
  // A signal: Linux restarts FUTEX_LOCK_PI after the handler instead of failing it.
  table.wake(table.at(1), -EINTR);
  EXPECT_FALSE(table.at(1).has_result);
  EXPECT_TRUE(table.at(1).retry);
  EXPECT_EQ(table.pi_waiter(kWord), &table.at(2));
}

TEST_F(ThreadTableTest, DeadlinesTimeOutFutexWaitsAndEndSleeps) {
  make(4);
  wait_on(1, kWord, ~0u, 100);
  wait_on(2, 0, 0, 100);  // nanosleep
  wait_on(3, kWord, ~0u, 200);
  EXPECT_EQ(table.first_deadline(), 100u);
  table.wake_due(99);
  EXPECT_EQ(waiting().size(), 3u);
  table.wake_due(100);
  expect_woken(1, -ETIMEDOUT);
  expect_woken(2, 0);
  EXPECT_EQ(waiting(), (std::vector<int>{103}));
  EXPECT_EQ(table.first_deadline(), 200u);
}

// rt_sigtimedwait: the wait unblocks the set it waits for; its own mask comes back when it
// wakes. The deadline ends it with EAGAIN; a signal makes the call again.
TEST_F(ThreadTableTest, SigwaitGetsItsMaskBackAndEagainAtItsDeadline) {
  make(2);
  blocked = 0xF0;  // during the wait
  table.block(0, 0, 50);
  table.running().sigwait = true;
  table.running().sigwait_mask = 0x0F;
  table.wake_due(50);
  expect_woken(0, -EAGAIN);
  EXPECT_EQ(blocked, 0x0Fu);

  table.switch_to(1);
  table.block(0, 0, VirtualTime::kNever);
  table.running().sigwait = true;
  table.running().sigwait_mask = 0x30;
  table.switch_to(0);
  table.wake(table.at(1), -EINTR);  // a switched-out thread's mask is its own
  EXPECT_EQ(table.at(1).blocked, 0x30u);
  EXPECT_EQ(blocked, 0x0Fu);  // the running thread's is left alone
  EXPECT_FALSE(table.at(1).has_result);
  EXPECT_TRUE(table.at(1).retry);
}

// The round robin: the next runnable thread after the running one in creation order.
TEST_F(ThreadTableTest, RoundRobinTakesTheNextRunnableInCreationOrder) {
  make(4);
  wait_on(2, kWord);
  EXPECT_EQ(table.next_runnable(), 1u);
  table.switch_to(1);
  EXPECT_EQ(table.next_runnable(), 3u);
  table.switch_to(3);
  EXPECT_EQ(table.next_runnable(), 0u);
  wait_on(1, kWord);
  table.switch_to(3);
  table.block(kWord, ~0u, VirtualTime::kNever);
  EXPECT_EQ(table.next_runnable(), 0u);
  table.switch_to(0);
  table.block(kWord, ~0u, VirtualTime::kNever);
  EXPECT_EQ(table.next_runnable(), table.size());  // every thread waits
  EXPECT_FALSE(table.others_can_run());
  EXPECT_EQ(table.futex_wake(kWord, 1, ~0u), 1);  // the oldest: thread 2
  EXPECT_EQ(table.next_runnable(), 2u);
  EXPECT_TRUE(table.others_can_run());
}

TEST_F(ThreadTableTest, DeadThreadsLeaveAndTheRunningOneStays) {
  make(4);
  table.at(0).state = State::Dead;
  table.at(3).state = State::Dead;
  table.switch_to(2);
  EXPECT_EQ(table.live(), 2);
  EXPECT_EQ(table.live_tids(), (std::vector<int>{101, 102}));
  EXPECT_EQ(table.find_live(100), nullptr);
  table.drop_dead();
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.running_tid(), 102);
  EXPECT_EQ(table.running_index(), 1u);
  table.running().state = State::Dead;  // exited, not yet switched out
  table.drop_dead();
  EXPECT_EQ(table.size(), 2u);
}

// What gdb gets (GuestThreads): a switched-out thread's registers, read and written; none for
// the running thread, whose registers are the CPU's.
TEST_F(ThreadTableTest, TheDebuggerViewReadsAndWritesSwitchedOutThreads) {
  make(3);
  table.at(1).ctx.gpr[3] = 0x1111;
  EXPECT_EQ(table.running_tid(), 100);
  EXPECT_EQ(table.saved_registers(100), nullptr);
  ASSERT_NE(table.saved_registers(101), nullptr);
  EXPECT_EQ(table.saved_registers(101)->gpr[3], 0x1111u);
  CpuContext regs = *table.saved_registers(101);
  regs.gpr[3] = 0x2222;
  EXPECT_TRUE(table.set_saved_registers(101, regs));
  EXPECT_EQ(table.at(1).ctx.gpr[3], 0x2222u);
  EXPECT_FALSE(table.set_saved_registers(100, regs));
  table.at(2).state = State::Dead;
  EXPECT_EQ(table.saved_registers(102), nullptr);
  EXPECT_FALSE(table.set_saved_registers(102, regs));
  EXPECT_EQ(table.live_tids(), (std::vector<int>{100, 101}));
}

}  // namespace
}  // namespace padlock::emu::test
