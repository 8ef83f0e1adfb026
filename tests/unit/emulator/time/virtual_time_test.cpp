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

}  // namespace
}  // namespace padlock::emu
