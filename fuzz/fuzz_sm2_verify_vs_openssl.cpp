// libFuzzer target, differential: SM2 verify (F2 0F A6 C0, EDX = 8; models/gmi/sm2_unit.cpp)
// against OpenSSL 3's SM2 verification (EVP_PKEY_verify) of the same digest e, public key
// and r, s. OpenSSL alone decides valid or invalid; the harness only builds the inputs.
// Input (shorter inputs are padded with zeros to 225 bytes):
//   byte 0, flags: bit 0 the key is the raw X || Y at bytes 161..224, else d·G;
//     bit 1 the harness signs e with d and the nonce k (GB/T 32918.2-2016 §6.1, OpenSSL's
//     BN and EC arithmetic) and XORs r || s with bytes 97..160 (all zero: a valid
//     signature); bit 2 s = n - r (t = 0, §7.1 B5); bits 3 and 4 add n to r, to s (out of
//     range, B1 and B2); bits 5 and 6 add p to X, to Y (a coordinate >= p);
//     bit 7 the key's first byte is not 0x04;
//   bytes 1..32 d, 33..64 k (each reduced to [1, n-1]), 65..96 e, 97..160 r || s.
// A first byte other than 0x04 fails by our documented choice (docs/fidelity/gmi.md: the
// key as the driver keeps it); OpenSSL is asked about the point alone.
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>

#include <cstring>

#include "fuzz/zx_rig.hpp"

using namespace padlock;

namespace {

constexpr size_t kLen = 225;

struct Sm2Curve {
  EC_GROUP* group = EC_GROUP_new_by_curve_name(NID_sm2);
  BN_CTX* ctx = BN_CTX_new();
  BIGNUM* n = BN_new();
  BIGNUM* p = BN_new();
  BIGNUM* two256 = BN_new();
  Sm2Curve() {
    BN_copy(n, EC_GROUP_get0_order(group));
    EC_GROUP_get_curve(group, p, nullptr, nullptr, ctx);
    BN_set_bit(two256, 256);
  }
};

// x in [1, n-1] from 32 bytes.
BIGNUM* scalar(const Sm2Curve& c, const uint8_t* b) {
  BIGNUM* x = BN_bin2bn(b, 32, nullptr);
  BIGNUM* m = BN_dup(c.n);
  BN_sub_word(m, 1);
  BN_nnmod(x, x, m, c.ctx);
  BN_add_word(x, 1);
  BN_free(m);
  return x;
}

// (x + y) mod 2^256, into 32 bytes.
void add_wrapped(const Sm2Curve& c, uint8_t* b, const BIGNUM* y) {
  BIGNUM* x = BN_bin2bn(b, 32, nullptr);
  BN_add(x, x, y);
  BN_nnmod(x, x, c.two256, c.ctx);
  BN_bn2binpad(x, b, 32);
  BN_free(x);
}

// §6.1 A4-A6: (x1, y1) = [k]G, r = (e + x1) mod n, s = (1 + d)^-1 (k - r d) mod n.
void sign(const Sm2Curve& c, const BIGNUM* d, const BIGNUM* k, const uint8_t* e, uint8_t* rs) {
  EC_POINT* kg = EC_POINT_new(c.group);
  EC_POINT_mul(c.group, kg, k, nullptr, nullptr, c.ctx);
  BIGNUM *x1 = BN_new(), *r = BN_bin2bn(e, 32, nullptr), *s = BN_new(), *t = BN_new();
  EC_POINT_get_affine_coordinates(c.group, kg, x1, nullptr, c.ctx);
  BN_mod_add(r, r, x1, c.n, c.ctx);
  BN_mod_mul(t, r, d, c.n, c.ctx);
  BN_mod_sub(t, k, t, c.n, c.ctx);
  BN_copy(s, d);
  BN_add_word(s, 1);
  BN_mod_inverse(s, s, c.n, c.ctx);
  BN_mod_mul(s, s, t, c.n, c.ctx);
  BN_bn2binpad(r, rs, 32);
  BN_bn2binpad(s, rs + 32, 32);
  BN_free(x1), BN_free(r), BN_free(s), BN_free(t);
  EC_POINT_free(kg);
}

// OpenSSL's verdict on (e, 0x04 || xy, r || s): a key it does not import is invalid.
bool openssl_verifies(const uint8_t* e, const uint8_t* xy, const uint8_t* rs) {
  uint8_t pub[65];
  pub[0] = 0x04;
  std::memcpy(pub + 1, xy, 64);
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "SM2", 0);
  OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub, sizeof pub);
  OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(bld);
  static EVP_PKEY_CTX* const from = EVP_PKEY_CTX_new_from_name(nullptr, "SM2", nullptr);
  EVP_PKEY* key = nullptr;
  bool ok = false;
  if (EVP_PKEY_fromdata_init(from) == 1 &&
      EVP_PKEY_fromdata(from, &key, EVP_PKEY_PUBLIC_KEY, params) == 1) {
    ECDSA_SIG* sig = ECDSA_SIG_new();
    ECDSA_SIG_set0(sig, BN_bin2bn(rs, 32, nullptr), BN_bin2bn(rs + 32, 32, nullptr));
    uint8_t* der = nullptr;
    const int len = i2d_ECDSA_SIG(sig, &der);
    EVP_PKEY_CTX* v = EVP_PKEY_CTX_new(key, nullptr);
    ok = EVP_PKEY_verify_init(v) == 1 &&
         EVP_PKEY_verify(v, der, static_cast<size_t>(len), e, 32) == 1;
    EVP_PKEY_CTX_free(v);
    OPENSSL_free(der);
    ECDSA_SIG_free(sig);
  }
  EVP_PKEY_free(key);
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(bld);
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::ZxRig r;
  static const Sm2Curve c;
  uint8_t in[kLen] = {};
  std::memcpy(in, data, size < kLen ? size : kLen);
  const uint8_t flags = in[0];
  const uint8_t* e = in + 65;
  uint8_t rs[64], xy[64];
  BIGNUM* d = scalar(c, in + 1);
  if (flags & 1) {
    std::memcpy(xy, in + 161, 64);
  } else {
    EC_POINT* q = EC_POINT_new(c.group);
    EC_POINT_mul(c.group, q, d, nullptr, nullptr, c.ctx);
    uint8_t pub[65];
    EC_POINT_point2oct(c.group, q, POINT_CONVERSION_UNCOMPRESSED, pub, sizeof pub, c.ctx);
    std::memcpy(xy, pub + 1, 64);
    EC_POINT_free(q);
  }
  if (flags & 2) {
    BIGNUM* k = scalar(c, in + 33);
    sign(c, d, k, e, rs);
    BN_free(k);
    for (int i = 0; i < 64; ++i) rs[i] ^= in[97 + i];
  } else {
    std::memcpy(rs, in + 97, 64);
  }
  BN_free(d);
  if (flags & 4) {
    BIGNUM* rr = BN_bin2bn(rs, 32, nullptr);
    BN_mod_sub(rr, c.n, rr, c.n, c.ctx);  // n - r for r in [1, n-1]
    BN_bn2binpad(rr, rs + 32, 32);
    BN_free(rr);
  }
  if (flags & 8) add_wrapped(c, rs, c.n);
  if (flags & 16) add_wrapped(c, rs + 32, c.n);
  if (flags & 32) add_wrapped(c, xy, c.p);
  if (flags & 64) add_wrapped(c, xy + 32, c.p);

  constexpr uint64_t kE = fuzz::ZxRig::kState, kKey = kE + 0x100, kSig = kE + 0x200;
  uint8_t* key = r.mem.host(kKey, 65);
  key[0] = (flags & 128) ? static_cast<uint8_t>(0x04 ^ (in[161] | 1)) : 0x04;
  std::memcpy(key + 1, xy, 64);
  std::memcpy(r.mem.host(kE, 32), e, 32);
  std::memcpy(r.mem.host(kSig, 64), rs, 64);
  ArchState s;
  s[Gpr::AX] = kE;
  s[Gpr::BX] = kKey;
  s[Gpr::DX] = 8;
  s[Gpr::SI] = fuzz::ZxRig::kInput;
  s[Gpr::DI] = kSig;
  s[Gpr::CX] = 0x55;
  r.run({0xF2, 0x0F, 0xA6, 0xC0}, s, 0);
  const bool want = !(flags & 128) && openssl_verifies(e, xy, rs);
  if (s[Gpr::CX] != (want ? 1u : 0u)) __builtin_trap();
  if (s[Gpr::AX] != kE || s[Gpr::BX] != kKey || s[Gpr::DI] != kSig) __builtin_trap();
  return 0;
}
