/* padlock_driver: see padlock_driver.h. Section numbers refer to the VIA PadLock
 * Programming Guide. Builds for i386 and x86-64 (the register constraints name EAX..EDI or
 * RAX..RDI), as a shared object or as a relocatable object, with no C library. */
#include "padlock_driver.h"

#define EINVAL 22
#define EIO 5

/* Control-word fields (§3.2, "Control word fields"). */
enum {
  CW_KEYGN = 1u << 7, /* 1: the schedule comes from memory */
  CW_CRYPT = 1u << 9, /* 1: decrypt */
  CW_KSIZE_SHIFT = 10,
};

/* ---- the instructions ------------------------------------------------------------- */

/* §1.8: storing EFLAGS clears bit 30, so the next REP XCRYPT reloads control word and keys. */
static inline void padlock_reload_key(void) {
#if defined(__x86_64__)
  __asm__ volatile("pushfq; popfq" ::: "memory", "cc");
#else
  __asm__ volatile("pushfl; popfl" ::: "memory", "cc");
#endif
}

/* REP XCRYPTCBC (F3 0F A7 D0): ESI in, EDI out, EBX key, EDX control word, EAX IV, ECX
 * blocks. Returns EAX afterwards: CBC encryption moves EAX itself (§3.1, the EAX table). */
static inline void *xcrypt_cbc(const void *in, void *out, const void *key, void *iv,
                               const void *cw, size_t blocks) {
  __asm__ volatile(".byte 0xf3,0x0f,0xa7,0xd0"
                   : "+S"(in), "+D"(out), "+a"(iv), "+c"(blocks)
                   : "b"(key), "d"(cw)
                   : "memory", "cc");
  return iv;
}

/* REP XCRYPTECB (F3 0F A7 C8): no IV. */
static inline void xcrypt_ecb(const void *in, void *out, const void *key, const void *cw,
                              size_t blocks) {
  __asm__ volatile(".byte 0xf3,0x0f,0xa7,0xc8"
                   : "+S"(in), "+D"(out), "+c"(blocks)
                   : "b"(key), "d"(cw)
                   : "memory", "cc");
}

/* REP XSHA256 (F3 0F A6 D0): ESI data, ECX bytes, EDI the 128-byte state, EAX = 0 on
 * entry (§4.1, "Bytes hashed: EAX"). */
static inline void xsha256(const void *data, size_t len, uint32_t *state) {
  size_t done = 0;
  __asm__ volatile(".byte 0xf3,0x0f,0xa6,0xd0"
                   : "+S"(data), "+a"(done)
                   : "c"(len), "D"(state)
                   : "memory", "cc");
}

/* XSTORE (0F A7 C0): EDX quality factor, EDI buffer; EAX[4:0] = bytes stored (§2.1). */
static inline uint32_t xstore(void *buf, unsigned quality) {
  uint32_t status;
  __asm__ volatile(".byte 0x0f,0xa7,0xc0" : "=a"(status), "+D"(buf) : "d"(quality) : "memory");
  return status;
}

/* ---- AES key schedules (FIPS-197 §5.2, §5.3.5) for application-provided keys --------- */

static uint8_t gf_mul(uint8_t a, uint8_t b) {
  uint8_t p = 0;
  for (; b != 0; b >>= 1) {
    if (b & 1) p ^= a;
    a = (uint8_t)((a << 1) ^ ((a & 0x80) ? 0x1b : 0));
  }
  return p;
}

/* FIPS-197 §5.1.1: the multiplicative inverse (x^254), then the affine transformation. */
static uint8_t sub_byte(uint8_t x) {
  uint8_t inv = 1, p = x;
  for (unsigned e = 254; e != 0; e >>= 1) {
    if (e & 1) inv = gf_mul(inv, p);
    p = gf_mul(p, p);
  }
  if (x == 0) inv = 0;
  uint8_t s = inv;
  for (int i = 1; i < 5; ++i) s ^= (uint8_t)((inv << i) | (inv >> (8 - i)));
  return (uint8_t)(s ^ 0x63);
}

/* w[] as bytes: round key r is w + 16 r. */
static void expand_key(const uint8_t *key, unsigned nk, unsigned nr, uint8_t *w) {
  uint8_t rcon = 1;
  for (unsigned i = 0; i < 4 * nk; ++i) w[i] = key[i];
  for (unsigned i = nk; i < 4 * (nr + 1); ++i) {
    uint8_t t[4] = {w[4 * i - 4], w[4 * i - 3], w[4 * i - 2], w[4 * i - 1]};
    if (i % nk == 0) {
      const uint8_t first = t[0];
      t[0] = (uint8_t)(sub_byte(t[1]) ^ rcon);
      t[1] = sub_byte(t[2]);
      t[2] = sub_byte(t[3]);
      t[3] = sub_byte(first);
      rcon = gf_mul(rcon, 2);
    } else if (nk > 6 && i % nk == 4) {
      for (int j = 0; j < 4; ++j) t[j] = sub_byte(t[j]);
    }
    for (int j = 0; j < 4; ++j) w[4 * i + j] = (uint8_t)(w[4 * (i - nk) + j] ^ t[j]);
  }
}

static void inv_mix_column(uint8_t *c) {
  const uint8_t a = c[0], b = c[1], d = c[2], e = c[3];
  c[0] = gf_mul(a, 14) ^ gf_mul(b, 11) ^ gf_mul(d, 13) ^ gf_mul(e, 9);
  c[1] = gf_mul(a, 9) ^ gf_mul(b, 14) ^ gf_mul(d, 11) ^ gf_mul(e, 13);
  c[2] = gf_mul(a, 13) ^ gf_mul(b, 9) ^ gf_mul(d, 14) ^ gf_mul(e, 11);
  c[3] = gf_mul(a, 11) ^ gf_mul(b, 13) ^ gf_mul(d, 9) ^ gf_mul(e, 14);
}

/* §3.2: for decryption the equivalent-inverse-cipher schedule (FIPS-197 Figure 15) in
 * inverse order, the real key last. */
static void decrypt_schedule(const uint8_t *w, unsigned nr, uint8_t *dw) {
  for (unsigned r = 0; r <= nr; ++r) {
    for (int j = 0; j < 16; ++j) dw[16 * r + j] = w[16 * (nr - r) + j];
    if (r != 0 && r != nr) {
      for (int c = 0; c < 4; ++c) inv_mix_column(dw + 16 * r + 4 * c);
    }
  }
}

/* ---- AES ------------------------------------------------------------------------- */

/* Which keys ACE holds (as far as this driver knows): a REP XCRYPT with other keys must
 * start with EFLAGS[30] = 0 (§1.8). Anything else that stores EFLAGS (an interrupt, REP
 * XSHA) clears the bit too, and ACE then reloads by itself. */
static const struct aes_ctx *loaded_ctx;
static uint32_t loaded_generation;
static int loaded_decrypt;

static void use_key(const struct aes_ctx *ctx, int decrypt) {
  if (ctx != loaded_ctx || ctx->generation != loaded_generation || decrypt != loaded_decrypt) {
    padlock_reload_key();
    loaded_ctx = ctx;
    loaded_generation = ctx->generation;
    loaded_decrypt = decrypt;
  }
}

int aes_set_key(struct aes_ctx *ctx, const uint8_t *key, unsigned key_len) {
  if (key_len != 16 && key_len != 24 && key_len != 32) {
    drv_warn("aes_set_key: unsupported key length", key_len);
    return -EINVAL;
  }
  const unsigned nk = key_len / 4, nr = nk + 6;
  const uint32_t ksize = (uint32_t)(key_len - 16) / 8u; /* 0, 1, 2 (§3.2 KSIZE) */
  ctx->key_len = key_len;
  ctx->generation++;
  ctx->ecw.word = nr | ksize << CW_KSIZE_SHIFT;
  ctx->dcw.word = nr | ksize << CW_KSIZE_SHIFT | CW_CRYPT;
  if (key_len == 16) {
    /* §3.2: hardware-generated schedules, for encryption and for decryption. */
    memcpy(ctx->ekey, key, key_len);
    memcpy(ctx->dkey, key, key_len);
  } else {
    /* §3.2: "the only supported option for 192-bit and 256-bit keys". */
    expand_key(key, nk, nr, ctx->ekey);
    decrypt_schedule(ctx->ekey, nr, ctx->dkey);
    ctx->ecw.word |= CW_KEYGN;
    ctx->dcw.word |= CW_KEYGN;
  }
  return 0;
}

void aes_set_iv(struct aes_ctx *ctx, const uint8_t *iv) {
  memcpy(ctx->iv, iv, AES_BLOCK);
}

static size_t chunk_blocks(size_t blocks) {
  const size_t limit = drv_max_blocks;
  return limit != 0 && blocks > limit ? limit : blocks;
}

int aes_cbc_encrypt(struct aes_ctx *ctx, const uint8_t *in, uint8_t *out, size_t len) {
  if (len % AES_BLOCK != 0) return -EINVAL;
  use_key(ctx, 0);
  for (size_t blocks = len / AES_BLOCK; blocks != 0;) {
    const size_t n = chunk_blocks(blocks);
    const void *next_iv = xcrypt_cbc(in, out, ctx->ekey, ctx->iv, &ctx->ecw, n);
    /* §3.1: after CBC encryption EAX points at the IV to continue with. */
    memcpy(ctx->iv, next_iv, AES_BLOCK);
    in += n * AES_BLOCK;
    out += n * AES_BLOCK;
    blocks -= n;
  }
  return 0;
}

int aes_cbc_decrypt(struct aes_ctx *ctx, const uint8_t *in, uint8_t *out, size_t len) {
  if (len % AES_BLOCK != 0) return -EINVAL;
  use_key(ctx, 1);
  for (size_t blocks = len / AES_BLOCK; blocks != 0;) {
    const size_t n = chunk_blocks(blocks);
    /* §3.1: CBC decryption updates the value EAX points to (ctx->iv) instead. */
    xcrypt_cbc(in, out, ctx->dkey, ctx->iv, &ctx->dcw, n);
    in += n * AES_BLOCK;
    out += n * AES_BLOCK;
    blocks -= n;
  }
  return 0;
}

int aes_ecb_encrypt(struct aes_ctx *ctx, const uint8_t *in, uint8_t *out, size_t len) {
  if (len % AES_BLOCK != 0) return -EINVAL;
  if (len == 0) return 0;
  use_key(ctx, 0);
  xcrypt_ecb(in, out, ctx->ekey, &ctx->ecw, len / AES_BLOCK);
  return 0;
}

/* ---- SHA-256 ---------------------------------------------------------------------- */

int sha256_digest(const uint8_t *data, size_t len, uint8_t *out) {
  /* §4.1: 128 bytes at EDI, 16-byte aligned, holding the FIPS 180-2 initial hash value. */
  uint32_t state[32] __attribute__((aligned(16))) = {
      0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  };
  xsha256(data, len, state);
  /* §4.1: the words are stored little-endian; the digest is big-endian (BSWAP each). */
  for (int i = 0; i < 8; ++i) {
    out[4 * i] = (uint8_t)(state[i] >> 24);
    out[4 * i + 1] = (uint8_t)(state[i] >> 16);
    out[4 * i + 2] = (uint8_t)(state[i] >> 8);
    out[4 * i + 3] = (uint8_t)state[i];
  }
  return 0;
}

/* ---- RNG -------------------------------------------------------------------------- */

long rng_harvest(uint8_t *out, size_t len, unsigned quality, unsigned max_waits) {
  /* One XSTORE stores 0, 4 or 8 bytes (§2.1): 8 writable bytes, 4-byte aligned. */
  uint8_t buf[16] __attribute__((aligned(16)));
  size_t got = 0;
  long xstores = 0;
  unsigned empty = 0;
  while (got < len) {
    const uint32_t status = xstore(buf, quality);
    ++xstores;
    const unsigned n = status & 0x1f; /* EAX[4:0]: random bytes stored */
    if (n == 0) {
      if (++empty > max_waits) return -EIO;
      rng_wait(empty);
      continue;
    }
    empty = 0;
    for (unsigned i = 0; i < n && got < len; ++i) out[got++] = buf[i];
  }
  return xstores;
}

/* ---- the operations table ----------------------------------------------------------- */

const struct padlock_ops padlock_ops = {
    .set_key = aes_set_key,
    .cbc_encrypt = aes_cbc_encrypt,
    .cbc_decrypt = aes_cbc_decrypt,
    .sha256 = sha256_digest,
    .name = "padlock-example",
};
