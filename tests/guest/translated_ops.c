/* Operations that padlock-emu's Unicorn patch translates inside the block instead of
 * calling a helper (docs/emulator.md, "Unicorn", the items on ADC/SBB carries and on SSE2
 * integer operations): the carry after ADC and SBB as each consumer reads it, and the
 * SSE2 integer arithmetic, logic, compares, unpacks, shuffles, shifts and MOVD/MOVQ that
 * compiled loops use. Each group prints one FNV-1a hash of its results over edge values
 * and pseudo-random operands; the host running the same binary is the reference
 * (tests/integration/test_translated_ops.py).
 *
 * usage: translated_ops [CASES]   (random operand pairs per operation, default 3000) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t hash;
static void mix(uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    hash ^= (uint8_t)(v >> (8 * i));
    hash *= 0x100000001b3ull;
  }
}
static void group_begin(void) { hash = 0xcbf29ce484222325ull; }
static void group_end(const char *name) { printf("%s %016llx\n", name, (unsigned long long)hash); }

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next64(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Edge operands first: zero, one, the sign bits and all-ones of every width. */
static const uint64_t edges[] = {
    0, 1, 2, 0x7f, 0x80, 0xfe, 0xff, 0x100, 0x7fff, 0x8000, 0xfffe, 0xffff, 0x10000,
    0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, 0x100000000ull, 0x7fffffffffffffffull,
    0x8000000000000000ull, 0xfffffffffffffffeull, 0xffffffffffffffffull};
#define N_EDGES (sizeof edges / sizeof edges[0])

static int cases = 3000;
/* The i-th operand pair: every pair of edges, then random pairs; some random pairs are
 * equal, where ADC's and SBB's carry depends on the carry in. */
static void operands(int i, uint64_t *a, uint64_t *b) {
  if (i < (int)(N_EDGES * N_EDGES)) {
    *a = edges[i / N_EDGES];
    *b = edges[i % N_EDGES];
    return;
  }
  *a = next64();
  *b = (i & 7) == 0 ? *a : next64();
}
static int n_pairs(void) { return (int)(N_EDGES * N_EDGES) + cases; }

/* ADC and SBB of one width, with CF set to `cin` first, and the carry read by: SETC, a
 * JC, a following ADC, SBB r,r, CMOVC, INC (which keeps CF) then SETC, PUSHF, and a
 * memory destination; and SF != OF by SETL and a JGE. Q is the register constraint ("q"
 * for bytes on i386). */
#define CONSUMER(INSN, Q, TAIL)                                                            \
  r = a;                                                                                   \
  x = 0;                                                                                   \
  __asm__("bt $0, %k[cin]\n\t" INSN " %[b], %[r]\n\t" TAIL                                \
          : [r] "+" Q(r), [x] "+q"(x) : [b] Q(b), [cin] "r"(cin), [one] "r"(7ul) : "cc");   \
  mix(r);                                                                                  \
  mix(x);
#define CARRY_CONSUMERS(NAME, INSN, T, Q)                                                  \
  static void NAME(uint64_t a64, uint64_t b64, unsigned cin) {                             \
    const T a = (T)a64, b = (T)b64;                                                        \
    T r, m = a;                                                                            \
    unsigned long x;                                                                       \
    unsigned char c_mem;                                                                   \
    CONSUMER(INSN, Q, "setc %b[x]")                                                        \
    CONSUMER(INSN, Q, "jnc 1f\n\tmov $1, %[x]\n1:")                                        \
    CONSUMER(INSN, Q, "adc $0, %[x]")                                                      \
    CONSUMER(INSN, Q, "sbb %[x], %[x]")                                                    \
    CONSUMER(INSN, Q, "cmovc %[one], %[x]")                                                \
    CONSUMER(INSN, Q, "inc %[r]\n\tsetc %b[x]")                                             \
    CONSUMER(INSN, Q, "pushf\n\tpop %[x]\n\tand $0x8d5, %[x]") /* CF PF AF ZF SF OF */      \
    CONSUMER(INSN, Q, "setl %b[x]")                                                        \
    CONSUMER(INSN, Q, "jge 1f\n\tmov $1, %[x]\n1:")                                        \
    __asm__("bt $0, %k[cin]\n\t" INSN " %[b], %[m]\n\tsetc %[c]"                           \
            : [m] "+m"(m), [c] "=q"(c_mem) : [b] Q(b), [cin] "r"(cin) : "cc");             \
    mix(m);                                                                                \
    mix(c_mem);                                                                            \
  }

CARRY_CONSUMERS(adc8, "adcb", uint8_t, "q")
CARRY_CONSUMERS(sbb8, "sbbb", uint8_t, "q")
CARRY_CONSUMERS(adc16, "adcw", uint16_t, "r")
CARRY_CONSUMERS(sbb16, "sbbw", uint16_t, "r")
CARRY_CONSUMERS(adc32, "adcl", uint32_t, "r")
CARRY_CONSUMERS(sbb32, "sbbl", uint32_t, "r")
#ifdef __x86_64__
CARRY_CONSUMERS(adc64, "adcq", uint64_t, "r")
CARRY_CONSUMERS(sbb64, "sbbq", uint64_t, "r")
#endif

static void carry_group(const char *name, void (*op)(uint64_t, uint64_t, unsigned)) {
  group_begin();
  for (int i = 0; i < n_pairs(); ++i) {
    uint64_t a, b;
    operands(i, &a, &b);
    op(a, b, 0);
    op(a, b, 1);
  }
  group_end(name);
}

/* 64-bit adds and compares on i386 (ADD/ADC, CMP/SBB then JB/JAE, or JL/JGE for signed
 * ones), as compilers emit for 64-bit integers: the patterns whose helper calls the
 * inline carry and sign-overflow remove. */
static void wide_compare_group(void) {
  group_begin();
  for (int i = 0; i < n_pairs(); ++i) {
    uint64_t a, b;
    operands(i, &a, &b);
    volatile uint64_t va = a, vb = b;
    uint64_t sum = va + vb;
    mix(sum);
    mix(va < vb);
    mix(va <= vb);
    mix(sum >= va);
    const int64_t sa = (int64_t)va, sb = (int64_t)vb;
    mix(sa < sb);
    mix(sa >= sb);
    mix(sa <= sb);
    mix(sa > sb);
  }
  group_end("wide_compare");
}

typedef struct {
  uint64_t q[2];
} __attribute__((aligned(16))) v128;

static v128 random_v128(int i) {
  v128 v;
  uint64_t a, b;
  operands(i, &a, &b);
  v.q[0] = a;
  v.q[1] = (i & 3) == 1 ? a : b; /* equal halves now and then, for the compares */
  return v;
}

static void mix_v128(const v128 *v) {
  mix(v->q[0]);
  mix(v->q[1]);
}

/* Register source, memory source, and the destination as its own source. */
#define SSE_BINARY(NAME, INSN)                                                            \
  static void NAME(const v128 *x, const v128 *y) {                                        \
    v128 d = *x;                                                                          \
    __asm__("movdqa %0, %%xmm0\n\tmovdqa %1, %%xmm1\n\t" INSN " %%xmm1, %%xmm0\n\t"        \
            "movdqa %%xmm0, %0"                                                           \
            : "+m"(d) : "m"(*y) : "xmm0", "xmm1");                                        \
    mix_v128(&d);                                                                         \
    d = *x;                                                                               \
    __asm__("movdqa %0, %%xmm2\n\t" INSN " %1, %%xmm2\n\tmovdqa %%xmm2, %0"               \
            : "+m"(d) : "m"(*y) : "xmm2");                                                \
    mix_v128(&d);                                                                         \
    d = *x;                                                                               \
    __asm__("movdqa %0, %%xmm3\n\t" INSN " %%xmm3, %%xmm3\n\tmovdqa %%xmm3, %0"           \
            : "+m"(d) : : "xmm3");                                                        \
    mix_v128(&d);                                                                         \
    SSE_BINARY_HIGH(INSN)                                                                 \
  }
#ifdef __x86_64__
/* xmm9 and xmm12: the REX.R and REX.B register numbers. */
#define SSE_BINARY_HIGH(INSN)                                                             \
  d = *x;                                                                                 \
  __asm__("movdqa %0, %%xmm9\n\tmovdqa %1, %%xmm12\n\t" INSN " %%xmm12, %%xmm9\n\t"        \
          "movdqa %%xmm9, %0"                                                             \
          : "+m"(d) : "m"(*y) : "xmm9", "xmm12");                                         \
  mix_v128(&d);
#else
#define SSE_BINARY_HIGH(INSN)
#endif

SSE_BINARY(paddb, "paddb")
SSE_BINARY(paddw, "paddw")
SSE_BINARY(paddd, "paddd")
SSE_BINARY(paddq, "paddq")
SSE_BINARY(psubb, "psubb")
SSE_BINARY(psubw, "psubw")
SSE_BINARY(psubd, "psubd")
SSE_BINARY(psubq, "psubq")
SSE_BINARY(pand, "pand")
SSE_BINARY(pandn, "pandn")
SSE_BINARY(por, "por")
SSE_BINARY(pxor, "pxor")
SSE_BINARY(pcmpeqb, "pcmpeqb")
SSE_BINARY(pcmpeqw, "pcmpeqw")
SSE_BINARY(pcmpeqd, "pcmpeqd")
SSE_BINARY(pcmpgtb, "pcmpgtb")
SSE_BINARY(pcmpgtw, "pcmpgtw")
SSE_BINARY(pcmpgtd, "pcmpgtd")
SSE_BINARY(pmuludq, "pmuludq")
SSE_BINARY(punpckldq, "punpckldq")
SSE_BINARY(punpckhdq, "punpckhdq")
SSE_BINARY(punpcklqdq, "punpcklqdq")
SSE_BINARY(punpckhqdq, "punpckhqdq")

static const struct {
  const char *name;
  void (*op)(const v128 *, const v128 *);
} sse_binary[] = {
    {"paddb", paddb},         {"paddw", paddw},         {"paddd", paddd},
    {"paddq", paddq},         {"psubb", psubb},         {"psubw", psubw},
    {"psubd", psubd},         {"psubq", psubq},         {"pand", pand},
    {"pandn", pandn},         {"por", por},             {"pxor", pxor},
    {"pcmpeqb", pcmpeqb},     {"pcmpeqw", pcmpeqw},     {"pcmpeqd", pcmpeqd},
    {"pcmpgtb", pcmpgtb},     {"pcmpgtw", pcmpgtw},     {"pcmpgtd", pcmpgtd},
    {"pmuludq", pmuludq},     {"punpckldq", punpckldq}, {"punpckhdq", punpckhdq},
    {"punpcklqdq", punpcklqdq}, {"punpckhqdq", punpckhqdq},
};

/* Shifts by an immediate: below, at and beyond the element width. */
#define SHIFT_BY(INSN, N)                                                                 \
  d = *x;                                                                                 \
  __asm__("movdqa %0, %%xmm4\n\t" INSN " $" #N ", %%xmm4\n\tmovdqa %%xmm4, %0"            \
          : "+m"(d) : : "xmm4");                                                          \
  mix_v128(&d);
#define SSE_SHIFT(NAME, INSN)                                                             \
  static void NAME(const v128 *x, const v128 *y) {                                        \
    v128 d;                                                                               \
    (void)y;                                                                              \
    SHIFT_BY(INSN, 0) SHIFT_BY(INSN, 1) SHIFT_BY(INSN, 3) SHIFT_BY(INSN, 7)               \
    SHIFT_BY(INSN, 8) SHIFT_BY(INSN, 15) SHIFT_BY(INSN, 16) SHIFT_BY(INSN, 17)            \
    SHIFT_BY(INSN, 31) SHIFT_BY(INSN, 32) SHIFT_BY(INSN, 33) SHIFT_BY(INSN, 63)           \
    SHIFT_BY(INSN, 64) SHIFT_BY(INSN, 65) SHIFT_BY(INSN, 128) SHIFT_BY(INSN, 255)         \
  }
SSE_SHIFT(psrlw, "psrlw")
SSE_SHIFT(psrld, "psrld")
SSE_SHIFT(psrlq, "psrlq")
SSE_SHIFT(psraw, "psraw")
SSE_SHIFT(psrad, "psrad")
SSE_SHIFT(psllw, "psllw")
SSE_SHIFT(pslld, "pslld")
SSE_SHIFT(psllq, "psllq")
SSE_SHIFT(psrldq, "psrldq")
SSE_SHIFT(pslldq, "pslldq")

/* PSHUFD with a spread of orders: register, memory and same-register sources. */
#define PSHUFD_BY(IMM)                                                                    \
  __asm__("movdqa %1, %%xmm5\n\tpshufd $" #IMM ", %%xmm5, %%xmm6\n\tmovdqa %%xmm6, %0"     \
          : "=m"(d) : "m"(*x) : "xmm5", "xmm6");                                          \
  mix_v128(&d);                                                                           \
  __asm__("pshufd $" #IMM ", %1, %%xmm6\n\tmovdqa %%xmm6, %0" : "=m"(d) : "m"(*x) : "xmm6"); \
  mix_v128(&d);                                                                           \
  d = *x;                                                                                 \
  __asm__("movdqa %0, %%xmm7\n\tpshufd $" #IMM ", %%xmm7, %%xmm7\n\tmovdqa %%xmm7, %0"     \
          : "+m"(d) : : "xmm7");                                                          \
  mix_v128(&d);
static void pshufd(const v128 *x, const v128 *y) {
  v128 d;
  (void)y;
  PSHUFD_BY(0x00) PSHUFD_BY(0x1b) PSHUFD_BY(0x4e) PSHUFD_BY(0xb1) PSHUFD_BY(0xe4)
  PSHUFD_BY(0x93) PSHUFD_BY(0x39) PSHUFD_BY(0x8d) PSHUFD_BY(0xff) PSHUFD_BY(0x08)
}

/* MOVD xmm, r/m32 (and MOVQ xmm, r/m64 on x86-64): the low bits set, the rest cleared. */
static void movd(const v128 *x, const v128 *y) {
  v128 d;
  uint32_t low = (uint32_t)y->q[0];
  __asm__("movdqa %1, %%xmm0\n\tmovd %2, %%xmm0\n\tmovdqa %%xmm0, %0"
          : "=m"(d) : "m"(*x), "r"(low) : "xmm0");
  mix_v128(&d);
  __asm__("movdqa %1, %%xmm1\n\tmovd %2, %%xmm1\n\tmovdqa %%xmm1, %0"
          : "=m"(d) : "m"(*x), "m"(low) : "xmm1");
  mix_v128(&d);
#ifdef __x86_64__
  uint64_t wide = y->q[1];
  __asm__("movdqa %1, %%xmm10\n\tmovq %2, %%xmm10\n\tmovdqa %%xmm10, %0"
          : "=m"(d) : "m"(*x), "r"(wide) : "xmm10");
  mix_v128(&d);
#endif
}

static const struct {
  const char *name;
  void (*op)(const v128 *, const v128 *);
} sse_other[] = {
    {"psrlw", psrlw}, {"psrld", psrld}, {"psrlq", psrlq}, {"psraw", psraw},
    {"psrad", psrad}, {"psllw", psllw}, {"pslld", pslld}, {"psllq", psllq},
    {"psrldq", psrldq}, {"pslldq", pslldq}, {"pshufd", pshufd}, {"movd", movd},
};

static void sse_group(const char *name, void (*op)(const v128 *, const v128 *)) {
  group_begin();
  for (int i = 0; i < n_pairs(); ++i) {
    const v128 x = random_v128(i), y = random_v128(i + 1);
    op(&x, &y);
  }
  group_end(name);
}

int main(int argc, char **argv) {
  if (argc > 1) cases = atoi(argv[1]);
  carry_group("adc8", adc8);
  carry_group("sbb8", sbb8);
  carry_group("adc16", adc16);
  carry_group("sbb16", sbb16);
  carry_group("adc32", adc32);
  carry_group("sbb32", sbb32);
#ifdef __x86_64__
  carry_group("adc64", adc64);
  carry_group("sbb64", sbb64);
#endif
  wide_compare_group();
  for (size_t i = 0; i < sizeof sse_binary / sizeof sse_binary[0]; ++i)
    sse_group(sse_binary[i].name, sse_binary[i].op);
  for (size_t i = 0; i < sizeof sse_other / sizeof sse_other[0]; ++i)
    sse_group(sse_other[i].name, sse_other[i].op);
  return 0;
}
