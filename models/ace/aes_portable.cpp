// Portable AES: 32-bit round tables, any round count, used when the host has no AES-NI
// and, in tests, as the second implementation every vector runs through.
#include <bit>
#include <cstring>

#include "models/ace/aes_core.hpp"
#include "models/ace/aes_tables.hpp"

namespace padlock::ace {

namespace {

static_assert(std::endian::native == std::endian::little,
              "column words assume a little-endian host");

using tables::kRound;
using tables::kSbox;

inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void store32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}
inline uint8_t byte(uint32_t w, int r) {
  return uint8_t(w >> (8 * r));
}

// Forward cipher (FIPS-197 Fig. 5). ShiftRows takes row r of column c from column c + r.
void encrypt_block(const RoundKeys& rk, const uint8_t in[16], uint8_t out[16]) {
  const auto& te = kRound.te;
  uint32_t s[4], t[4];
  for (int c = 0; c < 4; ++c) s[c] = load32(in + 4 * c) ^ load32(rk.k[0] + 4 * c);
  const unsigned full = rk.full_last ? rk.rounds : rk.rounds - 1;
  for (unsigned r = 1; r <= full; ++r) {
    for (int c = 0; c < 4; ++c) {
      t[c] = te[0][byte(s[c], 0)] ^ te[1][byte(s[(c + 1) & 3], 1)] ^
             te[2][byte(s[(c + 2) & 3], 2)] ^ te[3][byte(s[(c + 3) & 3], 3)] ^
             load32(rk.k[r] + 4 * c);
    }
    std::memcpy(s, t, sizeof s);
  }
  if (!rk.full_last) {
    const uint8_t* k = rk.k[rk.rounds];
    for (int c = 0; c < 4; ++c) {
      t[c] = uint32_t(kSbox.fwd[byte(s[c], 0)]) |
             uint32_t(kSbox.fwd[byte(s[(c + 1) & 3], 1)]) << 8 |
             uint32_t(kSbox.fwd[byte(s[(c + 2) & 3], 2)]) << 16 |
             uint32_t(kSbox.fwd[byte(s[(c + 3) & 3], 3)]) << 24;
      t[c] ^= load32(k + 4 * c);
    }
    std::memcpy(s, t, sizeof s);
  }
  for (int c = 0; c < 4; ++c) store32(out + 4 * c, s[c]);
}

// Equivalent inverse cipher (FIPS-197 Fig. 14) with dw[] round keys. InvShiftRows takes
// row r of column c from column c - r.
void decrypt_block(const RoundKeys& rk, const uint8_t in[16], uint8_t out[16]) {
  const auto& td = kRound.td;
  uint32_t s[4], t[4];
  for (int c = 0; c < 4; ++c) s[c] = load32(in + 4 * c) ^ load32(rk.k[0] + 4 * c);
  const unsigned full = rk.full_last ? rk.rounds : rk.rounds - 1;
  for (unsigned r = 1; r <= full; ++r) {
    for (int c = 0; c < 4; ++c) {
      t[c] = td[0][byte(s[c], 0)] ^ td[1][byte(s[(c + 3) & 3], 1)] ^
             td[2][byte(s[(c + 2) & 3], 2)] ^ td[3][byte(s[(c + 1) & 3], 3)] ^
             load32(rk.k[r] + 4 * c);
    }
    std::memcpy(s, t, sizeof s);
  }
  if (!rk.full_last) {
    const uint8_t* k = rk.k[rk.rounds];
    for (int c = 0; c < 4; ++c) {
      t[c] = uint32_t(kSbox.inv[byte(s[c], 0)]) |
             uint32_t(kSbox.inv[byte(s[(c + 3) & 3], 1)]) << 8 |
             uint32_t(kSbox.inv[byte(s[(c + 2) & 3], 2)]) << 16 |
             uint32_t(kSbox.inv[byte(s[(c + 1) & 3], 3)]) << 24;
      t[c] ^= load32(k + 4 * c);
    }
    std::memcpy(s, t, sizeof s);
  }
  for (int c = 0; c < 4; ++c) store32(out + 4 * c, s[c]);
}

inline void xor16(uint8_t* dst, const uint8_t* a, const uint8_t* b) {
  for (int i = 0; i < 16; ++i) dst[i] = uint8_t(a[i] ^ b[i]);
}

void ecb_enc(const RoundKeys& rk, const uint8_t* in, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) encrypt_block(rk, in + 16 * i, out + 16 * i);
}
void ecb_dec(const RoundKeys& rk, const uint8_t* in, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) decrypt_block(rk, in + 16 * i, out + 16 * i);
}

void cbc_enc(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n,
             size_t stride) {
  uint8_t x[16];
  for (size_t i = 0; i < n; ++i, in += 16, out += stride) {
    xor16(x, in, iv);
    encrypt_block(rk, x, iv);
    std::memcpy(out, iv, 16);
  }
}

void cbc_dec(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n,
             size_t stride) {
  uint8_t c[16], p[16];
  for (size_t i = 0; i < n; ++i, in += 16, out += stride) {
    std::memcpy(c, in, 16);
    decrypt_block(rk, c, p);
    xor16(out, p, iv);
    std::memcpy(iv, c, 16);
  }
}

void cfb_enc(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n,
             size_t stride) {
  uint8_t ks[16];
  for (size_t i = 0; i < n; ++i, in += 16, out += stride) {
    encrypt_block(rk, iv, ks);
    xor16(iv, ks, in);
    std::memcpy(out, iv, 16);
  }
}

void cfb_dec(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n,
             size_t stride) {
  uint8_t ks[16], c[16];
  for (size_t i = 0; i < n; ++i, in += 16, out += stride) {
    encrypt_block(rk, iv, ks);
    std::memcpy(c, in, 16);
    xor16(out, ks, c);
    std::memcpy(iv, c, 16);
  }
}

void ofb(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i, in += 16, out += 16) {
    encrypt_block(rk, iv, iv);
    xor16(out, in, iv);
  }
}

void ctr(const RoundKeys& rk, uint8_t cb[16], const uint8_t* in, uint8_t* out, size_t n) {
  uint8_t ks[16];
  for (size_t i = 0; i < n; ++i, in += 16, out += 16) {
    encrypt_block(rk, cb, ks);
    xor16(out, in, ks);
    const uint16_t c = uint16_t((cb[14] << 8 | cb[15]) + 1);
    cb[14] = uint8_t(c >> 8);
    cb[15] = uint8_t(c);
  }
}

constexpr Kernels kPortable = {"portable", ecb_enc, ecb_dec, cbc_enc, cbc_dec,
                               cfb_enc,    cfb_dec, ofb,     ctr};

}  // namespace

const Kernels& portable_kernels() {
  return kPortable;
}

}  // namespace padlock::ace
