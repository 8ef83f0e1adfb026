// SM2 verify (F2 0F A6 C0, EDX = 8) as openEuler's sm2-zhaoxin-gmi.c calls it, against
// OpenSSL 3's SM2: signatures OpenSSL makes verify (ECX = 1), tampered ones do not (ECX = 0)
// and OpenSSL agrees on each; other EDX values stop as not modelled.
#include <openssl/ec.h>
#include <openssl/evp.h>

#include "tests/unit/gmi/zx_rig.hpp"

namespace padlock::test {
namespace {

constexpr uint64_t kHashVa = ZxRig::kStateVa;
constexpr uint64_t kKeyVa = ZxRig::kStateVa + 0x100;
constexpr uint64_t kSigVa = ZxRig::kStateVa + 0x200;
constexpr uint64_t kScratchVa = ZxRig::kInputVa;

struct Sm2Key {
  EVP_PKEY* pkey = nullptr;
  std::vector<uint8_t> pub;  // 04 || X || Y
  Sm2Key() {
    pkey = EVP_PKEY_Q_keygen(nullptr, nullptr, "SM2");
    size_t len = 0;
    EVP_PKEY_get_octet_string_param(pkey, "pub", nullptr, 0, &len);
    pub.resize(len);
    EVP_PKEY_get_octet_string_param(pkey, "pub", pub.data(), pub.size(), &len);
  }
  ~Sm2Key() { EVP_PKEY_free(pkey); }

  // OpenSSL's SM2 signature of the digest e (EVP_PKEY_sign signs e as given), as r || s.
  std::vector<uint8_t> sign(const std::vector<uint8_t>& e) const {
    EVP_PKEY_CTX* c = EVP_PKEY_CTX_new(pkey, nullptr);
    EXPECT_EQ(EVP_PKEY_sign_init(c), 1);
    std::vector<uint8_t> der(128);
    size_t len = der.size();
    EXPECT_EQ(EVP_PKEY_sign(c, der.data(), &len, e.data(), e.size()), 1);
    EVP_PKEY_CTX_free(c);
    const uint8_t* p = der.data();
    ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(len));
    std::vector<uint8_t> rs(64);
    BN_bn2binpad(ECDSA_SIG_get0_r(sig), rs.data(), 32);
    BN_bn2binpad(ECDSA_SIG_get0_s(sig), rs.data() + 32, 32);
    ECDSA_SIG_free(sig);
    return rs;
  }
  bool openssl_verify(const std::vector<uint8_t>& e, const std::vector<uint8_t>& rs) const {
    ECDSA_SIG* sig = ECDSA_SIG_new();
    ECDSA_SIG_set0(sig, BN_bin2bn(rs.data(), 32, nullptr), BN_bin2bn(rs.data() + 32, 32, nullptr));
    uint8_t* der = nullptr;
    const int len = i2d_ECDSA_SIG(sig, &der);
    ECDSA_SIG_free(sig);
    EVP_PKEY_CTX* c = EVP_PKEY_CTX_new(pkey, nullptr);
    EVP_PKEY_verify_init(c);
    const int ok = EVP_PKEY_verify(c, der, static_cast<size_t>(len), e.data(), e.size());
    EVP_PKEY_CTX_free(c);
    OPENSSL_free(der);
    return ok == 1;
  }
};

Outcome verify(ZxRig& rig, const std::vector<uint8_t>& e, const std::vector<uint8_t>& pub,
               const std::vector<uint8_t>& sig, uint64_t edx = 8) {
  rig.put(kHashVa, e);
  rig.put(kKeyVa, pub);
  rig.put(kSigVa, sig);
  rig.reg(Gpr::AX) = kHashVa;
  rig.reg(Gpr::BX) = kKeyVa;
  rig.reg(Gpr::DX) = edx;
  rig.reg(Gpr::SI) = kScratchVa;
  rig.reg(Gpr::DI) = kSigVa;
  rig.reg(Gpr::CX) = 0x55;
  return rig.exec(kSm2);
}

TEST(Sm2, VerifiesOpenSslSignaturesAndRejectsTamperedOnes) {
  const Sm2Key key;
  ASSERT_EQ(key.pub.size(), 65u);
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const std::vector<uint8_t> e = random_bytes(32, seed);
    const std::vector<uint8_t> sig = key.sign(e);
    ZxRig rig;
    ASSERT_EQ(verify(rig, e, key.pub, sig).status, Status::Completed);
    EXPECT_EQ(rig.reg(Gpr::CX), 1u) << seed;
    EXPECT_TRUE(key.openssl_verify(e, sig));
    // Registers other than ECX are left as they were.
    EXPECT_EQ(rig.reg(Gpr::AX), kHashVa);
    EXPECT_EQ(rig.reg(Gpr::DI), kSigVa);
    // Tampered: one bit of the digest, of r, of s, of the key's Y.
    for (int what = 0; what < 3; ++what) {
      std::vector<uint8_t> e2 = e, sig2 = sig;
      if (what == 0) e2[seed % 32] ^= 1;
      if (what == 1) sig2[seed % 32] ^= 0x10;
      if (what == 2) sig2[32 + seed % 32] ^= 0x80;
      ZxRig t;
      verify(t, e2, key.pub, sig2);
      EXPECT_EQ(t.reg(Gpr::CX), 0u) << "seed " << seed << " tamper " << what;
      EXPECT_FALSE(key.openssl_verify(e2, sig2));
    }
    std::vector<uint8_t> pub2 = key.pub;
    pub2[64] ^= 1;  // off the curve
    ZxRig t;
    verify(t, e, pub2, sig);
    EXPECT_EQ(t.reg(Gpr::CX), 0u);
  }
}

// The documented choice of clocks (docs/fidelity/gmi.md, "Timing"): 200,000 a verify.
TEST(Sm2, ClocksAreTheDocumentedChoice) {
  const Sm2Key key;
  const std::vector<uint8_t> e = random_bytes(32, 9);
  ZxRig rig;
  const Outcome o = verify(rig, e, key.pub, key.sign(e));
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(o.cycles, 200000u);
}

TEST(Sm2, OtherEdxIsNotModelled) {
  const Sm2Key key;
  ZxRig rig;
  const Outcome o =
      verify(rig, std::vector<uint8_t>(32, 1), key.pub, std::vector<uint8_t>(64, 2), 4);
  EXPECT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.kind, FaultKind::NotModelled);
  EXPECT_EQ(rig.diag.count(Diag::Sm2BadEdx), 1);
  EXPECT_EQ(rig.reg(Gpr::CX), 0x55u);
}

TEST(Sm2, ScratchAreaMustBeWritable) {
  const Sm2Key key;
  ZxRig rig;
  rig.mem.protect(kScratchVa + 4096, 4096, FlatMemory::kRead);
  const Outcome o = verify(rig, std::vector<uint8_t>(32, 1), key.pub, std::vector<uint8_t>(64, 2));
  EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
  EXPECT_EQ(o.fault.address, kScratchVa + 4096);
}

// Without the SM2 unit F2 0F A6 C0 stays what it was on VIA: REPNE MONTMUL (guide §5.1
// REPNE undefined, run as REP, with the repne-prefix diagnostic).
TEST(Sm2, OnNanoF2IsRepneMontmul) {
  ZxRig rig(*find_cpu_model("nano"));
  EXPECT_EQ(
      rig.padlock().resolve(isa::decode(kSm2.data(), kSm2.size(), isa::CpuMode::Protected32)).id,
      isa::InsnId::Montmul);
  rig.exec(kSm2);
  EXPECT_EQ(rig.diag.count(Diag::RepnePrefix), 1);
  EXPECT_EQ(rig.padlock().centaur_features() & 3u, 0u);
  ZxRig zx;
  EXPECT_EQ(zx.padlock().centaur_features() & 3u, 3u);
}

// REP XRNG2, REP XMODEXP, REP MONTMUL2: with the unit, not modelled (the emulator stops);
// without it, #UD as before. CPUID still reports the bits (RNG2 22/23, RSA 27/28).
TEST(NotModelled, StopsWithTheUnitUdWithout) {
  for (const auto& insn : {kXrng2, kXmodexp, kMontmul2}) {
    ZxRig rig;
    Outcome o = rig.exec(insn);
    EXPECT_EQ(o.status, Status::Faulted);
    EXPECT_EQ(o.fault.kind, FaultKind::NotModelled);
    EXPECT_EQ(rig.diag.count(Diag::NotModelled), 1);
    ZxRig nano(*find_cpu_model("nano"));
    o = nano.exec(insn);
    EXPECT_EQ(o.fault.kind, FaultKind::InvalidOpcode);
    EXPECT_EQ(nano.diag.count(Diag::NotModelled), 0);
  }
  ZxRig rig;
  const uint32_t edx = rig.padlock().centaur_features();
  EXPECT_EQ(edx & (3u << 22), 3u << 22);
  EXPECT_EQ(edx & (3u << 27), 3u << 27);
}

}  // namespace
}  // namespace padlock::test
