/* dedibox: the shape of the C7 "Dedibox" benchmark in the header of Synopse mORMot's
 * SynCrypto.pas (USEPADLOCK version), our own code: one call per block of data, ECB
 * through REP XCRYPTECB with the key schedule supplied in memory (KEYGN = 1, as an SDK that
 * takes any key size must: hardware key generation is AES-128 only, §3.2), SHA through one
 * REP XSHA1/XSHA256 over the block from the initial state (§4.1). The key is loaded once
 * (pushf/popf before the loop); the data stay in place in one static buffer.
 *
 * usage: dedibox -alg aes128|aes192|aes256|sha1|sha256 [-size BYTES] [-rep N]
 *   defaults 16384 bytes, 2000 reps. Prints: alg=A size=S reps=N ticks=T mbps=M (10^6 B/s).
 * The key schedule's contents do not change the clocks; it is zero. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "padlock.h"

enum { MAX_SIZE = 4 << 20 };

static uint8_t data[MAX_SIZE] __attribute__((aligned(16)));
static uint8_t cw[16] __attribute__((aligned(16)));
static uint8_t schedule[256] __attribute__((aligned(16)));
static uint8_t iv[16] __attribute__((aligned(16)));
static uint32_t state[32] __attribute__((aligned(16)));

int main(int argc, char **argv) {
  const char *alg = "aes128";
  long size = 16384, reps = 2000;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "-alg") && a + 1 < argc) alg = argv[++a];
    else if (!strcmp(argv[a], "-size") && a + 1 < argc) size = atol(argv[++a]);
    else if (!strcmp(argv[a], "-rep") && a + 1 < argc) reps = atol(argv[++a]);
    else {
      fprintf(stderr, "usage: dedibox -alg aes128|aes192|aes256|sha1|sha256 [-size B] [-rep N]\n");
      return 2;
    }
  }
  if (size < 64 || size > MAX_SIZE || size % 64 || reps < 1) {
    fprintf(stderr, "dedibox: -size must be a multiple of 64 up to %d, -rep at least 1\n",
            MAX_SIZE);
    return 2;
  }
  /* §3.2 control word: ROUND 10/12/14, KEYGN = 1, KSIZE 128/192/256, encrypt. */
  uint32_t word = 0;
  int sha = 0;
  if (!strcmp(alg, "aes128")) word = 10 | CW_KEYGN | CW_KSIZE_128;
  else if (!strcmp(alg, "aes192")) word = 12 | CW_KEYGN | CW_KSIZE_192;
  else if (!strcmp(alg, "aes256")) word = 14 | CW_KEYGN | CW_KSIZE_256;
  else if (!strcmp(alg, "sha1")) sha = 1;
  else if (!strcmp(alg, "sha256")) sha = 256;
  else {
    fprintf(stderr, "dedibox: unknown -alg '%s'\n", alg);
    return 2;
  }
  memcpy(cw, &word, 4);
  memset(data, 0x5a, (size_t)size);
  padlock_reload_key();

  clock_t start = clock();
  for (long r = 0; r < reps; ++r) {
    if (sha == 1) {
      memcpy(state, kSha1Init, sizeof kSha1Init);
      padlock_xsha1(data, (size_t)size, state);
    } else if (sha == 256) {
      memcpy(state, kSha256Init, sizeof kSha256Init);
      padlock_xsha256(data, (size_t)size, state);
    } else {
      padlock_xcrypt_ecb(data, data, schedule, iv, cw, (size_t)size / 16);
    }
  }
  const double ticks = (double)(clock() - start);
  const double mbps = ticks > 0 ? (double)CLOCKS_PER_SEC * reps * size / (1e6 * ticks) : 0;
  printf("alg=%s size=%ld reps=%ld ticks=%.0f mbps=%.2f\n", alg, size, reps, ticks, mbps);
  return 0;
}
