/* guest_sha: hash files with one REP XSHA1 / REP XSHA256 each, shaped like PHE.C (§6.3),
 * printing lines in the format of sha1sum / sha256sum.
 *
 * usage: sha 1|256 [-v] FILE...      ("-" reads standard input)
 *
 * Each file is read whole into a malloc buffer (any alignment: §4.1 only the hash area
 * must be aligned). The hash area is 128 bytes, 16-byte aligned, holding the FIPS 180-2
 * initial constants as little-endian words (§4.1 "Output data pointer", §4.3). The result
 * words are printed with %08x, which gives the standard big-endian digest (§6.3).
 * With -v a second line per file gives the registers after the instruction (§4.1):
 *   regs eax=<bytes hashed> ecx=<unchanged?> esi_adv=<bytes> edi_same=<0|1> */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_util.h"
#include "padlock.h"

static uint8_t *read_all(const char *path, size_t *len) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  if (!buf) die("out of memory");
  for (;;) {
    if (n == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      if (!buf) die("out of memory");
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    if (got == 0) break;
    n += got;
  }
  if (f != stdin) fclose(f);
  *len = n;
  return buf;
}

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "1") != 0 && strcmp(argv[1], "256") != 0)) {
    fprintf(stderr, "usage: sha 1|256 [-v] FILE...\n");
    return 2;
  }
  const int is256 = strcmp(argv[1], "256") == 0;
  const int words = is256 ? 8 : 5;
  int verbose = 0, status = 0;
  /* §4.1: 128 bytes at EDI, 16-byte aligned. */
  uint32_t *state = pool_alloc(128, 16, 0);
  for (int i = 2; i < argc; ++i) {
    if (!strcmp(argv[i], "-v")) {
      verbose = 1;
      continue;
    }
    size_t len;
    uint8_t *data = read_all(argv[i], &len);
    if (!data) {
      fprintf(stderr, "sha: %s: cannot read\n", argv[i]);
      status = 1;
      continue;
    }
    memset(state, 0, 128);
    memcpy(state, is256 ? kSha256Init : kSha1Init, (size_t)words * 4);
    const struct xsha_regs r =
        is256 ? padlock_xsha256(data, len, state) : padlock_xsha1(data, len, state);
    for (int w = 0; w < words; ++w) printf("%08x", state[w]);
    printf("  %s\n", argv[i]);
    if (verbose)
      printf("regs eax=%lu ecx=%lu esi_adv=%lu edi_same=%d\n", (unsigned long)r.eax,
             (unsigned long)r.ecx, (unsigned long)(r.esi - (uintptr_t)data),
             r.edi == (uintptr_t)state);
    free(data);
  }
  return status;
}
