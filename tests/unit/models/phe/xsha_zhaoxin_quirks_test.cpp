// Zhaoxin's PHE quirks (docs/zhaoxin.md, "Quirks"), on every Zhaoxin model and on no VIA
// model:
// - XSHA1 stores 32 bytes at EDI, the hash then 12 zero bytes, in the one-shot form
//   (EAX = 0) and in the blocks form (EAX = -1) (Zhaoxin on linux-crypto, 2025-06-16:
//   "After execution, the first 20 bytes will contain the computed hash result, while the
//   remaining 12 bytes will be zeroed out"; its driver's update path is the blocks form);
// - XSHA1 and XSHA256 with ECX = 0 do nothing (AlanSong-oc, "lib/crypto: x86/sha: Add PHE
//   Extensions support", 2026), where VIA's chips pad the empty message (§4.1).
// Each is a diagnostic, hence a checker finding.
#include <gtest/gtest.h>

#include "tests/unit/models/phe/phe_rig.hpp"

namespace padlock::test {
namespace {

constexpr const char* kZhaoxin[] = {"zx-c", "kx-5000", "kx-6000", "kh-40000", "kx-7000"};
constexpr const char* kVia[] = {"esther-c5j", "nano", "nano-3000"};

// The 12 bytes after the SHA-1 state, filled with a pattern before the instruction.
void mark_tail(XshaRig& rig) {
  std::memset(rig.mem.host(XshaRig::kHashVa + 20, 12), 0xA5, 12);
}
bool tail_is(XshaRig& rig, uint8_t v) {
  const uint8_t* t = rig.mem.host(XshaRig::kHashVa + 20, 12);
  for (int i = 0; i < 12; ++i)
    if (t[i] != v) return false;
  return true;
}

TEST(XshaZhaoxin, Sha1OneShotStores32BytesTailZero) {
  const auto msg = random_bytes(100, 31);
  for (const char* model : kZhaoxin) {
    XshaRig rig(model);
    rig.start(false, msg.data(), msg.size());
    mark_tail(rig);
    ASSERT_EQ(rig.exec(false).status, Status::Completed) << model;
    EXPECT_EQ(rig.digest(false), openssl_digest(false, msg.data(), msg.size())) << model;
    EXPECT_TRUE(tail_is(rig, 0)) << model;
    EXPECT_EQ(rig.diag.count(Diag::Xsha1Store32), 1) << model;
  }
}

TEST(XshaZhaoxin, Sha1BlocksFormStores32BytesTailZero64Bit) {
  const auto data = random_bytes(64 * 5, 32);
  for (const char* model : kZhaoxin) {
    XshaRig rig(model);
    rig.start_blocks(false, data.data(), 5, ~uint64_t{0});
    mark_tail(rig);
    ASSERT_EQ(rig.exec(false, isa::CpuMode::Long64).status, Status::Completed) << model;
    EXPECT_EQ(rig.state(false), openssl_state_after_blocks(false, data.data(), 5)) << model;
    EXPECT_TRUE(tail_is(rig, 0)) << model;
    EXPECT_EQ(rig.diag.count(Diag::Xsha1Store32), 1) << model;
  }
}

// A zero tail is overwritten with zeros: nothing lost, no diagnostic.
TEST(XshaZhaoxin, Sha1ZeroTailIsNoFinding) {
  const auto msg = random_bytes(10, 33);
  XshaRig rig("kx-6000");
  rig.start(false, msg.data(), msg.size());
  ASSERT_EQ(rig.exec(false).status, Status::Completed);
  EXPECT_EQ(rig.diag.count(Diag::Xsha1Store32), 0);
}

// EDI = ESP: the scratch copy of OpenSSL's and GnuTLS's padlock_sha1_blocks on top of their
// stack. Its tail is left-over stack: zeroed, not reported.
TEST(XshaZhaoxin, Sha1ScratchAtStackPointerIsNoFinding) {
  const auto data = random_bytes(64, 36);
  XshaRig rig("kx-6000");
  rig.start_blocks(false, data.data(), 1, ~uint64_t{0});
  rig.s.gpr[static_cast<int>(Gpr::SP)] = XshaRig::kHashVa;
  mark_tail(rig);
  ASSERT_EQ(rig.exec(false, isa::CpuMode::Long64).status, Status::Completed);
  EXPECT_TRUE(tail_is(rig, 0));
  EXPECT_EQ(rig.diag.count(Diag::Xsha1Store32), 0);
}

// XSHA256 stores its 32-byte state; the bytes after it stay.
TEST(XshaZhaoxin, Sha256StoresOnly32Bytes) {
  const auto msg = random_bytes(70, 34);
  XshaRig rig("kx-6000");
  rig.start(true, msg.data(), msg.size());
  std::memset(rig.mem.host(XshaRig::kHashVa + 32, 16), 0x5A, 16);
  ASSERT_EQ(rig.exec(true).status, Status::Completed);
  EXPECT_EQ(rig.digest(true), openssl_digest(true, msg.data(), msg.size()));
  EXPECT_EQ(*rig.mem.host(XshaRig::kHashVa + 32, 1), 0x5A);
  EXPECT_EQ(rig.diag.count(Diag::Xsha1Store32), 0);
}

TEST(XshaVia, Sha1Stores20Bytes) {
  const auto msg = random_bytes(100, 35);
  for (const char* model : kVia) {
    XshaRig rig(model);
    rig.start(false, msg.data(), msg.size());
    mark_tail(rig);
    ASSERT_EQ(rig.exec(false).status, Status::Completed) << model;
    EXPECT_EQ(rig.digest(false), openssl_digest(false, msg.data(), msg.size())) << model;
    EXPECT_TRUE(tail_is(rig, 0xA5)) << model;
    EXPECT_EQ(rig.diag.count(Diag::Xsha1Store32), 0) << model;
  }
}

class XshaEcxZero : public ShaTest {};

// Zhaoxin: EAX = 0, ECX = 0 leaves the state (the initial constants) and every register
// as they were.
TEST_P(XshaEcxZero, ZhaoxinDoesNothing) {
  for (const char* model : kZhaoxin) {
    XshaRig rig(model);
    rig.start(sha256(), nullptr, 0);
    const auto before = rig.state(sha256());
    const ArchState regs = rig.s;
    ASSERT_EQ(rig.exec(sha256()).status, Status::Completed) << model;
    EXPECT_EQ(rig.state(sha256()), before) << model;
    for (const Gpr r : {Gpr::AX, Gpr::CX, Gpr::SI, Gpr::DI})
      EXPECT_EQ(reg(rig.s, r), reg(regs, r)) << model;
    EXPECT_EQ(rig.diag.count(Diag::XshaEcxZero), 1) << model;
  }
}

// VIA (§4.1): EAX = 0, ECX = 0 hashes the empty message: SHA-1("") / SHA-256("").
TEST_P(XshaEcxZero, ViaPadsTheEmptyMessage) {
  for (const char* model : kVia) {
    XshaRig rig(model);
    rig.start(sha256(), nullptr, 0);
    ASSERT_EQ(rig.exec(sha256()).status, Status::Completed) << model;
    EXPECT_EQ(rig.digest(sha256()), openssl_digest(sha256(), nullptr, 0)) << model;
    EXPECT_EQ(rig.diag.count(Diag::XshaEcxZero), 0) << model;
  }
}

// The blocks form with ECX = 0 does nothing on every chip: no finding.
TEST_P(XshaEcxZero, BlocksFormIsNoFinding) {
  XshaRig rig("kx-6000");
  rig.start_blocks(sha256(), nullptr, 0);
  const auto before = rig.state(sha256());
  ASSERT_EQ(rig.exec(sha256()).status, Status::Completed);
  EXPECT_EQ(rig.state(sha256()), before);
  EXPECT_EQ(rig.diag.count(Diag::XshaEcxZero), 0);
}

INSTANTIATE_TEST_SUITE_P(Sha, XshaEcxZero, ::testing::Bool(), sha_name);

}  // namespace
}  // namespace padlock::test
