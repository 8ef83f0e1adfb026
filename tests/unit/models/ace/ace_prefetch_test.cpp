// Input over-read (§3.1 ECB pairs; the Nano "prefetch errata" of OpenSSL
// engines/asm/e_padlock-x86_64.pl: ecb 128, cbc 64, ctr32 32 bytes; Linux
// drivers/crypto/padlock-aes.c: Nano stepping 2 fetches 8 ECB / 4 CBC blocks). The input
// is read in groups counted from ESI, so bytes past ESI + 16*ECX can fault.

#include "ace_rig.hpp"

namespace padlock::test {
namespace {

constexpr uint64_t kPageA = 0x600000;  // mapped
constexpr uint64_t kPageB = 0x601000;  // unmapped guard page after it

struct GuardRig : AceRig {
  explicit GuardRig(const char* cpu) : AceRig(cpu) {
    mem.map(kPageA, 0x1000);
    set_key(hex("000102030405060708090a0b0c0d0e0f"));
    set_iv(Bytes(16, 0));
    set_cw(0x00A);
  }
  // n blocks whose input ends `slack` bytes before the guard page.
  Outcome run_at_end(const char* mode, uint64_t n, uint64_t slack = 0) {
    load_regs(n, kPageB - 16 * n - slack, Layout::kOut);
    return exec(xcrypt_id(mode));
  }
};

void expect_guard_fault(const Outcome& o) {
  EXPECT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
  EXPECT_EQ(o.fault.address, kPageB);
  EXPECT_FALSE(o.fault.write);
}

// Esther: ECB reads pairs (§3.1, §3.3), the chaining modes read exactly their input.
TEST(AcePrefetch, EstherReadsEcbPairsOnly_Sec3_1_Sec3_3) {
  GuardRig r("esther-c5j-s9");
  expect_guard_fault(r.run_at_end("ECB", 1));
  EXPECT_EQ(r.run_at_end("ECB", 2).status, Status::Completed);
  EXPECT_EQ(r.run_at_end("ECB", 3, 16).status, Status::Completed);
  for (const char* m : {"CBC", "CFB", "OFB", "CTR"})
    EXPECT_EQ(r.run_at_end(m, 1).status, Status::Completed) << m;
}

// Nano: ECB reads 128-byte groups, CBC 64, CTR 32; CFB and OFB read what they use.
TEST(AcePrefetch, NanoReadsPrefetchGroups_Sec1_7_OpenSslPrefetchErrata) {
  GuardRig r("nano");
  expect_guard_fault(r.run_at_end("ECB", 1));
  expect_guard_fault(r.run_at_end("ECB", 2));
  expect_guard_fault(r.run_at_end("ECB", 7));
  EXPECT_EQ(r.run_at_end("ECB", 8).status, Status::Completed);
  expect_guard_fault(r.run_at_end("CBC", 1));
  expect_guard_fault(r.run_at_end("CBC", 3));
  EXPECT_EQ(r.run_at_end("CBC", 4).status, Status::Completed);
  expect_guard_fault(r.run_at_end("CTR", 1));
  EXPECT_EQ(r.run_at_end("CTR", 2).status, Status::Completed);
  EXPECT_EQ(r.run_at_end("CFB", 1).status, Status::Completed);
  EXPECT_EQ(r.run_at_end("OFB", 1).status, Status::Completed);
}

// §1.7 with groups: the group load faults after the previous groups were stored.
TEST(AcePrefetch, NanoGroupFaultAfterStoredGroups_Sec1_7) {
  GuardRig r("nano");
  const uint64_t in = kPageB - 16 * 9;  // 9 blocks: group 2 (blocks 8..15) crosses
  r.load_regs(9, in, Layout::kOut);
  const Outcome o = r.exec(isa::InsnId::XcryptEcb);
  expect_guard_fault(o);
  EXPECT_EQ(o.blocks, 8u);
  EXPECT_EQ(r.s[Gpr::CX], 1u);
  EXPECT_EQ(r.s[Gpr::SI], in + 128);
}

// The client workaround (e_padlock-x86_64.pl): when the input ends within PREFETCH bytes
// of a page end, run len - len % PREFETCH in place and the remainder from a copy. Under
// the model that never faults, while the single instruction does.
TEST(AcePrefetch, OpenSslTailSplitAvoidsTheFault_Sec1_7_OpenSslPrefetchErrata) {
  GuardRig r("nano");
  const Bytes text = random_bytes(16 * 13, 1);
  const uint64_t in = kPageB - text.size();
  r.put(in, text);
  expect_guard_fault(r.run_at_end("ECB", 13));
  // In place: 13 * 16 - (13 * 16) % 128 = 128 bytes.
  r.load_regs(8, in, Layout::kOut);
  ASSERT_EQ(r.exec(isa::InsnId::XcryptEcb).status, Status::Completed);
  // Remainder (80 bytes) copied to a buffer with room after it.
  r.put(Layout::kIn, Bytes(text.begin() + 128, text.end()));
  r.load_regs(5, Layout::kIn, Layout::kOut + 128);
  ASSERT_EQ(r.exec(isa::InsnId::XcryptEcb).status, Status::Completed);
  EXPECT_EQ(to_hex(r.get(Layout::kOut, text.size())),
            to_hex(evp("ECB", hex("000102030405060708090a0b0c0d0e0f"), {}, text, true)));
}

}  // namespace
}  // namespace padlock::test
