// REP XSHA register, memory and fault rules (§4.1, §4.3, §1.7, §1.8) and the behaviour
// chosen where the guide is silent (docs/fidelity/phe.md).
#include <gtest/gtest.h>

#include "tests/unit/models/phe/phe_rig.hpp"

namespace padlock::test {
namespace {

class XshaRules : public ShaTest {};

// §4.1: "The resulting linear address must be aligned on a 128-bit boundary ... or a
// General Protection exception occurs." Nothing changes but EFLAGS[30] (§1.8).
TEST_P(XshaRules, MisalignedEdiRaisesGp_Sec4_1) {
  XshaRig rig;
  const auto data = random_bytes(200, 1);
  rig.start(sha256(), data.data(), data.size(), XshaRig::kHashVa + 8);
  const ArchState before = rig.s;
  const Outcome o = rig.exec(sha256());
  EXPECT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.kind, FaultKind::GeneralProtection);
  EXPECT_EQ(o.fault.address, XshaRig::kHashVa + 8);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(rig.s.gpr[r], before.gpr[r]);
}

// §4.1: 128 bytes must be allocated at EDI; an area running into an unmapped page faults
// before any register or memory changes (§1.7).
TEST_P(XshaRules, HashAreaMustBe128Accessible_Sec4_1_Sec1_7) {
  XshaRig rig;
  const uint64_t edi = XshaRig::kHashVa + 4096 - 64;  // 64 bytes left in the mapped page
  const auto data = random_bytes(300, 2);
  rig.start(sha256(), data.data(), data.size(), edi);
  const auto state_before = rig.state(sha256(), edi);
  const ArchState before = rig.s;
  const Outcome o = rig.exec(sha256());
  ASSERT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
  EXPECT_EQ(o.fault.address, XshaRig::kHashVa + 4096);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(rig.s.gpr[r], before.gpr[r]);
  EXPECT_EQ(rig.state(sha256(), edi), state_before);

  // A read-only hash area faults as a write.
  XshaRig ro;
  ro.start(sha256(), data.data(), data.size());
  ro.mem.protect(XshaRig::kHashVa, 4096, FlatMemory::kRead);
  const Outcome o2 = ro.exec(sha256());
  ASSERT_EQ(o2.status, Status::Faulted);
  EXPECT_EQ(o2.fault.kind, FaultKind::PageFault);
  EXPECT_TRUE(o2.fault.write);
  EXPECT_EQ(reg(ro.s, Gpr::AX), 0u);
}

// §1.7 + §4.1: a page fault on the input leaves EAX/ESI and the hash at EDI as of the last
// completed block; re-executing after the page is mapped finishes the same hash.
TEST_P(XshaRules, InputPageFaultIsRestartable_Sec1_7_Sec4_1) {
  const size_t len = 3 * 4096 + 100;
  const auto data = random_bytes(len, 3);
  XshaRig rig;
  const uint64_t esi = XshaRig::kInputVa + 8;  // unaligned input is fine (§6.3)
  rig.put_input(data.data(), data.size(), esi);
  rig.init_state(sha256());
  rig.setup_regs(len, esi);
  const uint64_t hole = XshaRig::kInputVa + 2 * 4096;
  rig.mem.protect(hole, 4096, FlatMemory::kNone);
  const Outcome o = rig.exec(sha256());
  ASSERT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
  EXPECT_FALSE(o.fault.write);
  EXPECT_EQ(o.fault.address, hole);
  // The block straddling the hole started at esi + 64*k <= hole < esi + 64*(k+1).
  const uint64_t done = (hole - esi) / 64 * 64;
  EXPECT_EQ(reg(rig.s, Gpr::AX), done);
  EXPECT_EQ(reg(rig.s, Gpr::SI), esi + done);
  EXPECT_EQ(reg(rig.s, Gpr::CX), len);
  EXPECT_EQ(rig.state(sha256()), openssl_state_after_blocks(sha256(), data.data(), done / 64));

  rig.mem.protect(hole, 4096, FlatMemory::kRW);
  ASSERT_EQ(rig.exec(sha256()).status, Status::Completed);
  EXPECT_EQ(rig.digest(sha256()), openssl_digest(sha256(), data.data(), len));
  EXPECT_EQ(reg(rig.s, Gpr::AX), len);
  EXPECT_EQ(reg(rig.s, Gpr::SI), esi + len);
}

// A fault in the final (tail + padding) step changes nothing of that step.
TEST_P(XshaRules, TailPageFaultLeavesLastBlockState_Sec1_7) {
  const size_t len = 4096 + 40;  // the 40-byte tail sits in the second page
  const auto data = random_bytes(len, 4);
  XshaRig rig;
  rig.start(sha256(), data.data(), len);
  rig.mem.protect(XshaRig::kInputVa + 4096, 4096, FlatMemory::kNone);
  const Outcome o = rig.exec(sha256());
  ASSERT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.address, XshaRig::kInputVa + 4096);
  EXPECT_EQ(reg(rig.s, Gpr::AX), 4096u);
  EXPECT_EQ(rig.state(sha256()), openssl_state_after_blocks(sha256(), data.data(), 64));
}

// §4.1: "taking the hash of a null string (ECX = 0) is a valid operation".
TEST_P(XshaRules, EmptyInputHashesPaddingOnly_Sec4_1) {
  XshaRig rig;
  rig.init_state(sha256());
  rig.setup_regs(0, 0xDEAD0000);  // ESI is never read for an empty message
  ASSERT_EQ(rig.exec(sha256()).status, Status::Completed);
  EXPECT_EQ(rig.digest(sha256()), openssl_digest(sha256(), nullptr, 0));
  EXPECT_EQ(reg(rig.s, Gpr::AX), 0u);
  EXPECT_EQ(reg(rig.s, Gpr::SI), 0xDEAD0000u);
}

// §4.1 "Padding": every length around the block and padding boundaries.
TEST_P(XshaRules, PaddingAtEveryBoundary_Sec4_1) {
  const auto data = random_bytes(300, 5);
  for (size_t len : {1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 191, 192, 193}) {
    SCOPED_TRACE(len);
    XshaRig rig;
    rig.start(sha256(), data.data(), len);
    ASSERT_EQ(rig.exec(sha256()).status, Status::Completed);
    EXPECT_EQ(rig.digest(sha256()), openssl_digest(sha256(), data.data(), len));
  }
}

// §1.8: "REP XSHA instructions set the ACE EFLAGS:30 bit to zero", even when they fault.
TEST_P(XshaRules, ClearsEflags30_Sec1_8) {
  XshaRig rig;
  rig.init_state(sha256());
  rig.setup_regs(3);
  rig.s.set_eflags30(true);
  ASSERT_EQ(rig.exec(sha256()).status, Status::Completed);
  EXPECT_FALSE(rig.s.eflags30());
  rig.s.set_eflags30(true);
  rig.s.gpr[static_cast<int>(Gpr::DI)] = XshaRig::kHashVa + 4;  // #GP
  EXPECT_EQ(rig.exec(sha256()).status, Status::Faulted);
  EXPECT_FALSE(rig.s.eflags30());
}

// §4.1 "REP prefix": DF has no effect; the operation always goes upwards.
TEST_P(XshaRules, DirectionFlagIgnored_Sec4_1) {
  const auto data = random_bytes(150, 6);
  XshaRig rig;
  rig.start(sha256(), data.data(), data.size());
  rig.s.eflags |= 1u << 10;  // DF
  ASSERT_EQ(rig.exec(sha256()).status, Status::Completed);
  EXPECT_EQ(rig.digest(sha256()), openssl_digest(sha256(), data.data(), data.size()));
  EXPECT_EQ(reg(rig.s, Gpr::SI), XshaRig::kInputVa + data.size());
}

// §4.1 "REP prefix": 67h selects SI and DI; the upper register bits are kept.
TEST_P(XshaRules, AddressSizePrefixSelectsSiDi_Sec4_1) {
  const auto data = random_bytes(130, 7);
  XshaRig rig;
  rig.mem.map(0x1000, 4096);  // hash area at DI = 0x1000
  rig.mem.map(0x2000, 4096);  // input at SI = 0x2000
  rig.init_state(sha256(), 0x1000);
  rig.put_input(data.data(), data.size(), 0x2000);
  rig.setup_regs(data.size(), 0xABCD2000u, 0x55551000u);
  const Outcome o = rig.exec(sha256(), isa::CpuMode::Protected32, {0x67});
  ASSERT_EQ(rig.last_decoded.addr_size, 16);
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(rig.digest(sha256(), 0x1000), openssl_digest(sha256(), data.data(), data.size()));
  EXPECT_EQ(reg(rig.s, Gpr::SI), 0xABCD2000u + data.size());
  EXPECT_EQ(reg(rig.s, Gpr::DI), 0x55551000u);
}

// §4.1 "REP prefix": an operand-size prefix is an invalid instruction; REPNE is undefined
// (our choice: it acts as REP, reported).
TEST_P(XshaRules, OperandSizePrefixUdAndRepneDiag_Sec4_1) {
  XshaRig rig;
  rig.init_state(sha256());
  rig.setup_regs(3);
  const Outcome ud = rig.exec(sha256(), isa::CpuMode::Protected32, {0x66});
  EXPECT_EQ(ud.status, Status::Faulted);
  EXPECT_EQ(ud.fault.kind, FaultKind::InvalidOpcode);

  std::vector<uint8_t> bytes = {0xF2, 0x0F, 0xA6, uint8_t(sha256() ? 0xD0 : 0xC8)};
  const isa::Decoded d = isa::decode(bytes.data(), bytes.size(), isa::CpuMode::Protected32);
  const Outcome o = rig.padlock().execute(d, rig.s, rig.mem, rig.env);
  EXPECT_EQ(o.status, Status::Completed);
  EXPECT_EQ(rig.diag.count(Diag::RepnePrefix), 1);
}

// Choice (Diag XshaEaxBeyondEcx): EAX > ECX is "already complete": nothing is read or
// hashed, and the registers and the state at EDI stay as they were.
TEST_P(XshaRules, EaxBeyondEcxIsComplete_Sec4_1_Choice) {
  const auto data = random_bytes(100, 8);
  XshaRig rig;
  rig.start(sha256(), data.data(), data.size());
  ASSERT_EQ(rig.exec(sha256()).status, Status::Completed);
  const auto state = rig.state(sha256());
  rig.s.gpr[static_cast<int>(Gpr::AX)] = 1000;
  const ArchState before = rig.s;
  ASSERT_EQ(rig.exec(sha256()).status, Status::Completed);
  EXPECT_EQ(rig.state(sha256()), state);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(rig.s.gpr[r], before.gpr[r]);
  EXPECT_EQ(rig.diag.count(Diag::XshaEaxBeyondEcx), 1);
  EXPECT_EQ(rig.diag.count(Diag::XshaPadOnly), 0);
}

// Choice (Diag XshaPadOnly): EAX == ECX != 0 emits only the padding block with the bit
// length ECX * 8. Evidence: Linux 6.1 drivers/crypto/padlock-sha.c, padlock_sha1_finup
// (lines 94-118) and padlock_sha256_finup (155-179) on every non-Nano C7: when the bytes
// already hashed by the software fallback are a nonzero multiple of 64 and no bytes are
// left (final() passes count 0, lines 126-131), the driver issues REP XSHA with
// EAX = ECX = that count and the exported mid-state at EDI, and takes the result as the
// digest. ESI points at no new data: it is neither read nor advanced.
TEST_P(XshaRules, EaxEqualsEcxPadsOnly_LinuxPadlockShaFinal_Sec4_1) {
  for (const size_t blocks : {1u, 3u}) {
    SCOPED_TRACE(blocks);
    const size_t len = 64 * blocks;
    const auto data = random_bytes(len, 20 + blocks);
    XshaRig rig;
    const auto mid = openssl_state_after_blocks(sha256(), data.data(), blocks);
    std::memcpy(rig.mem.host(XshaRig::kHashVa, mid.size() * 4), mid.data(), mid.size() * 4);
    // ESI at an unmapped page: reading it would fault.
    const uint64_t esi = 0x7000000;
    rig.setup_regs(len, esi);
    rig.s.gpr[static_cast<int>(Gpr::AX)] = len;
    const Outcome o = rig.exec(sha256());
    ASSERT_EQ(o.status, Status::Completed);
    EXPECT_EQ(rig.digest(sha256()), openssl_digest(sha256(), data.data(), len));
    EXPECT_EQ(reg(rig.s, Gpr::AX), len);
    EXPECT_EQ(reg(rig.s, Gpr::CX), len);
    EXPECT_EQ(reg(rig.s, Gpr::SI), esi);
    EXPECT_EQ(o.bytes, 0u);
    EXPECT_EQ(o.blocks, 1u);
    EXPECT_EQ(rig.diag.count(Diag::XshaPadOnly), 1);
    EXPECT_EQ(rig.diag.count(Diag::XshaEaxBeyondEcx), 0);
  }
}

// §4.1: EAX = bytes already hashed, the state at EDI after them, ESI at the rest: the
// instruction continues and pads with the total length ECX. This is the resume rule, and
// how the Linux padlock-sha Zhaoxin finup issues it (EAX = bytes so far, ECX = total).
TEST_P(XshaRules, ResumeFromSoftwareEax_Sec4_1) {
  const size_t len = 64 * 7 + 30;
  const auto data = random_bytes(len, 9);
  XshaRig rig;
  rig.put_input(data.data(), data.size());
  const auto mid = openssl_state_after_blocks(sha256(), data.data(), 3);
  std::memcpy(rig.mem.host(XshaRig::kHashVa, mid.size() * 4), mid.data(), mid.size() * 4);
  rig.setup_regs(len, XshaRig::kInputVa + 192);
  rig.s.gpr[static_cast<int>(Gpr::AX)] = 192;
  ASSERT_EQ(rig.exec(sha256()).status, Status::Completed);
  EXPECT_EQ(rig.digest(sha256()), openssl_digest(sha256(), data.data(), len));
  EXPECT_EQ(rig.diag.count(Diag::XshaEaxNotBlock), 0);

  // Not a block multiple: reported, and continues from EAX bytes as documented.
  XshaRig odd;
  odd.put_input(data.data() + 10, len - 10);
  odd.init_state(sha256());
  odd.setup_regs(len);
  odd.s.gpr[static_cast<int>(Gpr::AX)] = 10;
  ASSERT_EQ(odd.exec(sha256()).status, Status::Completed);
  EXPECT_EQ(odd.diag.count(Diag::XshaEaxNotBlock), 1);
  EXPECT_EQ(reg(odd.s, Gpr::AX), len);
  EXPECT_EQ(reg(odd.s, Gpr::SI), XshaRig::kInputVa + len - 10);
}

// §4.3: only the 20/32 state bytes at EDI change; the rest of the 128-byte area is kept.
TEST_P(XshaRules, OnlyStateWordsAtEdiChange_Sec4_3) {
  XshaRig rig;
  uint8_t* area = rig.mem.host(XshaRig::kHashVa, 128);
  std::memset(area, 0xA5, 128);
  rig.init_state(sha256());
  const auto data = random_bytes(1000, 10);
  rig.put_input(data.data(), data.size());
  rig.setup_regs(data.size());
  ASSERT_EQ(rig.exec(sha256()).status, Status::Completed);
  const size_t used = sha256() ? 32 : 20;
  for (size_t i = used; i < 128; ++i) EXPECT_EQ(area[i], 0xA5) << i;
}

// §1.3: PHE is absent on Nehemiah: #UD.
TEST_P(XshaRules, AbsentOnNehemiahIsUd_Sec1_3) {
  XshaRig rig("nehemiah-c5p");
  rig.init_state(sha256());
  rig.setup_regs(3);
  const Outcome o = rig.exec(sha256());
  EXPECT_EQ(o.fault.kind, FaultKind::InvalidOpcode);
}

INSTANTIATE_TEST_SUITE_P(Sha, XshaRules, ::testing::Bool(), sha_name);

}  // namespace
}  // namespace padlock::test
