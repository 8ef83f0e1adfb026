/* guest_clocks: measures PadLock instruction clocks with RDTSC under padlock-emu's timing
 * model, to pin the guide's documented figures end to end (docs/timing.md): the REP XCRYPTECB
 * table of §3.3 (SSE clocks: the instruction followed by an SSE instruction, which waits
 * for ACE; integer clocks: followed by integer code) for R = 10, 12, 14, the three key
 * states and 1-4 blocks, and the XSTORE table of §2.3.
 *
 * Method: t0 = RDTSC (which ends its block: docs/emulator.md, "Unicorn"); the register
 * set-up; the instruction; then [xorps] RDTSC. The same sequence without the instruction
 * gives the reference; the difference is the instruction's clocks. Each case runs twice
 * (the second, with warm caches, is printed). i386 only.
 *
 * Output lines: "ecb R=10 key=loaded n=2 sse=31 int=12", "xstore edx=0 ready=1 clocks=55",
 * "rep_xstore ecx=8 edx=0 clocks=62". */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__i386__)

uint32_t g_t0, g_t1, g_cw_p, g_src, g_dst, g_key_p, g_iv_p, g_cnt, g_edx, g_edi;
static uint8_t cw[128] __attribute__((aligned(16)));
static uint8_t key[256] __attribute__((aligned(16)));
static uint8_t iv[16] __attribute__((aligned(16)));
static uint8_t data[256] __attribute__((aligned(16)));
static uint8_t rnd[64] __attribute__((aligned(16)));

#define LOAD_XCRYPT                                                              \
  "movl g_src, %%esi\n\tmovl g_dst, %%edi\n\tmovl g_key_p, %%ebx\n\t"            \
  "movl g_cnt, %%ecx\n\t"
#define T0 "rdtsc\n\tmovl %%eax, g_t0\n\t"
#define T1 "rdtsc\n\tmovl %%eax, g_t1\n\tjmp 1f\n1:\n\t"
#define SSE "xorps %%xmm0, %%xmm0\n\t"
#define ECB ".byte 0xf3, 0x0f, 0xa7, 0xc8\n\t"
#define REF ""
#define XCRYPT_REGS "movl g_cw_p, %%edx\n\tmovl g_iv_p, %%eax\n\t"
#define RELOAD "pushfl\n\tpopfl\n\t"

#define RUN(body) __asm__ __volatile__("pushal\n\t" body "popal\n\t" ::: "memory", "cc")

static uint32_t d(void) { return g_t1 - g_t0; }

/* clocks of REP XCRYPTECB: reload = force EFLAGS[30] = 0 first; sse = measure to an SSE insn */
static uint32_t ecb_clocks(int reload, int sse) {
  uint32_t v = 0, ref = 0;
  for (int pass = 0; pass < 2; ++pass) {
    if (reload && sse) {
      RUN(LOAD_XCRYPT RELOAD T0 XCRYPT_REGS ECB SSE T1);
      v = d();
      RUN(LOAD_XCRYPT RELOAD T0 XCRYPT_REGS REF SSE T1);
      ref = d();
    } else if (reload) {
      RUN(LOAD_XCRYPT RELOAD T0 XCRYPT_REGS ECB T1);
      v = d();
      RUN(LOAD_XCRYPT RELOAD T0 XCRYPT_REGS REF T1);
      ref = d();
    } else if (sse) {
      RUN(LOAD_XCRYPT T0 XCRYPT_REGS ECB SSE T1);
      v = d();
      RUN(LOAD_XCRYPT T0 XCRYPT_REGS REF SSE T1);
      ref = d();
    } else {
      RUN(LOAD_XCRYPT T0 XCRYPT_REGS ECB T1);
      v = d();
      RUN(LOAD_XCRYPT T0 XCRYPT_REGS REF T1);
      ref = d();
    }
  }
  return v - ref;
}

#define XSTORE ".byte 0x0f, 0xa7, 0xc0\n\t"
#define REP_XSTORE ".byte 0xf3, 0x0f, 0xa7, 0xc0\n\t"
#define XSTORE_REGS "movl g_edx, %%edx\n\tmovl g_edi, %%edi\n\tmovl g_cnt, %%ecx\n\t"

uint32_t xstore_count;
static uint32_t xstore_clocks(int rep) {
  uint32_t v, ref;
  if (rep) {
    RUN(T0 XSTORE_REGS REP_XSTORE "movl %%eax, xstore_count\n\t" T1);
  } else {
    RUN(T0 XSTORE_REGS XSTORE "movl %%eax, xstore_count\n\t" T1);
  }
  v = d();
  const uint32_t count = xstore_count;
  RUN(T0 XSTORE_REGS REF "movl %%eax, xstore_count\n\t" T1);
  ref = d();
  xstore_count = count;
  return v - ref;
}

static void fill_rng(void) {
  struct timespec ts = {0, 2000000}; /* 2 ms of virtual time: all four buffers fill */
  nanosleep(&ts, NULL);
}

int main(void) {
  g_cw_p = (uint32_t)(uintptr_t)cw;
  g_key_p = (uint32_t)(uintptr_t)key;
  g_iv_p = (uint32_t)(uintptr_t)iv;
  g_src = g_dst = (uint32_t)(uintptr_t)data;
  for (int i = 0; i < 256; ++i) key[i] = (uint8_t)(i * 7 + 1);
  static const struct {
    const char *name;
    int reload, keygn;
  } states[] = {{"loaded", 0, 0}, {"hardware", 1, 0}, {"memory", 1, 1}};
  for (unsigned r = 10; r <= 14; r += 2) {
    for (unsigned s = 0; s < 3; ++s) {
      /* hardware keys: 128-bit KSIZE with ROUND = R (§3.2: any round count); memory keys:
         the key size of R (192/256 bits need KEYGN = 1). */
      const uint32_t ksize = states[s].keygn ? (r == 10 ? 0 : r == 12 ? 1 : 2) : 0;
      const uint32_t word = r | (states[s].keygn ? 0x80u : 0) | (ksize << 10);
      memset(cw, 0, sizeof cw);
      memcpy(cw, &word, 4);
      for (uint32_t n = 1; n <= 4; ++n) {
        g_cnt = n;
        if (!states[s].reload) { /* load this control word and key once */
          g_cnt = 1;
          RUN(LOAD_XCRYPT RELOAD XCRYPT_REGS ECB);
          g_cnt = n;
        }
        const uint32_t sse = ecb_clocks(states[s].reload, 1);
        const uint32_t in = ecb_clocks(states[s].reload, 0);
        printf("ecb R=%u key=%s n=%u sse=%u int=%u\n", r, states[s].name, n, sse, in);
      }
    }
  }
  /* XSTORE (§2.3): data ready, EDX = 0..3 */
  g_edi = (uint32_t)(uintptr_t)rnd;
  g_cnt = 0;
  for (uint32_t q = 0; q < 4; ++q) {
    fill_rng();
    g_edx = q;
    const uint32_t c = xstore_clocks(0);
    printf("xstore edx=%u ready=1 bytes=%u clocks=%u\n", q, xstore_count & 31, c);
  }
  /* no data: empty the buffers, then one more XSTORE at once */
  for (uint32_t q = 0; q < 4; ++q) {
    g_edx = q;
    fill_rng();
    for (int k = 0; k < 8; ++k) xstore_clocks(0);
    const uint32_t c = xstore_clocks(0);
    printf("xstore edx=%u ready=0 bytes=%u clocks=%u\n", q, xstore_count & 31, c);
  }
  /* REP XSTORE that one internal XSTORE satisfies: + 7 clocks */
  static const uint32_t rep_cases[][2] = {{8, 0}, {4, 1}, {2, 2}, {1, 3}};
  for (unsigned k = 0; k < 4; ++k) {
    fill_rng();
    g_cnt = rep_cases[k][0];
    g_edx = rep_cases[k][1];
    const uint32_t c = xstore_clocks(1);
    printf("rep_xstore ecx=%u edx=%u clocks=%u\n", rep_cases[k][0], rep_cases[k][1], c);
  }
  return 0;
}

#else
int main(void) {
  puts("clocks: i386 only");
  return 0;
}
#endif
