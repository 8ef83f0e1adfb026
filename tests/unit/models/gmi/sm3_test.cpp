// CCS_HASH (SM3, GMI User Manual Rev 1.0 §1.1): the GB/T 32905-2016 vectors
// (tests/vectors/gmi/sm3.vec) in both modes, OpenSSL 3's SM3 on random messages, the
// registers each mode leaves, and the #UD choices for the EBX and EAX nobody uses.
#include "models/gmi/sm3.hpp"

#include <openssl/evp.h>

#include "common/vector_file.hpp"
#include "tests/unit/models/gmi/zx_rig.hpp"

namespace padlock::test {
namespace {

std::vector<uint8_t> openssl_sm3(const std::vector<uint8_t>& m) {
  std::vector<uint8_t> out(32);
  unsigned len = 0;
  EXPECT_EQ(EVP_Digest(m.data(), m.size(), out.data(), &len, EVP_sm3(), nullptr), 1);
  return out;
}

// The state at EDI as openEuler's sm3-zhaoxin-gmi.c keeps it: the IV's words big-endian.
void put_iv(ZxRig& rig) {
  uint8_t iv[32];
  for (int i = 0; i < 8; ++i)
    for (int b = 0; b < 4; ++b) iv[4 * i + b] = static_cast<uint8_t>(kSm3Iv[i] >> (24 - 8 * b));
  rig.put(ZxRig::kStateVa, iv, 32);
}

// EAX = 0: ECX bytes, padded by the unit.
Outcome hash_padded(ZxRig& rig, const std::vector<uint8_t>& m) {
  put_iv(rig);
  rig.put(ZxRig::kInputVa, m);
  rig.reg(Gpr::AX) = 0;
  rig.reg(Gpr::BX) = 0x20;
  rig.reg(Gpr::CX) = m.size();
  rig.reg(Gpr::SI) = ZxRig::kInputVa;
  rig.reg(Gpr::DI) = ZxRig::kStateVa;
  return rig.exec(kCcsHash);
}

// EAX = -1: the software pads (as the kernel's sm3_base does) and hands whole blocks.
Outcome hash_blocks(ZxRig& rig, const std::vector<uint8_t>& m, isa::CpuMode mode) {
  std::vector<uint8_t> p = m;
  p.push_back(0x80);
  while (p.size() % 64 != 56) p.push_back(0);
  for (int i = 7; i >= 0; --i) p.push_back(static_cast<uint8_t>(uint64_t{m.size()} * 8 >> (8 * i)));
  put_iv(rig);
  rig.put(ZxRig::kInputVa, p);
  rig.reg(Gpr::AX) = mode == isa::CpuMode::Long64 ? ~uint64_t{0} : 0xFFFFFFFFu;
  rig.reg(Gpr::BX) = 0x20;
  rig.reg(Gpr::CX) = p.size() / 64;
  rig.reg(Gpr::SI) = ZxRig::kInputVa;
  rig.reg(Gpr::DI) = ZxRig::kStateVa;
  return rig.exec(kCcsHash, mode);
}

TEST(Sm3, GbT32905VectorsPadMode) {
  for (const VectorRecord& r : read_vectors("gmi/sm3.vec")) {
    SCOPED_TRACE(r.str("Name"));
    ZxRig rig;
    const std::vector<uint8_t> m = r.hex("In");
    const Outcome o = hash_padded(rig, m);
    ASSERT_EQ(o.status, Status::Completed);
    EXPECT_EQ(rig.get(ZxRig::kStateVa, 32), r.hex("Out"));
    EXPECT_EQ(rig.get(ZxRig::kStateVa, 32), openssl_sm3(m));
    // GMI §1.1: EAX = ECX, ECX unchanged, ESI past the input, EDI unchanged.
    EXPECT_EQ(rig.reg(Gpr::AX), m.size());
    EXPECT_EQ(rig.reg(Gpr::CX), m.size());
    EXPECT_EQ(rig.reg(Gpr::SI), ZxRig::kInputVa + m.size());
    EXPECT_EQ(rig.reg(Gpr::DI), ZxRig::kStateVa);
    EXPECT_EQ(rig.reg(Gpr::BX), 0x20u);
  }
}

// The documented choice of clocks (docs/fidelity/gmi.md, "Timing"): start-up 40, 240 a
// block, 20 to pad; 100 bytes are one block and 36 bytes padded into a second.
TEST(Sm3, ClocksAreTheDocumentedChoice) {
  ZxRig rig;
  const Outcome o = hash_padded(rig, random_bytes(100, 3));
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(o.cycles, 40u + 2 * 240u + 20u);
}

TEST(Sm3, GbT32905VectorsBlockMode) {
  for (const isa::CpuMode mode : {isa::CpuMode::Protected32, isa::CpuMode::Long64}) {
    for (const VectorRecord& r : read_vectors("gmi/sm3.vec")) {
      SCOPED_TRACE(r.str("Name"));
      ZxRig rig;
      const Outcome o = hash_blocks(rig, r.hex("In"), mode);
      ASSERT_EQ(o.status, Status::Completed);
      EXPECT_EQ(rig.get(ZxRig::kStateVa, 32), r.hex("Out"));
      // GMI §1.1: EAX unchanged, ECX = 0.
      EXPECT_EQ(rig.reg(Gpr::AX) & 0xFFFFFFFF, 0xFFFFFFFFu);
      EXPECT_EQ(rig.reg(Gpr::CX), 0u);
      EXPECT_EQ(rig.reg(Gpr::DI), ZxRig::kStateVa);
    }
  }
}

TEST(Sm3, RandomLengthsAgainstOpenSsl) {
  for (uint32_t len = 0; len < 300; len += 7) {
    const std::vector<uint8_t> m = random_bytes(len, len + 1);
    ZxRig a, b;
    ASSERT_EQ(hash_padded(a, m).status, Status::Completed);
    ASSERT_EQ(hash_blocks(b, m, isa::CpuMode::Protected32).status, Status::Completed);
    const std::vector<uint8_t> want = openssl_sm3(m);
    EXPECT_EQ(a.get(ZxRig::kStateVa, 32), want) << len;
    EXPECT_EQ(b.get(ZxRig::kStateVa, 32), want) << len;
  }
}

TEST(Sm3, BlockModeInterruptedAndRestarted) {
  const std::vector<uint8_t> m = random_bytes(64 * 50 - 9, 11);
  ZxRig rig;
  rig.env.interrupt_at = 2000;
  Outcome o = hash_blocks(rig, m, isa::CpuMode::Protected32);
  int interrupts = 0;
  while (o.status == Status::Interrupted && interrupts < 100) {
    ++interrupts;
    EXPECT_GT(rig.reg(Gpr::CX), 0u);
    rig.env.interrupt_at = rig.env.now + 2000;
    o = rig.exec(kCcsHash);
  }
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_GT(interrupts, 3);
  EXPECT_EQ(rig.get(ZxRig::kStateVa, 32), openssl_sm3(m));
}

TEST(Sm3, OtherEbxOrEaxIsUd) {
  ZxRig rig;
  hash_padded(rig, {1, 2, 3});
  rig.reg(Gpr::BX) = 0x10;
  Outcome o = rig.exec(kCcsHash);
  EXPECT_EQ(o.fault.kind, FaultKind::InvalidOpcode);
  EXPECT_EQ(rig.diag.count(Diag::Sm3BadEbx), 1);
  rig.reg(Gpr::BX) = 0x20;
  rig.reg(Gpr::AX) = 5;
  o = rig.exec(kCcsHash);
  EXPECT_EQ(o.fault.kind, FaultKind::InvalidOpcode);
  EXPECT_EQ(rig.diag.count(Diag::Sm3BadEax), 1);
}

TEST(Sm3, AbsentOnNanoIsUd) {
  ZxRig rig(*find_cpu_model("nano"));
  const Outcome o = hash_padded(rig, {1, 2, 3});
  EXPECT_EQ(o.fault.kind, FaultKind::InvalidOpcode);
  EXPECT_EQ(rig.padlock().centaur_features() & 0x30u, 0u);
  ZxRig zx;
  EXPECT_EQ(zx.padlock().centaur_features() & 0x30u, 0x30u);  // CCS bits 4/5
}

}  // namespace
}  // namespace padlock::test
