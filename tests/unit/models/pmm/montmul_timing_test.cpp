// §5.2 REP MONTMUL timing: C = 1024 * (4N^2 + K1*N) + K2, N = [M]/1024, K2 = 35,
// 0.56 <= K1 <= 1.06 with K1 computed from the operands (docs/fidelity/pmm.md): factor 1
// overflow (one extra inner step per pass once it occurred), factor 2 the carry store
// crossing a cache line, factor 3 the 15/16-clock inner loop (minimum K1 at [M] = 2304).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/unit/models/pmm/pmm_rig.hpp"

namespace padlock::test {
namespace {

constexpr double kK2 = 35;  // §5.2

double k1_of(uint64_t cycles, unsigned bits) {
  const double N = bits / 1024.0;
  return ((static_cast<double>(cycles) - kK2) / 1024.0 - 4 * N * N) / N;
}
// One clock of rounding in C is 1/(1024 N) in K1.
double k1_tol(unsigned bits) {
  return 0.5 / bits + 1e-9;
}

// Factor 3 as documented: the outer-loop tail (18) left after the larger of the PMM backlog
// of one clock per inner step (16 - 15, at most 18) and the pass's last inner step (16,
// §5.2: for smaller [M] the extra clocks overlap the outer loop's integer instructions);
// one stall clock once the MMX pipeline is full.
double tail_not_hidden(unsigned bits) {
  const double steps = bits / 128.0;
  return std::max(0.0, 18 - std::max(16.0, std::min(steps, 18.0))) + (steps > 18 ? 1 : 0);
}

// A T address (16-byte aligned) whose carry store at T + 4(n-1) stays in one 64-byte line.
uint64_t t_without_split(unsigned bits) {
  uint64_t t = MontmulRig::kT;
  while ((t + 4 * (bits / 32 - 1)) % 64 > 56) t += 16;
  return t;
}

// Operands that never overflow: M < 2^([M]-1) and A, B < M give T < A + M < 2^[M].
Operands benign(gmp_randstate_t rs, unsigned bits) {
  return random_operands(rs, bits, false);
}

uint64_t run(const Operands& op, unsigned bits, uint64_t t_va) {
  MontmulRig rig;
  rig.setup(op.a, op.b, op.m, bits, t_va);
  const Outcome o = rig.exec();
  EXPECT_EQ(o.status, Status::Completed);
  EXPECT_EQ(o.cycles, o.int_cycles);
  EXPECT_EQ(
      mpz_cmp(rig.get(t_va, bits / 32 + 4), montgomery_reference(op.a, op.b, op.m, bits / 32)), 0);
  return o.cycles;
}

class MontmulTiming : public ::testing::Test {
 protected:
  void SetUp() override {
    gmp_randinit_mt(rs_);
    gmp_randseed_ui(rs_, 52);
  }
  void TearDown() override { gmp_randclear(rs_); }
  gmp_randstate_t rs_;
};

// §5.2: "The smallest measured value of K1 (0.561) occurred ... with [M] = 2304." Without
// overflow or a split carry store K1 = 0.56 + tail/32, smallest (0.56) exactly at 2304.
TEST_F(MontmulTiming, K1MinimumAt2304_Sec5_2) {
  double best = 10;
  unsigned best_bits = 0;
  for (unsigned bits = 256; bits <= 8192; bits += 128) {
    SCOPED_TRACE(bits);
    const double k1 = k1_of(run(benign(rs_, bits), bits, t_without_split(bits)), bits);
    EXPECT_NEAR(k1, 0.56 + tail_not_hidden(bits) / 32, k1_tol(bits));
    EXPECT_GE(k1, 0.56 - k1_tol(bits));
    EXPECT_LE(k1, 1.06 + k1_tol(bits));
    if (k1 < best - 1e-9) {
      best = k1;
      best_bits = bits;
    }
  }
  EXPECT_EQ(best_bits, 2304u);
  EXPECT_NEAR(best, 0.56, k1_tol(2304));
}

// §5.2 factor 2: with T cache-line aligned and [M] a multiple of 512, every carry store at
// T + 4(n-1) crosses a 64-byte line: one extra inner step per pass, K1 = 1.06 (upper bound).
TEST_F(MontmulTiming, SplitCarryStoreEveryPassGivesK1Max_Sec5_2) {
  for (unsigned bits : {1024u, 2048u, 4096u}) {
    SCOPED_TRACE(bits);
    ASSERT_EQ(MontmulRig::kT % 64, 0u);
    const double k1 = k1_of(run(benign(rs_, bits), bits, MontmulRig::kT), bits);
    EXPECT_NEAR(k1, 1.06, k1_tol(bits));
  }
}

// The short-operand cost (docs/fidelity/pmm.md): 8 passes of 2 inner steps (32 clocks),
// 32 x 0.56 and the 2 tail clocks the last inner step does not hide, plus K2:
// 8 x 51.92 + 35 = 450 clocks, K1 = 0.6225 (562 and K1 = 1.06 with no tail hidden).
TEST_F(MontmulTiming, ShortOperandTailHiddenByTheLastInnerStep_Sec5_2) {
  EXPECT_EQ(run(benign(rs_, 256), 256, t_without_split(256)), 450u);
  EXPECT_DOUBLE_EQ(tail_not_hidden(2048), 2.0);  // a backlog of 16: as before
  EXPECT_DOUBLE_EQ(tail_not_hidden(2304), 0.0);  // the §5.2 minimum, 0.561
}

// §5.2 factor 1: an overflow in the first pass lengthens every later inner loop by one
// (partial) step: K1 = 0.56 + 0.5 * (n-1)/n at 2304 (plus the tail not hidden in the first
// pass at 256 bits), and never above 1.06.
TEST_F(MontmulTiming, OverflowFromFirstPass_Sec5_2) {
  for (unsigned bits : {256u, 2304u, 4096u, 32768u}) {
    SCOPED_TRACE(bits);
    const unsigned n = bits / 32;
    // M = 2^[M] - 1 (mZeroPrime = 1), A = 2^[M] - 2^32 + 1 (A0 = 1), B0 = 2^32 - 1:
    // u0 = 2^32 - 1 and T1 = (2^32-1)(A+M)/2^32 >= 2^[M].
    Operands op;
    mpz_setbit(op.m, bits);
    mpz_sub_ui(op.m, op.m, 1);
    mpz_setbit(op.a, bits);
    mpz_sub_ui(op.a, op.a, 0xFFFFFFFFul);
    mpz_urandomm(op.b, rs_, op.m);
    mpz_tdiv_q_2exp(op.b, op.b, 32);
    mpz_mul_2exp(op.b, op.b, 32);
    mpz_add_ui(op.b, op.b, 0xFFFFFFFFul);
    ASSERT_LT(mpz_cmp(op.b, op.m), 0);
    const double k1 = k1_of(run(op, bits, t_without_split(bits)), bits);
    const double r = tail_not_hidden(bits);
    const double want = 0.56 + (std::max(0.0, r) + (n - 1) * std::max(16.0, r)) / (32.0 * n);
    EXPECT_NEAR(k1, want, k1_tol(bits));
    EXPECT_LE(k1, 1.06 + k1_tol(bits));
  }
}

// §5.2: 0.56 <= K1 <= 1.06 for random operands (top bit set or not, T anywhere 16-aligned).
TEST_F(MontmulTiming, K1InRangeForRandomOperands_Sec5_2) {
  for (unsigned bits = 256; bits <= 8192; bits += 384) {
    for (int i = 0; i < 4; ++i) {
      SCOPED_TRACE(bits);
      const Operands op = random_operands(rs_, bits, i % 2 == 0);
      const double k1 = k1_of(run(op, bits, MontmulRig::kT + 16 * i), bits);
      EXPECT_GE(k1, 0.56 - k1_tol(bits));
      EXPECT_LE(k1, 1.06 + k1_tol(bits));
    }
  }
}

// §5.1: "with ECX = 4096, the time is on the order of 67,000 clocks" (editor's cross-check:
// 67,900 to 69,900 for the K1 range).
TEST_F(MontmulTiming, Ecx4096OnTheOrderOf67000Clocks_Sec5_1) {
  const uint64_t c = run(benign(rs_, 4096), 4096, t_without_split(4096));
  EXPECT_GE(c, 67863u);
  EXPECT_LE(c, 69912u);
  EXPECT_NEAR(static_cast<double>(c), 67000, 0.05 * 67000);
}

// §5.2 "Estimated RSA performance": a 2 GHz Esther with CRT does about 900 / 130 / 18
// signings per second for 1024 / 2048 / 4096-bit keys, counting only the multiplications
// (an exponent of k bits: about 1.5k REP MONTMULs on k-bit numbers; two per signing).
TEST_F(MontmulTiming, RsaEstimates_Sec5_2) {
  const struct {
    unsigned key_bits;
    double per_second;
  } rows[] = {{1024, 900}, {2048, 130}, {4096, 18}};
  for (const auto& row : rows) {
    SCOPED_TRACE(row.key_bits);
    const unsigned k = row.key_bits / 2;
    const uint64_t c = run(benign(rs_, k), k, t_without_split(k));
    const double signings = 2e9 / (2 * 1.5 * k * static_cast<double>(c));
    EXPECT_NEAR(signings, row.per_second, 0.10 * row.per_second);
  }
}

// §1.7: an interrupted REP MONTMUL pays K2 again on each re-execution; the passes are
// charged once.
TEST_F(MontmulTiming, InterruptedCostsK2PerExecution_Sec5_2) {
  const unsigned bits = 2048;
  const Operands op = random_operands(rs_, bits);
  const uint64_t whole = run(op, bits, MontmulRig::kT);
  MontmulRig rig;
  rig.setup(op.a, op.b, op.m, bits);
  uint64_t total = 0;
  const int executions = rig.exec_interrupted(1500, &total);
  ASSERT_GT(executions, 3);
  EXPECT_NEAR(static_cast<double>(total), whole + (executions - 1) * kK2, executions);
}

}  // namespace
}  // namespace padlock::test
