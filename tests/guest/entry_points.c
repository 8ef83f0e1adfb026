/* The same PadLock instructions for each of the three ways padlock-emu executes them: the
 * CLI runs main(), the function harness (padlock_emu.Machine) loads this very file and calls
 * ep_init() and ep_case(k), and the direct model API replays each instruction on a copy of
 * ep_arena (tests/python/test_entry_points.py). Every operand lives in ep_arena, so the
 * memory layout is the same everywhere, and nothing here makes a system call between two
 * PadLock instructions. */
#include <stdint.h>

#include "padlock.h"

enum { EP_CASES = 12 };

/* One page-aligned arena; ep_arena_bytes tells the test how much to copy. */
struct ep_arena {
  uint8_t cw[8][128] __attribute__((aligned(16))); /* control words (ALIGN needs 128) */
  uint8_t key[256] __attribute__((aligned(16)));   /* AES-128 key / expanded schedule */
  uint8_t iv[4][16] __attribute__((aligned(16)));
  uint8_t in[16384] __attribute__((aligned(16)));
  uint8_t out[16384] __attribute__((aligned(16)));
  uint8_t hash[2][128] __attribute__((aligned(16)));
  struct mont_ctx mctx __attribute__((aligned(16)));
  uint32_t ma[32] __attribute__((aligned(16)));
  uint32_t mb[32] __attribute__((aligned(16)));
  uint32_t mt[40] __attribute__((aligned(16)));
  uint32_t mm[32] __attribute__((aligned(16)));
  uint32_t mscratch[8] __attribute__((aligned(16)));
};
struct ep_arena ep_arena __attribute__((aligned(4096)));
const uint32_t ep_arena_bytes = sizeof(struct ep_arena);
const uint32_t ep_cases = EP_CASES;

static void set_cw(int i, uint32_t v) {
  for (int b = 0; b < 128; ++b) ep_arena.cw[i][b] = 0;
  ep_arena.cw[i][0] = (uint8_t)v;
  ep_arena.cw[i][1] = (uint8_t)(v >> 8);
}

/* Deterministic contents: byte i of each buffer is a fixed function of i. */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) void ep_init(void) {
  struct ep_arena *a = &ep_arena;
  for (uint32_t i = 0; i < sizeof a->in; ++i) a->in[i] = (uint8_t)(i * 7 + 3);
  for (uint32_t i = 0; i < sizeof a->out; ++i) a->out[i] = 0;
  for (uint32_t i = 0; i < sizeof a->key; ++i) a->key[i] = (uint8_t)(i * 13 + 1);
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 16; ++i) a->iv[k][i] = (uint8_t)(k * 16 + i);
  set_cw(0, 10);                       /* §3.2: encrypt, 10 rounds, hardware key */
  set_cw(1, 10 | CW_CRYPT);            /* decrypt */
  set_cw(2, 10 | CW_ALIGN);            /* ACE2: unaligned microcode */
  set_cw(3, 10 | CW_DGEST);            /* ACE2: CBC-MAC */
  /* §4.3: the FIPS 180-2 initial hash values as little-endian words. */
  static const uint32_t h1[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  static const uint32_t h256[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  for (int i = 0; i < 128; ++i) a->hash[0][i] = a->hash[1][i] = 0;
  for (int i = 0; i < 5; ++i) ((uint32_t *)a->hash[0])[i] = h1[i];
  for (int i = 0; i < 8; ++i) ((uint32_t *)a->hash[1])[i] = h256[i];
  /* MONTMUL 256-bit: M odd, A and B below M, T zero (§5.1). */
  for (int i = 0; i < 8; ++i) {
    a->mm[i] = 0xFFFFFFFFu - (uint32_t)i * 0x1000193u;
    a->ma[i] = 0x01234567u * (uint32_t)(i + 1);
    a->mb[i] = 0x89ABCDEFu ^ (uint32_t)(i * 0x9E3779B9u);
  }
  a->mm[0] |= 1;
  a->ma[7] &= 0x7FFFFFFF;
  a->mb[7] &= 0x7FFFFFFF;
  for (int i = 0; i < 40; ++i) a->mt[i] = 0;
  uint32_t inv = 1; /* -M^-1 mod 2^32 by Newton's iteration (§6.4) */
  for (int i = 0; i < 5; ++i) inv *= 2 - a->mm[0] * inv;
  a->mctx.m_zero_prime = (uint32_t)0 - inv;
  a->mctx.a = (uint32_t)(uintptr_t)a->ma;
  a->mctx.b = (uint32_t)(uintptr_t)a->mb;
  a->mctx.t = (uint32_t)(uintptr_t)a->mt;
  a->mctx.m = (uint32_t)(uintptr_t)a->mm;
  a->mctx.scratch = (uint32_t)(uintptr_t)a->mscratch;
}

/* Case k: one or two PadLock instructions. Each starts with a key reload (§1.8) unless it
 * is the stale-key case, which keeps the key the case before loaded. */
void ep_case(uint32_t k) {
  struct ep_arena *a = &ep_arena;
  switch (k) {
    case 0: padlock_reload_key(); padlock_xcrypt_ecb(a->in, a->out, a->key, 0, a->cw[0], 1); break;
    case 1: padlock_reload_key(); padlock_xcrypt_ecb(a->in, a->out, a->key, 0, a->cw[0], 64); break;
    case 2: padlock_reload_key(); padlock_xcrypt_cbc(a->in, a->out, a->key, a->iv[0], a->cw[0], 4); break;
    case 3: padlock_reload_key(); padlock_xcrypt_cbc(a->out, a->in + 4096, a->key, a->iv[1], a->cw[1], 256); break;
    case 4: padlock_reload_key(); padlock_xcrypt_cfb(a->in, a->out, a->key, a->iv[2], a->cw[0], 16); break;
    case 5: padlock_reload_key(); padlock_xcrypt_ofb(a->in, a->in, a->key, a->iv[3], a->cw[0], 8); break;
    case 6: /* stale key: no reload, the schedule loaded by case 5 is used (§1.8) */
            padlock_xcrypt_ecb(a->in, a->out, a->key + 16, 0, a->cw[0], 2); break;
    case 7: padlock_reload_key(); padlock_xcrypt_ctr(a->in, a->out, a->key, a->iv[0], a->cw[0], 33); break;
    case 8: padlock_reload_key(); padlock_xcrypt_cbc(a->in + 3, a->out + 5, a->key, a->iv[1], a->cw[2], 10); break;
    case 9: padlock_reload_key(); padlock_xcrypt_cbc(a->in, a->out, a->key, a->iv[2], a->cw[3], 20); break;
    case 10: padlock_xsha1(a->in, 1000, a->hash[0]); padlock_xsha256(a->in, 4096, a->hash[1]); break;
    case 11: padlock_montmul(&a->mctx, 256); break;
  }
}

int main(void) {
  ep_init();
  for (uint32_t k = 0; k < EP_CASES; ++k) ep_case(k);
  return 0;
}
