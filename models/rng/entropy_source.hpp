// Where the RNG model's bits come from: a seeded generator (reproducible runs) or the
// host's entropy (getrandom). Also shapes uniform words into biased raw noise bits.
#pragma once

#include <cstdint>

#include "models/rng/xoshiro256.hpp"

namespace padlock::rng {

class EntropySource {
 public:
  EntropySource(uint64_t seed, bool host_entropy);

  // 64 independent uniform bits.
  uint64_t uniform64() { return host_ ? host_next() : prng_.next(); }

  // 64 independent bits, each 1 with probability p16 / 65536 (p16 <= 65536). The
  // probability is built from its binary expansion: one uniform word per significant bit,
  // combined with AND (expansion bit 0) or OR (expansion bit 1) from the lowest bit up.
  uint64_t biased64(uint32_t p16);

  bool host() const { return host_; }

 private:
  uint64_t host_next() {
    if (pool_pos_ == kPoolWords) refill();
    return pool_[pool_pos_++];
  }
  void refill();

  static constexpr unsigned kPoolWords = 64;
  Xoshiro256 prng_;
  bool host_;
  unsigned pool_pos_ = kPoolWords;
  uint64_t pool_[kPoolWords] = {};
};

}  // namespace padlock::rng
