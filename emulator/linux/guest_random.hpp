// The guest's reproducible random bytes (docs/emulator.md, --seed): getrandom(2)'s stream and
// the 16 AT_RANDOM bytes of the initial stack are splitmix64 streams from --seed, each
// started at the seed XOR its own salt, so the same seed reads the same bytes in every run
// and the two streams differ.
#pragma once

#include <cstdint>

#include "models/rng/xoshiro256.hpp"

namespace padlock::emu {

class GuestRandom {
 public:
  static constexpr uint64_t kGetrandomSalt = 0x6765747261646F6Dull;  // "getradom"
  static constexpr uint64_t kAtRandomSalt = 0x41545F52414E444Full;   // "AT_RANDO"

  GuestRandom(uint64_t seed, uint64_t salt) : state_(seed ^ salt) {}
  uint64_t next() { return rng::Xoshiro256::splitmix64(state_); }

 private:
  uint64_t state_;
};

}  // namespace padlock::emu
