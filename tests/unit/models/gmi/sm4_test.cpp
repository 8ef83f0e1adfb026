// CCS_ENCRYPT (SM4, GMI User Manual Rev 1.0 §1.2): the GB/T 32907-2016 vectors
// (tests/vectors/gmi/sm4.vec), the five modes in both directions against OpenSSL 3's SM4,
// the MAC bit, the 16-bit CTR counter, the IV at EDX, the registers, and the choices.
#include "models/gmi/sm4.hpp"

#include <openssl/evp.h>

#include "common/vector_file.hpp"
#include "tests/unit/models/gmi/zx_rig.hpp"

namespace padlock::test {
namespace {

constexpr uint64_t kKeyVa = ZxRig::kStateVa;
constexpr uint64_t kIvVa = ZxRig::kStateVa + 0x100;

enum Mode : uint32_t {
  kEcb = 1u << 6,
  kCbc = 1u << 7,
  kCfb = 1u << 8,
  kOfb = 1u << 9,
  kCtr = 1u << 10
};
constexpr uint32_t kSm4 = 0x20;  // EAX[5:1] = 10000b
constexpr uint32_t kDecrypt = 1;
constexpr uint32_t kMac = 1u << 11;

const EVP_CIPHER* openssl_cipher(uint32_t mode) {
  switch (mode) {
    case kEcb:
      return EVP_sm4_ecb();
    case kCbc:
      return EVP_sm4_cbc();
    case kCfb:
      return EVP_sm4_cfb128();
    case kOfb:
      return EVP_sm4_ofb();
    default:
      return EVP_sm4_ctr();
  }
}

std::vector<uint8_t> openssl_sm4(uint32_t mode, bool decrypt, const std::vector<uint8_t>& key,
                                 const std::vector<uint8_t>& iv, const std::vector<uint8_t>& in) {
  EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
  EXPECT_EQ(EVP_CipherInit_ex(c, openssl_cipher(mode), nullptr, key.data(),
                              mode == kEcb ? nullptr : iv.data(), decrypt ? 0 : 1),
            1);
  EVP_CIPHER_CTX_set_padding(c, 0);
  std::vector<uint8_t> out(in.size() + 16);
  int n = 0, m = 0;
  EXPECT_EQ(EVP_CipherUpdate(c, out.data(), &n, in.data(), static_cast<int>(in.size())), 1);
  EXPECT_EQ(EVP_CipherFinal_ex(c, out.data() + n, &m), 1);
  EVP_CIPHER_CTX_free(c);
  out.resize(static_cast<size_t>(n + m));
  return out;
}

struct CryptRun {
  Outcome o;
  std::vector<uint8_t> out, iv_after;
};

CryptRun crypt(ZxRig& rig, uint32_t eax, const std::vector<uint8_t>& key,
               const std::vector<uint8_t>& iv, const std::vector<uint8_t>& in) {
  rig.put(kKeyVa, key);
  rig.put(kIvVa, iv);
  rig.put(ZxRig::kInputVa, in);
  rig.reg(Gpr::AX) = eax;
  rig.reg(Gpr::BX) = kKeyVa;
  rig.reg(Gpr::DX) = kIvVa;
  rig.reg(Gpr::CX) = in.size() / 16;
  rig.reg(Gpr::SI) = ZxRig::kInputVa;
  rig.reg(Gpr::DI) = ZxRig::kOutputVa;
  CryptRun r;
  r.o = rig.exec(kCcsEncrypt);
  r.out = rig.get(ZxRig::kOutputVa, in.size());
  r.iv_after = rig.get(kIvVa, 16);
  return r;
}

TEST(Sm4, GbT32907Vectors) {
  for (const VectorRecord& v : read_vectors("gmi/sm4.vec")) {
    SCOPED_TRACE(v.str("Name"));
    const Sm4RoundKeys keys = sm4_expand_key(v.hex("Key").data());
    std::vector<uint8_t> block = v.hex("Plain");
    const uint64_t n = v.num("Iterations");
    for (uint64_t i = 0; i < n; ++i) sm4_crypt_block(keys, false, block.data(), block.data());
    EXPECT_EQ(block, v.hex("Cipher"));
    for (uint64_t i = 0; i < n; ++i) sm4_crypt_block(keys, true, block.data(), block.data());
    EXPECT_EQ(block, v.hex("Plain"));
    if (n == 1) {  // and through the instruction
      ZxRig rig;
      const CryptRun r =
          crypt(rig, kSm4 | kEcb, v.hex("Key"), std::vector<uint8_t>(16), v.hex("Plain"));
      EXPECT_EQ(r.out, v.hex("Cipher"));
    }
  }
}

// Five modes x two directions against OpenSSL 3, with the registers GMI §1.2 lists.
// The documented choice of clocks (docs/fidelity/gmi.md, "Timing"): start-up 40, key
// expansion 32, 32 a block.
TEST(Sm4, ClocksAreTheDocumentedChoice) {
  ZxRig rig;
  const CryptRun r =
      crypt(rig, kSm4 | kEcb, random_bytes(16, 1), std::vector<uint8_t>(16), random_bytes(64, 2));
  ASSERT_EQ(r.o.status, Status::Completed);
  EXPECT_EQ(r.o.cycles, 40u + 32u + 4 * 32u);
}

TEST(Sm4, FiveModesBothDirectionsAgainstOpenSsl) {
  for (uint32_t mode : {kEcb, kCbc, kCfb, kOfb, kCtr}) {
    for (bool decrypt : {false, true}) {
      for (uint32_t seed = 1; seed <= 5; ++seed) {
        SCOPED_TRACE(::testing::Message()
                     << "mode " << mode << " decrypt " << decrypt << " seed " << seed);
        const std::vector<uint8_t> key = random_bytes(16, seed);
        std::vector<uint8_t> iv = random_bytes(16, seed + 100);
        iv[14] = 0x12;  // no 16-bit counter wrap within these blocks
        const std::vector<uint8_t> in = random_bytes(16 * (seed * 3), seed + 200);
        ZxRig rig;
        const CryptRun r = crypt(rig, kSm4 | mode | (decrypt ? kDecrypt : 0), key, iv, in);
        ASSERT_EQ(r.o.status, Status::Completed);
        EXPECT_EQ(r.out, openssl_sm4(mode, decrypt, key, iv, in));
        EXPECT_EQ(rig.reg(Gpr::AX), kSm4 | mode | (decrypt ? kDecrypt : 0));
        EXPECT_EQ(rig.reg(Gpr::BX), kKeyVa);
        EXPECT_EQ(rig.reg(Gpr::CX), 0u);
        EXPECT_EQ(rig.reg(Gpr::SI), ZxRig::kInputVa + in.size());
        EXPECT_EQ(rig.reg(Gpr::DI), ZxRig::kOutputVa + in.size());
        EXPECT_EQ(rig.reg(Gpr::DX), kIvVa);
        // The IV at EDX chains into the next call: a second call on more data continues the
        // same stream (openEuler's CBC over several skcipher walk steps).
        if (mode != kEcb) {
          const std::vector<uint8_t> more = random_bytes(32, seed + 300);
          ZxRig rig2;
          const CryptRun r2 =
              crypt(rig2, kSm4 | mode | (decrypt ? kDecrypt : 0), key, r.iv_after, more);
          std::vector<uint8_t> all = in;
          all.insert(all.end(), more.begin(), more.end());
          const std::vector<uint8_t> whole = openssl_sm4(mode, decrypt, key, iv, all);
          EXPECT_EQ(r2.out, std::vector<uint8_t>(whole.end() - 32, whole.end()));
        } else {
          EXPECT_EQ(r.iv_after, iv) << "ECB does not touch the IV";
        }
      }
    }
  }
}

// GMI §1.2 MAC bit (CBC, CFB): every block goes to the same EDI, which ends with the last
// block (the CBC-MAC / CFB-MAC), and EDI does not advance.
TEST(Sm4, MacBitCbcAndCfb) {
  for (uint32_t mode : {kCbc, kCfb}) {
    const std::vector<uint8_t> key = random_bytes(16, 1), iv = random_bytes(16, 2);
    const std::vector<uint8_t> in = random_bytes(16 * 9, 3);
    ZxRig rig;
    const CryptRun r = crypt(rig, kSm4 | mode | kMac, key, iv, in);
    ASSERT_EQ(r.o.status, Status::Completed);
    const std::vector<uint8_t> full = openssl_sm4(mode, false, key, iv, in);
    EXPECT_EQ(rig.get(ZxRig::kOutputVa, 16), std::vector<uint8_t>(full.end() - 16, full.end()));
    EXPECT_EQ(rig.get(ZxRig::kOutputVa + 16, 16), std::vector<uint8_t>(16, 0)) << "one block only";
    EXPECT_EQ(rig.reg(Gpr::DI), ZxRig::kOutputVa);
    EXPECT_EQ(rig.reg(Gpr::SI), ZxRig::kInputVa + in.size());
  }
  // In ECB, OFB and CTR the bit is ignored, with a diagnostic.
  ZxRig rig;
  const std::vector<uint8_t> key = random_bytes(16, 4), iv(16, 0), in = random_bytes(64, 5);
  const CryptRun r = crypt(rig, kSm4 | kOfb | kMac, key, iv, in);
  EXPECT_EQ(r.out, openssl_sm4(kOfb, false, key, iv, in));
  EXPECT_EQ(rig.diag.count(Diag::Sm4MacMode), 1);
}

// CTR: the counter is the IV's low 16 bits; at 0xFFFF it wraps to 0 with no carry
// (openEuler splits its calls there), with a diagnostic.
TEST(Sm4, CtrSixteenBitCounterWraps) {
  const std::vector<uint8_t> key = random_bytes(16, 9);
  std::vector<uint8_t> iv = random_bytes(16, 10);
  iv[14] = 0xFF;
  iv[15] = 0xFE;
  const std::vector<uint8_t> in = random_bytes(16 * 4, 11);
  ZxRig rig;
  const CryptRun r = crypt(rig, kSm4 | kCtr, key, iv, in);
  // Blocks 0-1 use ..FFFE, ..FFFF; blocks 2-3 use ..0000, ..0001 with byte 13 unchanged.
  std::vector<uint8_t> wrapped = iv;
  wrapped[14] = 0;
  wrapped[15] = 0;
  const std::vector<uint8_t> first =
      openssl_sm4(kCtr, false, key, iv, {in.begin(), in.begin() + 32});
  const std::vector<uint8_t> second =
      openssl_sm4(kCtr, false, key, wrapped, {in.begin() + 32, in.end()});
  EXPECT_EQ(std::vector<uint8_t>(r.out.begin(), r.out.begin() + 32), first);
  EXPECT_EQ(std::vector<uint8_t>(r.out.begin() + 32, r.out.end()), second);
  EXPECT_EQ(rig.diag.count(Diag::Sm4CtrWrap), 1);
  std::vector<uint8_t> after = iv;
  after[14] = 0;
  after[15] = 2;
  EXPECT_EQ(r.iv_after, after);
}

TEST(Sm4, BadControlWordsAreUd) {
  const std::vector<uint8_t> key(16, 1), iv(16, 2), in(32, 3);
  for (uint32_t eax : {uint32_t{kEcb}, kSm4, kSm4 | kEcb | kCbc, 0x22u | kEcb, 0x3Eu | kCtr}) {
    ZxRig rig;
    const CryptRun r = crypt(rig, eax, key, iv, in);
    EXPECT_EQ(r.o.fault.kind, FaultKind::InvalidOpcode) << eax;
    EXPECT_EQ(rig.diag.count(Diag::Sm4BadControlWord), 1) << eax;
    EXPECT_EQ(rig.reg(Gpr::CX), 2u);
  }
  // EAX[31:12] are ignored, with a diagnostic.
  ZxRig rig;
  const CryptRun r = crypt(rig, kSm4 | kEcb | 0x10000u, key, iv, in);
  EXPECT_EQ(r.out, openssl_sm4(kEcb, false, key, iv, in));
  EXPECT_EQ(rig.diag.count(Diag::Sm4ControlReserved), 1);
}

// ZX-C as openEuler's driver sees it: ECB and CBC only.
TEST(Sm4, ChainModesAbsentAreUd) {
  const std::vector<uint8_t> key(16, 1), iv(16, 2), in(32, 3);
  for (uint32_t mode : {kCfb, kOfb, kCtr}) {
    ZxRig rig(zhaoxin_like(false));
    const CryptRun r = crypt(rig, kSm4 | mode, key, iv, in);
    EXPECT_EQ(r.o.fault.kind, FaultKind::InvalidOpcode);
    EXPECT_EQ(rig.diag.count(Diag::Sm4ModeAbsent), 1);
  }
  ZxRig rig(zhaoxin_like(false));
  EXPECT_EQ(crypt(rig, kSm4 | kCbc, key, iv, in).out, openssl_sm4(kCbc, false, key, iv, in));
}

// The registry's ZX-C has the reduced mode set; the family-7 parts have all five modes.
TEST(Sm4, ZxCHasEcbAndCbcOnly) {
  EXPECT_FALSE(find_cpu_model("zx-c")->gmi.sm4_chain_modes);
  for (const char* name : {"kx-5000", "kx-6000", "kh-40000", "kx-7000"}) {
    EXPECT_TRUE(find_cpu_model(name)->gmi.sm4_chain_modes) << name;
  }
  const std::vector<uint8_t> key(16, 1), iv(16, 2), in(32, 3);
  ZxRig zxc(*find_cpu_model("zx-c"));
  EXPECT_EQ(crypt(zxc, kSm4 | kCtr, key, iv, in).o.fault.kind, FaultKind::InvalidOpcode);
  ZxRig kx6000(*find_cpu_model("kx-6000"));
  EXPECT_EQ(crypt(kx6000, kSm4 | kCtr, key, iv, in).out, openssl_sm4(kCtr, false, key, iv, in));
}

TEST(Sm4, OutputFaultIsRestartable) {
  const std::vector<uint8_t> key = random_bytes(16, 1), iv = random_bytes(16, 2);
  const std::vector<uint8_t> in = random_bytes(16 * 8, 3);
  ZxRig rig;
  rig.mem.protect(ZxRig::kOutputVa + 4096, 4096, FlatMemory::kRead);
  rig.put(kKeyVa, key);
  rig.put(kIvVa, iv);
  rig.put(ZxRig::kInputVa, in);
  rig.reg(Gpr::AX) = kSm4 | kCbc;
  rig.reg(Gpr::BX) = kKeyVa;
  rig.reg(Gpr::DX) = kIvVa;
  rig.reg(Gpr::CX) = 8;
  rig.reg(Gpr::SI) = ZxRig::kInputVa;
  rig.reg(Gpr::DI) = ZxRig::kOutputVa + 4096 - 48;
  Outcome o = rig.exec(kCcsEncrypt);
  ASSERT_EQ(o.fault.kind, FaultKind::PageFault);
  EXPECT_TRUE(o.fault.write);
  EXPECT_EQ(rig.reg(Gpr::CX), 5u);
  rig.mem.protect(ZxRig::kOutputVa + 4096, 4096, FlatMemory::kRW);
  o = rig.exec(kCcsEncrypt);
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(rig.get(ZxRig::kOutputVa + 4096 - 48, in.size()),
            openssl_sm4(kCbc, false, key, iv, in));
}

TEST(Sm4, EcxZeroDoesNothing) {
  ZxRig rig;
  const CryptRun r =
      crypt(rig, kSm4 | kCbc, std::vector<uint8_t>(16, 1), std::vector<uint8_t>(16, 2), {});
  EXPECT_EQ(r.o.status, Status::Completed);
  EXPECT_EQ(r.iv_after, std::vector<uint8_t>(16, 2));
}

}  // namespace
}  // namespace padlock::test
