// The progress line's text (emulator/observe/progress.hpp); drawing it on a terminal is
// tested with a pseudo-terminal in tests/integration/test_progress.py.
#include "emulator/observe/progress.hpp"

#include <gtest/gtest.h>

namespace padlock::emu {
namespace {

TEST(ProgressLine, TimingOnWithCountedInstructions) {
  EXPECT_EQ(ProgressLine::format(1.5, true, 123456789, true, 2500000, 3.0),
            "padlock-emu: modelled 1.500 s, 123.46 M insns, PadLock 2.50 MB, host 3.0 s "
            "(0.5x real time, 41.15 M insns/s)");
}

TEST(ProgressLine, InstructionsOnlyWhenCounted) {
  EXPECT_EQ(ProgressLine::format(0.25, true, 0, false, 999, 2.0),
            "padlock-emu: modelled 0.250 s, PadLock 999B, host 2.0 s (0.125x real time)");
}

TEST(ProgressLine, TimingOffShowsHostTimeOnly) {
  EXPECT_EQ(ProgressLine::format(0, false, 5000, true, 16, 2.5),
            "padlock-emu: timing off, 5.00 k insns, PadLock 16B, host 2.5 s (2.00 k insns/s)");
}

}  // namespace
}  // namespace padlock::emu
