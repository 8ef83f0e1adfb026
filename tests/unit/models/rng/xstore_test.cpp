// XSTORE (no REP): quality factor table, zero fill, status word, EDI update, address size,
// timing and faults (guide §2.1, §2.3, §1.7).
#include <gtest/gtest.h>

#include "rng_test_util.hpp"
#include "tests/common/vector_file.hpp"

namespace padlock::test {
namespace {

constexpr uint64_t kBuf = RngBench::kBuf;

// §2.1 quality factor table and §2.3 clocks table, from tests/vectors/rng/xstore_quality.vec.
TEST(Xstore, QualityFactorTableAndClocks_S2_1_S2_3) {
  const auto records = read_vectors("rng/xstore_quality.vec");
  ASSERT_EQ(records.size(), 10u);
  for (const char* name : {"nehemiah-c5xl", "nehemiah-c5p", "esther-c5j", "nano"}) {
    for (const VectorRecord& r : records) {
      SCOPED_TRACE(std::string(name) + " line " + std::to_string(r.line));
      RngBench b(name);
      b.reset();
      if (r.num("Available") != 0) b.fill();
      b.fill_memory(kBuf, 16, 0xAA);
      b.s[Gpr::AX] = 0xDEADBEEF;
      const Outcome o = b.xstore(static_cast<uint32_t>(r.num("Edx")));
      ASSERT_EQ(o.status, Status::Completed);
      const uint64_t stored = r.num("Stored"), random = r.num("Random");
      EXPECT_EQ(b.s[Gpr::AX] & 0x1F, random) << "EAX[4:0]";
      EXPECT_EQ(b.s[Gpr::DI], kBuf + random) << "EDI increment";
      EXPECT_EQ(o.bytes, random);
      EXPECT_EQ(o.blocks, stored / 4) << "4-byte stores";
      EXPECT_EQ(o.cycles, r.num("Clocks"));
      const auto mem = b.bytes(kBuf, 16);
      // §2.1: the rest of a 4-byte store beyond the random bytes is zero.
      for (size_t i = random; i < stored; ++i) EXPECT_EQ(mem[i], 0) << "zero fill at " << i;
      for (size_t i = stored; i < 16; ++i) EXPECT_EQ(mem[i], 0xAA) << "untouched at " << i;
      if (random == 8) {
        // 8 random bytes cannot all keep the 0xAA fill (fixed seed: deterministic).
        EXPECT_NE(std::vector<uint8_t>(mem.begin(), mem.begin() + 8),
                  std::vector<uint8_t>(8, 0xAA));
      }
    }
  }
}

// §2.1 "RNG Status Word": EAX[31:5] = MSR 0x110B[31:5]; EAX[4:0] = bytes stored.
TEST(Xstore, StatusWordCopiesMsr_S2_1) {
  RngBench b("nehemiah-c5p");
  const uint64_t msr = msr_value(/*src=*/2, /*bias=*/5, /*rbts=*/true, /*fltr=*/false, /*fcnt=*/40);
  b.reset(msr);
  b.fill();
  b.xstore(1);
  EXPECT_EQ(b.s[Gpr::AX], (msr & ~0x1Full) | 4);
  EXPECT_EQ(b.s[Gpr::AX] & ~0x1Full, b.msr() & ~0x1Fu);
  // No data: the status word with a zero count.
  b.reset(msr);
  b.xstore(0);
  EXPECT_EQ(b.s[Gpr::AX], msr & ~0x1Full);
}

// §2.1 "A 16-bit mode ... the full 32-bit EAX is always updated"; in 64-bit mode a 32-bit
// register write zero-extends.
TEST(Xstore, FullEaxWritten_S2_1) {
  RngBench b("esther-c5j");
  b.reset();
  b.fill();
  b.s[Gpr::AX] = 0xFFFFFFFFFFFFFFFFull;
  b.s[Gpr::DX] = 0;
  b.mem.map(0, 0x1000);
  b.s[Gpr::DI] = 0xFFFF0010ull;  // DI = 0x0010
  b.run(xstore16());
  EXPECT_EQ(b.s[Gpr::AX], 0x40u | 8) << "EAX fully written in 16-bit address mode";

  b.s[Gpr::AX] = 0xFFFFFFFFFFFFFFFFull;
  b.s[Gpr::DI] = kBuf;
  b.run(xstore64());
  EXPECT_EQ(b.s[Gpr::AX], 0x40u | 8) << "RAX[63:32] cleared by the 32-bit write";
}

// §2.1 "RNG Buffer Pointer": DI or EDI by address size; DF has no effect.
TEST(Xstore, EdiAdvancesByAddressSizeIgnoringDf_S2_1) {
  RngBench b("esther-c5j");
  b.mem.map(0, 0x1000);
  b.mem.map(0xF000, 0x1000);
  b.reset();
  b.fill();
  // 16-bit: DI = 0xFFFC, EDI[31:16] = 0x1234 are kept; the second store wraps to DI = 0.
  b.fill_memory(0xFFF8, 8, 0xAA);
  b.fill_memory(0, 8, 0xAA);
  b.s[Gpr::DX] = 0;
  b.s[Gpr::DI] = 0x1234FFFC;
  b.s.eflags |= 1u << 10;  // DF = 1
  const Outcome o = b.run(xstore16());
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(b.s[Gpr::DI], 0x12340004u);
  EXPECT_EQ(b.bytes(0xFFF8, 4), std::vector<uint8_t>(4, 0xAA));
  EXPECT_EQ(b.bytes(0x4, 4), std::vector<uint8_t>(4, 0xAA));
  EXPECT_NE(b.bytes(0xFFFC, 4), std::vector<uint8_t>(4, 0xAA));

  // 32-bit: EDI advances upwards with DF = 1 too.
  b.s[Gpr::DI] = kBuf + 3;
  b.s[Gpr::DX] = 3;
  b.run(xstore32());
  EXPECT_EQ(b.s[Gpr::DI], kBuf + 4);

  // 64-bit mode with 67h: EDI, zero-extended into RDI.
  b.s[Gpr::DI] = 0xABCD000000000000ull | kBuf;
  b.s[Gpr::DX] = 1;
  b.s[Gpr::CX] = 4;
  b.run(rep_xstore64_a32());
  EXPECT_EQ(b.s[Gpr::DI], kBuf + 4);
}

// §2.1: XSTORE with no full buffer stores nothing; our choice: it then cannot fault.
TEST(Xstore, NoDataStoresNothingAndDoesNotFault_S2_1) {
  RngBench b("nehemiah-c5xl");
  b.reset();
  const Outcome o = b.xstore(0, 0x7000000);  // unmapped
  EXPECT_EQ(o.status, Status::Completed);
  EXPECT_EQ(b.s[Gpr::AX] & 0x1F, 0u);
  EXPECT_EQ(b.s[Gpr::DI], 0x7000000u);
}

// §2.1 "All RNG stores are four bytes long" and §1.7: a page fault leaves registers and the
// accumulation buffer unchanged; the fault address is the first inaccessible byte.
TEST(Xstore, PageFaultLeavesStateUnchanged_S2_1_S1_7) {
  RngBench b("esther-c5j");
  b.mem.map(0x400000, 0x1000);  // 0x401000 unmapped
  b.reset();
  b.fill();
  const uint32_t bcnt = b.msr() & 0x1F;
  ASSERT_EQ(bcnt, 0x0Fu);

  struct Case {
    unsigned edx;
    uint64_t edi;
    uint64_t fault_at;
  };
  // EDX = 3 stores 4 bytes even for 1 random byte, so 0x400FFE faults at the page end;
  // EDX = 0's second store faults; an unmapped EDI faults at EDI.
  const Case cases[] = {{3, 0x400FFE, 0x401000},
                        {0, 0x400FFC, 0x401000},
                        {0, 0x400FF8 + 2, 0x401000},
                        {1, 0x7000000, 0x7000000}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.edi);
    b.fill_memory(0x400FF0, 16, 0x55);
    b.s[Gpr::AX] = 0x11111111;
    const Outcome o = b.xstore(c.edx, c.edi);
    ASSERT_EQ(o.status, Status::Faulted);
    EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
    EXPECT_TRUE(o.fault.write);
    EXPECT_EQ(o.fault.address, c.fault_at);
    EXPECT_EQ(b.s[Gpr::AX], 0x11111111u);
    EXPECT_EQ(b.s[Gpr::DI], c.edi);
    EXPECT_EQ(b.bytes(0x400FF0, 16), std::vector<uint8_t>(16, 0x55)) << "nothing stored";
    EXPECT_EQ(b.msr() & 0x1F, bcnt) << "buffer not consumed";
  }
  // A read-only page faults the same way.
  b.mem.protect(0x400000, 0x1000, FlatMemory::kRead);
  const Outcome o = b.xstore(0, 0x400000);
  EXPECT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.address, 0x400000u);
}

// §2.2 ENBL = 0: "the XSTORE instruction becomes invalid".
TEST(Xstore, DisabledRaisesUd_S2_2) {
  RngBench b("esther-c5j");
  b.reset(0);  // ENBL = 0
  EXPECT_FALSE(b.rng.enabled());
  b.fill();
  const Outcome o = b.xstore(0);
  EXPECT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.kind, FaultKind::InvalidOpcode);
}

// §2.1 "REP Prefix" / §1.7: a plain XSTORE is one step; a pending interrupt does not stop it.
TEST(Xstore, NotInterruptible_S1_7) {
  RngBench b("esther-c5j");
  b.reset();
  b.fill();
  b.env.interrupt_at = 0;
  const Outcome o = b.xstore(0);
  EXPECT_EQ(o.status, Status::Completed);
  EXPECT_EQ(o.bytes, 8u);
}

}  // namespace
}  // namespace padlock::test
