// The REP MONTMUL outer loop as the hardware runs it (§5.2, §6.5 MM.C, here with 32-bit
// words): for each word b of B, u = (T[0] + A[0]*b) * mZeroPrime mod 2^32, then
// T = (T + A*b + M*u) / 2^32 over the inner-loop length, the low word simply dropped, so a
// wrong mZeroPrime gives what the hardware would give. The 33-bit carry goes to
// T[len-1], T[len] (one 64-bit store, §5.2 factor 2); a non-zero T[len] lengthens the inner
// loop by one word for the following passes (§6.5).
#include <atomic>

#include "models/pmm/montmul_core.hpp"

namespace padlock {

namespace {
std::atomic<bool> g_force_word_serial{false};
}  // namespace

void montmul_force_word_serial(bool force) {
  g_force_word_serial.store(force);
}
bool montmul_word_serial_forced() {
  return g_force_word_serial.load();
}

bool montmul_m_zero_prime_correct(const MontmulJob& job) {
  return static_cast<uint32_t>(job.m_zero_prime * job.m[0]) == 0xFFFFFFFFu;
}

unsigned montmul_word_serial(MontmulJob& job, unsigned first_pass, MontmulPassHook hook,
                             void* ctx) {
  const unsigned n = job.n;
  const uint32_t* a = job.a;
  const uint32_t* m = job.m;
  uint32_t* t = job.t;
  for (unsigned k = first_pass; k < n;) {
    const uint32_t b = job.b[k];
    const unsigned len = job.len;
    // Two carry chains (A*b and M*u) keep every partial sum below 2^64.
    uint64_t x = uint64_t{a[0]} * b + t[0];
    uint64_t c1 = x >> 32;
    const uint32_t u = static_cast<uint32_t>(x) * job.m_zero_prime;
    uint64_t y = uint64_t{m[0]} * u + static_cast<uint32_t>(x);
    uint64_t c2 = y >> 32;  // the low word is dropped: the division by 2^32
    unsigned j = 1;
    for (; j < n; ++j) {
      x = uint64_t{a[j]} * b + t[j] + c1;
      c1 = x >> 32;
      y = uint64_t{m[j]} * u + static_cast<uint32_t>(x) + c2;
      c2 = y >> 32;
      t[j - 1] = static_cast<uint32_t>(y);
    }
    for (; j < len; ++j) {  // extension words: A and M have none there
      x = uint64_t{t[j]} + c1;
      c1 = x >> 32;
      y = uint64_t{static_cast<uint32_t>(x)} + c2;
      c2 = y >> 32;
      t[j - 1] = static_cast<uint32_t>(y);
    }
    const uint64_t carry = c1 + c2;  // at most 33 bits (§5.2 factor 2)
    t[len - 1] = static_cast<uint32_t>(carry);
    t[len] = static_cast<uint32_t>(carry >> 32);
    // §6.5: an overflow lengthens the inner loop; T's extra 128 bits bound it at n + 3.
    if (t[len] != 0 && len < n + kMontmulExtraWords - 1) job.len = len + 1;
    job.last_u = u;
    ++k;
    if (hook(ctx, len)) return k;
  }
  return n;
}

}  // namespace padlock
