/* PadLock data-stream loop for bench/run_all.sh: COUNT passes over SIZE-byte buffers, so
 * the emulator's cost per byte (bulk) or per instruction (SIZE 16) can be timed from
 * outside with and without --timing.
 *
 *   ecb     REP XCRYPTECB, AES-128 encryption with the hardware key expansion (§3.2
 *           KEYGN = 0)
 *   sha256  REP XSHA256 over SIZE bytes (§4.1), from the initial state each time
 *
 * SHAPE (ecb only; default inplace) is where the blocks go (bench/stream_shape.h), as
 * bench/host_stream.c does them on the host, one REP XCRYPTECB per call.
 *
 * COUNT 0 does the set-up only (allocation and first touch of the buffers), so that the
 * difference of two runs is the loop alone. Prints a checksum of the output or digest.
 *
 * usage: xcrypt_loop ecb|sha256 SIZE COUNT [inplace|separate|steps] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "padlock.h"      /* kSha256Init: the §4.1 initial state */
#include "stream_shape.h" /* the shapes and buffers bench/host_stream.c shares */

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: xcrypt_loop ecb|sha256 SIZE COUNT [inplace|separate|steps]\n");
    return 2;
  }
  const int sha = strcmp(argv[1], "sha256") == 0;
  if (!sha && strcmp(argv[1], "ecb") != 0) {
    fprintf(stderr, "xcrypt_loop: unknown mode %s\n", argv[1]);
    return 2;
  }
  const unsigned long count = strtoul(argv[3], NULL, 0);
  const char *shape = argc == 5 ? argv[4] : "inplace";
  if (sha && strcmp(shape, "inplace") != 0) {
    fprintf(stderr, "xcrypt_loop: sha256 reads one buffer only\n");
    return 2;
  }
  struct stream_buffers b;
  const int bad = stream_buffers_make("xcrypt_loop", argv[2], shape, &b);
  if (bad) return bad;

  static uint8_t key[16] __attribute__((aligned(16))) = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae,
                                                          0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88,
                                                          0x09, 0xcf, 0x4f, 0x3c};
  static uint32_t cword[4] __attribute__((aligned(16))) = {10 /* rounds; KEYGN 0, encrypt */};
  static uint32_t state[32] __attribute__((aligned(16)));
  if (sha) {
    for (unsigned long i = 0; i < count; ++i) {
      memcpy(state, kSha256Init, sizeof kSha256Init);
      padlock_xsha256(b.in, b.size, state);
    }
    stream_print(argv[1], &b, count, (const uint8_t *)state, 32);
  } else {
    for (unsigned long i = 0; i < count; ++i) {
      for (size_t off = 0; off < b.size; off += b.step) {
        padlock_xcrypt_ecb(b.in + off, b.out + off, key, NULL, cword, b.step / 16);
      }
    }
    stream_print(argv[1], &b, count, b.out, b.size);
  }
  stream_buffers_free(&b);
  return 0;
}
