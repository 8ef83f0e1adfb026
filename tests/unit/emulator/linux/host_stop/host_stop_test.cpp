// The host's ways to end a run (emulator/linux/host_stop/host_stop.*) on their own, with a
// recorder in place of Unicorn: a kill from another thread, --max-time's watchdog and a host
// signal's store all raise the flag the units read (docs/reliability.md, "Every run
// stoppable"), and the run loop's rearm clears only a signal's, never while the run ends.
#include "emulator/linux/host_stop/host_stop.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace padlock::emu {
namespace {

// What HostStop asked of the emulation: one entry per stop, true when kept pending.
struct StopRecorder {
  std::mutex m;
  std::condition_variable cv;
  std::vector<bool> stops;

  void stop(bool keep_pending) {
    std::lock_guard<std::mutex> lock(m);
    stops.push_back(keep_pending);
    cv.notify_all();
  }
  // Waits (10 s at most, for a loaded machine) until `n` stops arrived.
  bool wait_for(size_t n) {
    std::unique_lock<std::mutex> lock(m);
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return stops.size() >= n; });
  }
};

class HostStopTest : public ::testing::Test {
 protected:
  StopRecorder rec;
  HostStop stop{[this](bool keep_pending) { rec.stop(keep_pending); }};
};

TEST_F(HostStopTest, NothingIsSetAtFirst) {
  EXPECT_FALSE(stop.flag().load());
  EXPECT_FALSE(stop.killed());
  EXPECT_FALSE(stop.out_of_time());
  EXPECT_TRUE(rec.stops.empty());
}

TEST_F(HostStopTest, AKillFromAnotherThreadSetsTheFlagAndStopsTheEmulation) {
  std::thread([this] { stop.kill(); }).join();
  EXPECT_TRUE(stop.killed());
  EXPECT_TRUE(stop.flag().load());
  EXPECT_FALSE(stop.out_of_time());
  ASSERT_EQ(rec.stops, std::vector<bool>{false});  // a plain stop: the caller repeats it
  // The run loop collects the host signals while the guest dies: the flag stays set, so a
  // PadLock REP started on the way out still stops at its first interrupt point.
  stop.rearm();
  EXPECT_TRUE(stop.flag().load());
}

TEST_F(HostStopTest, RearmClearsWhatAHostSignalSet) {
  stop.flag().store(true);  // as on_host_signal stores it (linux/signal/host_signals.cpp)
  stop.rearm();
  EXPECT_FALSE(stop.flag().load());
  EXPECT_TRUE(rec.stops.empty());  // the signal's handler stops Unicorn itself
}

TEST_F(HostStopTest, TheDeadlineSetsTheFlagAndKeepsTheStopPending) {
  stop.start_deadline(0.01);
  ASSERT_TRUE(rec.wait_for(1));
  EXPECT_TRUE(stop.out_of_time());
  EXPECT_FALSE(stop.killed());
  EXPECT_TRUE(stop.flag().load());
  EXPECT_EQ(rec.stops, std::vector<bool>{true});  // kept for a start that has not begun
  stop.rearm();
  EXPECT_TRUE(stop.flag().load());
  stop.cancel_deadline();
  EXPECT_EQ(stop.seconds_left(), 1e-3);  // past: an execve's new image still gets a watchdog
}

TEST_F(HostStopTest, ACancelledDeadlineNeverFires) {
  stop.start_deadline(60);
  const double left = stop.seconds_left();
  EXPECT_GT(left, 50.0);
  EXPECT_LE(left, 60.0);
  stop.cancel_deadline();  // joins the watchdog: its action cannot run after this
  EXPECT_FALSE(stop.out_of_time());
  EXPECT_FALSE(stop.flag().load());
  std::lock_guard<std::mutex> lock(rec.m);
  EXPECT_TRUE(rec.stops.empty());
}

}  // namespace
}  // namespace padlock::emu
