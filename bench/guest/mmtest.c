/* mmtest: modular exponentiation with REP MONTMUL the way the guide's MMTEST.C does it
 * (§6.4), our own code, for the PMM part of the timing model (docs/timing.md, "PMM").
 *
 * MulMon(a, b): zero the 8-dword scratch and T over LENGTH + 2 words, set A, B, T in the
 * context (mZeroPrime, A, B, T, M, scratch), REP MONTMUL with ECX = 32 x LENGTH, EAX = 0;
 * then if T >= M over LENGTH + 2 words (most significant first), T -= M. ModExp:
 * left-to-right binary in the Montgomery domain: a' = MulMon(A, R^2 mod M); the result
 * starts at a' from the exponent's leading 1 bit; per further bit square, then multiply by
 * a' if the bit is 1 (else copy the square back); MulMon(result, 1) at the end.
 * LENGTH runs 8..64 words in steps of 4 (256..2048 bits); per length REPEAT = 2 cases of
 * COUNTS = 37 timed modexps; rate = COUNTS x REPEAT x CLOCKS_PER_SEC / ticks.
 *
 * Choices where MMTEST.C uses GMP (not in this static guest): operands come from a fixed
 * xorshift generator instead of REP XSTORE, so runs repeat; R^2 mod M is computed by
 * doubling; each case's PMM result is checked against a portable Montgomery modexp
 * (untimed). The exponent's top word is made non-zero (the listing's stated corner case).
 *
 * usage: mmtest [-from BITS] [-to BITS] [-counts N] [-nocheck]
 * Prints per length: bits=B words=L montmuls=K ticks=T modexp_per_s=R */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "padlock.h"

enum { MAX_WORDS = 64, SPARE = 4, REPEAT = 2 };

typedef uint32_t big[MAX_WORDS + SPARE] __attribute__((aligned(16)));

static big g_a, g_b, g_t, g_m, g_r2, g_one, g_aprime, g_res, g_tmp, g_exp, g_base, g_check;
static uint32_t g_scratch[8] __attribute__((aligned(16)));
static struct mont_ctx g_ctx __attribute__((aligned(16)));
static unsigned g_len; /* LENGTH, 32-bit words */
static unsigned long g_montmuls;

static uint32_t g_rng = 0x9e3779b9u;
static uint32_t next_random(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 17;
  g_rng ^= g_rng << 5;
  return g_rng;
}

/* -M^-1 mod 2^32 for odd M, bit by bit (§6.4). */
static uint32_t m_zero_prime(uint32_t m0) {
  uint32_t inv = 1; /* M^-1 mod 2^(i+1) */
  for (unsigned i = 1; i < 32; ++i)
    if (((m0 * inv) >> i) & 1) inv += 1u << i;
  return 0u - inv;
}

static int cmp_words(const uint32_t *x, const uint32_t *y, unsigned n) {
  for (unsigned i = n; i-- > 0;)
    if (x[i] != y[i]) return x[i] > y[i] ? 1 : -1;
  return 0;
}

static void sub_words(uint32_t *x, const uint32_t *y, unsigned n) {
  uint32_t borrow = 0;
  for (unsigned i = 0; i < n; ++i) {
    const uint64_t d = (uint64_t)x[i] - y[i] - borrow;
    x[i] = (uint32_t)d;
    borrow = (uint32_t)(d >> 63);
  }
}

/* out = a * b * R^-1 mod M with REP MONTMUL (§5.1), and MMTEST's final subtraction. */
static void mul_mon(uint32_t *out, const uint32_t *a, const uint32_t *b) {
  memset(g_scratch, 0, sizeof g_scratch);
  memset(g_t, 0, (g_len + 2) * 4);
  g_ctx.a = (uint32_t)(uintptr_t)a;
  g_ctx.b = (uint32_t)(uintptr_t)b;
  g_ctx.t = (uint32_t)(uintptr_t)g_t;
  padlock_montmul(&g_ctx, 32 * g_len);
  if (cmp_words(g_t, g_m, g_len + 2) >= 0) sub_words(g_t, g_m, g_len + 2);
  memcpy(out, g_t, g_len * 4);
  ++g_montmuls;
}

static void mod_exp(uint32_t *out, const uint32_t *base, const uint32_t *exp) {
  mul_mon(g_aprime, base, g_r2);
  memcpy(g_res, g_aprime, g_len * 4);
  unsigned w = g_len - 1;
  uint32_t mask = 0x80000000u;
  while (!(exp[w] & mask)) mask >>= 1; /* the leading 1 bit (top word non-zero) */
  mask >>= 1;
  for (;;) {
    for (; mask; mask >>= 1) {
      mul_mon(g_tmp, g_res, g_res);
      if (exp[w] & mask)
        mul_mon(g_res, g_tmp, g_aprime);
      else
        memcpy(g_res, g_tmp, g_len * 4);
    }
    if (w == 0) break;
    --w;
    mask = 0x80000000u;
  }
  mul_mon(out, g_res, g_one);
}

/* Portable Montgomery product (CIOS, 32-bit words) for the check. */
static void soft_mul_mon(uint32_t *out, const uint32_t *a, const uint32_t *b, uint32_t mzp) {
  uint32_t t[MAX_WORDS + 2] = {0};
  const unsigned n = g_len;
  for (unsigned i = 0; i < n; ++i) {
    uint64_t c = 0;
    for (unsigned j = 0; j < n; ++j) {
      c += (uint64_t)a[j] * b[i] + t[j];
      t[j] = (uint32_t)c;
      c >>= 32;
    }
    c += t[n];
    t[n] = (uint32_t)c;
    t[n + 1] = (uint32_t)(c >> 32);
    const uint32_t u = t[0] * mzp;
    c = ((uint64_t)u * g_m[0] + t[0]) >> 32;
    for (unsigned j = 1; j < n; ++j) {
      c += (uint64_t)u * g_m[j] + t[j];
      t[j - 1] = (uint32_t)c;
      c >>= 32;
    }
    c += t[n];
    t[n - 1] = (uint32_t)c;
    t[n] = t[n + 1] + (uint32_t)(c >> 32);
  }
  if (t[n] || cmp_words(t, g_m, n) >= 0) sub_words(t, g_m, n + 1);
  memcpy(out, t, n * 4);
}

static void soft_mod_exp(uint32_t *out, const uint32_t *base, const uint32_t *exp, uint32_t mzp) {
  big ap, res, tmp;
  soft_mul_mon(ap, base, g_r2, mzp);
  memcpy(res, ap, g_len * 4);
  int started = 0;
  for (unsigned w = g_len; w-- > 0;)
    for (uint32_t mask = 0x80000000u; mask; mask >>= 1) {
      if (!started) {
        started = (exp[w] & mask) != 0;
        continue;
      }
      soft_mul_mon(tmp, res, res, mzp);
      if (exp[w] & mask)
        soft_mul_mon(res, tmp, ap, mzp);
      else
        memcpy(res, tmp, g_len * 4);
    }
  soft_mul_mon(out, res, g_one, mzp);
}

/* R^2 mod M, R = 2^(32 LENGTH), by 64 LENGTH doublings of 1 mod M. */
static void r_squared(void) {
  memset(g_r2, 0, sizeof g_r2);
  g_r2[0] = 1;
  for (unsigned i = 0; i < 64 * g_len; ++i) {
    uint32_t carry = 0;
    for (unsigned j = 0; j <= g_len; ++j) {
      const uint32_t v = g_r2[j];
      g_r2[j] = v << 1 | carry;
      carry = v >> 31;
    }
    if (cmp_words(g_r2, g_m, g_len + 1) >= 0) sub_words(g_r2, g_m, g_len + 1);
  }
}

static void random_words(uint32_t *x) {
  memset(x, 0, sizeof(big));
  for (unsigned i = 0; i < g_len; ++i) x[i] = next_random();
}

/* One case: operands as MMTEST.C makes them; COUNTS timed modexps; the check. */
static clock_t run_case(unsigned counts, int check) {
  random_words(g_m);
  random_words(g_base);
  random_words(g_exp);
  if (cmp_words(g_base, g_m, g_len) > 0) {
    memcpy(g_tmp, g_m, sizeof(big));
    memcpy(g_m, g_base, sizeof(big));
    memcpy(g_base, g_tmp, sizeof(big));
  }
  if (cmp_words(g_exp, g_m, g_len) > 0) {
    memcpy(g_tmp, g_m, sizeof(big));
    memcpy(g_m, g_exp, sizeof(big));
    memcpy(g_exp, g_tmp, sizeof(big));
  }
  if (!(g_m[0] & 1)) g_m[0] += 1; /* odd modulus; m[0] even, so no carry */
  if (g_exp[g_len - 1] == 0) g_exp[g_len - 1] = 1;
  memset(g_one, 0, sizeof g_one);
  g_one[0] = 1;
  r_squared();
  g_ctx.m_zero_prime = m_zero_prime(g_m[0]);
  g_ctx.m = (uint32_t)(uintptr_t)g_m;
  g_ctx.scratch = (uint32_t)(uintptr_t)g_scratch;
  memset(g_a, 0, sizeof g_a);
  memset(g_b, 0, sizeof g_b);
  const clock_t start = clock();
  for (unsigned c = 0; c < counts; ++c) mod_exp(g_res, g_base, g_exp);
  const clock_t ticks = clock() - start;
  if (check) {
    soft_mod_exp(g_check, g_base, g_exp, g_ctx.m_zero_prime);
    if (memcmp(g_check, g_res, g_len * 4) != 0) {
      fprintf(stderr, "mmtest: PMM and software modexp differ at %u bits\n", 32 * g_len);
      exit(1);
    }
  }
  return ticks;
}

int main(int argc, char **argv) {
  unsigned from = 256, to = 2048, counts = 37;
  int check = 1;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "-from") && a + 1 < argc) from = (unsigned)atoi(argv[++a]);
    else if (!strcmp(argv[a], "-to") && a + 1 < argc) to = (unsigned)atoi(argv[++a]);
    else if (!strcmp(argv[a], "-counts") && a + 1 < argc) counts = (unsigned)atoi(argv[++a]);
    else if (!strcmp(argv[a], "-nocheck")) check = 0;
    else {
      fprintf(stderr, "usage: mmtest [-from BITS] [-to BITS] [-counts N] [-nocheck]\n");
      return 2;
    }
  }
  if (from < 256 || to > 32 * MAX_WORDS || from > to || from % 128 || to % 128 || !counts) {
    fprintf(stderr, "mmtest: bits must be multiples of 128 in 256..%d, counts >= 1\n",
            32 * MAX_WORDS);
    return 2;
  }
  for (unsigned bits = from; bits <= to; bits += 128) {
    g_len = bits / 32;
    clock_t ticks = 0;
    g_montmuls = 0;
    for (unsigned r = 0; r < REPEAT; ++r) ticks += run_case(counts, check);
    const double rate = ticks > 0 ? (double)counts * REPEAT * CLOCKS_PER_SEC / ticks : 0;
    printf("bits=%u words=%u montmuls=%lu ticks=%ld modexp_per_s=%.3f\n", bits, g_len,
           g_montmuls, (long)ticks, rate);
  }
  return 0;
}
