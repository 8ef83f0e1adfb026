// FIPS 180-4 §6.4.2 SHA-512 compression, portable C++.
#include "models/phe/sha512.hpp"

namespace padlock {

namespace {

inline uint64_t rotr64(uint64_t x, int n) {
  return (x >> n) | (x << (64 - n));
}
inline uint64_t load_be64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | p[i];
  return v;
}

}  // namespace

void sha512_blocks(uint64_t state[8], const uint8_t* data, size_t blocks) {
  for (; blocks != 0; --blocks, data += 128) {
    uint64_t w[80];
    for (int t = 0; t < 16; ++t) w[t] = load_be64(data + 8 * t);
    for (int t = 16; t < 80; ++t) {
      const uint64_t s0 = rotr64(w[t - 15], 1) ^ rotr64(w[t - 15], 8) ^ (w[t - 15] >> 7);
      const uint64_t s1 = rotr64(w[t - 2], 19) ^ rotr64(w[t - 2], 61) ^ (w[t - 2] >> 6);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint64_t v[8];
    for (int i = 0; i < 8; ++i) v[i] = state[i];
    for (int t = 0; t < 80; ++t) {
      const uint64_t e = v[4], a = v[0];
      const uint64_t t1 = v[7] + (rotr64(e, 14) ^ rotr64(e, 18) ^ rotr64(e, 41)) +
                          ((e & v[5]) ^ (~e & v[6])) + kSha512K[t] + w[t];
      const uint64_t t2 = (rotr64(a, 28) ^ rotr64(a, 34) ^ rotr64(a, 39)) +
                          ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
      for (int i = 7; i > 0; --i) v[i] = v[i - 1];
      v[4] += t1;
      v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; ++i) state[i] += v[i];
  }
}

}  // namespace padlock
