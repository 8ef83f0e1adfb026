// The arithmetic of REP MONTMUL: the hardware's word-serial Montgomery outer loop (§5.1,
// §5.2, §6.5 MM.C with 32-bit words) and a faster GMP path that gives bit-identical T and
// per-pass inner-loop lengths when mZeroPrime is correct. Host buffers only; the unit does
// the guest memory, registers and clocks.
#pragma once

#include <cstdint>

namespace padlock {

inline constexpr unsigned kMontmulMaxWords = 32768 / 32;  // §5.1: ECX <= 32768
inline constexpr unsigned kMontmulExtraWords = 4;         // §5.1 NOTES: T has 128 extra bits

struct MontmulJob {
  unsigned n = 0;               // words in A, B and M (ECX / 32)
  const uint32_t* a = nullptr;  // least significant word first (§5.1 "Memory formats")
  const uint32_t* b = nullptr;
  const uint32_t* m = nullptr;
  uint32_t m_zero_prime = 0;  // as the software supplied it
  uint32_t* t = nullptr;      // n + 4 words: the partial product, updated in place
  unsigned len = 0;           // inner-loop length in words: n, more after an overflow
  uint32_t last_u = 0;        // quotient digit of the last pass
};

// Called after each completed outer pass with the inner-loop length that pass used.
// Returning true stops the loop there (an interrupt, §1.7).
using MontmulPassHook = bool (*)(void* ctx, unsigned len_used);

// mZeroPrime * M[0] == -1 mod 2^32 (§6.4: mZeroPrime = -M^-1 mod 2^32).
bool montmul_m_zero_prime_correct(const MontmulJob& job);
// The GMP path gives exactly the word-serial result: mZeroPrime correct, T zero from word
// `len` up, len <= n + 1, and 64-bit GMP limbs.
bool montmul_fast_applies(const MontmulJob& job);

// Run outer passes from `first_pass`; return the index of the next pass (n when done).
unsigned montmul_word_serial(MontmulJob& job, unsigned first_pass, MontmulPassHook hook, void* ctx);
unsigned montmul_fast(MontmulJob& job, unsigned first_pass, MontmulPassHook hook, void* ctx);

// Tests and benchmarks can force the word-serial path for every REP MONTMUL.
void montmul_force_word_serial(bool force);
bool montmul_word_serial_forced();

}  // namespace padlock
