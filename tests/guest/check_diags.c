/* guest_check_diags: one minimal trigger per diagnostic-derived PadLock checker finding
 * (docs/checker.md, docs/fidelity.md), each with a corrected variant.
 *
 * usage: check_diags CASE [fixed]
 * Without "fixed" the case does what the guide leaves undefined (or calls a fault); with
 * "fixed" it does the same work the way the guide defines, so the checker must stay silent.
 *   repne-prefix          F2 (REPNE) XCRYPTECB (§3.1)            | F3 (REP)
 *   missing-rep           XCRYPTECB without a prefix: #UD (§3.1) | with REP
 *   cw-ciphr              CW[6] = 1 (§3.2)                       | CW[6] = 0
 *   cw-ksize-reserved     KSIZE = 3: #GP (§3.2)                  | KSIZE = 0 (128 bits)
 *   cw-hw-keygen-not-128  KEYGN = 0 with a 192-bit key: #GP      | KEYGN = 1, own schedule
 *   cw-dgest-nehemiah     CBC with DGEST (run on Nehemiah)       | without DGEST
 *   cw-align-nehemiah     ECB with ALIGN (run on Nehemiah)       | without ALIGN
 *   ctr-on-nehemiah       REP XCRYPTCTR (run on Nehemiah): #UD   | CPUID ACE2 check, ECB
 *                                                                  on the counter instead
 *   cw-dgest-mode         ECB with DGEST (§3.2 note)             | without DGEST
 *   cw-inter              INTER = 1 (§3.2 note)                  | INTER = 0
 *   cw-keyram-16-rounds   KEYGN = 1 with ROUND = 0 (§3.2)        | ROUND = 10
 *   ctr-counter-wrap      CTR, two blocks from counter 0xFFFF    | the block at 0xFFFF and the
 *                         (App. A 12: no carry into byte 13)       carry in software, then CTR
 *   xsha-eax-beyond-ecx   REP XSHA1 with EAX = 128 > ECX = 64    | EAX = 0
 *   xsha-eax-not-block    REP XSHA1 with EAX = 5 (§4.1)          | EAX = 0
 *   montmul-bad-ecx       REP MONTMUL with ECX = 200: #GP (§5.1) | ECX = 256
 *   montmul-bad-state     REP MONTMUL with EAX = 0x80000000: #GP | EAX = 0
 *   montmul-t-not-zero    T[0] = 1 before REP MONTMUL (§5.1)     | T zeroed
 *   montmul-addr64        x86-64 REP MONTMUL without 67h (run on | with 67h
 *                         Nano): #UD
 *   xsha1-32-byte-store   REP XSHA1 on a context whose byte count | the hash in a 128-byte
 *                         follows the 20-byte state (Linux 6.16     area of its own, 20
 *                         padlock-sha's layout; run on Zhaoxin)     bytes copied back
 *   xsha-ecx0-no-op       REP XSHA1 of the empty message, ECX = 0 | SHA-1("") from a
 *                         (run on Zhaoxin: nothing happens)         padded block, EAX = -1
 * The two Zhaoxin cases print the 20-byte hash and the context's count after "done".
 * Each case prints "done CASE" when it returns. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "guest_util.h"
#include "padlock.h"

enum { kEcb = 0xc8, kCbc = 0xd0, kCtr = 0xd8 };
enum { kRound10 = 10, kRound12 = 12, kKsizeReserved = 3u << 10, kCbcDigestBlocks = 4 };

/* ALIGN = 1 reads 128 bytes at EDX (§3.2); a 16-round key schedule is 17 round keys. */
static uint8_t g_cw[128] __attribute__((aligned(16)));
static uint8_t g_key[17 * 16] __attribute__((aligned(16)));
static uint8_t g_iv[16] __attribute__((aligned(16)));
static uint8_t g_in[4 * 16] __attribute__((aligned(16)));
static uint8_t g_out[4 * 16] __attribute__((aligned(16)));
static uint32_t g_sha[32] __attribute__((aligned(16)));

static void set_cw(uint32_t low) {
  memset(g_cw, 0, sizeof g_cw);
  memcpy(g_cw, &low, 4);
}

/* One XCRYPT with the prefix bytes given: "\xf3" (REP), "\xf2" (REPNE) or "" (none). */
#define XCRYPT_WITH(prefix, modrm)                                                    \
  do {                                                                                \
    uintptr_t si = (uintptr_t)g_in, di = (uintptr_t)g_out, ax = (uintptr_t)g_iv;      \
    size_t cx = 1;                                                                    \
    __asm__ volatile(prefix ".byte 0x0f,0xa7," #modrm                                 \
                     : "+S"(si), "+D"(di), "+a"(ax), "+c"(cx)                         \
                     : "b"(g_key), "d"(g_cw)                                          \
                     : "memory", "cc");                                               \
  } while (0)

/* ---- REP MONTMUL (§5.1) on a 256-bit modulus ------------------------------------------ */

enum { kMontBits = 256, kMontWords = kMontBits / 32 + 4 };
static uint32_t g_a[kMontWords] __attribute__((aligned(16)));
static uint32_t g_b[kMontWords] __attribute__((aligned(16)));
static uint32_t g_t[kMontWords] __attribute__((aligned(16)));
static uint32_t g_m[kMontWords] __attribute__((aligned(16)));
static uint32_t g_scratch[8] __attribute__((aligned(16)));
static struct mont_ctx g_ctx;

/* M = 2^256 - 1 (odd), A = B = 1, T and the scratch area zeroed (§5.1 NOTES). */
static void mont_setup(void) {
  memset(g_a, 0, sizeof g_a);
  memset(g_b, 0, sizeof g_b);
  memset(g_t, 0, sizeof g_t);
  memset(g_scratch, 0, sizeof g_scratch);
  for (unsigned i = 0; i < kMontBits / 32; ++i) g_m[i] = 0xFFFFFFFFu;
  g_a[0] = g_b[0] = 1;
  g_ctx.m_zero_prime = 1; /* -M^-1 mod 2^32 for M = -1 mod 2^32 */
  g_ctx.a = (uint32_t)(uintptr_t)g_a;
  g_ctx.b = (uint32_t)(uintptr_t)g_b;
  g_ctx.t = (uint32_t)(uintptr_t)g_t;
  g_ctx.m = (uint32_t)(uintptr_t)g_m;
  g_ctx.scratch = (uint32_t)(uintptr_t)g_scratch;
}

/* The helpers that issue PadLock instructions are inlined, so every finding is in main. */
static inline __attribute__((always_inline)) void montmul_state(uint32_t eax, uint32_t ecx) {
  padlock_montmul_from(&g_ctx, ecx, eax);
}

/* x86-64 REP MONTMUL without the 67h prefix: 64-bit addressing (§5.1). */
static inline __attribute__((always_inline)) void montmul_addr64(void) {
#if defined(__x86_64__)
  uintptr_t si = (uintptr_t)&g_ctx;
  uint32_t ax = 0, cx = kMontBits, dx;
  __asm__ volatile(".byte 0xf3,0x0f,0xa6,0xc0" /* rep montmul, RSI */
                   : "+S"(si), "+a"(ax), "+c"(cx), "=d"(dx)
                   :
                   : "memory", "cc");
#else
  die("montmul-addr64 is an x86-64 case");
#endif
}

/* CPUID 0xC0000001 EDX bits 8 and 9: ACE2 present and enabled (§1.3). */
static int have_ace2(void) {
  uint32_t a = 0xC0000000u, b, c, d;
  __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
  if (a < 0xC0000001u) return 0;
  a = 0xC0000001u;
  c = 0;
  __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
  return (d & 0x300) == 0x300;
}

static inline __attribute__((always_inline)) void xsha1_from(uint32_t done) {
  memcpy(g_sha, kSha1Init, sizeof kSha1Init);
  padlock_xsha1_from(g_in, done, 64, g_sha);
}

/* A hash context as Linux 6.16's padlock-sha lays it out (struct sha1_state): the state,
 * then the byte count, in one 16-byte-aligned, 128-byte area. */
static struct {
  uint32_t state[5];
  uint64_t count;
  uint8_t rest[100];
} g_sha1_ctx __attribute__((aligned(16)));

static void print_ctx(void) {
  for (int i = 0; i < 5; ++i) printf("%08x", g_sha1_ctx.state[i]);
  printf(" count=%llu\n", (unsigned long long)g_sha1_ctx.count);
}

/* XSHA1 of 64 bytes of g_in into the context: in place, or (fixed) in an area of its own. */
static void __attribute__((noinline)) sha1_ctx_update(int fixed) {
  memcpy(g_sha1_ctx.state, kSha1Init, sizeof kSha1Init);
  g_sha1_ctx.count = 64;
  if (!fixed) {
    padlock_xsha1(g_in, 64, g_sha1_ctx.state);
    return;
  }
  memcpy(g_sha, kSha1Init, sizeof kSha1Init);
  padlock_xsha1(g_in, 64, g_sha);
  memcpy(g_sha1_ctx.state, g_sha, 20);
}

/* SHA-1 of the empty message: the one-shot form with ECX = 0, or (fixed) the padded block
 * hashed with EAX = -1 (the blocks form of Nano and its descendants). */
static void __attribute__((noinline)) sha1_ctx_empty(int fixed) {
  memcpy(g_sha, kSha1Init, sizeof kSha1Init);
  if (!fixed) {
    padlock_xsha1(g_in, 0, g_sha);
  } else {
    static uint8_t block[64];
    block[0] = 0x80;
    padlock_xsha1_from(block, (uintptr_t)-1, 1, g_sha);
  }
  memcpy(g_sha1_ctx.state, g_sha, 20);
  g_sha1_ctx.count = 0;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "fixed") != 0))
    die("usage: check_diags CASE [fixed]");
  const char *c = argv[1];
  const int fixed = argc == 3;
  set_cw(kRound10);
  padlock_reload_key();
  if (!strcmp(c, "repne-prefix")) {
    if (fixed)
      XCRYPT_WITH(".byte 0xf3\n", 0xc8);
    else
      XCRYPT_WITH(".byte 0xf2\n", 0xc8);
  } else if (!strcmp(c, "missing-rep")) {
    if (fixed)
      XCRYPT_WITH(".byte 0xf3\n", 0xc8);
    else
      XCRYPT_WITH("", 0xc8);
  } else if (!strcmp(c, "cw-ciphr")) {
    set_cw(kRound10 | (fixed ? 0 : CW_CIPHR));
    padlock_xcrypt_ecb(g_in, g_out, g_key, g_iv, g_cw, 1);
  } else if (!strcmp(c, "cw-ksize-reserved")) {
    set_cw(kRound10 | (fixed ? CW_KSIZE_128 : kKsizeReserved));
    padlock_xcrypt_ecb(g_in, g_out, g_key, g_iv, g_cw, 1);
  } else if (!strcmp(c, "cw-hw-keygen-not-128")) {
    /* the fix: a 192-bit key needs a software key schedule (KEYGN = 1) on these parts */
    set_cw(kRound12 | CW_KSIZE_192 | (fixed ? CW_KEYGN : 0));
    padlock_xcrypt_ecb(g_in, g_out, g_key, g_iv, g_cw, 1);
  } else if (!strcmp(c, "cw-dgest-nehemiah")) {
    set_cw(kRound10 | (fixed ? 0 : CW_DGEST));
    padlock_xcrypt_cbc(g_in, g_out, g_key, g_iv, g_cw, kCbcDigestBlocks);
  } else if (!strcmp(c, "cw-align-nehemiah")) {
    set_cw(kRound10 | (fixed ? 0 : CW_ALIGN));
    padlock_xcrypt_ecb(g_in, g_out, g_key, g_iv, g_cw, 1);
  } else if (!strcmp(c, "ctr-on-nehemiah")) {
    if (!fixed || have_ace2())
      padlock_xcrypt_ctr(g_in, g_out, g_key, g_iv, g_cw, 1);
    else
      padlock_xcrypt_ecb(g_iv, g_out, g_key, g_iv, g_cw, 1); /* counter block, XOR after */
  } else if (!strcmp(c, "cw-dgest-mode")) {
    set_cw(kRound10 | (fixed ? 0 : CW_DGEST));
    padlock_xcrypt_ecb(g_in, g_out, g_key, g_iv, g_cw, 1);
  } else if (!strcmp(c, "cw-inter")) {
    set_cw(kRound10 | (fixed ? 0 : CW_INTER));
    padlock_xcrypt_ecb(g_in, g_out, g_key, g_iv, g_cw, 1);
  } else if (!strcmp(c, "cw-keyram-16-rounds")) {
    set_cw((fixed ? kRound10 : 0) | CW_KEYGN);
    padlock_xcrypt_ecb(g_in, g_out, g_key, g_iv, g_cw, 1);
  } else if (!strcmp(c, "ctr-counter-wrap")) {
    g_iv[14] = g_iv[15] = 0xFF;
    if (!fixed) {
      padlock_xcrypt_ctr(g_in, g_out, g_key, g_iv, g_cw, 2);
    } else {
      /* the block at counter 0xFFFF in software (ECB on the counter block, XOR), the
       * counter's carry into byte 13 too: the chip never counts past 0xFFFF */
      static uint8_t ks[16] __attribute__((aligned(16)));
      padlock_xcrypt_ecb(g_iv, ks, g_key, g_iv, g_cw, 1);
      for (int i = 0; i < 16; ++i) g_out[i] = g_in[i] ^ ks[i];
      for (int i = 15; i >= 0 && ++g_iv[i] == 0; --i) {
      }
      padlock_xcrypt_ctr(g_in + 16, g_out + 16, g_key, g_iv, g_cw, 1);
    }
  } else if (!strcmp(c, "xsha-eax-beyond-ecx")) {
    xsha1_from(fixed ? 0 : 128);
  } else if (!strcmp(c, "xsha-eax-not-block")) {
    xsha1_from(fixed ? 0 : 5);
  } else if (!strcmp(c, "xsha1-32-byte-store")) {
    sha1_ctx_update(fixed);
  } else if (!strcmp(c, "xsha-ecx0-no-op")) {
    sha1_ctx_empty(fixed);
  } else if (!strcmp(c, "montmul-bad-ecx")) {
    mont_setup();
    montmul_state(0, fixed ? kMontBits : 200);
  } else if (!strcmp(c, "montmul-bad-state")) {
    mont_setup();
    montmul_state(fixed ? 0 : 0x80000000u, kMontBits);
  } else if (!strcmp(c, "montmul-t-not-zero")) {
    mont_setup();
    if (!fixed) g_t[0] = 1;
    montmul_state(0, kMontBits);
  } else if (!strcmp(c, "montmul-addr64")) {
    mont_setup();
    if (fixed)
      montmul_state(0, kMontBits);
    else
      montmul_addr64();
  } else {
    die("unknown case");
  }
  printf("done %s%s\n", c, fixed ? " fixed" : "");
  if (!strncmp(c, "xsha1-32", 8) || !strcmp(c, "xsha-ecx0-no-op")) print_ctx();
  return 0;
}
