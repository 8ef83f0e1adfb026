/* PadLock data-stream loop for bench/run_all.sh: COUNT instructions over one SIZE-byte
 * buffer, in place, so the emulator's cost per byte (bulk) or per instruction (SIZE 16)
 * can be timed from outside with and without --timing.
 *
 *   ecb     REP XCRYPTECB, AES-128 encryption with the hardware key expansion (§3.2
 *           KEYGN = 0), SIZE/16 blocks per instruction
 *   sha256  REP XSHA256 over SIZE bytes (§4.1), from the initial state each time
 *
 * COUNT 0 does the set-up only (allocation and first touch of the buffer), so that the
 * difference of two runs is the loop alone. Prints a checksum of the buffer or digest.
 *
 * usage: xcrypt_loop ecb|sha256 SIZE COUNT */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "padlock.h"
/* kSha256Init (the FIPS 180-2 initial state) comes from padlock.h. */

static uint32_t fnv1a(const uint8_t *p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: xcrypt_loop ecb|sha256 SIZE COUNT\n");
    return 2;
  }
  const int sha = strcmp(argv[1], "sha256") == 0;
  if (!sha && strcmp(argv[1], "ecb") != 0) {
    fprintf(stderr, "xcrypt_loop: unknown mode %s\n", argv[1]);
    return 2;
  }
  const size_t size = strtoul(argv[2], NULL, 0);
  const unsigned long count = strtoul(argv[3], NULL, 0);
  if (size == 0 || size % 16 != 0) {
    fprintf(stderr, "xcrypt_loop: SIZE must be a positive multiple of 16\n");
    return 2;
  }
  uint8_t *buf = aligned_alloc(16, size);
  if (buf == NULL) return 1;
  for (size_t i = 0; i < size; ++i) buf[i] = (uint8_t)(i * 7);

  static uint8_t key[16] __attribute__((aligned(16))) = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae,
                                                          0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88,
                                                          0x09, 0xcf, 0x4f, 0x3c};
  static uint32_t cword[4] __attribute__((aligned(16))) = {10 /* rounds; KEYGN 0, encrypt */};
  static uint32_t state[32] __attribute__((aligned(16)));
  uint32_t sum;
  if (sha) {
    for (unsigned long i = 0; i < count; ++i) {
      memcpy(state, kSha256Init, sizeof kSha256Init);
      padlock_xsha256(buf, size, state);
    }
    sum = fnv1a((const uint8_t *)state, 32);
  } else {
    for (unsigned long i = 0; i < count; ++i) padlock_xcrypt_ecb(buf, buf, key, NULL, cword, size / 16);
    sum = fnv1a(buf, size < 4096 ? size : 4096); /* the first blocks: enough to check */
  }
  printf("%s %zu x %lu: %08x\n", argv[1], size, count, sum);
  free(buf);
  return 0;
}
