// The guest threads' scheduler (emulator/linux/threads/scheduler.*) with a host that stands
// for the CPU: which thread runs next (the round robin in creation order, docs/emulator.md,
// "Threads"), futex(2)'s wake count, a wait's deadline on the virtual clock, a thread's
// exit with CLONE_CHILD_CLEARTID, and EFLAGS[30] at a switch (§1.8: a task switch stores
// and loads EFLAGS, which leaves bit 30 clear).
#include "emulator/linux/threads/scheduler.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <cerrno>
#include <vector>

#include "emulator/linux/vm/user_memory.hpp"

namespace padlock::emu::test {
namespace {

constexpr uint64_t kPage = AddressSpace::kPageSize;
constexpr uint64_t kBase = 0x10000, kWord = 0x10010, kTidWord = 0x10020;
constexpr int kPid = 100;
constexpr uint64_t kThreadFlags = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND;

// The CPU is one register context; RAX (gpr[0]) names the thread whose registers it holds,
// as each thread's own value would.
class SchedulerTest : public ::testing::Test, public ThreadHost {
 protected:
  SchedulerTest() {
    EXPECT_TRUE(mem.map_anonymous(kBase, kPage, kPageRead | kPageWrite));
    sched.restart(kPid);
    cpu.gpr[0] = kPid;
  }

  void save_thread(GuestThread& t) override { t.ctx = cpu; }
  void load_thread(const GuestThread& t) override {
    cpu = t.ctx;
    loaded.push_back(t.tid);
  }
  void clear_eflags30() override { eflags30 = false; }
  void running_thread(int, bool switched) override { switches += switched; }
  void request_stop() override { ++stops; }
  bool ended() const override { return exited; }
  void exit_group(int code) override {
    exited = true;
    exit_code = code;
  }
  uint64_t robust_list() const override { return 0; }
  uint64_t clear_child_tid() const override { return tid_word; }
  void set_syscall_result(int64_t r) override { results.push_back(r); }
  void restart_syscall() override {}
  void queue_signal(const GuestSiginfo& si) override { sig.raise(si); }
  bool sleep_until(uint64_t cycle) override {
    vt.advance_to(cycle);
    return false;
  }
  void await_host_signal() override {
    ADD_FAILURE() << "every thread waits forever";
    exited = true;  // the scheduler's idle loop ends
  }
  void take_host_signals() override {}
  void sync_wait_descriptors(uint64_t) override {}
  bool children_ready(const ChildWait&) override { return false; }
  uint64_t fd_event_at(int) override { return VirtualTime::kNever; }

  // The running thread clones one (its RAX 0 in the child, as clone returns there); the run
  // loop then starts it. The child's RAX is set to its TID, as if it had run.
  int clone_one() {
    const int64_t tid = sched.clone(kThreadFlags, 0, 0, 0, 0, 0);
    sched.schedule();
    for (size_t i = 0; i < sched.table().size(); ++i) {
      GuestThread& t = sched.table().at(i);
      if (t.tid == tid) {
        EXPECT_EQ(t.ctx.gpr[0], 0u);
        t.ctx.gpr[0] = static_cast<uint64_t>(tid);
      }
    }
    return static_cast<int>(tid);
  }
  // The running thread waits on `va` (FUTEX_WAIT), and the run loop switches.
  void futex_wait(uint64_t va) {
    sched.block(va, ~0u, VirtualTime::kNever);
    sched.schedule();
  }
  int running() { return sched.tid(); }

  AddressSpace mem{false};
  UserMemory user{mem, false};
  SignalState sig;
  VirtualTime vt{[] {
    VirtualTimeConfig c;
    c.irq_hz = 0;
    return c;
  }()};
  Stats stats;
  Scheduler sched{*this, sig, vt, user, stats, [] {
                    SchedulerConfig c;
                    c.quantum_us = 1000;
                    return c;
                  }()};
  CpuContext cpu;
  bool eflags30 = true;  // a REP XCRYPT loaded the control word and key (§1.8)
  std::vector<int> loaded;
  std::vector<int64_t> results;
  int switches = 0, stops = 0;
  bool exited = false;
  int exit_code = -1;
  uint64_t tid_word = 0;
};

TEST_F(SchedulerTest, CloneNumbersThreadsFromThePidAndTheCallerKeepsRunning) {
  EXPECT_EQ(clone_one(), kPid + 1);
  EXPECT_EQ(clone_one(), kPid + 2);
  EXPECT_EQ(sched.live(), 3);
  EXPECT_EQ(running(), kPid);
  EXPECT_EQ(stats.threads_created, 2u);
  EXPECT_TRUE(loaded.empty());
  EXPECT_TRUE(eflags30);
}

// The next thread is the next runnable one after the running one in creation order; a
// waiting one is passed over.
TEST_F(SchedulerTest, TheNextRunnableThreadInCreationOrderRuns) {
  clone_one();
  clone_one();
  sched.yield();
  sched.schedule();
  EXPECT_EQ(running(), kPid + 1);
  EXPECT_EQ(cpu.gpr[0], static_cast<uint64_t>(kPid + 1));  // its own registers
  futex_wait(kWord);
  EXPECT_EQ(running(), kPid + 2);
  sched.yield();
  sched.schedule();
  EXPECT_EQ(running(), kPid);  // kPid + 1 waits
  EXPECT_EQ(cpu.gpr[0], static_cast<uint64_t>(kPid));
  EXPECT_EQ(loaded, (std::vector<int>{kPid + 1, kPid + 2, kPid}));
  EXPECT_EQ(stats.thread_switches, 3u);
}

// §1.8 steps 3 and 5: the switched-in thread starts with EFLAGS[30] = 0, so its next REP
// XCRYPT loads the control word and key again. No switch, no clear: a yield with no other
// thread runnable keeps the running one.
TEST_F(SchedulerTest, ASwitchClearsEflags30AndNoSwitchKeepsIt) {
  clone_one();
  EXPECT_TRUE(eflags30);  // a new thread is not a switch
  sched.yield();
  sched.schedule();
  EXPECT_EQ(running(), kPid + 1);
  EXPECT_FALSE(eflags30);
  eflags30 = true;
  futex_wait(kWord);
  EXPECT_EQ(running(), kPid);
  EXPECT_FALSE(eflags30);
  eflags30 = true;
  sched.yield();  // kPid + 1 waits: nothing to switch to
  sched.schedule();
  EXPECT_EQ(running(), kPid);
  EXPECT_TRUE(eflags30);
  EXPECT_EQ(switches, 2);
  EXPECT_EQ(loaded, (std::vector<int>{kPid + 1, kPid}));
}

// futex(2): FUTEX_WAKE wakes at most val waiters, oldest first, and returns how many; they
// run in turn with the call's result 0.
TEST_F(SchedulerTest, FutexWakeOfNWakesExactlyNAndReturnsN) {
  for (int i = 0; i < 3; ++i) clone_one();
  sched.yield();
  sched.schedule();
  futex_wait(kWord);  // kPid + 1, then + 2, then + 3 wait; kPid runs
  futex_wait(kWord);
  futex_wait(kWord);
  ASSERT_EQ(running(), kPid);
  EXPECT_EQ(sched.futexes().wake(kWord, 2, ~0u), 2);
  sched.yield();
  sched.schedule();
  EXPECT_EQ(running(), kPid + 1);
  sched.yield();
  sched.schedule();
  EXPECT_EQ(running(), kPid + 2);
  sched.yield();
  sched.schedule();
  EXPECT_EQ(running(), kPid);  // kPid + 3 still waits
  EXPECT_EQ(results, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(sched.futexes().wake(kWord, 5, ~0u), 1);
}

// Every thread waits: the virtual clock moves to the first deadline, where a futex wait
// ends with ETIMEDOUT and a sleep with 0.
TEST_F(SchedulerTest, AWaitWithEveryThreadWaitingEndsAtItsDeadline) {
  clone_one();
  sched.block(kWord, ~0u, 5000);
  sched.schedule();
  ASSERT_EQ(running(), kPid + 1);
  sched.block(0, 0, 3000);
  sched.schedule();
  EXPECT_EQ(vt.now(), 3000u);
  EXPECT_EQ(running(), kPid + 1);
  sched.block(0, 0, 9000);
  sched.schedule();
  EXPECT_EQ(vt.now(), 5000u);
  EXPECT_EQ(running(), kPid);
  EXPECT_EQ(results, (std::vector<int64_t>{0, -ETIMEDOUT}));
}

// exit: CLONE_CHILD_CLEARTID's word is zeroed and one waiter on it woken (pthread_join);
// the last thread's exit ends the process.
TEST_F(SchedulerTest, AnExitClearsTheTidWordWakesAJoinerAndTheLastEndsTheProcess) {
  clone_one();
  ASSERT_TRUE(user.put(kTidWord, static_cast<uint32_t>(kPid + 1)));
  futex_wait(kTidWord);  // kPid joins kPid + 1
  ASSERT_EQ(running(), kPid + 1);
  tid_word = kTidWord;
  sched.exit_thread(7);
  sched.schedule();
  EXPECT_EQ(running(), kPid);
  uint32_t v = 1;
  EXPECT_TRUE(user.get(kTidWord, v));
  EXPECT_EQ(v, 0u);
  EXPECT_EQ(results, (std::vector<int64_t>{0}));
  EXPECT_EQ(sched.live(), 1);
  EXPECT_FALSE(exited);
  tid_word = 0;
  sched.exit_thread(3);
  EXPECT_TRUE(exited);
  EXPECT_EQ(exit_code, 3);
}

// Linux reports the thread-group leader's status when the last thread is gone.
TEST_F(SchedulerTest, TheFirstThreadsExitStatusIsTheProcesss) {
  clone_one();
  sched.exit_thread(5);
  sched.schedule();
  EXPECT_EQ(running(), kPid + 1);
  EXPECT_FALSE(exited);
  sched.exit_thread(3);
  EXPECT_TRUE(exited);
  EXPECT_EQ(exit_code, 5);
}

}  // namespace
}  // namespace padlock::emu::test
