// SM2 verify (F2 0F A6 C0, EDX = 8) as openEuler's sm2-zhaoxin-gmi.c calls it, against
// OpenSSL 3's SM2: signatures OpenSSL makes verify (ECX = 1), tampered ones do not (ECX = 0)
// and OpenSSL agrees on each; other EDX values stop as not modelled.
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>

#include <string>

#include "common/vector_file.hpp"
#include "tests/unit/models/gmi/zx_rig.hpp"

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

// OpenSSL's verdict on (e, pub = 04 || X || Y, r || s), the key imported from its bytes.
bool openssl_verifies(const std::vector<uint8_t>& e, const std::vector<uint8_t>& pub,
                      const std::vector<uint8_t>& rs) {
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "SM2", 0);
  OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub.data(), pub.size());
  OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(bld);
  EVP_PKEY_CTX* from = EVP_PKEY_CTX_new_from_name(nullptr, "SM2", nullptr);
  EVP_PKEY* key = nullptr;
  bool ok = false;
  if (EVP_PKEY_fromdata_init(from) == 1 &&
      EVP_PKEY_fromdata(from, &key, EVP_PKEY_PUBLIC_KEY, params) == 1) {
    ECDSA_SIG* sig = ECDSA_SIG_new();
    ECDSA_SIG_set0(sig, BN_bin2bn(rs.data(), 32, nullptr), BN_bin2bn(rs.data() + 32, 32, nullptr));
    uint8_t* der = nullptr;
    const int len = i2d_ECDSA_SIG(sig, &der);
    EVP_PKEY_CTX* v = EVP_PKEY_CTX_new(key, nullptr);
    ok = EVP_PKEY_verify_init(v) == 1 &&
         EVP_PKEY_verify(v, der, static_cast<size_t>(len), e.data(), e.size()) == 1;
    EVP_PKEY_CTX_free(v);
    OPENSSL_free(der);
    ECDSA_SIG_free(sig);
  }
  EVP_PKEY_free(key);
  EVP_PKEY_CTX_free(from);
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(bld);
  return ok;
}

// GB/T 32918.5-2017 Appendix A's signature example (tests/vectors/gmi/sm2.vec) verifies;
// one flipped bit of e, r, s or Y does not. OpenSSL agrees on each.
TEST(Sm2, GbT32918Vectors) {
  for (const VectorRecord& v : read_vectors("gmi/sm2.vec")) {
    SCOPED_TRACE(v.str("Name"));
    const std::vector<uint8_t> pub = v.hex("Pub"), e = v.hex("E"), sig = v.hex("Sig");
    ZxRig rig;
    ASSERT_EQ(verify(rig, e, pub, sig).status, Status::Completed);
    EXPECT_EQ(rig.reg(Gpr::CX), 1u);
    EXPECT_TRUE(openssl_verifies(e, pub, sig));
    for (int what = 0; what < 4; ++what) {
      std::vector<uint8_t> e2 = e, pub2 = pub, sig2 = sig;
      if (what == 0) e2[31] ^= 1;
      if (what == 1) sig2[0] ^= 1;
      if (what == 2) sig2[63] ^= 1;
      if (what == 3) pub2[64] ^= 1;
      ZxRig t;
      verify(t, e2, pub2, sig2);
      EXPECT_EQ(t.reg(Gpr::CX), 0u) << what;
      EXPECT_FALSE(openssl_verifies(e2, pub2, sig2)) << what;
    }
  }
}

// A key P = [d]G and a signature whose B6 sum is [s]G + [t]P (r = t - s), with e chosen
// from OpenSSL's x1 of the sum so that it is valid. When the sum is the point at infinity,
// e is chosen from the x of [s]G instead: a sum that wrongly kept [s]G would verify. The
// model and OpenSSL must both find it `valid`.
void expect_sum_verifies(const BIGNUM* d, const BIGNUM* s, const BIGNUM* t, bool valid) {
  EC_GROUP* group = EC_GROUP_new_by_curve_name(NID_sm2);
  BN_CTX* ctx = BN_CTX_new();
  const BIGNUM* n = EC_GROUP_get0_order(group);
  BIGNUM *r = BN_new(), *x1 = BN_new();
  BN_mod_sub(r, t, s, n, ctx);
  EC_POINT *q = EC_POINT_new(group), *sum = EC_POINT_new(group);
  EC_POINT_mul(group, q, d, nullptr, nullptr, ctx);
  EC_POINT_mul(group, sum, s, q, t, ctx);
  std::vector<uint8_t> pub(65), e(32), rs(64);
  EC_POINT_point2oct(group, q, POINT_CONVERSION_UNCOMPRESSED, pub.data(), 65, ctx);
  ASSERT_EQ(EC_POINT_is_at_infinity(group, sum) == 1, !valid);
  if (!valid) EC_POINT_mul(group, sum, s, nullptr, nullptr, ctx);
  EC_POINT_get_affine_coordinates(group, sum, x1, nullptr, ctx);
  BIGNUM* eb = BN_new();
  BN_mod_sub(eb, r, x1, n, ctx);
  BN_bn2binpad(eb, e.data(), 32);
  BN_free(eb);
  BN_bn2binpad(r, rs.data(), 32);
  BN_bn2binpad(s, rs.data() + 32, 32);
  ZxRig rig;
  verify(rig, e, pub, rs);
  EXPECT_EQ(rig.reg(Gpr::CX), valid ? 1u : 0u);
  EXPECT_EQ(openssl_verifies(e, pub, rs), valid);
  BN_free(r), BN_free(x1);
  EC_POINT_free(q), EC_POINT_free(sum);
  BN_CTX_free(ctx);
  EC_GROUP_free(group);
}

// Keys and scalars chosen so that the point additions of [s]G + [t]P (models/gmi/sm2.cpp)
// meet the cases random signatures never do: P = G and P = -G, a sum of a point and itself
// ([2]G + [1]P with P = 2G) or its negative, and a sum at infinity.
TEST(Sm2, LadderEdgeCasesAgreeWithOpenSsl) {
  EC_GROUP* group = EC_GROUP_new_by_curve_name(NID_sm2);
  const BIGNUM* n = EC_GROUP_get0_order(group);
  struct Case {
    long d, s, t;  // negative: n + value
    bool valid;
  };
  for (const Case k : {Case{1, 3, 1, true}, Case{-1, 3, 1, true}, Case{2, 2, 1, true},
                       Case{-2, 5, 2, true}, Case{1, 1, -1, false}}) {
    SCOPED_TRACE(testing::Message() << "d " << k.d << " s " << k.s << " t " << k.t);
    auto scalar = [&](long x) {
      BIGNUM* b = BN_new();
      BN_set_word(b, static_cast<BN_ULONG>(x < 0 ? -x : x));
      if (x < 0) BN_sub(b, n, b);
      return b;
    };
    BIGNUM *d = scalar(k.d), *s = scalar(k.s), *t = scalar(k.t);
    expect_sum_verifies(d, s, t, k.valid);
    BN_free(d), BN_free(s), BN_free(t);
  }
  EC_GROUP_free(group);
}

// [s]G adds one entry j·16^i·G of a table per 4-bit window of s, [t]P one of the multiples
// j·P per window of t (models/gmi/sm2.cpp). The scalars j·0x11..1 (every window j, for
// j = 1..14), 0x0F..F and 0xF·16^63 (j = 15; F..F is above n) reach every entry of both
// tables, as s and as t in turn; a wrong entry makes the valid signature fail.
TEST(Sm2, EveryTableEntryAgreesWithOpenSsl) {
  std::vector<BIGNUM*> scalars;
  for (int j = 1; j <= 14; ++j) {
    BIGNUM* b = nullptr;
    BN_hex2bn(&b, std::string(64, "0123456789ABCDEF"[j]).c_str());
    scalars.push_back(b);
  }
  BIGNUM *low = nullptr, *top = nullptr, *d = nullptr;
  BN_hex2bn(&low, std::string(63, 'F').c_str());
  BN_hex2bn(&top, ("F" + std::string(63, '0')).c_str());
  BN_hex2bn(&d, "5EED0F5A1234567");
  scalars.push_back(low);
  scalars.push_back(top);
  for (size_t k = 0; k < scalars.size(); ++k) {
    SCOPED_TRACE(testing::Message() << "s " << k);
    expect_sum_verifies(d, scalars[k], scalars[(k + 1) % scalars.size()], true);
  }
  for (BIGNUM* b : scalars) BN_free(b);
  BN_free(d);
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
