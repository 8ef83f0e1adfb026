// The guest's reproducible random streams (emulator/linux/guest_random.hpp) against
// splitmix64 written out here from its definition (Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014; Vigna's splitmix64.c), and the reference's
// first outputs from state 0.
#include "emulator/linux/guest_random.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace padlock::emu {
namespace {

uint64_t reference_splitmix64(uint64_t& x) {
  x += 0x9E3779B97F4A7C15ull;
  uint64_t z = x;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

TEST(GuestRandomTest, StateZeroGivesTheReferenceOutputs) {
  // The seed equal to the salt starts the generator at state 0.
  GuestRandom r(GuestRandom::kGetrandomSalt, GuestRandom::kGetrandomSalt);
  EXPECT_EQ(r.next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(r.next(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(r.next(), 0x06C45D188009454Full);
}

TEST(GuestRandomTest, EachStreamIsSplitmix64FromTheSeedXorItsSalt) {
  for (const uint64_t seed : {uint64_t{0}, uint64_t{7}, uint64_t{0xFFFFFFFFFFFFFFFF}}) {
    for (const uint64_t salt : {GuestRandom::kGetrandomSalt, GuestRandom::kAtRandomSalt}) {
      GuestRandom r(seed, salt);
      uint64_t x = seed ^ salt;
      for (int i = 0; i < 64; ++i) ASSERT_EQ(r.next(), reference_splitmix64(x)) << seed << " " << i;
    }
  }
}

TEST(GuestRandomTest, GetrandomAndAtRandomDifferForOneSeed) {
  GuestRandom getrandom(7, GuestRandom::kGetrandomSalt), at_random(7, GuestRandom::kAtRandomSalt);
  EXPECT_NE(getrandom.next(), at_random.next());
}

}  // namespace
}  // namespace padlock::emu
