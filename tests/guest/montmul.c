/* guest_montmul: REP MONTMUL through the Montgomery context, shaped like MMTEST.C (§6.4).
 *
 * usage: montmul mul    BITS M A B      one Montgomery product A*B*R^-1 mod M
 *        montmul modexp BITS M BASE EXP  BASE^EXP mod M by left-to-right binary
 *                                        exponentiation in the Montgomery domain
 * Numbers are big-endian hex; M must be odd and below R = 2^BITS; A, B, BASE < M.
 * BITS is the REP count: 256..32768, a multiple of 128 (§5.1).
 *
 * Everything around the instruction is done here, as software must (§5.1 NOTES, §6.4):
 * mZeroPrime = -M^-1 mod 2^32, T zeroed with 128 spare bits before each call, the scratch
 * area zeroed, and the final conditional subtraction T -= M when T >= M. R^2 mod M is
 * computed here by doubling (MMTEST.C used GMP for it).
 *
 * Output (mul): t_raw (T as the instruction left it, BITS+128 bits), t (reduced), regs.
 * Output (modexp): r (the result), montmuls (instructions issued), regs of the last one.
 * regs: ecx, edx, esi_same (§5.1: ECX = 0, EDX = 0, ESI unchanged on completion). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_util.h"
#include "padlock.h"

enum { MAX_BITS = 32768, MAX_WORDS = MAX_BITS / 32, BIG = MAX_WORDS + 4 };

/* §5.1: all big integers and the scratch area 16-byte aligned; bigint has 4 spare words. */
static uint32_t g_a[BIG] __attribute__((aligned(16)));
static uint32_t g_b[BIG] __attribute__((aligned(16)));
static uint32_t g_t[BIG] __attribute__((aligned(16)));
static uint32_t g_m[BIG] __attribute__((aligned(16)));
static uint32_t g_scratch[8] __attribute__((aligned(16)));
static uint32_t g_r2[BIG] __attribute__((aligned(16)));
static uint32_t g_acc[BIG] __attribute__((aligned(16)));
static uint32_t g_base[BIG] __attribute__((aligned(16)));
static uint32_t g_one[BIG] __attribute__((aligned(16)));
static struct mont_ctx g_ctx;
static unsigned g_words;
static unsigned long g_montmuls;
static struct montmul_regs g_last;

static uint32_t ptr32(const void *p) {
  if ((uintptr_t)p > 0xFFFFFFFFu) die("MONTMUL operands must lie below 4 GiB");
  return (uint32_t)(uintptr_t)p;
}

static void parse_big(const char *s, uint32_t *out, unsigned words) {
  memset(out, 0, sizeof(uint32_t) * BIG);
  size_t n = strlen(s);
  if (n > (size_t)words * 8) die("number wider than BITS");
  for (size_t i = 0; i < n; ++i) { /* i-th digit from the least significant end */
    int v = hex_nibble(s[n - 1 - i]);
    if (v < 0) die("bad hex digit");
    out[i / 8] |= (uint32_t)v << (4 * (i % 8));
  }
}

static void print_big(const char *label, const uint32_t *x, unsigned words) {
  printf("%s=", label);
  for (unsigned i = words; i-- > 0;) printf("%08x", x[i]);
  printf("\n");
}

/* x >= y over n words, most significant first (MMTEST.C's comparison). */
static int big_ge(const uint32_t *x, const uint32_t *y, unsigned n) {
  for (unsigned i = n; i-- > 0;)
    if (x[i] != y[i]) return x[i] > y[i];
  return 1;
}

static void big_sub(uint32_t *x, const uint32_t *y, unsigned n) {
  uint64_t borrow = 0;
  for (unsigned i = 0; i < n; ++i) {
    uint64_t d = (uint64_t)x[i] - y[i] - borrow;
    x[i] = (uint32_t)d;
    borrow = (d >> 32) & 1;
  }
}

/* -m^-1 mod 2^32 for odd m (Newton iteration: each step doubles the correct bits). */
static uint32_t m_zero_prime(uint32_t m0) {
  uint32_t inv = m0; /* correct to 3 bits for odd m0 */
  for (int i = 0; i < 5; ++i) inv *= 2u - m0 * inv;
  return 0u - inv;
}

/* out = a*b*R^-1 mod M via one REP MONTMUL plus the final subtraction. `out` may alias. */
static void mulmon(const uint32_t *a, const uint32_t *b, uint32_t *out, uint32_t *raw) {
  memcpy(g_a, a, sizeof g_a);
  memcpy(g_b, b, sizeof g_b);
  memset(g_t, 0, sizeof g_t); /* §5.1: T initially all zero, 128 extra bits */
  memset(g_scratch, 0, sizeof g_scratch);
  g_ctx.a = ptr32(g_a);
  g_ctx.b = ptr32(g_b);
  g_ctx.t = ptr32(g_t);
  g_ctx.m = ptr32(g_m);
  g_ctx.scratch = ptr32(g_scratch);
  g_last = padlock_montmul(&g_ctx, g_words * 32);
  ++g_montmuls;
  if (raw) memcpy(raw, g_t, sizeof g_t);
  if (big_ge(g_t, g_m, g_words + 2)) big_sub(g_t, g_m, g_words + 2);
  memcpy(out, g_t, sizeof g_t);
}

/* R^2 mod M with R = 2^(32*words), by 2*BITS modular doublings. */
static void r_squared(uint32_t *out) {
  memset(out, 0, sizeof(uint32_t) * BIG);
  out[0] = 1;
  for (unsigned k = 0; k < 2 * 32 * g_words; ++k) {
    uint32_t carry = 0;
    for (unsigned i = 0; i <= g_words; ++i) {
      uint32_t next = out[i] >> 31;
      out[i] = out[i] << 1 | carry;
      carry = next;
    }
    if (big_ge(out, g_m, g_words + 1)) big_sub(out, g_m, g_words + 1);
  }
}

static void print_regs(void) {
  printf("ecx=%u\nedx=%u\nesi_same=%d\n", g_last.ecx, g_last.edx,
         g_last.esi == (uintptr_t)&g_ctx);
}

int main(int argc, char **argv) {
  if (argc != 6 || (strcmp(argv[1], "mul") != 0 && strcmp(argv[1], "modexp") != 0)) {
    fprintf(stderr, "usage: montmul mul BITS M A B | montmul modexp BITS M BASE EXP\n");
    return 2;
  }
  const unsigned long bits = strtoul(argv[2], NULL, 0);
  if (bits < 256 || bits > MAX_BITS || bits % 128 != 0)
    die("BITS must be 256..32768 and a multiple of 128 (§5.1)");
  g_words = (unsigned)(bits / 32);
  parse_big(argv[3], g_m, g_words);
  if ((g_m[0] & 1) == 0) die("the modulus must be odd");
  g_ctx.m_zero_prime = m_zero_prime(g_m[0]);

  if (!strcmp(argv[1], "mul")) {
    static uint32_t a[BIG], b[BIG], t[BIG], raw[BIG];
    parse_big(argv[4], a, g_words);
    parse_big(argv[5], b, g_words);
    mulmon(a, b, t, raw);
    print_big("t_raw", raw, g_words + 4);
    print_big("t", t, g_words);
    print_regs();
    return 0;
  }

  /* modexp: acc = R mod M, then square-and-multiply over every exponent bit. */
  static uint32_t e[BIG];
  parse_big(argv[4], g_base, g_words);
  const size_t ehex = strlen(argv[5]);
  if (ehex > (size_t)MAX_WORDS * 8) die("exponent too long");
  {
    /* the exponent may be any width up to MAX_BITS */
    memset(e, 0, sizeof e);
    for (size_t i = 0; i < ehex; ++i) {
      int v = hex_nibble(argv[5][ehex - 1 - i]);
      if (v < 0) die("bad hex digit");
      e[i / 8] |= (uint32_t)v << (4 * (i % 8));
    }
  }
  r_squared(g_r2);
  memset(g_one, 0, sizeof g_one);
  g_one[0] = 1;
  mulmon(g_base, g_r2, g_base, NULL); /* base * R mod M */
  mulmon(g_one, g_r2, g_acc, NULL);   /* 1 * R mod M */
  for (size_t bit = ehex * 4; bit-- > 0;) {
    mulmon(g_acc, g_acc, g_acc, NULL);
    if (e[bit / 32] >> (bit % 32) & 1) mulmon(g_acc, g_base, g_acc, NULL);
  }
  mulmon(g_acc, g_one, g_acc, NULL); /* leave the Montgomery domain */
  print_big("r", g_acc, g_words);
  printf("montmuls=%lu\n", g_montmuls);
  print_regs();
  return 0;
}
