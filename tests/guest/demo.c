/* The bundled demo (scripts/demo.sh): one pass over every PadLock unit, each result printed
 * beside the standard answer it must equal, so a run under padlock-emu shows at a glance
 * that the emulated chip computes correctly. Exit status 0 only if every check passes.
 *
 * ACE:  FIPS-197 Appendix C.1 (AES-128), hardware key expansion, then the same block in CBC
 *       with a zero IV (equal to ECB for one block), then the stale-key effect (§3.2).
 * PHE:  FIPS 180-2 "abc" for SHA-1 and SHA-256 (§4.1).
 * PMM:  7 * 11 * R^-1 mod M for a 256-bit modulus, checked in the guest by converting back
 *       with a second MONTMUL (§5.1, §6.4).
 * RNG:  one REP XSTORE of 16 bytes (§2.1). */
#include <stdio.h>
#include <string.h>

#include "guest_util.h"
#include "padlock.h"

static int failures;

static void check(const char *what, const uint8_t *got, const char *want_hex) {
  uint8_t want[64];
  const size_t n = parse_hex(want_hex, want, sizeof want);
  const int ok = memcmp(got, want, n) == 0;
  printf("%-34s ", what);
  for (size_t i = 0; i < n; ++i) printf("%02x", got[i]);
  printf("  %s\n", ok ? "ok" : "MISMATCH");
  if (!ok) {
    printf("%-34s %s\n", "  expected", want_hex);
    ++failures;
  }
}

static void demo_ace(void) {
  uint8_t *key = pool_alloc(32, 16, 0), *cw = pool_alloc(16, 16, 0);
  uint8_t *in = pool_alloc(16, 16, 0), *iv = pool_alloc(16, 16, 0);
  uint8_t *ecb = pool_alloc(16, 16, 0), *cbc = pool_alloc(16, 16, 0);
  uint8_t *stale = pool_alloc(16, 16, 0), *fresh = pool_alloc(16, 16, 0);
  parse_hex("000102030405060708090a0b0c0d0e0f", key, 16);
  parse_hex("00112233445566778899aabbccddeeff", in, 16);
  memset(cw, 0, 16);
  memset(iv, 0, 16);
  cw[0] = 10; /* ROUND = 10, hardware key expansion, encrypt, 128-bit key (§3.2) */

  padlock_reload_key();
  padlock_xcrypt_ecb(in, ecb, key, iv, cw, 1);
  padlock_xcrypt_cbc(in, cbc, key, iv, cw, 1);
  /* §3.2: while EFLAGS[30] stays set, a new key in memory is not loaded and the chip keeps
   * the old schedule. No system call may come between (entering the kernel stores EFLAGS),
   * so the results are printed only afterwards. */
  key[0] ^= 0xff;
  padlock_xcrypt_ecb(in, stale, key, iv, cw, 1);
  padlock_reload_key(); /* PUSHF/POPF clears EFLAGS[30]: the next XCRYPT loads the key */
  padlock_xcrypt_ecb(in, fresh, key, iv, cw, 1);

  check("AES-128 ECB (FIPS-197 C.1)", ecb, "69c4e0d86a7b0430d8cdb78070b4c55a");
  check("AES-128 CBC, zero IV", cbc, "69c4e0d86a7b0430d8cdb78070b4c55a");
  check("new key, no PUSHF/POPF: stale", stale, "69c4e0d86a7b0430d8cdb78070b4c55a");
  check("new key after PUSHF/POPF", fresh, "451e581de5dff6f4ad4621665c9fab07");
}

static void demo_phe(void) {
  uint32_t *state = pool_alloc(128, 16, 0);
  uint8_t digest[32];
  static const uint32_t sha1_init[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476,
                                        0xc3d2e1f0};
  static const uint32_t sha256_init[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                          0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memset(state, 0, 128);
  memcpy(state, sha1_init, sizeof sha1_init);
  padlock_xsha1("abc", 3, state);
  for (int i = 0; i < 5; ++i) /* little-endian words at EDI (§4.3): print big-endian */
    for (int b = 0; b < 4; ++b) digest[4 * i + b] = (uint8_t)(state[i] >> (24 - 8 * b));
  check("SHA-1(\"abc\")", digest, "a9993e364706816aba3e25717850c26c9cd0d89d");

  memset(state, 0, 128);
  memcpy(state, sha256_init, sizeof sha256_init);
  padlock_xsha256("abc", 3, state);
  for (int i = 0; i < 8; ++i)
    for (int b = 0; b < 4; ++b) digest[4 * i + b] = (uint8_t)(state[i] >> (24 - 8 * b));
  check("SHA-256(\"abc\")", digest,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* -M^-1 mod 2^32 by Newton iteration (§6.4 computes the same value bit by bit). */
static uint32_t neg_inverse(uint32_t m0) {
  uint32_t x = 1;
  for (int i = 0; i < 5; ++i) x *= 2 - m0 * x;
  return (uint32_t)-x;
}

static void demo_pmm(void) {
  enum { WORDS = 8, BITS = 256 }; /* the smallest size the PMM takes (§5.1) */
  const size_t bytes = 4 * (WORDS + 4); /* T needs 128 spare bits (§5.1 NOTES) */
  uint32_t *a = pool_alloc(bytes, 16, 0), *b = pool_alloc(bytes, 16, 0);
  uint32_t *t = pool_alloc(bytes, 16, 0), *m = pool_alloc(bytes, 16, 0);
  uint32_t *scratch = pool_alloc(32, 16, 0);
  struct mont_ctx *ctx = pool_alloc(sizeof *ctx, 4, 0);
  memset(a, 0, bytes);
  memset(b, 0, bytes);
  memset(t, 0, bytes);
  memset(m, 0, bytes);
  /* M = 2^255 + 19 and R = 2^256 = 2M - 38 = -38 (mod M). With A = 7R = M - 266 and
   * B = 11, MONTMUL gives A*B/R = 77 (mod M), unreduced: 77 or 77 + M. */
  m[0] = 19;
  m[7] = 0x80000000u;
  a[0] = 19u - 266u;
  for (int i = 1; i < 7; ++i) a[i] = 0xffffffffu;
  a[7] = 0x7fffffffu;
  b[0] = 11;
  ctx->m_zero_prime = neg_inverse(m[0]);
  ctx->a = (uint32_t)(uintptr_t)a;
  ctx->b = (uint32_t)(uintptr_t)b;
  ctx->t = (uint32_t)(uintptr_t)t;
  ctx->m = (uint32_t)(uintptr_t)m;
  ctx->scratch = (uint32_t)(uintptr_t)scratch;
  padlock_montmul(ctx, BITS);

  /* The final conditional subtraction is software's job (§5.1 NOTES, §6.4). */
  int ge = 1;
  for (int i = WORDS; i >= 0; --i) {
    if (t[i] != m[i]) {
      ge = t[i] > m[i];
      break;
    }
  }
  if (ge) {
    uint64_t borrow = 0;
    for (int i = 0; i <= WORDS; ++i) {
      const uint64_t d = (uint64_t)t[i] - m[i] - borrow;
      t[i] = (uint32_t)d;
      borrow = (d >> 32) & 1;
    }
  }
  uint8_t le[4 * WORDS];
  for (int i = 0; i < WORDS; ++i)
    for (int k = 0; k < 4; ++k) le[4 * i + k] = (uint8_t)(t[i] >> (8 * k));
  check("MONTMUL: 7R * 11 / R mod 2^255+19", le,
        "4d00000000000000000000000000000000000000000000000000000000000000");
}

static void demo_rng(void) {
  uint8_t *buf = pool_alloc(16 + 8, 16, 0); /* 8 spare bytes: §2.1 "REP Count" */
  struct xstore_regs r = padlock_rep_xstore(buf, 16, 0);
  printf("%-34s ", "REP XSTORE 16 bytes (EDX=0)");
  for (int i = 0; i < 16; ++i) printf("%02x", buf[i]);
  const int ok = r.ecx == 0 && r.edi == (uintptr_t)buf + 16;
  printf("  %s\n", ok ? "ok (ECX=0, EDI advanced 16)" : "MISMATCH");
  failures += !ok;
}

int main(void) {
  printf("padlock-emu demo: every PadLock unit once, checked against standard answers\n\n");
  demo_ace();
  demo_phe();
  demo_pmm();
  demo_rng();
  printf("\n%s\n", failures == 0 ? "all checks passed" : "SOME CHECKS FAILED");
  return failures == 0 ? 0 : 1;
}
