// The fast REP MONTMUL path: the same outer loop on 64-bit GMP limbs, two 32-bit hardware
// passes per limb (one mpn_addmul_1 each for A and M with 64-bit multipliers). With a correct
// mZeroPrime every pass divides exactly, so T after each pass equals the word-serial T; an overflow
// (T >= 2^[M]) is read off the top limbs, which gives the same inner-loop lengths for the clocks
// (§5.2 factor 1). Used only where montmul_fast_applies(); tests cross-check it against
// montmul_word_serial.
#include <gmp.h>

#include <cstring>

#include "models/pmm/montmul_core.hpp"

namespace padlock {

namespace {

constexpr unsigned kMaxLimbs = kMontmulMaxWords / 2;

// w[0 .. nl+2) += x[0 .. nl) * v
inline void add_mul(mp_limb_t* w, const mp_limb_t* x, unsigned nl, mp_limb_t v) {
  const mp_limb_t carry = mpn_addmul_1(w, x, nl, v);
  mpn_add_1(w + nl, w + nl, 2, carry);
}

}  // namespace

bool montmul_fast_applies(const MontmulJob& job) {
  if (GMP_NUMB_BITS != 64 || !montmul_m_zero_prime_correct(job)) return false;
  if (job.len > job.n + 1) return false;
  for (unsigned i = job.len; i < job.n + kMontmulExtraWords; ++i) {
    if (job.t[i] != 0) return false;
  }
  return true;
}

unsigned montmul_fast(MontmulJob& job, unsigned first_pass, MontmulPassHook hook, void* ctx) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "32-bit words viewed as limbs");
  using u128 = unsigned __int128;
  thread_local mp_limb_t a[kMaxLimbs], m[kMaxLimbs], w[kMaxLimbs + 2], tmp[kMaxLimbs + 2];
  const unsigned n = job.n;
  const unsigned nl = n / 2;  // n is a multiple of 4 (§5.1: ECX mod 128 = 0)
  std::memcpy(a, job.a, n * 4);
  std::memcpy(m, job.m, n * 4);
  std::memcpy(w, job.t, (n + kMontmulExtraWords) * 4);  // nl + 2 limbs

  const uint32_t a0 = job.a[0];
  const uint32_t mzp = job.m_zero_prime;
  bool extended = job.len > n;
  bool odd = false;  // w holds 2^32 * T: the last pass ended mid-limb
  unsigned k = first_pass;
  auto quotient = [&](uint32_t t0, uint32_t b) { return (t0 + a0 * b) * mzp; };

  while (k < n) {
    if (odd || k + 1 == n) {
      // One pass on its own (to or from the middle of a limb).
      const uint32_t b = job.b[k];
      const unsigned len_used = extended ? n + 1 : n;
      bool overflow;
      uint32_t u;
      if (!odd) {
        u = quotient(static_cast<uint32_t>(w[0]), b);
        add_mul(w, a, nl, b);
        add_mul(w, m, nl, u);
        overflow = (w[nl] >> 32) != 0 || w[nl + 1] != 0;  // w / 2^32 >= 2^(32n)
      } else {
        u = quotient(static_cast<uint32_t>(w[0] >> 32), b);
        add_mul(w, a, nl, mp_limb_t{b} << 32);
        add_mul(w, m, nl, mp_limb_t{u} << 32);
        overflow = w[nl + 1] != 0;  // w / 2^64 >= 2^(32n)
        std::memmove(w, w + 1, (nl + 1) * sizeof(mp_limb_t));
        w[nl + 1] = 0;
      }
      odd = !odd;
      extended = extended || overflow;
      job.last_u = u;
      ++k;
      if (hook(ctx, len_used)) break;
      continue;
    }
    // Two passes from a limb boundary: w += A*(b0 + b1*2^32) + M*(u0 + u1*2^32), then / 2^64.
    const uint32_t b0 = job.b[k], b1 = job.b[k + 1];
    const uint32_t u0 = quotient(static_cast<uint32_t>(w[0]), b0);
    // Word 1 of T + A*b0 + M*u0 (the next T[0]) depends on limb 0 only.
    const uint64_t low = static_cast<uint64_t>(u128{w[0]} + u128{a[0]} * b0 + u128{m[0]} * u0);
    const uint32_t u1 = quotient(static_cast<uint32_t>(low >> 32), b1);
    // Overflow after the first pass: (T + A*b0 + M*u0) >= 2^(32n+32). The top three limbs
    // give it to within the carry from below (< 2^34 at that scale); decide exactly if close.
    bool overflow0;
    if (w[nl + 1] != 0 || (w[nl] >> 32) != 0) {
      overflow0 = true;
    } else {
      const u128 top =
          u128{w[nl - 1]} + u128{a[nl - 1]} * b0 + u128{m[nl - 1]} * u0 + (u128{w[nl]} << 64);
      const u128 limit = u128{1} << 96;
      if (top >= limit) {
        overflow0 = true;
      } else if (top + (u128{1} << 34) < limit) {
        overflow0 = false;
      } else {
        std::memcpy(tmp, w, (nl + 2) * sizeof(mp_limb_t));
        add_mul(tmp, a, nl, b0);
        add_mul(tmp, m, nl, u0);
        overflow0 = (tmp[nl] >> 32) != 0 || tmp[nl + 1] != 0;
      }
    }
    const unsigned len0 = extended ? n + 1 : n;
    extended = extended || overflow0;
    job.last_u = u0;
    ++k;
    if (hook(ctx, len0)) {  // stop after the first pass: apply it alone
      add_mul(w, a, nl, b0);
      add_mul(w, m, nl, u0);
      odd = true;
      break;
    }
    add_mul(w, a, nl, b0 | (mp_limb_t{b1} << 32));
    add_mul(w, m, nl, u0 | (mp_limb_t{u1} << 32));
    const bool overflow1 = w[nl + 1] != 0;  // w / 2^64 >= 2^(32n)
    std::memmove(w, w + 1, (nl + 1) * sizeof(mp_limb_t));
    w[nl + 1] = 0;
    const unsigned len1 = extended ? n + 1 : n;
    extended = extended || overflow1;
    job.last_u = u1;
    ++k;
    if (hook(ctx, len1)) break;
  }
  if (odd) mpn_rshift(w, w, nl + 2, 32);
  std::memcpy(job.t, w, (n + kMontmulExtraWords) * 4);
  job.len = extended ? n + 1 : n;
  return k;
}

}  // namespace padlock
