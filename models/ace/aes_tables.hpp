// FIPS-197 S-boxes and round tables, computed at compile time from the field arithmetic
// (FIPS-197 §4, §5.1.1) so that no hand-typed table can carry a typo.
#pragma once

#include <array>
#include <cstdint>

namespace padlock::ace::tables {

constexpr uint8_t xtime(uint8_t x) {
  return uint8_t((x << 1) ^ ((x & 0x80) ? 0x1B : 0x00));
}

constexpr uint8_t gmul(uint8_t a, uint8_t b) {
  uint8_t r = 0;
  while (b != 0) {
    if (b & 1) r ^= a;
    a = xtime(a);
    b >>= 1;
  }
  return r;
}

constexpr uint8_t rotl8(uint8_t x, int s) {
  return uint8_t((x << s) | (x >> (8 - s)));
}

struct Sboxes {
  std::array<uint8_t, 256> fwd{};
  std::array<uint8_t, 256> inv{};
};

// Walks the multiplicative group with generator 3 and its inverse (FIPS-197 §5.1.1:
// multiplicative inverse followed by the affine transformation).
constexpr Sboxes make_sboxes() {
  Sboxes s;
  uint8_t p = 1, q = 1;
  do {
    p = uint8_t(p ^ (p << 1) ^ ((p & 0x80) ? 0x1B : 0));  // p *= 3
    q ^= uint8_t(q << 1);                                 // q /= 3
    q ^= uint8_t(q << 2);
    q ^= uint8_t(q << 4);
    if (q & 0x80) q ^= 0x09;
    const uint8_t x = uint8_t(q ^ rotl8(q, 1) ^ rotl8(q, 2) ^ rotl8(q, 3) ^ rotl8(q, 4));
    s.fwd[p] = uint8_t(x ^ 0x63);
  } while (p != 1);
  s.fwd[0] = 0x63;
  for (int i = 0; i < 256; ++i) s.inv[s.fwd[i]] = uint8_t(i);
  return s;
}

inline constexpr Sboxes kSbox = make_sboxes();

constexpr uint32_t rotl32(uint32_t x, int s) {
  return (x << s) | (x >> (32 - s));
}

// Column words hold row r in bits 8r..8r+7 (little-endian load of the 4 column bytes).
// Te[x]: SubBytes then the MixColumns column (2,1,1,3); Td[x]: InvSubBytes then the
// InvMixColumns column (e,9,d,b). Rows 1..3 are byte rotations of row 0.
struct RoundTables {
  std::array<std::array<uint32_t, 256>, 4> te{};
  std::array<std::array<uint32_t, 256>, 4> td{};
};

constexpr RoundTables make_round_tables() {
  RoundTables t;
  for (int x = 0; x < 256; ++x) {
    const uint8_t s = kSbox.fwd[x];
    const uint32_t e =
        uint32_t(gmul(s, 2)) | uint32_t(s) << 8 | uint32_t(s) << 16 | uint32_t(gmul(s, 3)) << 24;
    const uint8_t si = kSbox.inv[x];
    const uint32_t d = uint32_t(gmul(si, 14)) | uint32_t(gmul(si, 9)) << 8 |
                       uint32_t(gmul(si, 13)) << 16 | uint32_t(gmul(si, 11)) << 24;
    for (int r = 0; r < 4; ++r) {
      t.te[r][x] = r == 0 ? e : rotl32(e, 8 * r);
      t.td[r][x] = r == 0 ? d : rotl32(d, 8 * r);
    }
  }
  return t;
}

inline constexpr RoundTables kRound = make_round_tables();

}  // namespace padlock::ace::tables
