/* guest_zx_units: one run of each late-Nano / Zhaoxin PadLock instruction, called the way
 * its users call it (docs/zhaoxin.md), printing hex results the test compares with Python's
 * hashlib and OpenSSL.
 *
 * usage: zx_units sha512|sha384 HEX        REP XSHA512/384 over the padded message (the
 *                                          padding GnuTLS/OpenSSL padlock_sha512_blocks'
 *                                          callers add); prints digest= and ecx=
 *        zx_units sm3 HEX                  CCS_HASH, EAX = 0 (the unit pads)
 *        zx_units sm3-blocks HEX           CCS_HASH, EAX = -1 (software pads, as the kernel)
 *        zx_units sm4 EAX KEY IV HEX       CCS_ENCRYPT with control word EAX (hex); prints
 *                                          out= (ECX blocks at EDI, or the MAC block),
 *                                          iv= and the registers
 *        zx_units sm2 EDX HASH PUB SIG     SM2 (F2 0F A6 C0); prints ecx=
 *        zx_units xrng2|xmodexp|montmul2   the instructions with no public semantics
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_util.h"

static uint8_t msg[1 << 16];

static size_t sha512_pad(uint8_t *m, size_t len) {
  const uint64_t bits = (uint64_t)len * 8;
  m[len++] = 0x80;
  while (len % 128 != 112) m[len++] = 0;
  for (int i = 0; i < 8; ++i) m[len++] = 0;
  for (int i = 7; i >= 0; --i) m[len++] = (uint8_t)(bits >> (8 * i));
  return len;
}

static int cmd_sha(int is512, const char *hex) {
  static const uint64_t iv512[8] = {0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL,
                                    0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
                                    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
                                    0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
  static const uint64_t iv384[8] = {0xcbbb9d5dc1059ed8ULL, 0x629a292a367cd507ULL,
                                    0x9159015a3070dd17ULL, 0x152fecd8f70e5939ULL,
                                    0x67332667ffc00b31ULL, 0x8eb44a8768581511ULL,
                                    0xdb0c2e0d64f98fa7ULL, 0x47b5481dbefa4fa4ULL};
  uint64_t *state = pool_alloc(128, 16, 0);
  memcpy(state, is512 ? iv512 : iv384, 64);
  const size_t len = sha512_pad(msg, parse_hex(hex, msg, sizeof msg - 256));
  uintptr_t si = (uintptr_t)msg, di = (uintptr_t)state;
  size_t cx = len / 128;
  if (is512) {
    __asm__ volatile(".byte 0xf3,0x0f,0xa6,0xe0" /* rep xsha512 */
                     : "+S"(si), "+D"(di), "+c"(cx) : : "memory");
  } else {
    __asm__ volatile(".byte 0xf3,0x0f,0xa6,0xd8" /* rep xsha384 */
                     : "+S"(si), "+D"(di), "+c"(cx) : : "memory");
  }
  printf("digest=");
  for (int w = 0; w < (is512 ? 8 : 6); ++w) printf("%016llx", (unsigned long long)state[w]);
  printf("\necx=%lu esi_adv=%lu\n", (unsigned long)cx, (unsigned long)(si - (uintptr_t)msg));
  return 0;
}

static int cmd_sm3(int blocks, const char *hex) {
  static const uint32_t iv[8] = {0x7380166f, 0x4914b2b9, 0x172442d7, 0xda8a0600,
                                 0xa96f30bc, 0x163138aa, 0xe38dee4d, 0xb0fb0e4e};
  uint8_t *state = pool_alloc(32, 4, 0);
  for (int i = 0; i < 8; ++i)
    for (int b = 0; b < 4; ++b) state[4 * i + b] = (uint8_t)(iv[i] >> (24 - 8 * b));
  size_t len = parse_hex(hex, msg, sizeof msg - 128);
  uintptr_t si = (uintptr_t)msg, di = (uintptr_t)state;
  size_t cx = len;
  long ax = 0;
  if (blocks) {
    const uint64_t bits = (uint64_t)len * 8;
    msg[len++] = 0x80;
    while (len % 64 != 56) msg[len++] = 0;
    for (int i = 7; i >= 0; --i) msg[len++] = (uint8_t)(bits >> (8 * i));
    cx = len / 64;
    ax = -1;
  }
  __asm__ volatile(".byte 0xf3,0x0f,0xa6,0xe8" /* ccs_hash */
                   : "+S"(si), "+D"(di), "+c"(cx), "+a"(ax) : "b"(0x20) : "memory");
  print_hex("digest", state, 32);
  printf("eax=%ld ecx=%lu\n", ax, (unsigned long)cx);
  return 0;
}

static int cmd_sm4(const char *cw, const char *key_hex, const char *iv_hex, const char *hex) {
  uint8_t *key = pool_alloc(16, 16, 0), *iv = pool_alloc(16, 16, 0);
  if (parse_hex(key_hex, key, 16) != 16 || parse_hex(iv_hex, iv, 16) != 16) die("key, iv");
  const size_t len = parse_hex(hex, msg, sizeof msg);
  uint8_t *out = pool_alloc(len + 16, 16, 0);
  uintptr_t si = (uintptr_t)msg, di = (uintptr_t)out;
  size_t cx = len / 16;
  long ax = strtol(cw, NULL, 16);
  __asm__ volatile(".byte 0xf3,0x0f,0xa7,0xf0" /* ccs_encrypt */
                   : "+S"(si), "+D"(di), "+c"(cx), "+a"(ax)
                   : "b"(key), "d"(iv)
                   : "memory");
  const int mac = di == (uintptr_t)out;
  print_hex("out", out, mac ? 16 : len);
  print_hex("iv", iv, 16);
  printf("eax=%lx ecx=%lu esi_adv=%lu edi_adv=%lu\n", ax, (unsigned long)cx,
         (unsigned long)(si - (uintptr_t)msg), (unsigned long)(di - (uintptr_t)out));
  return 0;
}

static int cmd_sm2(const char *edx, const char *h, const char *pub, const char *sig) {
  uint8_t *hash = pool_alloc(32, 16, 0), *key = pool_alloc(65, 16, 0), *s = pool_alloc(64, 16, 0);
  uint8_t *scratch = pool_alloc(8192, 16, 0);
  if (parse_hex(h, hash, 32) != 32 || parse_hex(pub, key, 65) != 65 || parse_hex(sig, s, 64) != 64)
    die("hash, key, signature");
  size_t cx;
  __asm__ volatile(".byte 0xf2,0x0f,0xa6,0xc0" /* sm2 */
                   : "=c"(cx)
                   : "a"(hash), "b"(key), "d"(strtol(edx, NULL, 0)), "S"(scratch), "D"(s)
                   : "memory");
  printf("ecx=%lu\n", (unsigned long)cx);
  return 0;
}

int main(int argc, char **argv) {
  const char *c = argc > 1 ? argv[1] : "";
  if ((!strcmp(c, "sha512") || !strcmp(c, "sha384")) && argc == 3)
    return cmd_sha(!strcmp(c, "sha512"), argv[2]);
  if ((!strcmp(c, "sm3") || !strcmp(c, "sm3-blocks")) && argc == 3)
    return cmd_sm3(!strcmp(c, "sm3-blocks"), argv[2]);
  if (!strcmp(c, "sm4") && argc == 6) return cmd_sm4(argv[2], argv[3], argv[4], argv[5]);
  if (!strcmp(c, "sm2") && argc == 6) return cmd_sm2(argv[2], argv[3], argv[4], argv[5]);
  if (!strcmp(c, "xrng2")) {
    __asm__ volatile(".byte 0xf3,0x0f,0xa7,0xf8" ::: "memory");
  } else if (!strcmp(c, "xmodexp")) {
    __asm__ volatile(".byte 0xf3,0x0f,0xa6,0xf8" ::: "memory");
  } else if (!strcmp(c, "montmul2")) {
    __asm__ volatile(".byte 0xf3,0x0f,0xa6,0xf0" ::: "memory");
  } else {
    fprintf(stderr, "usage: zx_units sha512|sha384|sm3|sm3-blocks HEX | sm4 EAX KEY IV HEX |"
                    " sm2 EDX HASH PUB SIG | xrng2|xmodexp|montmul2\n");
    return 2;
  }
  puts("returned");  /* never reached on a model with the unit: the emulator stops */
  return 0;
}
