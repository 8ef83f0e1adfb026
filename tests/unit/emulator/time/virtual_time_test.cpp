// The guest's clocks (emulator/time/virtual_time.hpp; docs/timing.md, "Virtual time").
#include "emulator/time/virtual_time.hpp"

#include <gtest/gtest.h>

#include <ctime>

namespace padlock::emu {
namespace {

constexpr int64_t kSecond = 1000000000;

// REALTIME and MONOTONIC start at a whole second, so that microsecond readings taken later
// differ by what the modelled cycles say, wherever in a second the run started.
TEST(VirtualTime, WallAndMonotonicClocksStartAtAWholeSecond) {
  VirtualTimeConfig c;
  c.irq_hz = 0;
  VirtualTime t(c);
  for (int id : {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME}) {
    int64_t ns = -1;
    ASSERT_TRUE(t.clock_ns(id, ns)) << id;
    EXPECT_EQ(ns % kSecond, 0) << id;
  }
  timespec host{};
  clock_gettime(CLOCK_REALTIME, &host);
  int64_t guest = 0;
  ASSERT_TRUE(t.clock_ns(CLOCK_REALTIME, guest));
  EXPECT_LE(guest / kSecond, host.tv_sec);      // not ahead of the host
  EXPECT_GE(guest / kSecond, host.tv_sec - 2);  // and no more than the truncation behind
}

// A thread's time slice end (emulator/linux/threads/scheduler.hpp) is an event like a timer
// deadline: the earliest of them is what generated code compares the clock with.
TEST(VirtualTime, SliceEndIsAnEvent) {
  VirtualTimeConfig c;
  c.irq_hz = 0;
  VirtualTime t(c);
  EXPECT_EQ(t.next_event(), VirtualTime::kNever);
  t.set_slice_end(5000);
  EXPECT_EQ(t.slice_end(), 5000u);
  EXPECT_EQ(t.next_event(), 5000u);
  t.arm(0, 3000, 0, 14, 0x80);  // ITIMER_REAL sooner than the slice end
  EXPECT_EQ(t.next_event(), 3000u);
  t.disarm(0);
  EXPECT_EQ(t.next_event(), 5000u);
  t.set_slice_end(VirtualTime::kNever);
  EXPECT_EQ(t.next_event(), VirtualTime::kNever);
}

}  // namespace
}  // namespace padlock::emu
