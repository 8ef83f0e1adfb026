/* guest_sha_final: the final step of a hash split between software and REP XSHA, shaped
 * like the non-Nano final/finup of Linux 6.1 drivers/crypto/padlock-sha.c: software (the
 * kernel's generic fallback there) hashes the whole 64-byte blocks, then one REP XSHA
 * gets EAX = the bytes already hashed, ECX = the total, ESI = the rest and EDI = the
 * mid-state (§4.1). When the length is a nonzero multiple of 64 nothing is left: EAX = ECX
 * and the instruction only pads (docs/fidelity/phe.md).
 *
 * usage: sha_final 1|256 [-v] FILE...
 * Prints sha1sum / sha256sum lines; with -v also
 *   regs eax=<EAX at start> ecx=<ECX> eax_after=<EAX> esi_adv=<bytes ESI moved> */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_util.h"
#include "sha_soft.h"
#include "padlock.h"

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "1") != 0 && strcmp(argv[1], "256") != 0)) {
    fprintf(stderr, "usage: sha_final 1|256 [-v] FILE...\n");
    return 2;
  }
  const int is256 = strcmp(argv[1], "256") == 0;
  const int words = is256 ? 8 : 5;
  int verbose = 0;
  uint32_t *state = pool_alloc(128, 16, 0); /* §4.1: 128 bytes at EDI, 16-byte aligned */
  uint8_t *data = pool_alloc(1 << 20, 16, 0);
  for (int i = 2; i < argc; ++i) {
    if (!strcmp(argv[i], "-v")) {
      verbose = 1;
      continue;
    }
    FILE *f = fopen(argv[i], "rb");
    if (!f) die("cannot open input");
    const size_t len = fread(data, 1, 1 << 20, f);
    fclose(f);
    /* The driver's split: everything up to the last (possibly full) block in software. */
    const size_t done = len == 0 ? 0 : (len - 1) / 64 * 64 + (len % 64 == 0 ? 64 : 0);
    memset(state, 0, 128);
    memcpy(state, is256 ? kSha256Init : kSha1Init, (size_t)words * 4);
    for (size_t off = 0; off < done; off += 64) {
      if (is256) {
        sha256_block(state, data + off);
      } else {
        sha1_block(state, data + off);
      }
    }
    const struct xsha_regs r = is256 ? padlock_xsha256_from(data + done, done, len, state)
                                     : padlock_xsha1_from(data + done, done, len, state);
    for (int w = 0; w < words; ++w) printf("%08x", state[w]);
    printf("  %s\n", argv[i]);
    if (verbose)
      printf("regs eax=%lu ecx=%lu eax_after=%lu esi_adv=%lu\n", (unsigned long)done,
             (unsigned long)r.ecx, (unsigned long)r.eax,
             (unsigned long)(r.esi - (uintptr_t)(data + done)));
  }
  return 0;
}
