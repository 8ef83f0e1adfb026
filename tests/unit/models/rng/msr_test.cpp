// MSR 0x110B: reset value, fields, reserved bits, load reset, BCNT per variant, the
// Nehemiah string filter and FAIL (guide §1.4, §1.6, §2.2, §2.3).
#include <gtest/gtest.h>

#include <cmath>

#include "rng_test_util.hpp"

namespace padlock::test {
namespace {

constexpr uint64_t kBuf = RngBench::kBuf;

// §1.4: MSR 0x110B is 0x00000040 at RESET on every processor with RNG; §1.6: buffers
// cleared, accumulation starts at once.
TEST(RngMsr, ResetValue_S1_4_S1_6) {
  for (const CpuModel* m : all_cpu_models()) {
    SCOPED_TRACE(m->name);
    RngBench b(m->name);
    EXPECT_EQ(b.msr(), 0x40u) << "at cycle 0 nothing has accumulated yet";
    EXPECT_TRUE(b.rng.enabled());
    b.fill();
    EXPECT_NE(b.msr() & 0x1F, 0u) << "accumulation started at RESET";
    EXPECT_EQ(b.msr() & ~0x1Fu, 0x40u);
  }
}

// §2.2: the writable fields read back as written (EDX half undefined: we return 0).
TEST(RngMsr, FieldsReadBack_S2_2) {
  RngBench neh("nehemiah-c5p");
  const uint64_t v = msr_value(/*src=*/3, /*bias=*/7, /*rbts=*/true, /*fltr=*/true, /*fcnt=*/63);
  neh.reset(v);
  EXPECT_EQ(neh.msr(), v);
  EXPECT_EQ(neh.rng.read_msr(neh.env) >> 32, 0u);
  EXPECT_TRUE(neh.diag.seen.empty());

  RngBench est("esther-c5j");
  const uint64_t ve = msr_value(/*src=*/1, /*bias=*/4, /*rbts=*/true);
  est.reset(ve);
  EXPECT_EQ(est.msr(), ve);
  EXPECT_TRUE(est.diag.seen.empty());
}

// §2.2 RES bits 5, 7, 31:22 and the EDX half: dropped, reported (Diag RngMsrReserved).
TEST(RngMsr, ReservedBitsDropped_S2_2) {
  const uint64_t writes[] = {0x40 | 0x20, 0x40 | 0x80, 0x40 | 0x00400000, 0x40 | 0x80000000,
                             0x40 | (1ull << 32)};
  for (uint64_t w : writes) {
    RngBench b("esther-c5j");
    b.reset(w);
    EXPECT_EQ(b.msr(), 0x40u) << std::hex << w;
    EXPECT_TRUE(b.diag.saw(Diag::RngMsrReserved)) << std::hex << w;
  }
  // BCNT is read-only: written bits are ignored without a report.
  RngBench b("esther-c5j");
  b.reset(0x40 | 0x1F);
  EXPECT_EQ(b.msr(), 0x40u);
  EXPECT_TRUE(b.diag.seen.empty());
}

// §2.2: FLTR, FAIL and FCNT are RES on Esther: dropped and reported (RngFieldReserved); the
// status word then shows them as 0.
TEST(RngMsr, EstherFilterFieldsReserved_S2_2) {
  for (const char* name : {"esther-c5j", "esther-c5j-s9", "nano"}) {
    RngBench b(name);
    b.reset(msr_value(2, 0, true, /*fltr=*/true, /*fcnt=*/8) | (1u << 15));
    EXPECT_EQ(b.msr(), msr_value(2, 0, true)) << name;
    EXPECT_TRUE(b.diag.saw(Diag::RngFieldReserved)) << name;
  }
}

// §2.2 SRC: "On Nehemiah processors before stepping 8, these bits are reserved": C5XL drops
// them and generates at the one-source rate (§2.3 40-60 Mb/s raw).
TEST(RngMsr, SrcReservedBeforeStepping8_S2_2) {
  RngBench b("nehemiah-c5xl");
  b.reset(msr_value(/*src=*/2, 0, /*rbts=*/true));
  EXPECT_TRUE(b.diag.saw(Diag::RngFieldReserved));
  EXPECT_EQ(b.msr() & 0x300, 0u);
  const Outcome o = b.rep_xstore(0, 65536);
  const double mbps = 65536 * 8 / (o.cycles / (b.env.mhz * 1e6)) / 1e6;
  EXPECT_GE(mbps, 40);
  EXPECT_LE(mbps, 60);
  // On C5P (stepping 8) the same write is legal and selects both sources.
  RngBench p("nehemiah-c5p");
  p.reset(msr_value(2, 0, true));
  EXPECT_TRUE(p.diag.seen.empty());
  EXPECT_EQ(p.msr() & 0x300, 0x200u);
}

// §2.2: "Any write to MSR 0x110B causes a load reset": buffers cleared.
TEST(RngMsr, WriteCausesLoadReset_S2_2) {
  for (const char* name : {"nehemiah-c5p", "esther-c5j"}) {
    RngBench b(name);
    b.fill();
    ASSERT_NE(b.msr() & 0x1F, 0u);
    b.reset(b.msr() & ~0x1Fu);  // rewrite the same configuration
    EXPECT_EQ(b.msr() & 0x1F, 0u) << name;
    const Outcome o = b.xstore(0);
    EXPECT_EQ(o.bytes, 0u) << name << ": the buffers were cleared";
    EXPECT_EQ(b.s[Gpr::AX] & 0x1F, 0u);
  }
}

// Time for one raw (whitener off) buffer: 64 raw bits at the BIAS-0 both-source rate.
double raw_buffer_cycles(const RngBench& b) {
  return 64 * b.env.mhz * 1e6 / b.model.rng.raw_rate_both_sources.value;
}

// §2.2 BCNT on Esther: one bit per full buffer (0x00, 0x01, 0x03, 0x07, 0x0F); §2.3: the
// generator stops while all four are full and restarts when one is taken.
TEST(RngMsr, EstherBcntBufferMaskAndGeneratorStop_S2_2_S2_3) {
  RngBench b("esther-c5j");
  b.env.now = 1000;
  b.reset(msr_value(2, 0, /*rbts=*/true));
  const uint64_t t0 = b.env.now;
  const double buf = raw_buffer_cycles(b);
  const uint32_t expect[] = {0x00, 0x01, 0x03, 0x07, 0x0F};
  for (int k = 1; k <= 4; ++k) {
    b.env.now = t0 + static_cast<uint64_t>(std::floor(k * buf)) - 1;
    EXPECT_EQ(b.msr() & 0x1F, expect[k - 1]) << "just before buffer " << k;
    b.env.now = t0 + static_cast<uint64_t>(std::ceil(k * buf)) + 1;
    EXPECT_EQ(b.msr() & 0x1F, expect[k]) << "just after buffer " << k;
  }
  b.env.now = t0 + 1000 * static_cast<uint64_t>(buf);
  EXPECT_EQ(b.msr() & 0x1F, 0x0Fu) << "stays full";
  // Take one buffer: the generator starts again only now.
  const uint64_t t1 = b.env.now;
  ASSERT_EQ(b.xstore(0).bytes, 8u);
  b.env.now = t1 + static_cast<uint64_t>(std::floor(buf)) - 1;
  EXPECT_EQ(b.msr() & 0x1F, 0x07u) << "the generator was stopped while full";
  b.env.now = t1 + static_cast<uint64_t>(std::ceil(buf)) + 1;
  EXPECT_EQ(b.msr() & 0x1F, 0x0Fu);
}

// §2.2 BCNT on Nehemiah: the number of bytes available; our choice: whole bytes accumulated
// (full buffers plus the buffer in progress), saturating at 31 (a 5-bit field).
TEST(RngMsr, NehemiahBcntBytes_S2_2) {
  RngBench b("nehemiah-c5p");
  b.env.now = 5000;
  b.reset(msr_value(2, 0, /*rbts=*/true));
  const uint64_t t0 = b.env.now;
  const double buf = raw_buffer_cycles(b);
  for (int bytes = 1; bytes <= 31; ++bytes) {
    b.env.now = t0 + static_cast<uint64_t>(std::ceil(bytes * buf / 8)) + 1;
    EXPECT_EQ(b.msr() & 0x1F, static_cast<uint32_t>(bytes)) << "after " << bytes << " bytes";
  }
  b.env.now = t0 + static_cast<uint64_t>(100 * buf);
  EXPECT_EQ(b.msr() & 0x1F, 31u) << "32 bytes saturate at 31";
  b.xstore(0);
  EXPECT_EQ(b.msr() & 0x1F, 24u) << "three full buffers, the fourth just restarted";
  // The copy in EAX holds the bytes actually stored (§2.2).
  EXPECT_EQ(b.s[Gpr::AX] & 0x1F, 8u);
}

// Bits in the order the buffers deliver them: byte 0 bit 0 first.
std::vector<int> bit_stream(const std::vector<uint8_t>& bytes) {
  std::vector<int> bits;
  for (uint8_t v : bytes) {
    for (int i = 0; i < 8; ++i) bits.push_back(v >> i & 1);
  }
  return bits;
}
size_t longest_run(const std::vector<int>& bits) {
  size_t best = 0, run = 0;
  for (size_t i = 0; i < bits.size(); ++i) {
    run = (i > 0 && bits[i] == bits[i - 1]) ? run + 1 : 1;
    best = std::max(best, run);
  }
  return best;
}

// §2.2 FLTR/FCNT/FAIL (Nehemiah): strings of equal bits longer than FCNT are filtered out and
// FAIL is set; a write with FAIL = 0 clears it, writing 1 cannot set it.
TEST(RngMsr, NehemiahStringFilterAndFail_S2_2) {
  const size_t n = 8192;
  for (unsigned fcnt : {8u, 12u, 20u}) {
    SCOPED_TRACE(fcnt);
    // Raw bits (p(1) = 0.8 at BIAS 0) have long runs of ones.
    RngBench plain("nehemiah-c5p", 7);
    plain.reset(msr_value(2, 0, /*rbts=*/true));
    const Outcome po = plain.rep_xstore(0, n);
    EXPECT_GT(longest_run(bit_stream(plain.bytes(kBuf, n))), fcnt) << "unfiltered runs exceed FCNT";
    EXPECT_EQ(plain.msr() & (1u << 15), 0u);

    RngBench b("nehemiah-c5p", 7);
    b.reset(msr_value(2, 0, true, /*fltr=*/true, fcnt));
    const Outcome o = b.rep_xstore(0, n);
    EXPECT_LE(longest_run(bit_stream(b.bytes(kBuf, n))), fcnt);
    EXPECT_NE(b.msr() & (1u << 15), 0u) << "FAIL set by the hardware";
    EXPECT_NE(b.s[Gpr::AX] & (1u << 15), 0u) << "FAIL in the status word";
    EXPECT_GT(o.cycles, po.cycles) << "filtered bits cost generation time";
  }
  RngBench b("nehemiah-c5p", 7);
  const uint64_t cfg = msr_value(2, 0, true, true, 8);
  b.reset(cfg);
  b.rep_xstore(0, 1024);
  ASSERT_NE(b.msr() & (1u << 15), 0u);
  // Read-modify-write keeps FAIL (writing 1 is not a set, it just does not clear).
  b.reset(b.msr() & ~0x1Fu);
  EXPECT_NE(b.msr() & (1u << 15), 0u);
  // Writing 0 clears it; writing 1 afterwards does not set it.
  b.reset(cfg);
  EXPECT_EQ(b.msr() & (1u << 15), 0u);
  b.reset(cfg | (1u << 15));
  EXPECT_EQ(b.msr() & (1u << 15), 0u);
}

// §2.2: "Bit-string lengths below 8 produce unexpected results": reported (RngFilterCountLow);
// our filter still keeps runs of at most FCNT bits.
TEST(RngMsr, FilterCountBelowEight_S2_2) {
  RngBench b("nehemiah-c5p", 3);
  b.reset(msr_value(2, 0, false, /*fltr=*/true, /*fcnt=*/2));
  EXPECT_TRUE(b.diag.saw(Diag::RngFilterCountLow));
  b.rep_xstore(0, 1024);
  EXPECT_LE(longest_run(bit_stream(b.bytes(kBuf, 1024))), 2u);
  // FCNT = 0 acts as 1: strictly alternating bits.
  RngBench z("nehemiah-c5p", 3);
  z.reset(msr_value(2, 0, false, true, 0));
  z.rep_xstore(0, 64);
  const auto bytes = z.bytes(kBuf, 64);
  EXPECT_TRUE(bytes[0] == 0x55 || bytes[0] == 0xAA);
  EXPECT_EQ(longest_run(bit_stream(bytes)), 1u);
}

// §2.2 ENBL = 0 disables the generator: nothing accumulates; re-enabling starts afresh.
TEST(RngMsr, EnableBitStopsGeneration_S2_2) {
  RngBench b("nehemiah-c5p");
  b.reset(0);
  EXPECT_FALSE(b.rng.enabled());
  b.fill();
  EXPECT_EQ(b.msr(), 0u);
  b.reset(0x40);
  EXPECT_TRUE(b.rng.enabled());
  EXPECT_EQ(b.msr() & 0x1F, 0u);
  b.fill();
  EXPECT_EQ(b.msr() & 0x1F, 31u);
}

}  // namespace
}  // namespace padlock::test
