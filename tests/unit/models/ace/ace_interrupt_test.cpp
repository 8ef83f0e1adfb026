// Interrupt points (§1.7, §3.1 EAX, §6.6, §7.1): REP XCRYPT stops between blocks with the
// registers, IV and memory updated so that re-executing it resumes exactly.
#include <cmath>

#include "ace_rig.hpp"
#include "models/ace/ace_timing.hpp"

namespace padlock::test {
namespace {

const Bytes kIv = hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");

struct ModeCase {
  const char* mode;
  bool decrypt;
  int executions;  // with an interrupt pending at every point, N = 9
};

// §1.7, §7.1: chaining modes are interruptible after every block, ECB after every pair
// (§3.3), CTR after every 2 blocks while 3 or more remain (§6.6). With an interrupt
// always pending, the instruction is re-executed until done and the result is exact.
TEST(AceInterrupts, ResumeAfterEveryInterruptPointIsExact_Sec1_7_Sec6_6_Sec7_1) {
  const ModeCase cases[] = {{"ECB", false, 5}, {"ECB", true, 5},  {"CBC", false, 9},
                            {"CBC", true, 9},  {"CFB", false, 9}, {"CFB", true, 9},
                            {"OFB", false, 9}, {"CTR", false, 4}};
  for (const ModeCase& c : cases) {
    const std::string m = c.mode;
    SCOPED_TRACE(m + (c.decrypt ? " decrypt" : " encrypt"));
    AceRig r("esther-c5j-s9");
    const bool crypt = c.decrypt && m != "OFB" && m != "CTR";
    r.set_key(kSp800Key);
    r.set_iv(kIv);
    r.set_cw(0x00A | (crypt ? cwf::kDecrypt : 0));
    const Bytes text = random_bytes(16 * 9, 1);
    r.put(Layout::kIn, text);
    r.load_regs(9);
    r.env.interrupt_at = 0;  // pending from the start
    int execs = 0;
    uint64_t prev_cx = 9;
    Outcome o;
    do {
      o = r.exec(xcrypt_id(m));
      ++execs;
      r.env.now += o.cycles;
      if (o.status == Status::Interrupted) {
        EXPECT_GE(o.blocks, 1u) << "only after progress (§1.7)";
        EXPECT_EQ(r.s[Gpr::CX], prev_cx - o.blocks);
        EXPECT_EQ(r.s[Gpr::SI], Layout::kIn + 16 * (9 - r.s[Gpr::CX]));
        EXPECT_EQ(r.s[Gpr::DI], Layout::kOut + 16 * (9 - r.s[Gpr::CX]));
      }
      prev_cx = r.s[Gpr::CX];
    } while (o.status == Status::Interrupted && execs < 20);
    ASSERT_EQ(o.status, Status::Completed);
    EXPECT_EQ(execs, c.executions);
    const Bytes want =
        m == "CTR" ? ace_ctr_reference(kSp800Key, kIv, text) : evp(m, kSp800Key, kIv, text, !crypt);
    EXPECT_EQ(to_hex(r.get(Layout::kOut, text.size())), to_hex(want));
    if (m == "OFB" || m == "CTR" || c.decrypt) {
      // The IV memory ends as after one uninterrupted instruction.
      AceRig u("esther-c5j-s9");
      u.set_key(kSp800Key);
      u.set_iv(kIv);
      u.set_cw(0x00A | (crypt ? cwf::kDecrypt : 0));
      u.put(Layout::kIn, text);
      u.run(m, 9);
      EXPECT_EQ(to_hex(r.get(Layout::kIv, 16)), to_hex(u.get(Layout::kIv, 16)));
    }
  }
}

// §1.7: the interrupt is taken at the first interrupt point at or after the pending
// cycle; the clock at a point is the chaining-mode start-up plus k per-block costs.
TEST(AceInterrupts, TakenAtFirstPointAfterPendingCycle_Sec1_7_Sec3_3) {
  AceRig r("esther-c5j-s9");
  r.set_key(kSp800Key);
  r.set_cw(0x00A);
  r.run("CBC", 1);  // load the key; EFLAGS[30] = 1 from now on
  const AceParams& p = r.cpu().ace;
  const double base = p.chain_startup[0], per = p.chain_per_block[0];
  r.env.now = 1000;
  r.env.interrupt_at = 1000 + uint64_t(std::llround(base + 3.5 * per));
  const Outcome o = r.run("CBC", 10);
  ASSERT_EQ(o.status, Status::Interrupted);
  EXPECT_EQ(o.blocks, 4u);
  EXPECT_EQ(o.cycles, uint64_t(std::llround(base + 4 * per)));
  EXPECT_EQ(r.s[Gpr::CX], 6u);
}

// §1.7: "at least one step": a single block, or an ECB pair, is never interrupted.
TEST(AceInterrupts, NoInterruptWithoutAPoint_Sec1_7_Sec3_3) {
  AceRig r("esther-c5j-s9");
  r.set_key(kSp800Key);
  r.set_cw(0x00A);
  r.env.interrupt_at = 0;
  EXPECT_EQ(r.run("CBC", 1).status, Status::Completed);
  EXPECT_EQ(r.run("ECB", 2).status, Status::Completed);
  EXPECT_EQ(r.run("ECB", 3).status, Status::Interrupted);
}

// §6.6: "for 1 < ECX < 5 ... no interrupts will have occurred"; ECX = 5 can stop after 2.
TEST(AceInterrupts, CtrSmallCountsAreNeverInterrupted_Sec6_6) {
  for (uint64_t n = 1; n <= 6; ++n) {
    AceRig r("esther-c5j-s9");
    r.set_key(kSp800Key);
    r.set_iv(kIv);
    r.set_cw(0x00A);
    r.env.interrupt_at = 0;
    const Outcome o = r.run("CTR", n);
    if (n < 5) {
      EXPECT_EQ(o.status, Status::Completed) << n;
    } else {
      EXPECT_EQ(o.status, Status::Interrupted) << n;
      EXPECT_EQ(o.blocks, 2u);
    }
  }
}

}  // namespace
}  // namespace padlock::test
