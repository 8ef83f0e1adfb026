/* guest_nehemiah_sigill: executes one chosen PadLock instruction after an XSTORE, so a
 * test can check which instructions a CPU model accepts (§1.1 table, §1.3 CPUID bits):
 * on Nehemiah C5XL (RNG only) every REP XCRYPT dies with SIGILL; on Nehemiah C5P (ACE,
 * no ACE2) REP XCRYPTCTR, REP XSHA and REP MONTMUL do; Esther and Nano run them all.
 *
 * usage: nehemiah_sigill ecb|cbc|cfb|ofb|ctr|sha1|sha256|montmul|xstore
 *
 * Prints "xstore eax=0x..." (the RNG exists on every model), then "executing WHAT", then
 * "WHAT ok" if the instruction returned. Output is flushed before each instruction so
 * the line before the fatal one is visible. No signal handler is installed. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "guest_util.h"
#include "padlock.h"

static uint32_t g_big[4][8 + 4] __attribute__((aligned(16)));
static uint32_t g_scratch[8] __attribute__((aligned(16)));
static struct mont_ctx g_ctx;

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: nehemiah_sigill ecb|cbc|cfb|ofb|ctr|sha1|sha256|montmul|xstore\n");
    return 2;
  }
  const char *w = argv[1];
  uint8_t *buf = pool_alloc(64, 16, 0);
  const struct xstore_regs x = padlock_xstore(buf, 0);
  printf("xstore eax=0x%08x\n", x.eax);
  printf("executing %s\n", w);
  fflush(stdout);

  uint8_t *cw = pool_alloc(128, 16, 0);
  uint8_t *key = pool_alloc(16, 16, 0);
  uint8_t *iv = pool_alloc(16, 16, 0);
  uint8_t *in = pool_alloc(64, 16, 0);
  uint8_t *out = pool_alloc(64, 16, 0);
  const uint32_t cw_word = 0x00A;
  memcpy(cw, &cw_word, 4);
  padlock_reload_key();
  if (!strcmp(w, "ecb"))
    padlock_xcrypt_ecb(in, out, key, iv, cw, 2);
  else if (!strcmp(w, "cbc"))
    padlock_xcrypt_cbc(in, out, key, iv, cw, 2);
  else if (!strcmp(w, "cfb"))
    padlock_xcrypt_cfb(in, out, key, iv, cw, 2);
  else if (!strcmp(w, "ofb"))
    padlock_xcrypt_ofb(in, out, key, iv, cw, 2);
  else if (!strcmp(w, "ctr"))
    padlock_xcrypt_ctr(in, out, key, iv, cw, 2);
  else if (!strcmp(w, "sha1") || !strcmp(w, "sha256")) {
    uint8_t *state = pool_alloc(128, 16, 0);
    if (!strcmp(w, "sha1"))
      padlock_xsha1(in, 3, state);
    else
      padlock_xsha256(in, 3, state);
  } else if (!strcmp(w, "montmul")) {
    g_big[0][0] = g_big[1][0] = 2;
    g_big[3][0] = 1;
    g_big[3][7] = 0x80000000u;
    g_ctx.m_zero_prime = 0xFFFFFFFFu;
    g_ctx.a = (uint32_t)(uintptr_t)g_big[0];
    g_ctx.b = (uint32_t)(uintptr_t)g_big[1];
    g_ctx.t = (uint32_t)(uintptr_t)g_big[2];
    g_ctx.m = (uint32_t)(uintptr_t)g_big[3];
    g_ctx.scratch = (uint32_t)(uintptr_t)g_scratch;
    padlock_montmul(&g_ctx, 256);
  } else if (!strcmp(w, "xstore"))
    padlock_xstore(buf, 0);
  else
    die("unknown instruction");
  printf("%s ok\n", w);
  return 0;
}
