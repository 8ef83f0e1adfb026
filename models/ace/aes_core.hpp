// The AES core behind ACE (§3.1, §3.2): round keys in the order the cipher consumes them,
// FIPS-197 key expansion for any round count, and bulk mode kernels with two host
// implementations (AES-NI and portable) that tests can select.
#pragma once

#include <cstddef>
#include <cstdint>

namespace padlock::ace {

inline constexpr unsigned kMaxRounds = 16;      // §3.2: ROUND = 0 means 16 rounds
inline constexpr unsigned kKeyRamEntries = 16;  // §3.2: KEYGN = 1 loads sixteen 128-bit values

// Round keys in cipher-use order. For the forward cipher k[i] is FIPS-197 w[4i..4i+3]; for
// the inverse cipher it is the equivalent-inverse-cipher dw[4i..4i+3] (FIPS-197 Fig. 15):
// the last encryption round key first, InvMixColumns applied to the middle ones.
struct RoundKeys {
  alignas(16) uint8_t k[kMaxRounds + 1][16] = {};
  unsigned rounds = 10;
  // INTER (§3.2, our choice): every round is a full round, so the result is the state
  // after `rounds` complete rounds (FIPS-197 Appendix C round[r+1].start / .istart).
  bool full_last = false;
};

// FIPS-197 KeyExpansion of a 128-bit key extended to `rounds` (1..16): rcon continues
// 01 02 04 ... 36 6c d8 ab 4d 9a 2f (§3.2: "for all round counts that can be specified").
void expand_key128(const uint8_t key[16], unsigned rounds, RoundKeys& enc);
// Equivalent inverse cipher schedule (FIPS-197 §5.3.5) from a forward schedule.
void inverse_schedule(const RoundKeys& enc, RoundKeys& dec);
// InvMixColumns of one 16-byte round key (FIPS-197 §5.3.3).
void inv_mix_columns(const uint8_t in[16], uint8_t out[16]);

// Bulk kernels. `iv` is the chaining value in and out: the last ciphertext (CBC/CFB
// encrypt), the last input ciphertext (CBC/CFB decrypt), the last keystream block (OFB)
// or the counter block (CTR). `out_stride` is 16, or 0 in digest mode (§3.1 DGEST: every
// block lands on the same 16 bytes). Kernels must read block i before writing block i,
// so in == out is allowed.
struct Kernels {
  const char* name;
  void (*ecb_enc)(const RoundKeys& rk, const uint8_t* in, uint8_t* out, size_t n);
  void (*ecb_dec)(const RoundKeys& rk, const uint8_t* in, uint8_t* out, size_t n);
  void (*cbc_enc)(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n,
                  size_t out_stride);
  void (*cbc_dec)(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n,
                  size_t out_stride);
  void (*cfb_enc)(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n,
                  size_t out_stride);
  void (*cfb_dec)(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n,
                  size_t out_stride);
  void (*ofb)(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n);
  // §3.1 CTR: bytes 14-15 are a big-endian 16-bit counter, incremented once per block with
  // no carry into byte 13 (App. A 12).
  void (*ctr)(const RoundKeys& rk, uint8_t ctr[16], const uint8_t* in, uint8_t* out, size_t n);
};

enum class Backend : uint8_t { Auto, Portable, AesNi };

const Kernels& portable_kernels();
// nullptr when the host has no AES-NI (checked with CPUID at run time).
const Kernels* aesni_kernels();
// Auto picks AES-NI when present. Returns nullptr only for AesNi on a host without it.
const Kernels* kernels_for(Backend b);

}  // namespace padlock::ace
