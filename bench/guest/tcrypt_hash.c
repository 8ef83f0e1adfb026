/* tcrypt_hash: our own guest with the shape of Linux's tcrypt hash speed test (crypto/
 * tcrypt.c, test_hash_speed, modes 403-406) over padlock-sha's "nano" path, which family-7
 * Zhaoxin parts take (model >= 0x0F), and the SHA-384/512 code of Zhaoxin's "crypto: Add
 * Zhaoxin PadLock Hash Engine support for SHA384/SHA512" (linux-crypto, 2025-01-14), whose
 * KH-40000 figures docs/zhaoxin.md compares it with.
 *
 * One operation is one init, one update of the whole block and one final, through a table
 * of function pointers as the crypto API calls a shash driver (tcrypt's digest path: its
 * block size is "the length of each data block processed by one complete SHA sequence").
 * The driver's shape:
 *   update: the state is copied to a 16-byte aligned 128-byte stack area (PHE's EDI); a
 *           partial block left from before is completed from the data and hashed alone
 *           (ECX = 1), then the whole blocks of the data in one instruction; the state is
 *           copied back and the tail kept. XSHA1/XSHA256 take EAX = -1 (Nano's no-padding
 *           mode), XSHA512 no EAX.
 *   final:  two updates, the padding to 56 (112) mod 64 (128) bytes and the big-endian bit
 *           length, then the words byte-swapped into the digest.
 * The input is one page-aligned buffer hashed in place, as tcrypt's test pages are.
 *
 * usage: tcrypt_hash [-alg sha1|sha256|sha384|sha512] [-ops N] [-size BYTES]
 *   Without -alg all four; without -size tcrypt's block sizes 16 .. 8192. One line per
 *   algorithm and size: alg=A blen=B ops=N cycles=C xsha=K blocks=L digest=HEX, C the RDTSC
 *   cycles of one operation, K the REP XSHA instructions and L the blocks one operation
 *   hashes, HEX the digest of the last operation (checked by the test against OpenSSL). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_BLOCK = 128, STATE_AREA = 128, MAX_SIZE = 8192 };

static uint8_t page[MAX_SIZE] __attribute__((aligned(4096)));
static unsigned long xsha_calls, xsha_blocks;

static inline uint64_t rdtsc(void) {
  uint32_t lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return ((uint64_t)hi << 32) | lo;
}

/* One REP XSHA1 (C8), XSHA256 (D0) or XSHA512 (E0) over `blocks` whole blocks. XSHA512's
 * callers set no EAX (the model ignores it); the two counters cost the guest a few clocks
 * per instruction that the driver does not spend. */
#define DEFINE_XSHA(name, modrm, eax)                                                       \
  static void name(const uint8_t *src, void *state, unsigned long blocks) {                 \
    uintptr_t si = (uintptr_t)src, di = (uintptr_t)state;                                   \
    unsigned long cx = blocks;                                                              \
    xsha_calls += 1;                                                                        \
    xsha_blocks += blocks;                                                                  \
    __asm__ volatile(".byte 0xf3,0x0f,0xa6," #modrm                                         \
                     : "+S"(si), "+D"(di), "+c"(cx)                                         \
                     : "a"(eax)                                                             \
                     : "memory", "cc");                                                     \
  }
DEFINE_XSHA(xsha1_blocks, 0xc8, -1L)
DEFINE_XSHA(xsha256_blocks, 0xd0, -1L)
DEFINE_XSHA(xsha512_blocks, 0xe0, 0L)

/* The descriptor: the chaining state as PHE keeps it (little-endian words), the byte
 * count, the partial block. */
struct desc {
  uint64_t state[8];
  uint64_t count;
  uint8_t buf[MAX_BLOCK];
};

/* The driver's entry points, called through pointers as the crypto API calls a shash. */
struct hash_alg {
  const char *name;
  unsigned digest_bytes;
  void (*init)(struct desc *);
  int (*update)(struct desc *, const uint8_t *, unsigned);
  int (*final)(struct desc *, uint8_t *);
};

/* FIPS 180-4 initial hash values (§5.3), set by each algorithm's init. */
static const uint32_t kSha1Iv[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
static const uint32_t kSha256Iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
static const uint64_t kSha384Iv[8] = {
    0xcbbb9d5dc1059ed8ULL, 0x629a292a367cd507ULL, 0x9159015a3070dd17ULL, 0x152fecd8f70e5939ULL,
    0x67332667ffc00b31ULL, 0x8eb44a8768581511ULL, 0xdb0c2e0d64f98fa7ULL, 0x47b5481dbefa4fa4ULL};
static const uint64_t kSha512Iv[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
#define DEFINE_INIT(alg, iv)                                                                  \
  static void init_##alg(struct desc *d) {                                                  \
    memcpy(d->state, iv, sizeof iv);                                                        \
    d->count = 0;                                                                           \
  }
DEFINE_INIT(sha1, kSha1Iv)
DEFINE_INIT(sha256, kSha256Iv)
DEFINE_INIT(sha384, kSha384Iv)
DEFINE_INIT(sha512, kSha512Iv)

/* The driver's update and final, one copy per algorithm with its sizes as constants (as
 * padlock-sha has one function per algorithm). */
static inline __attribute__((always_inline)) void update_body(struct desc *d, const uint8_t *data,
                                                              unsigned len, const unsigned block,
                                                              const unsigned state_bytes,
                                                              void (*hw)(const uint8_t *, void *,
                                                                         unsigned long)) {
  uint8_t area[STATE_AREA + 16];
  uint8_t *dst = (uint8_t *)(((uintptr_t)area + 15) & ~(uintptr_t)15);
  unsigned partial = (unsigned)(d->count % block), done = 0;
  const uint8_t *src = data;
  d->count += len;
  memcpy(dst, d->state, state_bytes);
  if (partial + len >= block) {
    if (partial != 0) {
      done = block - partial;
      memcpy(d->buf + partial, data, done);
      hw(d->buf, dst, 1);
      src = data + done;
    }
    const unsigned whole = (len - done) / block;
    if (whole != 0) {
      hw(src, dst, whole);
      done += whole * block;
      src = data + done;
    }
    partial = 0;
  }
  memcpy(d->state, dst, state_bytes);
  memcpy(d->buf + partial, src, len - done);
}

static uint8_t padding[MAX_BLOCK] = {0x80};

/* Pads to 56 (112) mod 64 (128) bytes, appends the big-endian bit length (8 or 16 bytes)
 * through two updates, and byte-swaps the state's words into the digest. */
#define DEFINE_DRIVER(alg, block, state_bytes, hw, len_bytes)                                \
  static int update_##alg(struct desc *d, const uint8_t *data, unsigned len) {              \
    update_body(d, data, len, block, state_bytes, hw);                                      \
    return 0;                                                                               \
  }                                                                                         \
  static void pad_##alg(struct desc *d) {                                                   \
    const unsigned room = block - len_bytes, partial = (unsigned)(d->count % block);       \
    uint64_t bits[2] = {0, __builtin_bswap64(d->count << 3)};                               \
    update_##alg(d, padding, partial < room ? room - partial : block + room - partial);     \
    update_##alg(d, (const uint8_t *)&bits[2] - len_bytes, len_bytes);                      \
  }
DEFINE_DRIVER(sha1, 64, 20, xsha1_blocks, 8)
DEFINE_DRIVER(sha256, 64, 32, xsha256_blocks, 8)
DEFINE_DRIVER(sha512, 128, 64, xsha512_blocks, 16)

static int final_sha1(struct desc *d, uint8_t *out) {
  pad_sha1(d);
  const uint32_t *s = (const uint32_t *)d->state;
  for (int i = 0; i < 5; ++i) ((uint32_t *)out)[i] = __builtin_bswap32(s[i]);
  return 0;
}
static int final_sha256(struct desc *d, uint8_t *out) {
  pad_sha256(d);
  const uint32_t *s = (const uint32_t *)d->state;
  for (int i = 0; i < 8; ++i) ((uint32_t *)out)[i] = __builtin_bswap32(s[i]);
  return 0;
}
/* SHA-384 and SHA-512 share it; the digest size is the algorithm's (Zhaoxin's patch). */
static unsigned sha512_digest_words;
static int final_sha512(struct desc *d, uint8_t *out) {
  pad_sha512(d);
  for (unsigned i = 0; i < sha512_digest_words; ++i)
    ((uint64_t *)out)[i] = __builtin_bswap64(d->state[i]);
  return 0;
}

static const struct hash_alg algs[] = {
    {"sha1", 20, init_sha1, update_sha1, final_sha1},
    {"sha256", 32, init_sha256, update_sha256, final_sha256},
    {"sha384", 48, init_sha384, update_sha512, final_sha512},
    {"sha512", 64, init_sha512, update_sha512, final_sha512},
};

/* tcrypt's generic_hash_speed_template block sizes (the digest rows, one update each). */
static const unsigned sizes[] = {16, 64, 256, 1024, 2048, 4096, 8192};

/* One tcrypt operation: init, update, final, each through the table. */
static __attribute__((noinline)) int digest(const struct hash_alg *a, struct desc *d,
                                            unsigned len, uint8_t *out) {
  a->init(d);
  int ret = a->update(d, page, len);
  if (ret == 0) ret = a->final(d, out);
  return ret;
}

static void run(const struct hash_alg *a, unsigned len, long ops) {
  struct desc d;
  uint8_t out[64] __attribute__((aligned(8)));
  sha512_digest_words = a->digest_bytes / 8;
  for (int w = 0; w < 4; ++w) digest(a, &d, len, out); /* caches warm, as tcrypt's loop */
  xsha_calls = xsha_blocks = 0;
  const uint64_t t0 = rdtsc();
  for (long i = 0; i < ops; ++i) digest(a, &d, len, out);
  const uint64_t t1 = rdtsc();
  printf("alg=%s blen=%u ops=%ld cycles=%.2f xsha=%.2f blocks=%.2f digest=", a->name, len, ops,
         (double)(t1 - t0) / ops, (double)xsha_calls / ops, (double)xsha_blocks / ops);
  for (unsigned i = 0; i < a->digest_bytes; ++i) printf("%02x", out[i]);
  printf("\n");
}

int main(int argc, char **argv) {
  const char *only = NULL;
  long ops = 200, size = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-alg") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "-ops") && i + 1 < argc) ops = atol(argv[++i]);
    else if (!strcmp(argv[i], "-size") && i + 1 < argc) size = atol(argv[++i]);
    else {
      fprintf(stderr, "usage: tcrypt_hash [-alg sha1|sha256|sha384|sha512] [-ops N] [-size B]\n");
      return 2;
    }
  }
  if (ops < 1 || size < 0 || size > MAX_SIZE) {
    fprintf(stderr, "tcrypt_hash: -ops at least 1, -size 0..%d\n", MAX_SIZE);
    return 2;
  }
  for (unsigned i = 0; i < MAX_SIZE; ++i) page[i] = (uint8_t)(i * 7 + 1);
  int found = 0;
  for (unsigned k = 0; k < sizeof algs / sizeof algs[0]; ++k) {
    if (only && strcmp(only, algs[k].name)) continue;
    found = 1;
    if (size) run(&algs[k], (unsigned)size, ops);
    else
      for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) run(&algs[k], sizes[s], ops);
  }
  if (!found) {
    fprintf(stderr, "tcrypt_hash: unknown -alg '%s'\n", only);
    return 2;
  }
  return 0;
}
