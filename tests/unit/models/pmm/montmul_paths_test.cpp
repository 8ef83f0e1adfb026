// The two arithmetic paths of the PMM model (§5.1, §5.2, §6.5): the word-serial hardware
// loop and the GMP fast path must agree bit for bit (T, inner-loop lengths, quotient
// digits, clocks), stopped at any pass; a wrong mZeroPrime must give the hardware
// recurrence (computed independently with mpz).
#include <gtest/gtest.h>

#include "models/pmm/montmul_core.hpp"
#include "tests/unit/models/pmm/pmm_rig.hpp"

namespace padlock::test {
namespace {

struct Trace {
  std::vector<unsigned> lens;
  unsigned stop_after = ~0u;
};

bool record(void* p, unsigned len) {
  auto& t = *static_cast<Trace*>(p);
  t.lens.push_back(len);
  return t.lens.size() == t.stop_after;
}

struct Job {
  std::vector<uint32_t> a, b, m, t;
  MontmulJob job;
  Job(const Operands& op, unsigned n, uint32_t mzp) {
    a = to_words(op.a, n);
    b = to_words(op.b, n);
    m = to_words(op.m, n);
    t.assign(n + kMontmulExtraWords, 0);
    job.n = n;
    job.a = a.data();
    job.b = b.data();
    job.m = m.data();
    job.t = t.data();
    job.m_zero_prime = mzp;
    job.len = n;
  }
};

// §6.5: the fast path and the word-serial loop agree on T, the inner-loop length of every
// pass (§5.2 factor 1) and the last quotient digit, from any resume point.
TEST(MontmulPaths, FastEqualsWordSerialEverywhere_Sec5_2_Sec6_5) {
  gmp_randstate_t rs;
  gmp_randinit_mt(rs);
  gmp_randseed_ui(rs, 4242);
  int extended = 0;
  for (unsigned bits = 256; bits <= 4096; bits += 128) {
    for (int round = 0; round < 4; ++round) {
      SCOPED_TRACE(bits);
      const unsigned n = bits / 32;
      Operands op = random_operands(rs, bits);
      if (round == 3) {  // A near M: overflow (T >= 2^[M]) in most runs
        mpz_sub_ui(op.a, op.m, 1 + round);
        mpz_sub_ui(op.b, op.m, 2);
      }
      const uint32_t mzp = m_zero_prime(static_cast<uint32_t>(mpz_getlimbn(op.m, 0)));
      Job ws(op, n, mzp), fast(op, n, mzp);
      ASSERT_TRUE(montmul_fast_applies(fast.job));
      Trace tw, tf;
      ASSERT_EQ(montmul_word_serial(ws.job, 0, record, &tw), n);
      ASSERT_EQ(montmul_fast(fast.job, 0, record, &tf), n);
      EXPECT_EQ(ws.t, fast.t);
      EXPECT_EQ(tw.lens, tf.lens);
      EXPECT_EQ(ws.job.len, fast.job.len);
      EXPECT_EQ(ws.job.last_u, fast.job.last_u);
      EXPECT_EQ(mpz_cmp(from_words(ws.t.data(), n + 4), montgomery_reference(op.a, op.b, op.m, n)),
                0);
      extended += ws.job.len > n;

      // Stop both after an odd and an even number of passes, resume each with the other.
      for (unsigned stop : {1u, 2u, n / 2 + 1, n - 1}) {
        Job a1(op, n, mzp), b1(op, n, mzp);
        Trace sa, sb;
        sa.stop_after = sb.stop_after = stop;
        ASSERT_EQ(montmul_word_serial(a1.job, 0, record, &sa), stop);
        ASSERT_EQ(montmul_fast(b1.job, 0, record, &sb), stop);
        ASSERT_EQ(a1.t, b1.t) << "partial product after " << stop << " passes";
        ASSERT_EQ(a1.job.len, b1.job.len);
        ASSERT_EQ(a1.job.last_u, b1.job.last_u);
        Trace ra, rb;
        ASSERT_EQ(montmul_fast(a1.job, stop, record, &ra), n);
        ASSERT_EQ(montmul_word_serial(b1.job, stop, record, &rb), n);
        EXPECT_EQ(a1.t, ws.t);
        EXPECT_EQ(b1.t, ws.t);
      }
    }
  }
  EXPECT_GT(extended, 10);  // the overflow case was exercised
  gmp_randclear(rs);
}

// §5.2 factor 1 at the boundary: the fast path reads the first pass's overflow off the top
// limbs and falls back to an exact sum when the carry from below could decide it. Partial
// products exactly at 2^(32n) (overflow) and one below (none) after the first pass: T0 is
// chosen so that T0 + A*b0 + M*u0 = 2^(32n+32) + e with u0 = 2^32 - 1 (e = 0 or -2^32).
TEST(MontmulPaths, FastOverflowCheckAtTheBoundary_Sec5_2) {
  for (unsigned bits : {256u, 1024u}) {
    for (int e_words : {0, -1}) {
      SCOPED_TRACE(bits);
      const unsigned n = bits / 32;
      Operands op;
      mpz_setbit(op.m, bits);
      mpz_sub_ui(op.m, op.m, 1);  // M = 2^(32n) - 1, mZeroPrime = 1
      mpz_set_ui(op.a, 2 * 0x100000000ul + 5);
      mpz_set_ui(op.b, 0x9E3779B97F4A7C15ul);
      mpz_mul_2exp(op.b, op.b, 32);
      mpz_add_ui(op.b, op.b, 1);  // b0 = 1
      Z s, t0, x;
      mpz_setbit(s, bits + 32);
      if (e_words != 0) mpz_sub_ui(s, s, 0x100000000ul);
      mpz_set(t0, s);
      mpz_mul_ui(x, op.m, 0xFFFFFFFFul);
      mpz_sub(t0, t0, x);
      mpz_sub(t0, t0, op.a);  // b0 = 1
      ASSERT_GE(mpz_sgn(t0.v), 0);
      ASSERT_LT(mpz_sizeinbase(t0, 2), static_cast<size_t>(bits) + 1);
      Job ws(op, n, 1), fast(op, n, 1);
      const auto t0w = to_words(t0, n + 4);
      ws.t = t0w;
      fast.t = t0w;
      ws.job.t = ws.t.data();
      fast.job.t = fast.t.data();
      ASSERT_TRUE(montmul_fast_applies(fast.job));
      Trace tw, tf;
      montmul_word_serial(ws.job, 0, record, &tw);
      montmul_fast(fast.job, 0, record, &tf);
      EXPECT_EQ(tw.lens, tf.lens);
      EXPECT_EQ(ws.t, fast.t);
      EXPECT_EQ(tw.lens[1], e_words == 0 ? n + 1 : n);  // extended after pass 0 iff overflow
    }
  }
}

// §6.5: with a wrong mZeroPrime the hardware still drops the low word of every pass; the
// model follows that recurrence, and only the word-serial path is used.
TEST(MontmulPaths, WrongMZeroPrimeFollowsHardwareRecurrence_Sec6_5) {
  gmp_randstate_t rs;
  gmp_randinit_mt(rs);
  gmp_randseed_ui(rs, 99);
  for (unsigned bits : {256u, 640u, 1024u, 2048u}) {
    SCOPED_TRACE(bits);
    const unsigned n = bits / 32;
    const Operands op = random_operands(rs, bits);
    const uint32_t good = m_zero_prime(static_cast<uint32_t>(mpz_getlimbn(op.m, 0)));
    for (uint32_t bad : {good + 1, good ^ 0x80000000u, 0u}) {
      MontmulRig rig;
      rig.setup(op.a, op.b, op.m, bits);
      rig.context(bad, MontmulRig::kA, MontmulRig::kB, MontmulRig::kT, MontmulRig::kM,
                  MontmulRig::kScratch);
      ASSERT_EQ(rig.exec().status, Status::Completed);
      const Z want = recurrence_reference(op.a, op.b, op.m, bad, n);
      EXPECT_EQ(mpz_cmp(rig.get(MontmulRig::kT, n + 4), want), 0);
      Job j(op, n, bad);
      EXPECT_FALSE(montmul_fast_applies(j.job));
    }
  }
  gmp_randclear(rs);
}

// The instruction gives the same T, registers and clocks on either path.
TEST(MontmulPaths, InstructionSameOnBothPaths_Sec5_1) {
  gmp_randstate_t rs;
  gmp_randinit_mt(rs);
  gmp_randseed_ui(rs, 7);
  for (unsigned bits : {256u, 1024u, 2304u, 4096u}) {
    const Operands op = random_operands(rs, bits);
    uint64_t cycles[2];
    Z t[2];
    for (int forced = 0; forced < 2; ++forced) {
      montmul_force_word_serial(forced == 1);
      MontmulRig rig;
      rig.setup(op.a, op.b, op.m, bits);
      const Outcome o = rig.exec();
      ASSERT_EQ(o.status, Status::Completed);
      cycles[forced] = o.cycles;
      t[forced] = rig.get(MontmulRig::kT, bits / 32 + 4);
    }
    montmul_force_word_serial(false);
    EXPECT_EQ(cycles[0], cycles[1]) << bits;
    EXPECT_EQ(mpz_cmp(t[0], t[1]), 0) << bits;
  }
  gmp_randclear(rs);
}

}  // namespace
}  // namespace padlock::test
