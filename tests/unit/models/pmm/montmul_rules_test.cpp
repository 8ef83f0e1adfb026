// REP MONTMUL register, memory, fault and interrupt rules (§5.1, §1.7, §1.8) and the
// behaviour chosen where the guide is silent (docs/fidelity/pmm.md).
#include <gtest/gtest.h>

#include "models/pmm/montmul_core.hpp"
#include "tests/unit/models/pmm/pmm_rig.hpp"

namespace padlock::test {
namespace {

class MontmulRules : public ::testing::Test {
 protected:
  void SetUp() override {
    gmp_randinit_mt(rs_);
    gmp_randseed_ui(rs_, 1234);
  }
  void TearDown() override { gmp_randclear(rs_); }
  gmp_randstate_t rs_;
};

void expect_regs_equal(const ArchState& a, const ArchState& b) {
  for (int r = 0; r < 8; ++r) EXPECT_EQ(a.gpr[r], b.gpr[r]) << "gpr " << r;
  EXPECT_EQ(a.eflags, b.eflags);
}

// §5.1: 256 <= ECX <= 32768, ECX mod 128 = 0. Otherwise (choice, Diag MontmulBadEcx): #GP
// before any memory access.
TEST_F(MontmulRules, BadEcxRaisesGpBeforeAnyAccess_Sec5_1) {
  for (uint32_t ecx : {0u, 128u, 255u, 320u, 32768u + 128, 0x80000100u, 1000u}) {
    SCOPED_TRACE(ecx);
    MontmulRig rig;
    rig.s.gpr[static_cast<int>(Gpr::CX)] = ecx;
    rig.s.gpr[static_cast<int>(Gpr::SI)] = 0xDEAD0000;  // unmapped: never touched
    const ArchState before = rig.s;
    const Outcome o = rig.exec();
    EXPECT_EQ(o.status, Status::Faulted);
    EXPECT_EQ(o.fault.kind, FaultKind::GeneralProtection);
    expect_regs_equal(rig.s, before);
    EXPECT_EQ(rig.diag_count(Diag::MontmulBadEcx), 1);
  }
}

// §5.1 "REP prefix": the full 32-bit ECX is used whatever the prefixes: upper RCX bits and
// an operand-size prefix do not matter.
TEST_F(MontmulRules, Full32BitEcx_Sec5_1) {
  const Operands op = random_operands(rs_, 512);
  MontmulRig rig;
  rig.setup(op.a, op.b, op.m, 512);
  rig.s.gpr[static_cast<int>(Gpr::CX)] |= 0xFFFF000000000000ull;
  ASSERT_EQ(rig.exec(isa::CpuMode::Protected32, {0x66}).status, Status::Completed);
  EXPECT_EQ(mpz_cmp(rig.get(MontmulRig::kT, 20), montgomery_reference(op.a, op.b, op.m, 16)), 0);
}

// §5.1: A, B, T, M and Scratch must be 16-byte aligned (choice: #GP naming the pointer);
// the context pointer itself need not be.
TEST_F(MontmulRules, MisalignedBufferRaisesGp_Sec5_1) {
  const Operands op = random_operands(rs_, 256);
  for (int field = 0; field < 5; ++field) {
    SCOPED_TRACE(field);
    MontmulRig rig;
    rig.setup(op.a, op.b, op.m, 256);
    uint64_t p[5] = {MontmulRig::kA, MontmulRig::kB, MontmulRig::kT, MontmulRig::kM,
                     MontmulRig::kScratch};
    p[field] += 4;
    rig.context(0x1234567, p[0], p[1], p[2], p[3], p[4]);
    const ArchState before = rig.s;
    const Outcome o = rig.exec();
    ASSERT_EQ(o.status, Status::Faulted);
    EXPECT_EQ(o.fault.kind, FaultKind::GeneralProtection);
    EXPECT_EQ(o.fault.address, p[field]);
    expect_regs_equal(rig.s, before);
  }
}

// §1.7: "Before it actually starts calculating, it tests the memory buffers of all the big
// integers that the instruction reads or writes." A page fault on any of them (T including
// its extra 128 bits, the 32-byte scratch, the context) comes before any register or memory
// change.
TEST_F(MontmulRules, ProbeEveryBufferBeforeCompute_Sec1_7) {
  const unsigned bits = 1024;
  const unsigned n = bits / 32;
  const Operands op = random_operands(rs_, bits);
  struct Case {
    const char* what;
    uint64_t a, b, t, m, scratch;
    uint64_t hole;  // page made inaccessible
    uint8_t perm;
    uint64_t fault_at;
    bool write;
  };
  const uint64_t page_end = 0x108000;
  const Case cases[] = {
      {"A", page_end - 4 * n + 16, MontmulRig::kB, MontmulRig::kT, MontmulRig::kM,
       MontmulRig::kScratch, page_end, FlatMemory::kNone, page_end, false},
      {"B", MontmulRig::kA, page_end - 4 * n + 16, MontmulRig::kT, MontmulRig::kM,
       MontmulRig::kScratch, page_end, FlatMemory::kNone, page_end, false},
      {"T extra 128 bits", MontmulRig::kA, MontmulRig::kB, page_end - 4 * n, MontmulRig::kM,
       MontmulRig::kScratch, page_end, FlatMemory::kNone, page_end, false},
      {"T write", MontmulRig::kA, MontmulRig::kB, page_end - 4 * n, MontmulRig::kM,
       MontmulRig::kScratch, page_end, FlatMemory::kRead, page_end, true},
      {"M", MontmulRig::kA, MontmulRig::kB, MontmulRig::kT, page_end - 4 * n + 16,
       MontmulRig::kScratch, page_end, FlatMemory::kNone, page_end, false},
      {"Scratch", MontmulRig::kA, MontmulRig::kB, MontmulRig::kT, MontmulRig::kM, page_end - 16,
       page_end, FlatMemory::kNone, page_end, false},
      {"Scratch write", MontmulRig::kA, MontmulRig::kB, MontmulRig::kT, MontmulRig::kM,
       page_end - 16, page_end, FlatMemory::kRead, page_end, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    MontmulRig rig;
    rig.setup(op.a, op.b, op.m, bits);
    // Operands where this case puts them; T holds a recognisable pattern (it must stay).
    rig.put(c.a, op.a, n);
    rig.put(c.b, op.b, n);
    rig.put(c.m, op.m, n);
    const uint64_t t_visible = std::min<uint64_t>(4 * n + 16, page_end - c.t);
    std::memset(rig.mem.host(c.t, t_visible), 0, t_visible);
    rig.context(m_zero_prime(static_cast<uint32_t>(mpz_getlimbn(op.m, 0))), c.a, c.b, c.t, c.m,
                c.scratch);
    rig.mem.protect(c.hole, 4096, c.perm);
    const ArchState before = rig.s;
    const auto t_before = rig.words(c.t, static_cast<unsigned>(t_visible / 4));
    const Outcome o = rig.exec();
    ASSERT_EQ(o.status, Status::Faulted);
    EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
    EXPECT_EQ(o.fault.address, c.fault_at);
    EXPECT_EQ(o.fault.write, c.write);
    expect_regs_equal(rig.s, before);
    EXPECT_EQ(rig.words(c.t, static_cast<unsigned>(t_visible / 4)), t_before);

    // Mapped again, the same instruction completes.
    rig.mem.protect(c.hole, 4096, FlatMemory::kRW);
    ASSERT_EQ(rig.exec().status, Status::Completed);
    EXPECT_EQ(mpz_cmp(rig.get(c.t, n + 4), montgomery_reference(op.a, op.b, op.m, n)), 0);
  }
  // The context itself.
  MontmulRig rig;
  rig.setup(op.a, op.b, op.m, bits);
  rig.s.gpr[static_cast<int>(Gpr::SI)] = 0x10000 + 4096 - 8;  // 24 bytes run off the page
  const Outcome o = rig.exec();
  ASSERT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.address, 0x11000u);
}

// §5.1: interruptible in the outer loop; EAX holds the restart state, ECX is unchanged,
// the partial product is in T; re-executing resumes, and the result equals the
// uninterrupted one.
TEST_F(MontmulRules, InterruptedEqualsUninterrupted_Sec5_1_Sec1_7) {
  for (unsigned bits : {256u, 1024u, 2304u, 4096u}) {
    for (int overflow = 0; overflow < 2; ++overflow) {
      SCOPED_TRACE(bits);
      const unsigned n = bits / 32;
      Operands op = random_operands(rs_, bits);
      if (overflow) {
        mpz_sub_ui(op.a, op.m, 3);
        mpz_sub_ui(op.b, op.m, 5);
      }
      MontmulRig whole;
      whole.setup(op.a, op.b, op.m, bits);
      const Outcome ow = whole.exec();
      ASSERT_EQ(ow.status, Status::Completed);

      MontmulRig rig;
      rig.setup(op.a, op.b, op.m, bits);
      rig.s.gpr[static_cast<int>(Gpr::DX)] = 0xABCDEF;
      uint32_t last_pass = 0;
      int interrupts = 0;
      for (;;) {
        rig.env.interrupt_at = rig.env.now + 200;  // at least one pass per execution
        const Outcome o = rig.exec();
        if (o.status == Status::Completed) break;
        ASSERT_EQ(o.status, Status::Interrupted);
        ++interrupts;
        const uint32_t eax = static_cast<uint32_t>(rig.s[Gpr::AX]);
        const uint32_t pass = eax & 0xFFFF;
        EXPECT_GT(pass, last_pass);
        EXPECT_LT(pass, n);
        last_pass = pass;
        EXPECT_EQ(rig.s[Gpr::CX], bits);  // §5.1: ECX not modified until complete
        EXPECT_EQ(rig.s[Gpr::SI], MontmulRig::kCtx);
      }
      EXPECT_GT(interrupts, 0);
      EXPECT_EQ(mpz_cmp(rig.get(MontmulRig::kT, n + 4), whole.get(MontmulRig::kT, n + 4)), 0);
      EXPECT_EQ(rig.s[Gpr::CX], 0u);
      EXPECT_EQ(rig.s[Gpr::DX], 0u);
      EXPECT_EQ(rig.s[Gpr::AX], 0u);  // EAX undefined: we leave 0
    }
  }
}

// §5.1: the partial product in T after an interrupt is exactly the hardware outer loop's
// after that many passes (the mpz recurrence stopped there).
TEST_F(MontmulRules, PartialProductIsHardwareState_Sec5_1) {
  const unsigned bits = 2048, n = 64;
  const Operands op = random_operands(rs_, bits);
  MontmulRig rig;
  rig.setup(op.a, op.b, op.m, bits);
  rig.env.interrupt_at = 5000;
  ASSERT_EQ(rig.exec().status, Status::Interrupted);
  const uint32_t passes = static_cast<uint32_t>(rig.s[Gpr::AX]) & 0xFFFF;
  ASSERT_GT(passes, 0u);
  Z b_low;
  mpz_fdiv_r_2exp(b_low, op.b, 32 * passes);  // the passes consumed B's low words
  const uint32_t mzp = m_zero_prime(static_cast<uint32_t>(mpz_getlimbn(op.m, 0)));
  EXPECT_EQ(
      mpz_cmp(rig.get(MontmulRig::kT, n + 4), recurrence_reference(op.a, b_low, op.m, mzp, passes)),
      0);
  // EDX, a temporary for §5.1, holds our choice: the last pass's quotient digit
  // u = ((T mod 2^32) + A0 * b) * m' mod 2^32 (models/pmm/pmm_unit.cpp).
  Z b_before;
  mpz_fdiv_r_2exp(b_before, op.b, 32 * (passes - 1));
  const Z t_before = recurrence_reference(op.a, b_before, op.m, mzp, passes - 1);
  Z bw;
  mpz_tdiv_q_2exp(bw, op.b, 32 * (passes - 1));
  mpz_fdiv_r_2exp(bw, bw, 32);
  const uint32_t u =
      (static_cast<uint32_t>(mpz_getlimbn(t_before, 0)) +
       static_cast<uint32_t>(mpz_getlimbn(op.a, 0)) * static_cast<uint32_t>(mpz_get_ui(bw))) *
      mzp;
  EXPECT_EQ(rig.s[Gpr::DX], u);
}

// §1.7: an interrupt already pending when REP MONTMUL starts is taken after the first
// interruptible point (one outer pass), not ignored.
TEST_F(MontmulRules, PendingInterruptStopsAfterOnePass_Sec5_1_Sec1_7) {
  const Operands op = random_operands(rs_, 1024);
  MontmulRig rig;
  rig.setup(op.a, op.b, op.m, 1024);
  rig.env.now = 100000;
  rig.env.interrupt_at = 50000;  // pending since before the instruction
  ASSERT_EQ(rig.exec().status, Status::Interrupted);
  EXPECT_EQ(static_cast<uint32_t>(rig.s[Gpr::AX]) & 0xFFFF, 1u);
}

// Choice (Diag MontmulBadState): an EAX the model could not have written raises #GP.
TEST_F(MontmulRules, BadRestartStateRaisesGp_Sec5_1) {
  const Operands op = random_operands(rs_, 512);
  for (uint32_t eax : {16u, 17u, 0x40001u, 0x00080001u, 0x80000001u}) {
    SCOPED_TRACE(eax);
    MontmulRig rig;
    rig.setup(op.a, op.b, op.m, 512);
    rig.s.gpr[static_cast<int>(Gpr::AX)] = eax;
    const ArchState before = rig.s;
    const Outcome o = rig.exec();
    EXPECT_EQ(o.fault.kind, FaultKind::GeneralProtection);
    expect_regs_equal(rig.s, before);
    EXPECT_EQ(rig.diag_count(Diag::MontmulBadState), 1);
  }
}

// §1.8: "REP MONTMUL instructions neither read nor set the EFLAGS:30 bit".
TEST_F(MontmulRules, Eflags30Untouched_Sec1_8) {
  const Operands op = random_operands(rs_, 256);
  for (bool bit : {false, true}) {
    MontmulRig rig;
    rig.setup(op.a, op.b, op.m, 256);
    rig.s.set_eflags30(bit);
    const Outcome o1 = rig.exec();
    ASSERT_EQ(o1.status, Status::Completed);
    EXPECT_EQ(rig.s.eflags30(), bit);
  }
}

// §5.1 "REP prefix": 67h selects SI in 32-bit code; the context fields stay 32-bit.
TEST_F(MontmulRules, AddressSizePrefixSelectsSi_Sec5_1) {
  const Operands op = random_operands(rs_, 256);
  MontmulRig rig;
  rig.setup(op.a, op.b, op.m, 256);
  rig.mem.map(0x3000, 4096);
  std::memcpy(rig.mem.host(0x3001, 24), rig.mem.host(MontmulRig::kCtx, 24), 24);
  rig.s.gpr[static_cast<int>(Gpr::SI)] = 0x77770000u | 0x3001;
  ASSERT_EQ(rig.exec(isa::CpuMode::Protected32, {0x67}).status, Status::Completed);
  EXPECT_EQ(mpz_cmp(rig.get(MontmulRig::kT, 12), montgomery_reference(op.a, op.b, op.m, 8)), 0);
  EXPECT_EQ(rig.s[Gpr::SI], 0x77773001u);
}

// Nano (PmmParams.needs_addr_prefix_in_64bit): in 64-bit mode REP MONTMUL needs 67h; without
// it the model raises #UD (Diag MontmulAddr64); with it ESI and the 32-bit context work.
TEST_F(MontmulRules, NanoLongModeNeedsAddressPrefix_Sec5_1) {
  const Operands op = random_operands(rs_, 512);
  MontmulRig rig("nano");
  rig.setup(op.a, op.b, op.m, 512);
  rig.s.gpr[static_cast<int>(Gpr::SI)] |= 0xFFFFFFFF00000000ull;  // ignored under 67h
  const Outcome ud = rig.exec(isa::CpuMode::Long64);
  EXPECT_EQ(ud.fault.kind, FaultKind::InvalidOpcode);
  EXPECT_EQ(rig.diag_count(Diag::MontmulAddr64), 1);
  const Outcome ok = rig.exec(isa::CpuMode::Long64, {0x67});
  ASSERT_EQ(ok.status, Status::Completed);
  EXPECT_EQ(mpz_cmp(rig.get(MontmulRig::kT, 20), montgomery_reference(op.a, op.b, op.m, 16)), 0);
}

// §5.1: "T ... initially must be all zero". A non-zero T is reported (Diag MontmulTNotZero)
// and accumulated onto, as the outer loop would: T = (T0 + A*B + U*M) / R.
TEST_F(MontmulRules, NonZeroInitialTAccumulates_Sec5_1) {
  const unsigned bits = 512, n = 16;
  const Operands op = random_operands(rs_, bits);
  MontmulRig rig;
  rig.setup(op.a, op.b, op.m, bits);
  Z t0;
  mpz_urandomb(t0, rs_, bits - 1);
  rig.put(MontmulRig::kT, t0, n);
  ASSERT_EQ(rig.exec().status, Status::Completed);
  EXPECT_EQ(rig.diag_count(Diag::MontmulTNotZero), 1);
  Z r, x, minv, u, want;
  mpz_setbit(r, bits);
  mpz_mul(x, op.a, op.b);
  mpz_add(x, x, t0);
  mpz_invert(minv, op.m, r);
  mpz_sub(minv, r, minv);
  mpz_mul(u, x, minv);
  mpz_fdiv_r_2exp(u, u, bits);
  mpz_addmul(x, u, op.m);
  mpz_fdiv_q_2exp(want, x, bits);
  EXPECT_EQ(mpz_cmp(rig.get(MontmulRig::kT, n + 4), want), 0);
}

// §1.3: PMM is absent on Nehemiah: #UD.
TEST_F(MontmulRules, AbsentOnNehemiahIsUd_Sec1_3) {
  MontmulRig rig("nehemiah-c5p");
  rig.s.gpr[static_cast<int>(Gpr::CX)] = 256;
  EXPECT_EQ(rig.exec().fault.kind, FaultKind::InvalidOpcode);
}

}  // namespace
}  // namespace padlock::test
