/* AES key schedules computed in the guest, for application-provided keys (KEYGN = 1).
 *
 * §3.2 "Extended keys": for encryption the memory at EBX holds the key followed by the
 * FIPS-197 Figure 11 schedule, i.e. round keys 0..Nr in order. For decryption it holds
 * the equivalent-inverse-cipher schedule of FIPS-197 Figure 15 in inverse order, the real
 * key last: round key Nr, InvMixColumns(round key Nr-1), ..., InvMixColumns(round key 1),
 * round key 0. That is the layout OpenSSL's AES_set_decrypt_key produces (e_padlock.c uses
 * it with KEYGN = 1 for ECB/CBC decryption) and Linux's key_dec (padlock-aes.c). The
 * hardware always loads 256 bytes (§3.2), so callers pass a 256-byte buffer.
 *
 * The S-box is computed from its definition (multiplicative inverse in GF(2^8) followed
 * by the affine map, FIPS-197 §5.1.1), not copied from a table. */
#ifndef PADLOCK_GUEST_AES_SCHEDULE_H
#define PADLOCK_GUEST_AES_SCHEDULE_H

#include <stdint.h>
#include <string.h>

enum { AES_SCHEDULE_BYTES = 256 };

static inline uint8_t gf_mul(uint8_t a, uint8_t b) {
  uint8_t p = 0;
  while (b) {
    if (b & 1) p ^= a;
    a = (uint8_t)((a << 1) ^ ((a & 0x80) ? 0x1b : 0));
    b >>= 1;
  }
  return p;
}

static inline uint8_t aes_sbox(uint8_t x) {
  /* x^254 = x^-1 in GF(2^8) (0 maps to 0). */
  uint8_t inv = 1, base = x;
  for (unsigned e = 254; e; e >>= 1) {
    if (e & 1) inv = gf_mul(inv, base);
    base = gf_mul(base, base);
  }
  if (x == 0) inv = 0;
  uint8_t s = inv;
  for (int i = 1; i <= 4; ++i) s ^= (uint8_t)((inv << i) | (inv >> (8 - i)));
  return (uint8_t)(s ^ 0x63);
}

static inline int aes_rounds(int key_bytes) { return key_bytes / 4 + 6; }

/* FIPS-197 §5.2 KeyExpansion: writes the 16*(Nr+1) bytes of w[] (key first). */
static inline void aes_expand_key(const uint8_t *key, int key_bytes, uint8_t *w) {
  const int nk = key_bytes / 4, nr = aes_rounds(key_bytes), total = 4 * (nr + 1);
  uint8_t sbox[256];
  for (int i = 0; i < 256; ++i) sbox[i] = aes_sbox((uint8_t)i);
  memcpy(w, key, (size_t)key_bytes);
  uint8_t rcon = 1;
  for (int i = nk; i < total; ++i) {
    uint8_t t[4];
    memcpy(t, w + 4 * (i - 1), 4);
    if (i % nk == 0) {
      const uint8_t t0 = t[0];
      t[0] = (uint8_t)(sbox[t[1]] ^ rcon);
      t[1] = sbox[t[2]];
      t[2] = sbox[t[3]];
      t[3] = sbox[t0];
      rcon = gf_mul(rcon, 2);
    } else if (nk > 6 && i % nk == 4) {
      for (int j = 0; j < 4; ++j) t[j] = sbox[t[j]];
    }
    for (int j = 0; j < 4; ++j) w[4 * i + j] = (uint8_t)(w[4 * (i - nk) + j] ^ t[j]);
  }
}

static inline void aes_inv_mix_column(uint8_t *c) {
  const uint8_t a0 = c[0], a1 = c[1], a2 = c[2], a3 = c[3];
  c[0] = gf_mul(a0, 14) ^ gf_mul(a1, 11) ^ gf_mul(a2, 13) ^ gf_mul(a3, 9);
  c[1] = gf_mul(a0, 9) ^ gf_mul(a1, 14) ^ gf_mul(a2, 11) ^ gf_mul(a3, 13);
  c[2] = gf_mul(a0, 13) ^ gf_mul(a1, 9) ^ gf_mul(a2, 14) ^ gf_mul(a3, 11);
  c[3] = gf_mul(a0, 11) ^ gf_mul(a1, 13) ^ gf_mul(a2, 9) ^ gf_mul(a3, 14);
}

/* The 256-byte area for an encryption schedule (§3.2). */
static inline void aes_encrypt_schedule(const uint8_t *key, int key_bytes,
                                        uint8_t out[AES_SCHEDULE_BYTES]) {
  memset(out, 0, AES_SCHEDULE_BYTES);
  aes_expand_key(key, key_bytes, out);
}

/* The 256-byte area for a decryption schedule: FIPS-197 Figure 15 dw[], inverse order. */
static inline void aes_decrypt_schedule(const uint8_t *key, int key_bytes,
                                        uint8_t out[AES_SCHEDULE_BYTES]) {
  uint8_t w[240];
  const int nr = aes_rounds(key_bytes);
  aes_expand_key(key, key_bytes, w);
  memset(out, 0, AES_SCHEDULE_BYTES);
  for (int r = 0; r <= nr; ++r) {
    uint8_t *dst = out + 16 * r;
    memcpy(dst, w + 16 * (nr - r), 16);
    if (r != 0 && r != nr)
      for (int c = 0; c < 4; ++c) aes_inv_mix_column(dst + 4 * c);
  }
}

#endif /* PADLOCK_GUEST_AES_SCHEDULE_H */
