// Test rig for REP MONTMUL: a Padlock on FlatMemory with the Montgomery context and its
// buffers (§5.1), the instruction decoded from its bytes, and GMP mpz as the independent
// reference.
#pragma once

#include <gmp.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/flat_memory.hpp"
#include "models/padlock.hpp"

namespace padlock::test {

// RAII mpz.
struct Z {
  mpz_t v;
  Z() { mpz_init(v); }
  explicit Z(unsigned long x) { mpz_init_set_ui(v, x); }
  Z(const Z& o) { mpz_init_set(v, o.v); }
  Z& operator=(const Z& o) {
    mpz_set(v, o.v);
    return *this;
  }
  ~Z() { mpz_clear(v); }
  operator mpz_ptr() { return v; }
  operator mpz_srcptr() const { return v; }
};

inline Z from_words(const uint32_t* w, size_t n) {
  Z z;
  mpz_import(z, n, -1, 4, 0, 0, w);
  return z;
}
inline std::vector<uint32_t> to_words(mpz_srcptr z, size_t n) {
  std::vector<uint32_t> w(n, 0);
  size_t count = 0;
  if (mpz_sizeinbase(z, 2) <= 32 * n) mpz_export(w.data(), &count, -1, 4, 0, 0, z);
  return w;
}

// -M^-1 mod 2^32 (§6.4 mZeroPrime).
inline uint32_t m_zero_prime(uint32_t m0) {
  uint32_t inv = 1;
  for (int i = 0; i < 5; ++i) inv *= 2 - m0 * inv;  // Newton: inverse mod 2^32
  return 0u - inv;
}

// The exact unreduced Montgomery product for a correct mZeroPrime with T initially zero:
// T = (A*B + U*M) / R with U = A*B*(-M^-1) mod R, R = 2^(32n).
inline Z montgomery_reference(mpz_srcptr a, mpz_srcptr b, mpz_srcptr m, unsigned n) {
  Z r, ab, minv, u, t;
  mpz_setbit(r, 32 * n);
  mpz_mul(ab, a, b);
  mpz_invert(minv, m, r);
  mpz_sub(minv, r, minv);  // -M^-1 mod R
  mpz_mul(u, ab, minv);
  mpz_fdiv_r_2exp(u, u, 32 * n);
  mpz_mul(t, u, m);
  mpz_add(t, t, ab);
  EXPECT_EQ(mpz_divisible_2exp_p(t, 32 * n), 1);
  mpz_fdiv_q_2exp(t, t, 32 * n);
  return t;
}

// The hardware recurrence written with mpz, for any mZeroPrime: per 32-bit word b of B,
// u = ((T mod 2^32) + A0*b) * m' mod 2^32, T = floor((T + A*b + u*M) / 2^32). Valid when no
// carry leaves T's extra words (T starts at 0 and A, B, M < 2^[M]).
inline Z recurrence_reference(mpz_srcptr a, mpz_srcptr b, mpz_srcptr m, uint32_t mzp, unsigned n) {
  Z t, x;
  const uint32_t a0 = static_cast<uint32_t>(mpz_getlimbn(a, 0));
  for (unsigned k = 0; k < n; ++k) {
    Z bk;
    mpz_tdiv_q_2exp(bk, b, 32 * k);
    mpz_fdiv_r_2exp(bk, bk, 32);
    const uint32_t bw = static_cast<uint32_t>(mpz_get_ui(bk));
    const uint32_t t0 = static_cast<uint32_t>(mpz_getlimbn(t, 0));
    const uint32_t u = (t0 + a0 * bw) * mzp;
    mpz_addmul_ui(t, a, bw);
    mpz_addmul_ui(t, m, u);
    mpz_fdiv_q_2exp(t, t, 32);
  }
  return t;
}

class MontmulRig {
 public:
  static constexpr uint64_t kCtx = 0x10003;  // §5.1: the context pointer need not be aligned
  static constexpr uint64_t kA = 0x100000;
  static constexpr uint64_t kB = 0x102000;
  static constexpr uint64_t kM = 0x104000;
  static constexpr uint64_t kT = 0x106000;
  static constexpr uint64_t kScratch = 0x10A000;

  explicit MontmulRig(const char* model = "esther-c5j")
      : cpu_(*find_cpu_model(model)), padlock_(cpu_) {
    mem.map(0x10000, 4096);
    mem.map(0x100000, 0x10000);
    env.diag = &diag_;
  }

  Padlock& padlock() { return padlock_; }
  const CpuModel& cpu() const { return cpu_; }

  // Lays out a context: mZeroPrime, A, B, T, M, Scratch (§5.1, 32-bit fields).
  void context(uint32_t mzp, uint64_t a, uint64_t b, uint64_t t, uint64_t m, uint64_t scratch,
               uint64_t at = kCtx) {
    const uint32_t c[6] = {mzp,         uint32_t(a), uint32_t(b),
                           uint32_t(t), uint32_t(m), uint32_t(scratch)};
    std::memcpy(mem.host(at, 24), c, 24);
  }
  void put(uint64_t va, mpz_srcptr z, unsigned words) {
    const auto w = to_words(z, words);
    std::memcpy(mem.host(va, 4 * words), w.data(), 4 * words);
  }
  Z get(uint64_t va, unsigned words) {
    return from_words(reinterpret_cast<const uint32_t*>(mem.host(va, 4 * words)), words);
  }
  std::vector<uint32_t> words(uint64_t va, unsigned n) {
    std::vector<uint32_t> w(n);
    std::memcpy(w.data(), mem.host(va, 4 * n), 4 * n);
    return w;
  }

  // A standard call: operands at kA/kB/kM, T (zeroed with its extra 128 bits) at t_va.
  void setup(mpz_srcptr a, mpz_srcptr b, mpz_srcptr m, unsigned bits, uint64_t t_va = kT,
             int mzp_delta = 0) {
    const unsigned n = bits / 32;
    put(kA, a, n);
    put(kB, b, n);
    put(kM, m, n);
    std::memset(mem.host(t_va, 4 * n + 16), 0, 4 * n + 16);
    const uint32_t m0 = static_cast<uint32_t>(mpz_getlimbn(m, 0));
    context(m_zero_prime(m0) + mzp_delta, kA, kB, t_va, kM, kScratch);
    s.gpr[static_cast<int>(Gpr::AX)] = 0;
    s.gpr[static_cast<int>(Gpr::CX)] = bits;
    s.gpr[static_cast<int>(Gpr::SI)] = kCtx;
  }

  Outcome exec(isa::CpuMode mode = isa::CpuMode::Protected32, std::vector<uint8_t> prefixes = {}) {
    std::vector<uint8_t> bytes = prefixes;
    for (uint8_t x : {0xF3, 0x0F, 0xA6, 0xC0}) bytes.push_back(x);
    last_decoded = isa::decode(bytes.data(), bytes.size(), mode);
    const Outcome o = padlock_.execute(last_decoded, s, mem, env);
    env.now += o.cycles;
    return o;
  }

  // Runs to completion, interrupting every `every` clocks; returns the executions.
  int exec_interrupted(uint64_t every, uint64_t* total_cycles = nullptr) {
    int n = 0;
    uint64_t total = 0;
    for (;;) {
      env.interrupt_at = env.now + every;
      const Outcome o = exec();
      total += o.cycles;
      ++n;
      if (o.status != Status::Interrupted) break;
    }
    env.interrupt_at = std::numeric_limits<uint64_t>::max();
    if (total_cycles != nullptr) *total_cycles = total;
    return n;
  }

  int diag_count(Diag d) const {
    int c = 0;
    for (Diag x : diag_.seen) c += x == d;
    return c;
  }

  FlatMemory mem;
  ArchState s;
  ExecEnv env;
  isa::Decoded last_decoded;

 private:
  struct Sink : DiagnosticSink {
    std::vector<Diag> seen;
    void report(Diag d, uint64_t) override { seen.push_back(d); }
  } diag_;
  const CpuModel& cpu_;
  Padlock padlock_;
};

// Random operands with a fixed seed: an odd M of exactly `bits` bits (top bit set, as RSA
// moduli have) or with the top bit clear, and A, B < M.
struct Operands {
  Z a, b, m;
};
inline Operands random_operands(gmp_randstate_t rs, unsigned bits, bool top_bit = true) {
  Operands o;
  mpz_urandomb(o.m, rs, bits);
  mpz_setbit(o.m, 0);
  if (top_bit) {
    mpz_setbit(o.m, bits - 1);
  } else {
    mpz_clrbit(o.m, bits - 1);
    mpz_setbit(o.m, bits - 2);
  }
  mpz_urandomm(o.a, rs, o.m);
  mpz_urandomm(o.b, rs, o.m);
  return o;
}

}  // namespace padlock::test
