/* ctr_phases: the two timed phases of the guide's CTR_ERRATA.C (§6.6), our own code, for
 * the calibration of aligned REP XCRYPTCTR (scripts/calibrate.py, docs/timing.md).
 *
 *   1. per test: reset the IV, load ESI, EDI, EAX, EBX, EDX once, then execute REP
 *      XCRYPTCTR with ECX = 1 BLOCKS times in an x86 loop, carrying ESI, EDI and the IV
 *      memory from one instruction to the next;
 *   2. per test: reset the IV, one REP XCRYPTCTR with ECX = BLOCKS.
 *
 * Control word 0x00A (AES-128, hardware key), the SP 800-38A key, counter block f0..ff,
 * pushf/popf once before the first instruction; plaintext, output and reference buffers
 * 16-byte aligned (CTR_ERRATA.C relies on malloc for that, ALIGN = 0). Each phase is timed
 * with clock() and its rate is tests x blocks x 128 bits / time, as the listing prints it.
 * Built without optimisation, as the listing advises for its CTR code.
 *
 * usage: ctr_phases [-blocks N] [-tests N]   defaults 256 blocks, 1000 tests
 * Prints: phase1_gbps=G1 phase2_gbps=G2 ratio=G1/G2 (and the ticks of each phase). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "padlock.h"

enum { MAX_BLOCKS = 10000 };

static uint8_t cw[128] __attribute__((aligned(16)));
static uint8_t key[16] __attribute__((aligned(16)));
static uint8_t iv[16] __attribute__((aligned(16)));
static uint8_t plain[16 * MAX_BLOCKS] __attribute__((aligned(16)));
static uint8_t ref[16 * MAX_BLOCKS] __attribute__((aligned(16)));
static uint8_t test[16 * MAX_BLOCKS] __attribute__((aligned(16)));

static const uint8_t kIv0[16] = {0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7,
                                 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff};
static const uint8_t kKey[16] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
                                 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};

static double gbps(long tests, long blocks, clock_t ticks) {
  return ticks > 0 ? (double)CLOCKS_PER_SEC * tests * blocks * 128.0 / (1e9 * (double)ticks) : 0;
}

int main(int argc, char **argv) {
  long blocks = 256, tests = 1000;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "-blocks") && a + 1 < argc) blocks = atol(argv[++a]);
    else if (!strcmp(argv[a], "-tests") && a + 1 < argc) tests = atol(argv[++a]);
    else {
      fprintf(stderr, "usage: ctr_phases [-blocks N] [-tests N]\n");
      return 2;
    }
  }
  if (blocks < 1 || blocks > MAX_BLOCKS || tests < 1) {
    fprintf(stderr, "ctr_phases: -blocks must be 1..%d and -tests at least 1\n", MAX_BLOCKS);
    return 2;
  }
  const uint32_t cw_word = 0x00A;
  memcpy(cw, &cw_word, 4);
  memcpy(key, kKey, 16);
  padlock_reload_key();

  /* 1. one block per REP XCRYPTCTR; the loop counter lives in memory (-O0 style). */
  clock_t t0 = clock();
  for (long t = 0; t < tests; ++t) {
    memcpy(iv, kIv0, 16);
    long left = blocks;
    __asm__ __volatile__("pushal\n\t"
                         "movl %1, %%esi\n\t"
                         "movl %2, %%edi\n\t"
                         "movl %3, %%eax\n\t"
                         "movl %4, %%ebx\n\t"
                         "movl %5, %%edx\n\t"
                         "1:\n\t"
                         "movl $1, %%ecx\n\t"
                         ".byte 0xf3, 0x0f, 0xa7, 0xd8\n\t" /* rep xcryptctr */
                         "decl %0\n\t"
                         "jnz 1b\n\t"
                         "popal\n\t"
                         : "+m"(left)
                         : "g"(plain), "g"(ref), "g"(iv), "g"(key), "g"(cw)
                         : "memory", "cc");
  }
  clock_t t1 = clock();
  /* 2. one REP XCRYPTCTR of BLOCKS blocks. */
  for (long t = 0; t < tests; ++t) {
    memcpy(iv, kIv0, 16);
    padlock_xcrypt_ctr(plain, test, key, iv, cw, (size_t)blocks);
  }
  clock_t t2 = clock();
  const double g1 = gbps(tests, blocks, t1 - t0), g2 = gbps(tests, blocks, t2 - t1);
  printf("blocks=%ld tests=%ld phase1_ticks=%.0f phase2_ticks=%.0f phase1_gbps=%.4f "
         "phase2_gbps=%.4f ratio=%.4f\n",
         blocks, tests, (double)(t1 - t0), (double)(t2 - t1), g1, g2, g2 > 0 ? g1 / g2 : 0.0);
  return 0;
}
