/* padlock_driver: a small PadLock driver library, the example that docs/python.md tests
 * with padlock_emu.Machine (test_driver.py in this directory).
 *
 * It does what a kernel or library driver does with the VIA units:
 *   - AES-CBC and AES-ECB through REP XCRYPT (guide §3.1), with hardware-generated keys
 *     for AES-128 and application-provided key schedules for AES-192/256 (§3.2), and the
 *     key-reload rule of §1.8: before a REP XCRYPT that uses other keys than the previous
 *     one, store EFLAGS (pushf; popf) so that EFLAGS[30] is 0 and ACE reloads them;
 *   - SHA-256 through REP XSHA256 (§4.1), with the 128-byte state buffer and the BSWAP of
 *     the result the guide asks for;
 *   - a random-number harvesting loop over XSTORE (§2.1) that waits (through an imported
 *     helper) while the RNG has no bytes.
 * It is freestanding: it imports memcpy and two helpers, drv_warn and rng_wait, which the
 * host (here: Python stubs) provides, and one variable, drv_max_blocks. Its operations
 * are also exported as a table of function pointers, padlock_ops, as a kernel crypto
 * driver registers them. */
#ifndef PADLOCK_DRIVER_H
#define PADLOCK_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#define AES_BLOCK 16

/* A control word is 16 bytes at a 16-byte aligned address (§3.2, "Control word pointer");
 * the key area is 256 bytes because ACE always loads sixteen 128-bit values when the
 * application provides the schedule (§3.2, "Extended keys"). */
struct aes_cword {
  uint32_t word;
  uint32_t reserved[3];
} __attribute__((aligned(16)));

struct aes_ctx {
  uint8_t ekey[256] __attribute__((aligned(16))); /* key, or key + encryption schedule */
  uint8_t dkey[256] __attribute__((aligned(16))); /* key, or decryption schedule */
  struct aes_cword ecw, dcw;
  uint8_t iv[AES_BLOCK] __attribute__((aligned(16)));
  uint32_t key_len;
  uint32_t generation; /* bumped by every aes_set_key: the loaded key is stale */
};

/* 0, or -22 (EINVAL) for a key length other than 16, 24 or 32 bytes (drv_warn is told). */
int aes_set_key(struct aes_ctx *ctx, const uint8_t *key, unsigned key_len);
void aes_set_iv(struct aes_ctx *ctx, const uint8_t *iv);

/* len must be a multiple of 16 (else -22). Buffers are passed to ACE as they are: they
 * must be 16-byte aligned (§3.1), or the instruction raises #GP (SIGSEGV). CBC updates
 * ctx->iv so that consecutive calls continue one message. Return 0 on success. */
int aes_cbc_encrypt(struct aes_ctx *ctx, const uint8_t *in, uint8_t *out, size_t len);
int aes_cbc_decrypt(struct aes_ctx *ctx, const uint8_t *in, uint8_t *out, size_t len);
int aes_ecb_encrypt(struct aes_ctx *ctx, const uint8_t *in, uint8_t *out, size_t len);

/* SHA-256 of len bytes into out[32] (standard big-endian digest). */
int sha256_digest(const uint8_t *data, size_t len, uint8_t *out);

/* Fills out[0..len) with random bytes by XSTORE with quality factor `quality` (EDX, §2.1).
 * Returns the number of XSTORE instructions executed, or -5 (EIO) after max_waits
 * XSTOREs in a row that returned no bytes. Calls rng_wait(n) after the n-th empty one. */
long rng_harvest(uint8_t *out, size_t len, unsigned quality, unsigned max_waits);

struct padlock_ops {
  int (*set_key)(struct aes_ctx *, const uint8_t *, unsigned);
  int (*cbc_encrypt)(struct aes_ctx *, const uint8_t *, uint8_t *, size_t);
  int (*cbc_decrypt)(struct aes_ctx *, const uint8_t *, uint8_t *, size_t);
  int (*sha256)(const uint8_t *, size_t, uint8_t *);
  const char *name;
};
extern const struct padlock_ops padlock_ops;

/* Imported from the host. */
extern void *memcpy(void *dst, const void *src, size_t n);
extern void drv_warn(const char *message, unsigned long value);
extern void rng_wait(unsigned waits);
/* At most this many blocks per REP XCRYPT (0: no limit): a kernel splits long requests so
 * that an interrupt is never held off for long. The chunks after the first reuse the
 * loaded key (EFLAGS[30] stays 1, §1.8). */
extern unsigned int drv_max_blocks;

#endif
