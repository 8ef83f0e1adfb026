// Reproducible test data: the same bytes for the same seed on every host (std::mt19937 is
// fully specified by the C++ standard).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace padlock::test {

inline std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

}  // namespace padlock::test
