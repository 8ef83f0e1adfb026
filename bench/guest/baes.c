/* baes: a benchmark guest shaped like the guide's BAES.C timing loop (§6.2), our own code.
 * Each timed iteration loads the registers from variables and issues one REP XCRYPT, in
 * inline assembly written "for clarity, not speed" as the guide describes its listing:
 * the registers are saved and restored around it (PUSHAL/POPAL), and the program is built
 * without optimisation (bench/CMakeLists.txt), as a 2005 build of the sample would be.
 * The loop is timed with clock(); the rate is CLOCKS_PER_SEC x reps x blocks x 128 bits /
 * (1e9 x ticks) in Gb/s, the formula of §6.2. Buffers: one large static buffer, encrypted
 * in place (ESI = EDI); the key is 0x5A5A5A5A then zeros, hardware-expanded (control word
 * 0x00A, +0x20 for the ALIGN = 1 runs, which also add 1 to ESI and EDI); the IV starts at
 * zero; no PUSHFL/POPFL inside the loop (the key is loaded by the first instruction, or
 * after an interrupt clears EFLAGS[30]).
 *
 * -mac is the listing's "CBC-MAC mode" run: REP XCRYPTCBC with control word 0x01A (DGEST = 1,
 * ALIGN = 0: 0x02A + 0x10 - 0x20, §6.2) on the same in-place buffer.
 *
 * usage: baes [-buffer BLOCKS] [-rep N] [-mode ecb|cbc|cfb|ofb|ctr] [-unaligned] [-mac]
 *   defaults: 512 blocks (8 KB), 100000 reps, cbc, aligned. Prints one line:
 *   mode=CBC align=aligned blocks=512 reps=100000 ticks=T gbps=G
 * i386 only (PUSHAL). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BLOCKS (1024 * 32 * 64) /* 32 MB, as the guide's sample */

static uint8_t buffer[16 * MAX_BLOCKS + 64] __attribute__((aligned(16)));
static uint8_t control[128] __attribute__((aligned(16))); /* 128 bytes: ALIGN scratch */
static uint8_t key[32] __attribute__((aligned(16)));
static uint8_t iv[16] __attribute__((aligned(16)));

/* The register images the macro loads. */
static uint32_t r_cw, r_src, r_dst, r_key, r_iv, r_count;

#define XCRYPT_LOOP(OPBYTE, ADJUST)                                                  \
  for (i = 0; i < reps; i++) {                                                       \
    __asm__ __volatile__("pushal\n\t"                                                \
                         "movl %0, %%edx\n\t"                                        \
                         "movl %1, %%esi\n\t"                                        \
                         "movl %2, %%edi\n\t"                                        \
                         "movl %3, %%ebx\n\t"                                        \
                         "movl %4, %%eax\n\t"                                        \
                         "movl %5, %%ecx\n\t" ADJUST                                 \
                         ".byte 0xf3, 0x0f, 0xa7, " OPBYTE "\n\t"                    \
                         "popal\n\t"                                                 \
                         :                                                           \
                         : "m"(r_cw), "m"(r_src), "m"(r_dst), "m"(r_key), "m"(r_iv), \
                           "m"(r_count)                                              \
                         : "memory");                                                \
  }

#define UNALIGNED_ADJUST "incl %%esi\n\tincl %%edi\n\t"

int main(int argc, char **argv) {
  long blocks = 512, reps = 100000, i;
  const char *mode = "cbc";
  int unaligned = 0, mac = 0;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "-buffer") && a + 1 < argc) blocks = atol(argv[++a]);
    else if (!strcmp(argv[a], "-rep") && a + 1 < argc) reps = atol(argv[++a]);
    else if (!strcmp(argv[a], "-mode") && a + 1 < argc) mode = argv[++a];
    else if (!strcmp(argv[a], "-unaligned")) unaligned = 1;
    else if (!strcmp(argv[a], "-mac")) mac = 1;
    else {
      fprintf(stderr, "usage: baes [-buffer BLOCKS] [-rep N] [-mode M] [-unaligned] [-mac]\n");
      return 2;
    }
  }
  if (mac && (unaligned || strcmp(mode, "cbc"))) {
    fprintf(stderr, "baes: -mac is aligned CBC only (§6.2)\n");
    return 2;
  }
  if (blocks < 1 || blocks > MAX_BLOCKS || reps < 1) {
    fprintf(stderr, "baes: bad -buffer or -rep\n");
    return 2;
  }
  memset(key, 0, sizeof key);
  const uint32_t k0 = 0x5A5A5A5A;
  memcpy(key, &k0, 4);
  memset(iv, 0, sizeof iv);
  memset(control, 0, sizeof control);
  /* ROUND 10, KEYGN 0, encrypt; +0x20 ALIGN; -mac: 0x02A + 0x10 - 0x20 = 0x01A (DGEST) */
  const uint32_t cw = mac ? 0x01A : 0x00A + (unaligned ? 0x20 : 0);
  memcpy(control, &cw, 4);
  r_cw = (uint32_t)(uintptr_t)control;
  r_src = r_dst = (uint32_t)(uintptr_t)buffer;
  r_key = (uint32_t)(uintptr_t)key;
  r_iv = (uint32_t)(uintptr_t)iv;
  r_count = (uint32_t)blocks;

  /* One pass before timing touches the buffer, as the guide's run of earlier modes does. */
  memset(buffer, 0x11, 16 * (size_t)blocks + 16);
  __asm__ __volatile__("pushfl\n\tpopfl" ::: "memory"); /* load the key on the first call */

  clock_t start = clock(), stop;
  if (!strcmp(mode, "ecb")) {
    XCRYPT_LOOP("0xc8", "")
  } else if (!strcmp(mode, "cbc")) {
    if (unaligned) { XCRYPT_LOOP("0xd0", UNALIGNED_ADJUST) } else { XCRYPT_LOOP("0xd0", "") }
  } else if (!strcmp(mode, "ctr")) {
    if (unaligned) { XCRYPT_LOOP("0xd8", UNALIGNED_ADJUST) } else { XCRYPT_LOOP("0xd8", "") }
  } else if (!strcmp(mode, "cfb")) {
    if (unaligned) { XCRYPT_LOOP("0xe0", UNALIGNED_ADJUST) } else { XCRYPT_LOOP("0xe0", "") }
  } else if (!strcmp(mode, "ofb")) {
    if (unaligned) { XCRYPT_LOOP("0xe8", UNALIGNED_ADJUST) } else { XCRYPT_LOOP("0xe8", "") }
  } else {
    fprintf(stderr, "baes: unknown mode '%s'\n", mode);
    return 2;
  }
  stop = clock();
  const double ticks = (double)(stop - start);
  const double gbps =
      ticks > 0 ? (double)CLOCKS_PER_SEC * reps * blocks * 128.0 / (1e9 * ticks) : 0.0;
  char up[8];
  size_t n = strlen(mode);
  for (size_t j = 0; j < n && j < sizeof up - 1; ++j) up[j] = (char)(mode[j] - 32);
  up[n < sizeof up - 1 ? n : sizeof up - 1] = 0;
  if (mac) strcpy(up, "CBC-MAC");
  printf("mode=%s align=%s blocks=%ld reps=%ld ticks=%.0f gbps=%.4f\n", up,
         unaligned ? "unaligned" : "aligned", blocks, reps, ticks, gbps);
  return 0;
}
