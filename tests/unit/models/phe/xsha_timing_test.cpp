// §4.2 REP XSHA timing: one round per 2 clocks (SHA-1) / 3 clocks (SHA-256) in hardware
// (3.2 and 2.66 bits/clock), and Centaur's instruction asymptote of 2.66 bits/clock for
// SHA-1; SHA-256 costs what the Dedibox C7 measured against SHA-1, 480 / 458 per byte
// (Synopse mORMot SynCrypto.pas header), not §4.2's 2.26 (docs/timing.md, "PHE").
#include <gtest/gtest.h>

#include <cmath>

#include "tests/unit/models/phe/phe_rig.hpp"

namespace padlock::test {
namespace {

class XshaTiming : public ShaTest {
 protected:
  // §4.2: Centaur's asymptotic estimate for SHA-1; SHA-256's block from the Dedibox ratio
  // (checked against the table below).
  double asymptote() const {
    const PheParams& p = find_cpu_model("esther-c5j")->phe;
    return sha256() ? 512.0 / (64 * p.sha256_clocks_per_round + p.sha256_block_overhead) : 2.66;
  }

  uint64_t run(XshaRig& rig, uint64_t len) {
    rig.init_state(sha256());
    rig.setup_regs(len);
    const Outcome o = rig.exec(sha256());
    EXPECT_EQ(o.status, Status::Completed);
    EXPECT_EQ(o.cycles, o.int_cycles);
    return o.cycles;
  }
};

// §4.2: "one round every two clocks for SHA-1, and one round every three clocks for
// SHA-256 ... 3.2 bits/clock for SHA-1 and 2.66 bits/clock for SHA-256".
TEST_P(XshaTiming, HardwareRoundRate_Sec4_2) {
  for (const char* model : {"esther-c5j", "esther-c5j-s9", "nano"}) {
    const PheParams& p = find_cpu_model(model)->phe;
    const double round_clocks =
        sha256() ? 64 * p.sha256_clocks_per_round : 80 * p.sha1_clocks_per_round;
    EXPECT_NEAR(512.0 / round_clocks, sha256() ? 2.66 : 3.2, 0.01) << model;
  }
}

// The Dedibox C7 hashes 16 KB blocks at 480 MB/s with SHA-1 and 458 MB/s with SHA-256: the
// model's SHA-256 block costs SHA-1's times that within 3 % (§4.2's 2.26 would be 1.18).
TEST(XshaTimingDedibox, Sha256AgainstSha1PerBlock) {
  for (const char* model : {"esther-c5j", "nano"}) {
    const PheParams& p = find_cpu_model(model)->phe;
    const double sha1 = 80 * p.sha1_clocks_per_round + p.sha1_block_overhead;
    const double sha256 = 64 * p.sha256_clocks_per_round + p.sha256_block_overhead;
    EXPECT_NEAR(sha256 / sha1 / (480.0 / 458), 1.0, 0.03) << model;
    EXPECT_NEAR(512.0 / sha1, 2.66, 1e-9) << model;  // §4.2 kept for SHA-1
  }
}

// §4.2: each further 64-byte block costs exactly 512 / asymptote clocks, so long inputs
// approach 2.66 (SHA-1) / the Dedibox-set SHA-256 rate bits per clock.
TEST_P(XshaTiming, AsymptoteBitsPerClock_Sec4_2) {
  XshaRig rig("esther-c5j", 2 << 20);
  const uint64_t big = 1 << 20;
  const uint64_t c_big = run(rig, big);
  const uint64_t c_more = run(rig, big + 6400 * 64);
  EXPECT_NEAR(6400.0 * 512 / static_cast<double>(c_more - c_big), asymptote(), 1e-4);
  EXPECT_NEAR(8.0 * big / static_cast<double>(c_big), asymptote(), 0.002);
  EXPECT_LT(8.0 * big / static_cast<double>(c_big), asymptote());
}

// The documented cycle count: startup + (whole blocks + padded blocks) * 512/asymptote +
// padding, rounded once (docs/fidelity/phe.md).
TEST_P(XshaTiming, CycleCountFormula_Sec4_2) {
  XshaRig rig;
  const PheParams& p = rig.cpu().phe;
  const double per_block = 512.0 / asymptote();
  for (uint64_t len : {0, 1, 55, 56, 64, 65, 119, 120, 128, 1000, 8192}) {
    SCOPED_TRACE(len);
    const uint64_t whole = len == 0 ? 0 : (len - 1) / 64;
    const uint64_t tail = len - 64 * whole;
    const uint64_t padded = tail + 9 <= 64 ? 1 : 2;
    const double want = p.startup + (whole + padded) * per_block + p.padding;
    EXPECT_EQ(run(rig, len), static_cast<uint64_t>(std::llround(want)));
  }
}

// §1.7: an interrupted instruction pays its start-up again when re-executed; the blocks
// are charged once.
TEST_P(XshaTiming, InterruptedRunCostsStartupPerExecution_Sec1_7_Sec4_2) {
  XshaRig rig;
  const uint64_t len = 64 * 500 + 7;
  const uint64_t whole = run(rig, len);
  XshaRig r2;
  r2.init_state(sha256());
  r2.setup_regs(len);
  uint64_t total = 0;
  int executions = 0;
  for (;;) {
    r2.env.interrupt_at = r2.env.now + 10000;
    const Outcome o = r2.exec(sha256());
    total += o.cycles;
    ++executions;
    if (o.status == Status::Completed) break;
    ASSERT_EQ(o.status, Status::Interrupted);
    // Interrupted at the first block boundary at or after interrupt_at.
    EXPECT_GE(o.cycles, 10000u);
    EXPECT_LT(o.cycles, 10000u + 512.0 / asymptote() + 1);
  }
  ASSERT_GT(executions, 5);
  const double startup = rig.cpu().phe.startup;
  EXPECT_NEAR(static_cast<double>(total), whole + (executions - 1) * startup, executions);
}

// Nano blocks mode: blocks only, no padding overhead.
TEST_P(XshaTiming, NanoBlocksModeCycles_Sec4_2) {
  XshaRig rig("nano");
  rig.init_state(sha256());
  rig.setup_regs(10);
  rig.s.gpr[static_cast<int>(Gpr::AX)] = 0xFFFFFFFFu;
  const Outcome o = rig.exec(sha256());
  ASSERT_EQ(o.status, Status::Completed);
  const double want = rig.cpu().phe.startup + 10 * 512.0 / asymptote();
  EXPECT_EQ(o.cycles, static_cast<uint64_t>(std::llround(want)));
}

INSTANTIATE_TEST_SUITE_P(Sha, XshaTiming, ::testing::Bool(), sha_name);

}  // namespace
}  // namespace padlock::test
