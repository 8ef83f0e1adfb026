/* A guest for the gdb stub's test (tests/integration/test_gdb.py): a named function runs
 * one REP XCRYPTECB over four blocks at the global label gdb_xcrypt_site, so that gdb can
 * break in the function, stop at the instruction, step over it and read its registers;
 * then a store to gdb_watched for a watchpoint. Prints the last ciphertext block (the
 * FIPS-197 Appendix C.1 vector) and exits 0 when the instruction completed.
 * usage: gdb_xcrypt [BLOCKS]   (default 4; many blocks let a periodic interrupt stop the
 * instruction at an interrupt point, §1.7) */
#include <stdlib.h>
#include <stdio.h>

#include "guest_util.h"
#include "padlock.h"

volatile uint32_t gdb_watched;

__attribute__((noinline, noclone)) size_t encrypt_blocks(const uint8_t *in, uint8_t *out,
                                                         const uint8_t *key, uint8_t *iv,
                                                         const uint8_t *cw, size_t blocks) {
  uintptr_t si = (uintptr_t)in, di = (uintptr_t)out, ax = (uintptr_t)iv;
  size_t cx = blocks;
  __asm__ volatile(
      ".globl gdb_xcrypt_site\n"
      "gdb_xcrypt_site:\n\t"
      ".byte 0xf3,0x0f,0xa7,0xc8" /* rep xcryptecb */
      : "+S"(si), "+D"(di), "+a"(ax), "+c"(cx)
      : "b"(key), "d"(cw)
      : "memory", "cc");
  gdb_watched = (uint32_t)cx + 7;
  return cx;
}

int main(int argc, char **argv) {
  const size_t blocks = argc > 1 ? strtoul(argv[1], NULL, 0) : 4;
  uint8_t *key = pool_alloc(32, 16, 0), *cw = pool_alloc(16, 16, 0);
  uint8_t *iv = pool_alloc(16, 16, 0);
  uint8_t *in = pool_alloc(16 * blocks, 16, 0), *out = pool_alloc(16 * blocks, 16, 0);
  parse_hex("000102030405060708090a0b0c0d0e0f", key, 16);
  for (size_t b = 0; b < blocks; ++b) {
    parse_hex("00112233445566778899aabbccddeeff", in + 16 * b, 16);
  }
  cw[0] = 10; /* ROUND = 10, hardware key expansion, encrypt, 128-bit key (§3.2) */
  padlock_reload_key();
  const size_t left = encrypt_blocks(in, out, key, iv, cw, blocks);
  printf("left %u watched %u block ", (unsigned)left, (unsigned)gdb_watched);
  for (int i = 0; i < 16; ++i) printf("%02x", out[16 * (blocks - 1) + i]);
  printf("\n");
  return left == 0 ? 0 : 1;
}
