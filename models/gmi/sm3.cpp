// GB/T 32905-2016 SM3: message expansion (§5.3.2) and compression function CF (§5.3.3).
#include "models/gmi/sm3.hpp"

namespace padlock {

namespace {

inline uint32_t rotl(uint32_t x, unsigned n) {
  n &= 31;
  return n == 0 ? x : (x << n) | (x >> (32 - n));
}
inline uint32_t p0(uint32_t x) {
  return x ^ rotl(x, 9) ^ rotl(x, 17);
}
inline uint32_t p1(uint32_t x) {
  return x ^ rotl(x, 15) ^ rotl(x, 23);
}

}  // namespace

void sm3_blocks(uint32_t v[8], const uint8_t* data, size_t blocks) {
  for (; blocks != 0; --blocks, data += 64) {
    uint32_t w[68];
    for (int j = 0; j < 16; ++j) {
      const uint8_t* p = data + 4 * j;
      w[j] = uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
    }
    for (int j = 16; j < 68; ++j)
      w[j] = p1(w[j - 16] ^ w[j - 9] ^ rotl(w[j - 3], 15)) ^ rotl(w[j - 13], 7) ^ w[j - 6];
    uint32_t a = v[0], b = v[1], c = v[2], d = v[3], e = v[4], f = v[5], g = v[6], h = v[7];
    for (int j = 0; j < 64; ++j) {
      // §4.2 constants T_j, §4.3 boolean functions FF_j and GG_j.
      const bool low = j < 16;
      const uint32_t t = low ? 0x79cc4519u : 0x7a879d8au;
      const uint32_t ss1 = rotl(rotl(a, 12) + e + rotl(t, static_cast<unsigned>(j)), 7);
      const uint32_t ss2 = ss1 ^ rotl(a, 12);
      const uint32_t ff = low ? (a ^ b ^ c) : ((a & b) | (a & c) | (b & c));
      const uint32_t gg = low ? (e ^ f ^ g) : ((e & f) | (~e & g));
      const uint32_t tt1 = ff + d + ss2 + (w[j] ^ w[j + 4]);
      const uint32_t tt2 = gg + h + ss1 + w[j];
      d = c;
      c = rotl(b, 9);
      b = a;
      a = tt1;
      h = g;
      g = rotl(f, 19);
      f = e;
      e = p0(tt2);
    }
    v[0] ^= a;
    v[1] ^= b;
    v[2] ^= c;
    v[3] ^= d;
    v[4] ^= e;
    v[5] ^= f;
    v[6] ^= g;
    v[7] ^= h;
  }
}

}  // namespace padlock
