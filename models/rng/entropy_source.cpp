#include "models/rng/entropy_source.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace padlock::rng {

EntropySource::EntropySource(uint64_t seed, bool host_entropy) : prng_(seed), host_(host_entropy) {}

uint64_t EntropySource::biased64(uint32_t p16) {
  if (p16 == 0) return 0;
  if (p16 >= 65536) return ~0ull;
  // After processing expansion bits k..16, P(bit = 1) = 0.b_k b_(k+1) ... b_16 (binary).
  uint64_t x = 0;
  for (unsigned k = static_cast<unsigned>(__builtin_ctz(p16)); k < 16; ++k) {
    const uint64_t u = uniform64();
    x = (p16 >> k & 1) ? (u | x) : (u & x);
  }
  return x;
}

void EntropySource::refill() {
  auto* bytes = reinterpret_cast<uint8_t*>(pool_);
  size_t got = 0;
  while (got < sizeof(pool_)) {
    const ssize_t n = getrandom(bytes + got, sizeof(pool_) - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  if (got < sizeof(pool_)) {
    // getrandom unavailable: /dev/urandom, and failing that the seeded generator, so
    // that the model never stalls (the bits then are not host entropy).
    if (FILE* f = std::fopen("/dev/urandom", "rb")) {
      got += std::fread(bytes + got, 1, sizeof(pool_) - got, f);
      std::fclose(f);
    }
    for (size_t i = got / 8; i < kPoolWords; ++i) pool_[i] = prng_.next();
  }
  pool_pos_ = 0;
}

}  // namespace padlock::rng
