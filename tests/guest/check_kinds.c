/* guest_check_kinds: one minimal trigger per PadLock checker finding (docs/checker.md).
 *
 * usage: check_kinds CASE      (run under padlock-emu --check)
 *   stale-key          decrypt, then encrypt with another control word and key at other
 *                      addresses and no EFLAGS store between (§1.8): the shape of Linux
 *                      padlock-aes.c's decrypt -> encrypt on one context
 *   stale-key-address  the same control word and key copied elsewhere, EFLAGS[30] still 1
 *   overlap-partial    REP XCRYPTECB with EDI = ESI + 16 (§3.1 defines only ESI == EDI)
 *   dgest-in-place     REP XCRYPTCBC with DGEST and ESI == EDI (§3.1 "not recommended")
 *   ctr-erratum        REP XCRYPTCTR with ECX = 4 (§3.1 ERRATA, §6.6; Esther stepping 8)
 *   prefetch-past-end  REP XCRYPTCBC on the last block before an unmapped page (Nano reads
 *                      64-byte groups)
 *   xstore-overrun     XSTORE (EDX = 3, one byte) with 4 writable bytes before a hole (§2.1)
 *   cw-reserved        control word bytes 4..15 not zero (§3.2), as mbed TLS leaves them
 *   unit-unavailable   REP XSHA1 (run it on Nehemiah: no PHE, §1.3)
 *   alignment-fault    REP XCRYPTECB with ESI 8 bytes off 16 (§3.1: #GP)
 * Each case prints "done CASE" when it returns. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "guest_util.h"
#include "padlock.h"

enum { kEncrypt128 = 0x00A, kDecrypt128 = 0x20A, kDgest = 0x10 };

static uint8_t g_cw[2][16] __attribute__((aligned(16)));
static uint8_t g_key[2][16] __attribute__((aligned(16)));
static uint8_t g_iv[16] __attribute__((aligned(16)));
static uint8_t g_buf[8 * 16] __attribute__((aligned(16)));
static uint8_t g_out[8 * 16] __attribute__((aligned(16)));

static void set_cw(uint8_t *cw, uint32_t low) {
  memset(cw, 0, 16);
  memcpy(cw, &low, 4);
}

/* Two pages, the second unmapped: returns the first page's address. */
static uint8_t *page_before_hole(void) {
  uint8_t *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) die("mmap");
  if (munmap(p + 4096, 4096) != 0) die("munmap");
  return p;
}

int main(int argc, char **argv) {
  if (argc != 2) die("usage: check_kinds CASE");
  const char *c = argv[1];
  memset(g_key[0], 0x11, 16);
  memset(g_key[1], 0x22, 16);
  set_cw(g_cw[0], kEncrypt128);
  set_cw(g_cw[1], kDecrypt128);
  padlock_reload_key();
  if (!strcmp(c, "stale-key")) {
    padlock_xcrypt_ecb(g_buf, g_out, g_key[1], g_iv, g_cw[1], 1); /* decrypt: loads cw[1], key[1] */
    padlock_xcrypt_ecb(g_buf, g_out, g_key[0], g_iv, g_cw[0], 1); /* encrypt: EFLAGS[30] still 1 */
  } else if (!strcmp(c, "stale-key-address")) {
    padlock_xcrypt_ecb(g_buf, g_out, g_key[0], g_iv, g_cw[0], 1);
    memcpy(g_key[1], g_key[0], 16);
    memcpy(g_cw[1], g_cw[0], 16);
    padlock_xcrypt_ecb(g_buf, g_out, g_key[1], g_iv, g_cw[1], 1);
  } else if (!strcmp(c, "overlap-partial")) {
    padlock_xcrypt_ecb(g_buf, g_buf + 16, g_key[0], g_iv, g_cw[0], 4);
  } else if (!strcmp(c, "dgest-in-place")) {
    set_cw(g_cw[0], kEncrypt128 | kDgest);
    padlock_xcrypt_cbc(g_buf, g_buf, g_key[0], g_iv, g_cw[0], 4);
  } else if (!strcmp(c, "ctr-erratum")) {
    padlock_xcrypt_ctr(g_buf, g_out, g_key[0], g_iv, g_cw[0], 4);
  } else if (!strcmp(c, "prefetch-past-end")) {
    uint8_t *p = page_before_hole();
    padlock_xcrypt_cbc(p + 4096 - 16, g_out, g_key[0], g_iv, g_cw[0], 1);
  } else if (!strcmp(c, "xstore-overrun")) {
    uint8_t *p = page_before_hole();
    padlock_xstore(p + 4096 - 4, 3);
  } else if (!strcmp(c, "cw-reserved")) {
    memset(g_cw[0] + 4, 0xA5, 12); /* stack-garbage-like bytes above CW[31:0] */
    padlock_xcrypt_ecb(g_buf, g_out, g_key[0], g_iv, g_cw[0], 1);
  } else if (!strcmp(c, "unit-unavailable")) {
    static uint32_t state[32] __attribute__((aligned(16)));
    padlock_xsha1(g_buf, 3, state);
  } else if (!strcmp(c, "alignment-fault")) {
    padlock_xcrypt_ecb(g_buf + 8, g_out, g_key[0], g_iv, g_cw[0], 1);
  } else {
    die("unknown case");
  }
  printf("done %s\n", c);
  return 0;
}
