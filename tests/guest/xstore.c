/* guest_xstore: XSTORE at every quality factor and REP XSTORE, printing what was stored
 * so the test can check the quality-factor table of §2.1.
 *
 * usage: xstore [SAMPLES]          (default 8 XSTOREs with data per quality factor)
 *
 * Lines:
 *   xstore edx=0x... eax=0x... count=N edi_adv=N tries=T bytes=<16 bytes at EDI>
 *       one XSTORE that stored data (after T-1 that found no full buffer, §2.1 "fewer
 *       than 8 bytes are available"); the 16-byte area was filled with 0xA5 first.
 *   burst i=N eax=0x... edi_adv=N bytes=<16 bytes>
 *       BURST XSTOREs with EDX = 0 one right after another (no other work between them,
 *       so they outrun the RNG and some find fewer than 8 bytes available, §2.1), each
 *       into its own 16-byte area filled with 0xA5 first.
 *   rep edx=0x... count=N eax=0x... ecx=N edi_adv=N beyond=<bytes changed at or after
 *       count+7> bytes=<first min(N,32) bytes>
 *       REP XSTORE of N bytes into a buffer of N+8 (CRAP.C, §6.1) plus a 32-byte guard.
 *   sample=<64 hex bytes> distinct=<byte values seen> ones_permille=<1-bits per 1000>
 *       REP XSTORE of 64 KiB with EDX = 0, for --seed determinism and a sanity check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_util.h"
#include "padlock.h"

enum { FILL = 0xA5, GUARD = 32, MAX_TRIES = 1000000, BIG_SAMPLE = 64 * 1024, BURST = 64 };

/* Quality factors tried: 0..3 (§2.1 table) and one with the upper 30 bits set, which
 * the instruction ignores ("Only the lower two bits of EDX are meaningful"). */
static const uint32_t kQuality[] = {0, 1, 2, 3, 0xFFFFFFF1u};

static void single(uint32_t edx, int samples) {
  uint8_t *buf = pool_alloc(16, 16, 0);
  for (int s = 0; s < samples; ++s) {
    struct xstore_regs r;
    int tries = 0;
    do {
      memset(buf, FILL, 16);
      r = padlock_xstore(buf, edx);
      ++tries;
    } while ((r.eax & 0x1F) == 0 && tries < MAX_TRIES);
    printf("xstore edx=0x%x eax=0x%08x count=%u edi_adv=%lu tries=%d ", edx, r.eax,
           r.eax & 0x1F, (unsigned long)(r.edi - (uintptr_t)buf), tries);
    print_hex("bytes", buf, 16);
  }
}

static void rep(uint32_t edx, size_t count) {
  uint8_t *buf = pool_alloc(count + 8 + GUARD, 16, 0);
  memset(buf, FILL, count + 8 + GUARD);
  const struct xstore_regs r = padlock_rep_xstore(buf, count, edx);
  size_t beyond = 0;
  for (size_t i = count + 7; i < count + 8 + GUARD; ++i) beyond += buf[i] != FILL;
  printf("rep edx=0x%x count=%lu eax=0x%08x ecx=%lu edi_adv=%lu beyond=%lu ", edx,
         (unsigned long)count, r.eax, (unsigned long)r.ecx,
         (unsigned long)(r.edi - (uintptr_t)buf), (unsigned long)beyond);
  print_hex("bytes", buf, count < 32 ? count : 32);
}

static void burst(void) {
  uint8_t *bufs = pool_alloc(16 * BURST, 16, 0);
  struct xstore_regs r[BURST];
  memset(bufs, FILL, 16 * BURST);
  for (int i = 0; i < BURST; ++i) r[i] = padlock_xstore(bufs + 16 * i, 0);
  for (int i = 0; i < BURST; ++i) {
    printf("burst i=%d eax=0x%08x edi_adv=%lu ", i, r[i].eax,
           (unsigned long)(r[i].edi - (uintptr_t)(bufs + 16 * i)));
    print_hex("bytes", bufs + 16 * i, 16);
  }
}

int main(int argc, char **argv) {
  const int samples = argc > 1 ? atoi(argv[1]) : 8;
  for (size_t q = 0; q < sizeof kQuality / sizeof kQuality[0]; ++q) single(kQuality[q], samples);

  burst();

  static const size_t kCounts[] = {1, 3, 4, 8, 13, 64, 1000};
  for (size_t q = 0; q < 4; ++q)
    for (size_t c = 0; c < sizeof kCounts / sizeof kCounts[0]; ++c) rep(kQuality[q], kCounts[c]);

  uint8_t *big = pool_alloc(BIG_SAMPLE + 8, 16, 0);
  padlock_rep_xstore(big, BIG_SAMPLE, 0);
  unsigned seen[256] = {0};
  unsigned long ones = 0;
  for (size_t i = 0; i < BIG_SAMPLE; ++i) {
    seen[big[i]] = 1;
    ones += (unsigned long)__builtin_popcount(big[i]);
  }
  unsigned distinct = 0;
  for (int v = 0; v < 256; ++v) distinct += seen[v];
  print_hex("sample", big, 64);
  printf("distinct=%u\nones_permille=%lu\n", distinct, ones * 1000 / (8ul * BIG_SAMPLE));
  return 0;
}
