/* guest_stale_key: the EFLAGS[30] key cache (§1.8, §3.2).
 *
 * usage: stale_key CASE
 *
 * Every case encrypts the same two blocks three times with REP XCRYPTECB:
 *   c1  after pushf/popf, with key K1 (the key and control word are loaded, bit 30 set)
 *   c2  after changing the key (or control word) in memory, and then doing CASE's action
 *       between the two instructions
 *   c3  after pushf/popf again (always the new key / control word)
 * CASE (action between c1 and c2):
 *   stale    nothing: bit 30 is still 1, so the chip uses the OLD key (§1.8)
 *   reload   pushf/popf: the new key is loaded
 *   xsha     REP XSHA1: "REP XSHA instructions set the ACE EFLAGS:30 bit to zero" (§1.8)
 *   montmul  REP MONTMUL: "neither read nor set the EFLAGS:30 bit" (§1.8): still stale
 *   syscall  a raw system call (getppid): entering the kernel stores EFLAGS (§1.8)
 *   cw       the control word (not the key) changes from encrypt to decrypt: the old
 *            control word stays loaded until the reload (§3.2)
 *   sw       as stale, with 256-bit application-provided schedules (KEYGN = 1)
 * Nothing between c1 and c2 stores EFLAGS except the action under test: no output, no
 * library calls that enter the kernel. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "aes_schedule.h"
#include "guest_util.h"
#include "padlock.h"

/* K1 = SP 800-38A example key (AES-128), K2 = FIPS-197 C.1 key; the 256-bit pair is
 * SP 800-38A's AES-256 key and FIPS-197 C.3's. Plaintext = SP 800-38A blocks 1-2. */
static const char *kK1_128 = "2b7e151628aed2a6abf7158809cf4f3c";
static const char *kK2_128 = "000102030405060708090a0b0c0d0e0f";
static const char *kK1_256 = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
static const char *kK2_256 = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
static const char *kPlain = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51";

static uint8_t g_state[128] __attribute__((aligned(16)));
static const uint8_t g_hash_input[3] = {'a', 'b', 'c'};
static uint32_t g_big[4][8 + 4] __attribute__((aligned(16)));
static uint32_t g_scratch[8] __attribute__((aligned(16)));
static struct mont_ctx g_ctx;

static void action_xsha(void) {
  static const uint32_t init[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476,
                                   0xc3d2e1f0};
  memcpy(g_state, init, sizeof init);
  padlock_xsha1(g_hash_input, sizeof g_hash_input, g_state);
}

static void action_montmul(void) {
  /* 256-bit operands: A = B = 2, M = 2^255 + 1 (odd). */
  memset(g_big, 0, sizeof g_big);
  g_big[0][0] = 2;
  g_big[1][0] = 2;
  g_big[3][0] = 1;
  g_big[3][7] = 0x80000000u;
  g_ctx.m_zero_prime = 0xFFFFFFFFu; /* -1^-1 mod 2^32 for M[0] = 1 */
  g_ctx.a = (uint32_t)(uintptr_t)g_big[0];
  g_ctx.b = (uint32_t)(uintptr_t)g_big[1];
  g_ctx.t = (uint32_t)(uintptr_t)g_big[2];
  g_ctx.m = (uint32_t)(uintptr_t)g_big[3];
  g_ctx.scratch = (uint32_t)(uintptr_t)g_scratch;
  padlock_montmul(&g_ctx, 256);
}

static void action_syscall(void) {
  long ret;
#if defined(__x86_64__)
  __asm__ volatile("syscall" : "=a"(ret) : "a"(110L) /* getppid */ : "rcx", "r11", "memory");
#else
  __asm__ volatile("int $0x80" : "=a"(ret) : "a"(64L) /* getppid */ : "memory");
#endif
  (void)ret;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: stale_key stale|reload|xsha|montmul|syscall|cw|sw\n");
    return 2;
  }
  const char *c = argv[1];
  const int sw = !strcmp(c, "sw");
  if (!sw && strcmp(c, "stale") && strcmp(c, "reload") && strcmp(c, "xsha") &&
      strcmp(c, "montmul") && strcmp(c, "syscall") && strcmp(c, "cw"))
    die("unknown case");

  uint8_t *cw = pool_alloc(128, 16, 0);
  uint8_t *key = pool_alloc(AES_SCHEDULE_BYTES, 16, 0);
  uint8_t *in = pool_alloc(32 + 256, 16, 0);
  uint8_t *out[3] = {pool_alloc(32, 16, 0), pool_alloc(32, 16, 0), pool_alloc(32, 16, 0)};
  uint8_t k1[32], k2[32], next_key[AES_SCHEDULE_BYTES];
  const size_t klen = parse_hex(sw ? kK1_256 : kK1_128, k1, sizeof k1);
  parse_hex(sw ? kK2_256 : kK2_128, k2, sizeof k2);
  parse_hex(kPlain, in, 32);

  /* Control words: 128-bit hardware keys (0x00A / 0x20A, §6.2) or 256-bit memory keys. */
  const uint32_t cw_enc = sw ? (14 | CW_KSIZE_256 | CW_KEYGN) : 10;
  const uint32_t cw_dec = cw_enc | CW_CRYPT;
  memcpy(cw, &cw_enc, 4);
  if (sw) {
    aes_encrypt_schedule(k1, (int)klen, key);
    aes_encrypt_schedule(k2, (int)klen, next_key);
  } else {
    memcpy(key, k1, 16);
    memcpy(next_key, k2, 16);
  }

  padlock_reload_key();
  padlock_xcrypt_ecb(in, out[0], key, NULL, cw, 2);

  /* ---- nothing may store EFLAGS from here to the second XCRYPT, except the action ---- */
  if (!strcmp(c, "cw"))
    memcpy(cw, &cw_dec, 4);
  else
    memcpy(key, next_key, sizeof next_key);
  if (!strcmp(c, "reload")) padlock_reload_key();
  if (!strcmp(c, "xsha")) action_xsha();
  if (!strcmp(c, "montmul")) action_montmul();
  if (!strcmp(c, "syscall")) action_syscall();
  padlock_xcrypt_ecb(in, out[1], key, NULL, cw, 2);
  /* ---- */

  padlock_reload_key();
  padlock_xcrypt_ecb(in, out[2], key, NULL, cw, 2);

  printf("case=%s\n", c);
  print_hex("k1", k1, klen);
  print_hex("k2", k2, klen);
  print_hex("p", in, 32);
  print_hex("c1", out[0], 32);
  print_hex("c2", out[1], 32);
  print_hex("c3", out[2], 32);
  return 0;
}
