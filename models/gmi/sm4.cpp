// GB/T 32907-2016 SM4: round function (§6.1), key expansion (§7.3).
#include "models/gmi/sm4.hpp"

namespace padlock {

namespace {

inline uint32_t rotl(uint32_t x, unsigned n) {
  return (x << n) | (x >> (32 - n));
}
inline uint32_t load_be(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
inline void store_be(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}
// §6.2 tau: the S-box on each byte.
inline uint32_t tau(uint32_t a) {
  return uint32_t{kSm4Sbox[a >> 24]} << 24 | uint32_t{kSm4Sbox[a >> 16 & 0xFF]} << 16 |
         uint32_t{kSm4Sbox[a >> 8 & 0xFF]} << 8 | kSm4Sbox[a & 0xFF];
}
// §6.2 T = L(tau(.)); §7.3 T' = L'(tau(.)).
inline uint32_t t_round(uint32_t a) {
  const uint32_t b = tau(a);
  return b ^ rotl(b, 2) ^ rotl(b, 10) ^ rotl(b, 18) ^ rotl(b, 24);
}
inline uint32_t t_key(uint32_t a) {
  const uint32_t b = tau(a);
  return b ^ rotl(b, 13) ^ rotl(b, 23);
}

// §7.3: the system parameter FK.
constexpr uint32_t kFk[4] = {0xa3b1bac6, 0x56aa3350, 0x677d9197, 0xb27022dc};

// §7.3: CK_i, byte j = (4i + j) * 7 mod 256.
constexpr uint32_t ck(unsigned i) {
  uint32_t v = 0;
  for (unsigned j = 0; j < 4; ++j) v = v << 8 | (((4 * i + j) * 7) & 0xFF);
  return v;
}

}  // namespace

Sm4RoundKeys sm4_expand_key(const uint8_t key[16]) {
  Sm4RoundKeys out;
  uint32_t k[4];
  for (int i = 0; i < 4; ++i) k[i] = load_be(key + 4 * i) ^ kFk[i];
  for (unsigned i = 0; i < 32; ++i) {
    const uint32_t next =
        k[i % 4] ^ t_key(k[(i + 1) % 4] ^ k[(i + 2) % 4] ^ k[(i + 3) % 4] ^ ck(i));
    k[i % 4] = next;
    out.rk[i] = next;
  }
  return out;
}

void sm4_crypt_block(const Sm4RoundKeys& keys, bool decrypt, const uint8_t in[16],
                     uint8_t out[16]) {
  uint32_t x[4];
  for (int i = 0; i < 4; ++i) x[i] = load_be(in + 4 * i);
  for (unsigned i = 0; i < 32; ++i) {
    const uint32_t rk = keys.rk[decrypt ? 31 - i : i];
    x[i % 4] ^= t_round(x[(i + 1) % 4] ^ x[(i + 2) % 4] ^ x[(i + 3) % 4] ^ rk);
  }
  // §6.3 R: the reverse order (X35, X34, X33, X32); X32 is in x[0] after 32 rounds.
  for (int i = 0; i < 4; ++i) store_be(out + 4 * i, x[3 - i]);
}

}  // namespace padlock
