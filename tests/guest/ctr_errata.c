/* guest_ctr_errata: the REP XCRYPTCTR counter erratum of Esther stepping 8, shaped like
 * CTR_ERRATA.C (§3.1 ERRATA, §6.6).
 *
 * usage: ctr_errata [BLOCKS [TESTS]]       defaults: 256 blocks, 1 test
 *
 * Key: the SP 800-38A AES-128 key, hardware-expanded (control word 0x00A); initial
 * counter block f0 f1 ... ff, so the 16-bit big-endian counter (bytes 14-15) starts at
 * 0xFEFF. pushf/popf once, before the first REP XCRYPTCTR (the key never changes).
 *   1. reference: ECX = 1, executed BLOCKS times, carrying ESI/EDI/EAX from one
 *      instruction to the next (stated by the guide to be unaffected by the erratum)
 *   2. per test: reset the IV, one REP XCRYPTCTR with ECX = BLOCKS; read the counter
 *      back; compare it with the expectation "initial + BLOCKS + (1 if BLOCKS is even)"
 *      and the ciphertext with the reference; on a ciphertext mismatch retry (§6.6
 *      workaround), at most 10 times.
 *   3. (CTR_ERRATA.C phase 3) per test: one call from a fresh IV; tally ciphertext errors,
 *      counter mismatches and whether every error coincides with a mismatch (allowing for
 *      the erratum); 4. the workaround (re-execute until the counter is right) must end
 *      with the right ciphertext. Interrupts come from padlock-emu --irq-hz.
 * Output: counter_start, counter_ref, counter_single, expect_errata, expect_clean,
 * match (single-call ciphertext == reference), retries, the phase 3/4 tallies, and out
 * (the ciphertext) when BLOCKS <= 64. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_util.h"
#include "padlock.h"

enum { MAX_BLOCKS = 10000 };

static unsigned counter(const uint8_t *iv) { return (unsigned)(iv[14] << 8 | iv[15]); }

int main(int argc, char **argv) {
  unsigned long blocks = argc > 1 ? strtoul(argv[1], NULL, 0) : 256;
  unsigned long tests = argc > 2 ? strtoul(argv[2], NULL, 0) : 1;
  if (blocks == 0 || blocks > MAX_BLOCKS) die("BLOCKS must be 1..10000");

  uint8_t *cw = pool_alloc(128, 16, 0); /* "Always allocate 128 bytes at the control word" */
  uint8_t *key = pool_alloc(16, 16, 0);
  uint8_t *iv = pool_alloc(16, 16, 0);
  uint8_t *plain = pool_alloc(16 * blocks + 256, 16, 0);
  uint8_t *ref = pool_alloc(16 * blocks, 16, 0);
  uint8_t *test = pool_alloc(16 * blocks, 16, 0);
  uint8_t iv0[16];
  const uint32_t cw_word = 0x00A;
  memcpy(cw, &cw_word, 4);
  parse_hex("2b7e151628aed2a6abf7158809cf4f3c", key, 16);
  parse_hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", iv0, 16);
  for (unsigned long i = 0; i < 16 * blocks; ++i) plain[i] = (uint8_t)(i * 131 + 17);

  padlock_reload_key();

  /* 1. reference, one block per instruction */
  memcpy(iv, iv0, 16);
  {
    const uint8_t *si = plain;
    uint8_t *di = ref;
    for (unsigned long b = 0; b < blocks; ++b) {
      const struct xcrypt_regs r = padlock_xcrypt_ctr(si, di, key, iv, cw, 1);
      si = (const uint8_t *)r.esi;
      di = (uint8_t *)r.edi;
    }
  }
  const unsigned counter_ref = counter(iv);

  /* 2. a single REP XCRYPTCTR per test */
  const unsigned start = counter(iv0);
  const unsigned expect_clean = (start + (unsigned)blocks) & 0xFFFF;
  const unsigned expect_errata = (expect_clean + (blocks % 2 == 0)) & 0xFFFF;
  unsigned counter_single = 0, retries = 0;
  int match = 0;
  for (unsigned long t = 0; t < tests; ++t) {
    for (unsigned tries = 0;; ++tries) { /* at most 10 retries per test */
      memcpy(iv, iv0, 16);
      padlock_xcrypt_ctr(plain, test, key, iv, cw, blocks);
      counter_single = counter(iv);
      match = memcmp(test, ref, 16 * blocks) == 0;
      if (match || tries >= 10) break;
      ++retries;
    }
  }

  /* 3. error detection, as CTR_ERRATA.C phase 3 (§6.6): per test one REP XCRYPTCTR from a
   * fresh IV; tally counter mismatches (against the expectation allowing for the erratum,
   * and against the clean count) and ciphertext errors; an error counts as detected when
   * the counter mismatched (allowing for the erratum) in the same test. The workaround
   * (re-execute until the counter is right) must end with the right ciphertext. */
  unsigned long cipher_errors = 0, mismatch_errata = 0, mismatch_clean = 0, undetected = 0,
                false_alarms = 0, workaround_bad = 0, workaround_retries = 0;
  for (unsigned long t = 0; t < tests; ++t) {
    memcpy(iv, iv0, 16);
    padlock_xcrypt_ctr(plain, test, key, iv, cw, blocks);
    const unsigned c = counter(iv);
    const int bad = memcmp(test, ref, 16 * blocks) != 0;
    cipher_errors += bad;
    mismatch_errata += c != expect_errata;
    mismatch_clean += c != expect_clean;
    undetected += bad && c == expect_errata;
    false_alarms += !bad && c != expect_errata;
    /* 4. the workaround: reset the IV and re-execute until the counter is as expected */
    unsigned tries = 0;
    unsigned cc = c;
    while (cc != expect_errata && tries < 1000) {
      memcpy(iv, iv0, 16);
      padlock_xcrypt_ctr(plain, test, key, iv, cw, blocks);
      cc = counter(iv);
      ++tries;
    }
    workaround_retries += tries;
    workaround_bad += memcmp(test, ref, 16 * blocks) != 0 && cc == expect_errata;
  }

  printf("tests=%lu\n", tests);
  printf("cipher_errors=%lu\n", cipher_errors);
  printf("mismatch_errata=%lu\n", mismatch_errata);
  printf("mismatch_clean=%lu\n", mismatch_clean);
  printf("undetected=%lu\n", undetected);
  printf("false_alarms=%lu\n", false_alarms);
  printf("workaround_retries=%lu\n", workaround_retries);
  printf("workaround_bad=%lu\n", workaround_bad);
  printf("blocks=%lu\n", blocks);
  printf("counter_start=%04x\n", start);
  printf("counter_ref=%04x\n", counter_ref);
  printf("counter_single=%04x\n", counter_single);
  printf("expect_clean=%04x\n", expect_clean);
  printf("expect_errata=%04x\n", expect_errata);
  printf("match=%d\nretries=%u\n", match, retries);
  if (blocks <= 64) {
    print_hex("in", plain, 16 * blocks);
    print_hex("out", test, 16 * blocks);
  }
  return 0;
}
