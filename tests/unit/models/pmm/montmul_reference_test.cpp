// §5.1 REP MONTMUL against an independent GMP computation, through the full instruction path
// (decode, Padlock enable checks, PmmUnit on FlatMemory): every ECX from 256 to 8192 in
// steps of 128 and 32768, random operands from a fixed seed. T must be the exact unreduced
// Montgomery product (A*B + U*M) / R, hence T = A*B*R^-1 mod M with T < 2M, and the
// registers must follow §5.1.
#include <gtest/gtest.h>

#include "common/vector_file.hpp"
#include "tests/unit/models/pmm/pmm_rig.hpp"

namespace padlock::test {
namespace {

std::vector<unsigned> all_sizes() {
  std::vector<unsigned> v;
  for (unsigned bits = 256; bits <= 8192; bits += 128) v.push_back(bits);
  v.push_back(32768);
  return v;
}

class MontmulReference : public ::testing::TestWithParam<unsigned> {};

// §5.1: result in T (with its extra 128 bits), ECX = 0, EDX = 0, ESI unchanged, EFLAGS[30]
// neither read nor written (§1.8); §5.2: K1 within 0.56..1.06.
TEST_P(MontmulReference, ExactUnreducedProductAndRegisters_Sec5_1) {
  const unsigned bits = GetParam();
  const unsigned n = bits / 32;
  gmp_randstate_t rs;
  gmp_randinit_mt(rs);
  gmp_randseed_ui(rs, 0x5EED0000 + bits);
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    const Operands op = random_operands(rs, bits, round != 2);
    MontmulRig rig;
    rig.setup(op.a, op.b, op.m, bits);
    rig.s.gpr[static_cast<int>(Gpr::DX)] = 0x12345678;
    rig.s.set_eflags30(round == 1);
    const Outcome o = rig.exec();
    ASSERT_EQ(o.status, Status::Completed);

    const Z want = montgomery_reference(op.a, op.b, op.m, n);
    const Z got = rig.get(MontmulRig::kT, n + 4);
    EXPECT_EQ(mpz_cmp(got, want), 0);
    Z two_m;
    mpz_mul_2exp(two_m, op.m, 1);
    EXPECT_LT(mpz_cmp(got, two_m), 0);
    // T * R == A * B (mod M)
    Z lhs, rhs;
    mpz_mul_2exp(lhs, got, bits);
    mpz_mod(lhs, lhs, op.m);
    mpz_mul(rhs, op.a, op.b);
    mpz_mod(rhs, rhs, op.m);
    EXPECT_EQ(mpz_cmp(lhs, rhs), 0);

    EXPECT_EQ(rig.s[Gpr::CX], 0u);
    EXPECT_EQ(rig.s[Gpr::DX], 0u);
    EXPECT_EQ(rig.s[Gpr::SI], MontmulRig::kCtx);
    EXPECT_EQ(rig.s.eflags30(), round == 1);

    const double N = bits / 1024.0;
    const double k1 = ((o.cycles - 35.0) / 1024.0 - 4 * N * N) / N;
    EXPECT_GE(k1, 0.56 - 0.5 / 1024 / N);
    EXPECT_LE(k1, 1.06 + 0.5 / 1024 / N);
  }
  gmp_randclear(rs);
}

INSTANTIATE_TEST_SUITE_P(EveryEcx, MontmulReference, ::testing::ValuesIn(all_sizes()),
                         [](const ::testing::TestParamInfo<unsigned>& i) {
                           return "Bits" + std::to_string(i.param);
                         });

// Records computed outside this code base (tests/vectors/pmm/montmul.vec names the tool).
TEST(MontmulVectors, FileVectors_Sec5_1) {
  const auto records = read_vectors("pmm/montmul.vec");
  ASSERT_FALSE(records.empty());
  for (const VectorRecord& r : records) {
    SCOPED_TRACE(r.line);
    const unsigned bits = static_cast<unsigned>(r.num("Bits"));
    const unsigned n = bits / 32;
    Z a, b, m, t;
    mpz_set_str(a, r.str("A").c_str(), 16);
    mpz_set_str(b, r.str("B").c_str(), 16);
    mpz_set_str(m, r.str("M").c_str(), 16);
    mpz_set_str(t, r.str("T").c_str(), 16);
    MontmulRig rig;
    rig.setup(a, b, m, bits);
    rig.context(static_cast<uint32_t>(r.num("MZeroPrime")), MontmulRig::kA, MontmulRig::kB,
                MontmulRig::kT, MontmulRig::kM, MontmulRig::kScratch);
    ASSERT_EQ(rig.exec().status, Status::Completed);
    EXPECT_EQ(mpz_cmp(rig.get(MontmulRig::kT, n + 4), t), 0);
  }
}

// OpenSSL crypto/bn/asm/via-mont.pl (bn_mul_mont_padlock) as a client: a 64-byte aligned
// frame with the context at its base, a 32-byte scratch, T and copies of A, B, M each
// padded by 16 zero bytes; after the instruction it subtracts M over num words and uses
// T[num] as the overflow word. The result must be A*B*R^-1 mod M, fully reduced.
TEST(MontmulClients, OpensslViaMontFrame_Sec5_1) {
  gmp_randstate_t rs;
  gmp_randinit_mt(rs);
  gmp_randseed_ui(rs, 77);
  for (unsigned num : {8u, 16u, 32u, 64u, 128u}) {
    SCOPED_TRACE(num);
    const unsigned bits = num * 32;
    const Operands op = random_operands(rs, bits);
    MontmulRig rig;
    const uint64_t frame = 0x100000;  // esp after "and esp,-64"
    const uint64_t vec = 4 * num + 16;
    const uint64_t tp = frame + 64, ap = tp + vec, bp = ap + vec, np = bp + vec;
    std::memset(rig.mem.host(frame, 64 + 4 * vec), 0, 64 + 4 * vec);
    rig.put(ap, op.a, num + 4);
    rig.put(bp, op.b, num + 4);
    rig.put(np, op.m, num + 4);
    const uint32_t m0 = static_cast<uint32_t>(mpz_getlimbn(op.m, 0));
    rig.context(m_zero_prime(m0), ap, bp, tp, np, frame + 32, frame);
    rig.s.gpr[static_cast<int>(Gpr::AX)] = 0;
    rig.s.gpr[static_cast<int>(Gpr::CX)] = bits;
    rig.s.gpr[static_cast<int>(Gpr::SI)] = frame;
    ASSERT_EQ(rig.exec().status, Status::Completed);
    const auto t = rig.words(tp, num + 1);
    EXPECT_LE(t[num], 1u);  // the "upmost overflow bit"
    // rp = tp - np; keep tp when that borrows out of tp[num].
    Z tz = from_words(t.data(), num + 1), r;
    if (mpz_cmp(tz, op.m) >= 0) {
      mpz_sub(r, tz, op.m);
    } else {
      r = tz;
    }
    Z want, rinv, mod_r;
    mpz_setbit(mod_r, bits);
    mpz_invert(rinv, mod_r, op.m);
    mpz_mul(want, op.a, op.b);
    mpz_mul(want, want, rinv);
    mpz_mod(want, want, op.m);
    EXPECT_EQ(mpz_cmp(r, want), 0);
  }
  gmp_randclear(rs);
}

// §6.4 MMTEST.C: modular exponentiation with MulMon = REP MONTMUL plus the conditional
// subtraction, against mpz_powm.
TEST(MontmulClients, MmtestStyleModexp_Sec6_4) {
  gmp_randstate_t rs;
  gmp_randinit_mt(rs);
  gmp_randseed_ui(rs, 640);
  for (unsigned bits : {256u, 512u, 1024u}) {
    SCOPED_TRACE(bits);
    const unsigned n = bits / 32;
    const Operands op = random_operands(rs, bits);
    Z e;
    mpz_urandomb(e, rs, 64);
    mpz_setbit(e, 63);
    MontmulRig rig;
    auto mulmon = [&](mpz_srcptr x, mpz_srcptr y) {
      rig.setup(x, y, op.m, bits);
      EXPECT_EQ(rig.exec().status, Status::Completed);
      Z t = rig.get(MontmulRig::kT, n + 4);
      if (mpz_cmp(t, op.m) >= 0) mpz_sub(t, t, op.m);
      return t;
    };
    Z r2;
    mpz_setbit(r2, 2 * bits);
    mpz_mod(r2, r2, op.m);
    const Z a_mont = mulmon(op.a, r2);
    Z acc = a_mont;
    for (int i = static_cast<int>(mpz_sizeinbase(e, 2)) - 2; i >= 0; --i) {
      acc = mulmon(acc, acc);
      if (mpz_tstbit(e, i)) acc = mulmon(acc, a_mont);
    }
    const Z one(1);
    const Z got = mulmon(acc, one);
    Z want;
    mpz_powm(want, op.a, e, op.m);
    EXPECT_EQ(mpz_cmp(got, want), 0);
  }
  gmp_randclear(rs);
}

}  // namespace
}  // namespace padlock::test
