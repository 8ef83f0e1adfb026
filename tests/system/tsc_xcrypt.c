/* Times REP XCRYPTECB over N blocks with RDTSC (docs/system.md, "Time"). In system mode the
 * TSC counts QEMU's virtual clock at the model's MHz plus the model's cycles of every
 * PadLock instruction, so the time of N blocks is the model's cycles for N blocks (§3.3)
 * plus what QEMU charges for the same few instructions every time. Each count is timed
 * kReps times with the key loaded again first (PUSHF/POPF clears EFLAGS[30], §1.8); the
 * least time is printed, which leaves out an interrupt taken between the two reads.
 * Prints "PADLOCK-TSC ecb N CYCLES" per argument N, or "PADLOCK-TSC no-ace" when CPUID
 * 0xC0000001 says ACE is absent or not enabled (§1.3). Built static for the system-mode
 * initramfs. */
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { kMaxBlocks = 1024, kReps = 7 };

static uint8_t src[kMaxBlocks * 16] __attribute__((aligned(16)));
static uint8_t dst[kMaxBlocks * 16] __attribute__((aligned(16)));
static uint8_t key[256] __attribute__((aligned(16)));
/* §3.2: ROUND = 10, AES-128, hardware key expansion, encrypt */
static uint32_t cw[4] __attribute__((aligned(16))) = {10, 0, 0, 0};

static int ace_enabled(void) {
  unsigned a, b, c, d;
  __cpuid(0xC0000000, a, b, c, d);
  if (a < 0xC0000001) return 0;
  __cpuid(0xC0000001, a, b, c, d);
  return (d & 0xC0) == 0xC0; /* ACE and ACE enabled (§1.3) */
}

static inline uint64_t rdtsc(void) {
  uint32_t lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (uint64_t)hi << 32 | lo;
}

/* The same instructions run between the two reads whatever `blocks` is. */
__attribute__((noinline)) static uint64_t time_ecb(unsigned long blocks) {
  const uint8_t* in = src;
  uint8_t* out = dst;
  uint64_t t0;
  __asm__ volatile("pushf\n\tpopf" ::: "cc");
  t0 = rdtsc();
  __asm__ volatile(".byte 0xf3, 0x0f, 0xa7, 0xc8" /* REP XCRYPTECB */
                   : "+S"(in), "+D"(out), "+c"(blocks)
                   : "a"(0), "b"(key), "d"(cw)
                   : "memory", "cc");
  return rdtsc() - t0;
}

int main(int argc, char** argv) {
  if (!ace_enabled()) {
    puts("PADLOCK-TSC no-ace");
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    const unsigned long blocks = strtoul(argv[i], NULL, 10);
    uint64_t best = UINT64_MAX;
    if (blocks == 0 || blocks > kMaxBlocks) return 2;
    for (int r = 0; r < kReps; ++r) {
      const uint64_t t = time_ecb(blocks);
      if (t < best) best = t;
    }
    printf("PADLOCK-TSC ecb %lu %llu\n", blocks, (unsigned long long)best);
  }
  return 0;
}
