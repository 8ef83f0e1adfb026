/* The host baseline of bench/guest/xcrypt_loop.c's ECB shapes: the same COUNT passes over
 * the same SIZE-byte buffers, in the same shape, with the host's OpenSSL (AES-NI where the
 * CPU has it) instead of REP XCRYPTECB. bench/run_all.py times both the same way, the
 * set-up run (COUNT 0) subtracted, so the buffers are first touched in both and the
 * figure is memory-bound as the emulator's is, not a 16 KB in-cache one.
 *
 * usage: host_stream SIZE COUNT inplace|separate|steps */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>

#include "stream_shape.h"

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: host_stream SIZE COUNT inplace|separate|steps\n");
    return 2;
  }
  const unsigned long count = strtoul(argv[2], NULL, 0);
  struct stream_buffers b;
  const int bad = stream_buffers_make("host_stream", argv[1], argv[3], &b);
  if (bad) return bad;

  /* The key of xcrypt_loop.c (FIPS-197 appendix A.1). */
  static const uint8_t key[16] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
                                  0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  if (ctx == NULL || !EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), NULL, key, NULL)) return 1;
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  for (unsigned long i = 0; i < count; ++i) {
    for (size_t off = 0; off < b.size; off += b.step) {
      int len = 0;
      if (!EVP_EncryptUpdate(ctx, b.out + off, &len, b.in + off, (int)b.step)) return 1;
    }
  }
  EVP_CIPHER_CTX_free(ctx);
  stream_print("ecb", &b, count, b.out, b.size);
  stream_buffers_free(&b);
  return 0;
}
