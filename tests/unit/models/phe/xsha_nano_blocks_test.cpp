// Nano REP XSHA with RAX = -1 (PheParams.partial_rax_minus1): ECX whole 64-byte blocks, no
// padding. What clients rely on (OpenSSL engines/asm/e_padlock-x86_64.pl
// padlock_sha1_blocks/padlock_sha256_blocks, GnuTLS lib/accelerated/x86/sha-padlock.c,
// Linux drivers/crypto/padlock-sha.c): the chaining state at EDI after ECX blocks, with
// the caller doing the FIPS 180-2 padding itself. Our restart choice: ECX counts down,
// ESI advances, RAX stays -1 (docs/fidelity/phe.md).
#include <gtest/gtest.h>

#include "tests/unit/models/phe/phe_rig.hpp"

namespace padlock::test {
namespace {

class XshaNanoBlocks : public ShaTest {};

// padlock_sha*_blocks in 64-bit mode: mov $-1,%rax; RCX = blocks; RSI = data; RDI = an
// aligned 128-byte copy of the context.
TEST_P(XshaNanoBlocks, RaxMinusOneHashesWholeBlocks64Bit_NanoClients) {
  const size_t blocks = 37;
  const auto data = random_bytes(64 * blocks, 11);
  XshaRig rig("nano");
  rig.start_blocks(sha256(), data.data(), blocks, ~uint64_t{0});
  rig.s.set_eflags30(true);
  const Outcome o = rig.exec(sha256(), isa::CpuMode::Long64);
  ASSERT_EQ(rig.last_decoded.addr_size, 64);
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(rig.state(sha256()), openssl_state_after_blocks(sha256(), data.data(), blocks));
  EXPECT_EQ(reg(rig.s, Gpr::SI), XshaRig::kInputVa + data.size());
  EXPECT_EQ(reg(rig.s, Gpr::CX), 0u);
  EXPECT_EQ(reg(rig.s, Gpr::AX), ~uint64_t{0});
  EXPECT_EQ(reg(rig.s, Gpr::DI), XshaRig::kHashVa);
  EXPECT_FALSE(rig.s.eflags30());  // §1.8
  EXPECT_EQ(o.blocks, blocks);
}

// GnuTLS sha-padlock.c: one block per call (SHA1_COMPRESS(ctx, data) with blocks = 1),
// padding done in software (MD_PAD), 32-bit mode with EAX = 0xFFFFFFFF. The final state
// must be the FIPS 180-2 digest of the whole message.
TEST_P(XshaNanoBlocks, GnutlsStyleSoftwarePaddingGivesDigest_NanoClients) {
  const size_t len = 200;
  const auto msg = random_bytes(len, 12);
  std::vector<uint8_t> padded(msg);
  padded.push_back(0x80);
  while (padded.size() % 64 != 56) padded.push_back(0);
  const uint64_t bits = len * 8;
  for (int i = 7; i >= 0; --i) padded.push_back(static_cast<uint8_t>(bits >> (8 * i)));
  XshaRig rig("nano");
  rig.put_input(padded.data(), padded.size());
  rig.init_state(sha256());
  for (size_t b = 0; b < padded.size() / 64; ++b) {
    rig.setup_regs(1, XshaRig::kInputVa + 64 * b);
    rig.s.gpr[static_cast<int>(Gpr::AX)] = 0xFFFFFFFFu;
    ASSERT_EQ(rig.exec(sha256()).status, Status::Completed);
  }
  EXPECT_EQ(rig.digest(sha256()), openssl_digest(sha256(), msg.data(), len));
}

// §1.7: interruptible after every block; re-executing resumes (ECX = blocks left).
TEST_P(XshaNanoBlocks, InterruptedBlocksResume_Sec1_7_NanoClients) {
  const size_t blocks = 300;
  const auto data = random_bytes(64 * blocks, 13);
  XshaRig rig("nano");
  rig.start_blocks(sha256(), data.data(), blocks);
  int interrupts = 0;
  for (;;) {
    rig.env.interrupt_at = rig.env.now + 2500;
    const Outcome o = rig.exec(sha256());
    if (o.status == Status::Completed) break;
    ASSERT_EQ(o.status, Status::Interrupted);
    ++interrupts;
    const uint64_t left = reg(rig.s, Gpr::CX);
    const uint64_t done = blocks - left;
    ASSERT_GT(done, 0u);
    EXPECT_EQ(reg(rig.s, Gpr::SI), XshaRig::kInputVa + 64 * done);
    EXPECT_EQ(reg(rig.s, Gpr::AX), 0xFFFFFFFFu);
    EXPECT_EQ(rig.state(sha256()), openssl_state_after_blocks(sha256(), data.data(), done));
  }
  EXPECT_GT(interrupts, 10);
  EXPECT_EQ(rig.state(sha256()), openssl_state_after_blocks(sha256(), data.data(), blocks));
}

// A page fault after some blocks leaves ECX/ESI/state at the completed blocks.
TEST_P(XshaNanoBlocks, PageFaultMidBlocks_Sec1_7_NanoClients) {
  const size_t blocks = 100;
  const auto data = random_bytes(64 * blocks, 14);
  XshaRig rig("nano");
  rig.start_blocks(sha256(), data.data(), blocks);
  rig.mem.protect(XshaRig::kInputVa + 4096, 4096, FlatMemory::kNone);
  const Outcome o = rig.exec(sha256());
  ASSERT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.address, XshaRig::kInputVa + 4096);
  EXPECT_EQ(reg(rig.s, Gpr::CX), blocks - 64);
  EXPECT_EQ(reg(rig.s, Gpr::SI), XshaRig::kInputVa + 4096);
  EXPECT_EQ(rig.state(sha256()), openssl_state_after_blocks(sha256(), data.data(), 64));
}

// RAX = -1 means "blocks" only at the address size: in 64-bit mode EAX = 0xFFFFFFFF with
// the upper half clear is an ordinary (EAX > ECX) start.
TEST_P(XshaNanoBlocks, AllOnesOnlyAtAddressSize_NanoClients) {
  XshaRig rig("nano");
  rig.init_state(sha256());
  rig.setup_regs(2);
  rig.s.gpr[static_cast<int>(Gpr::AX)] = 0xFFFFFFFFu;
  const auto before = rig.state(sha256());
  ASSERT_EQ(rig.exec(sha256(), isa::CpuMode::Long64).status, Status::Completed);
  EXPECT_EQ(rig.diag.count(Diag::XshaEaxBeyondEcx), 1);
  EXPECT_EQ(rig.state(sha256()), before);
}

// Esther has no blocks mode: EAX = -1 there is EAX > ECX (Diag XshaEaxBeyondEcx).
TEST_P(XshaNanoBlocks, EstherHasNoBlocksMode_Sec4_1) {
  const auto data = random_bytes(128, 15);
  XshaRig rig("esther-c5j");
  rig.start_blocks(sha256(), data.data(), 2);
  const auto before = rig.state(sha256());
  ASSERT_EQ(rig.exec(sha256()).status, Status::Completed);
  EXPECT_EQ(rig.state(sha256()), before);
  EXPECT_EQ(reg(rig.s, Gpr::SI), XshaRig::kInputVa);
  EXPECT_EQ(rig.diag.count(Diag::XshaEaxBeyondEcx), 1);
}

INSTANTIATE_TEST_SUITE_P(Sha, XshaNanoBlocks, ::testing::Bool(), sha_name);

}  // namespace
}  // namespace padlock::test
