/* guest_aes: one AES operation through REP XCRYPT, driven the way crypto libraries drive
 * ACE (OpenSSL engines/e_padlock.c, Linux drivers/crypto/padlock-aes.c).
 *
 * usage: aes MODE KEYSRC DIR KEY IV INPUT [options]
 *   MODE    ecb | cbc | ctr | cfb | ofb                       (§3.1)
 *   KEYSRC  hw  KEYGN = 0, the hardware expands the 128-bit key (§3.2)
 *           sw  KEYGN = 1, the schedule is computed here (aes_schedule.h)
 *   DIR     enc | dec. As in OpenSSL, OFB and CTR always run with CRYPT = 0 (they are
 *           their own inverse), and CFB decryption uses CRYPT = 1 with the encryption
 *           schedule; ECB/CBC decryption uses the inverse-order schedule (§3.2).
 *   KEY IV INPUT  hex; IV is "-" for ECB; INPUT is a whole number of blocks.
 * options:
 *   --digest     CW[4] DGEST: CBC/CFB MAC, EDI is not advanced (§3.2); prints the block
 *                left at EDI
 *   --align      CW[5] ALIGN (§3.2; 128 bytes are always allocated at EDX)
 *   --misalign   input at 16n+1 and output at 16n+7 (§3.1 "Memory formats")
 *   --split N    one REP XCRYPT per N blocks, carrying the IV forward as clients do: copy
 *                16 bytes from the returned EAX, and for CTR rewrite the counter field
 *                (the CTR_ERRATA.C workaround, §6.6)
 *   --roundtrip  then reload (pushf/popf, §1.8) with the inverse control word and schedule
 *                in the same buffers and undo the operation; prints back=
 *
 * Output (key=value lines): out, and for a single call the registers after it: ecx,
 * esi_adv, edi_adv, eax (located relative to the iv/in/out buffers), ivmem (16 bytes at
 * the IV buffer), eaxmem (16 bytes at EAX), overrun (bytes changed past the output). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aes_schedule.h"
#include "guest_util.h"
#include "padlock.h"

enum { MAX_DATA = 64 * 1024, SLACK = 256, CANARY = 0xC5 };

typedef struct xcrypt_regs (*xcrypt_fn)(const void *, void *, const void *, void *,
                                        const void *, size_t);

struct mode_info {
  const char *name;
  xcrypt_fn fn;
  int chaining; /* uses EAX */
};

static const struct mode_info kModes[] = {
    {"ecb", padlock_xcrypt_ecb, 0}, {"cbc", padlock_xcrypt_cbc, 1},
    {"ctr", padlock_xcrypt_ctr, 1}, {"cfb", padlock_xcrypt_cfb, 1},
    {"ofb", padlock_xcrypt_ofb, 1},
};

struct job {
  const struct mode_info *mode;
  int hw_key, decrypt, digest, align, misalign, roundtrip;
  size_t split;
  uint8_t key[32];
  size_t key_len;
  uint8_t iv0[16];
  uint8_t *in, *out, *iv, *keybuf, *cw;
  size_t len, out_cap;
};

static void usage(void) {
  fprintf(stderr,
          "usage: aes ecb|cbc|ctr|cfb|ofb hw|sw enc|dec KEY IV INPUT [--digest] [--align]\n"
          "           [--misalign] [--split N] [--roundtrip]\n");
  exit(2);
}

/* Control word and key area for one direction (§3.2). */
static void load_key(struct job *j, int decrypt) {
  const char *m = j->mode->name;
  const int inverse_cipher = decrypt && (!strcmp(m, "ecb") || !strcmp(m, "cbc"));
  const int crypt_bit = decrypt && strcmp(m, "ofb") != 0 && strcmp(m, "ctr") != 0;
  uint32_t cw = (uint32_t)aes_rounds((int)j->key_len);
  cw |= j->key_len == 16 ? CW_KSIZE_128 : j->key_len == 24 ? CW_KSIZE_192 : CW_KSIZE_256;
  if (crypt_bit) cw |= CW_CRYPT;
  if (j->digest) cw |= CW_DGEST;
  if (j->align) cw |= CW_ALIGN;
  if (j->hw_key) {
    memset(j->keybuf, 0, AES_SCHEDULE_BYTES);
    memcpy(j->keybuf, j->key, 16);
  } else {
    cw |= CW_KEYGN;
    if (inverse_cipher)
      aes_decrypt_schedule(j->key, (int)j->key_len, j->keybuf);
    else
      aes_encrypt_schedule(j->key, (int)j->key_len, j->keybuf);
  }
  memset(j->cw, 0, 128);
  memcpy(j->cw, &cw, sizeof cw);
}

static void print_location(const char *label, uintptr_t p, const struct job *j) {
  const uintptr_t iv = (uintptr_t)j->iv, in = (uintptr_t)j->in, out = (uintptr_t)j->out;
  if (p >= iv && p < iv + 16)
    printf("%s=iv+%lu\n", label, (unsigned long)(p - iv));
  else if (p >= out && p <= out + j->out_cap)
    printf("%s=out+%lu\n", label, (unsigned long)(p - out));
  else if (p >= in && p <= in + j->len + SLACK)
    printf("%s=in+%lu\n", label, (unsigned long)(p - in));
  else
    printf("%s=0x%lx\n", label, (unsigned long)p);
}

static int inside_buffers(uintptr_t p, const struct job *j) {
  const uintptr_t iv = (uintptr_t)j->iv, in = (uintptr_t)j->in, out = (uintptr_t)j->out;
  return (p >= iv && p + 16 <= iv + 16) || (p >= out && p + 16 <= out + j->out_cap) ||
         (p >= in && p + 16 <= in + j->len + SLACK);
}

/* CTR counter field: bytes 14..15, big-endian (§3.1 CTR). */
static void set_counter(uint8_t *iv, unsigned value) {
  iv[14] = (uint8_t)(value >> 8);
  iv[15] = (uint8_t)value;
}

/* Runs the whole input through the current key; returns the last call's registers. */
static struct xcrypt_regs run(struct job *j, const uint8_t *src, uint8_t *dst, int *calls) {
  const size_t blocks = j->len / 16;
  const size_t step = j->split ? j->split : (blocks ? blocks : 1);
  const unsigned ctr0 = (unsigned)(j->iv[14] << 8 | j->iv[15]);
  struct xcrypt_regs r = {0, 0, 0, 0};
  size_t done = 0;
  *calls = 0;
  do {
    size_t n = blocks - done < step ? blocks - done : step;
    uint8_t *o = j->digest ? dst : dst + 16 * done;
    r = j->mode->fn(src + 16 * done, o, j->keybuf, j->iv, j->cw, n);
    ++*calls;
    done += n;
    if (j->split && done < blocks) {
      if (!strcmp(j->mode->name, "ctr"))
        set_counter(j->iv, (ctr0 + (unsigned)done) & 0xFFFF);
      else if (j->mode->chaining && r.eax != (uintptr_t)j->iv)
        memcpy(j->iv, (const void *)r.eax, 16);
    }
  } while (done < blocks);
  return r;
}

int main(int argc, char **argv) {
  if (argc < 7) usage();
  struct job j;
  memset(&j, 0, sizeof j);
  for (size_t i = 0; i < sizeof kModes / sizeof kModes[0]; ++i)
    if (!strcmp(argv[1], kModes[i].name)) j.mode = &kModes[i];
  if (!j.mode) usage();
  if (!strcmp(argv[2], "hw"))
    j.hw_key = 1;
  else if (strcmp(argv[2], "sw") != 0)
    usage();
  if (!strcmp(argv[3], "dec"))
    j.decrypt = 1;
  else if (strcmp(argv[3], "enc") != 0)
    usage();
  j.key_len = parse_hex(argv[4], j.key, sizeof j.key);
  if (j.key_len != 16 && j.key_len != 24 && j.key_len != 32) die("key must be 16, 24 or 32 bytes");
  if (j.hw_key && j.key_len != 16) die("hardware key expansion is for 128-bit keys only (§3.2)");
  size_t iv_len = parse_hex(argv[5], j.iv0, sizeof j.iv0);
  if (j.mode->chaining && iv_len != 16) die("IV must be 16 bytes");
  for (int i = 7; i < argc; ++i) {
    if (!strcmp(argv[i], "--digest"))
      j.digest = 1;
    else if (!strcmp(argv[i], "--align"))
      j.align = 1;
    else if (!strcmp(argv[i], "--misalign"))
      j.misalign = 1;
    else if (!strcmp(argv[i], "--roundtrip"))
      j.roundtrip = 1;
    else if (!strcmp(argv[i], "--split") && i + 1 < argc)
      j.split = strtoul(argv[++i], NULL, 0);
    else
      usage();
  }

  j.cw = pool_alloc(128, 16, 0);
  j.keybuf = pool_alloc(AES_SCHEDULE_BYTES, 16, 0);
  j.iv = pool_alloc(16, 16, 0);
  j.in = pool_alloc(MAX_DATA + SLACK, 16, j.misalign ? 1 : 0);
  j.len = parse_hex(argv[6], j.in, MAX_DATA);
  if (j.len % 16 != 0) die("input must be a whole number of 16-byte blocks");
  j.out_cap = j.len + SLACK;
  j.out = pool_alloc(j.out_cap, 16, j.misalign ? 7 : 0);
  memset(j.out, CANARY, j.out_cap);
  memcpy(j.iv, j.iv0, 16);

  load_key(&j, j.decrypt);
  padlock_reload_key(); /* new key: §1.8 */
  int calls;
  const struct xcrypt_regs r = run(&j, j.in, j.out, &calls);

  const size_t out_len = j.digest ? 16 : j.len;
  size_t overrun = 0;
  for (size_t i = out_len; i < j.out_cap; ++i) overrun += j.out[i] != CANARY;
  print_hex("out", j.out, out_len);
  printf("calls=%d\n", calls);
  if (calls == 1) {
    printf("ecx=%lu\n", (unsigned long)r.ecx);
    printf("esi_adv=%ld\n", (long)(r.esi - (uintptr_t)j.in));
    printf("edi_adv=%ld\n", (long)(r.edi - (uintptr_t)j.out));
    print_location("eax", r.eax, &j);
    if (inside_buffers(r.eax, &j)) print_hex("eaxmem", (const uint8_t *)r.eax, 16);
  }
  print_hex("ivmem", j.iv, 16);
  printf("overrun=%lu\n", (unsigned long)overrun);

  if (j.roundtrip && !j.digest) {
    uint8_t *back = pool_alloc(j.len + SLACK, 16, j.misalign ? 3 : 0);
    load_key(&j, !j.decrypt); /* same key and cw buffers: the reload is required */
    memcpy(j.iv, j.iv0, 16);
    padlock_reload_key();
    run(&j, j.out, back, &calls);
    print_hex("back", back, j.len);
  }
  fflush(stdout);
  return 0;
}
