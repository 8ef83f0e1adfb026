// libFuzzer target, differential: SM2 verify (F2 0F A6 C0, EDX = 8; models/gmi/sm2_unit.cpp)
// against OpenSSL 3's SM2 verification (EVP_PKEY_verify) of the same digest e, public key
// and r, s. OpenSSL alone decides valid or invalid; the harness only builds the inputs.
// Input (shorter inputs are padded with zeros to 225 bytes):
//   byte 0: bit 0 the key is the raw X || Y at bytes 161..224, else d·G; bit 1 r || s are
//     bytes 97..160 as they are, else the harness signs e with d and the nonce k
//     (GB/T 32918.2-2016 §6.1, OpenSSL's BN and EC arithmetic) and, when byte 97's low
//     two bits are zero, XORs r || s with bytes 97..160 (else, or when they are all zero,
//     the signature is valid); bits 2..7 one change: 1 s = n - r (t = 0, §7.1 B5),
//     2 and 3 add n to r, to s (out of range, B1 and B2), 4 and 5 add p to X, to Y (a
//     coordinate >= p), 6 the key's first byte is not 0x04; other values none (most
//     random inputs keep their signature valid);
//   bytes 1..32 d, 33..64 k (each reduced to [1, n-1]), 65..96 e, 97..160 r || s.
// A first byte other than 0x04 fails by our documented choice (docs/fidelity/gmi.md: the
// key as the driver keeps it); OpenSSL is asked about the point alone.
#define OPENSSL_SUPPRESS_DEPRECATED  // EC_GROUP_precompute_mult
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>

#include <array>
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
  BIGNUM* zero = BN_new();
  Sm2Curve() {
    // The harness's own group (the verify's is OpenSSL's own): a table of G's multiples.
    EC_GROUP_precompute_mult(group, ctx);
    BN_copy(n, EC_GROUP_get0_order(group));
    EC_GROUP_get_curve(group, p, nullptr, nullptr, ctx);
    BN_set_bit(two256, 256);
  }
};

// x in [1, n-1] from 32 bytes.
BIGNUM* to_scalar(const Sm2Curve& c, const uint8_t* b) {
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

// X || Y of [x]G for x = to_scalar(b), kept per 32-byte b in a direct-mapped table:
// libFuzzer mutates a different corpus input each time, so the last input's point alone
// rarely serves, while d and k mostly come back unchanged from the corpus. A static table:
// memory allocated during one input and kept makes libFuzzer rerun it for leaks.
struct PointCache {
  static constexpr size_t kSlots = 1 << 14;
  struct Slot {
    uint8_t scalar[32];
    uint8_t xy[64];
    bool filled;
  };
  std::array<Slot, kSlots> slots{};
  const uint8_t* of(const Sm2Curve& c, const uint8_t* b) {
    uint64_t h = 0;
    for (int i = 0; i < 32; ++i) h = (h ^ b[i]) * 0x100000001B3u;  // FNV-1a
    Slot& slot = slots[(h ^ h >> 32) % kSlots];
    if (slot.filled && std::memcmp(slot.scalar, b, 32) == 0) return slot.xy;
    BIGNUM* x = to_scalar(c, b);
    EC_POINT* q = EC_POINT_new(c.group);
    // [x]G + [0]G: OpenSSL takes [x]G alone by its constant-time ladder, which ignores
    // the group's table; with a second term it sums by wNAF with the table.
    EC_POINT_mul(c.group, q, x, EC_GROUP_get0_generator(c.group), c.zero, c.ctx);
    uint8_t pub[65];
    EC_POINT_point2oct(c.group, q, POINT_CONVERSION_UNCOMPRESSED, pub, sizeof pub, c.ctx);
    EC_POINT_free(q);
    BN_free(x);
    std::memcpy(slot.xy, pub + 1, 64);
    std::memcpy(slot.scalar, b, 32);
    slot.filled = true;
    return slot.xy;
  }
};

// §6.1 A4-A6: (x1, y1) = [k]G, r = (e + x1) mod n, s = (1 + d)^-1 (k - r d) mod n.
void sign(const Sm2Curve& c, const BIGNUM* d, const BIGNUM* k, const uint8_t* kg, const uint8_t* e,
          uint8_t* rs) {
  BIGNUM *x1 = BN_bin2bn(kg, 32, nullptr), *r = BN_bin2bn(e, 32, nullptr), *s = BN_new(),
         *t = BN_new();
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
}

// One SM2 key, imported once (EVP_PKEY_fromdata builds the curve's group, a third of an
// input's time); each input sets its public point through the key manager's
// OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, which decodes it as the import does
// (EC_POINT_oct2point: a coordinate >= p or a point off the curve is refused).
EVP_PKEY* sm2_key(const uint8_t* pub) {
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "SM2", 0);
  OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub, 65);
  OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(bld);
  EVP_PKEY_CTX* from = EVP_PKEY_CTX_new_from_name(nullptr, "SM2", nullptr);
  EVP_PKEY* key = nullptr;
  if (EVP_PKEY_fromdata_init(from) != 1 ||
      EVP_PKEY_fromdata(from, &key, EVP_PKEY_PUBLIC_KEY, params) != 1)
    __builtin_trap();
  EVP_PKEY_CTX_free(from);
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(bld);
  return key;
}

// OpenSSL's verdict on (e, 0x04 || xy, r || s): a key it does not take is invalid.
bool openssl_verifies(const Sm2Curve& c, const uint8_t* e, const uint8_t* xy, const uint8_t* rs) {
  uint8_t pub[65];
  pub[0] = 0x04;
  std::memcpy(pub + 1, xy, 64);
  static EVP_PKEY* const key = [&c] {  // starts as G, a valid point
    uint8_t g[65];
    EC_POINT_point2oct(c.group, EC_GROUP_get0_generator(c.group), POINT_CONVERSION_UNCOMPRESSED, g,
                       sizeof g, c.ctx);
    return sm2_key(g);
  }();
  // A refused point leaves the key as it was: never verify with it. Errors are cleared:
  // their strings, kept from one input to the next, make libFuzzer check for leaks.
  if (EVP_PKEY_set1_encoded_public_key(key, pub, sizeof pub) != 1) {
    ERR_clear_error();
    return false;
  }
  ECDSA_SIG* sig = ECDSA_SIG_new();
  ECDSA_SIG_set0(sig, BN_bin2bn(rs, 32, nullptr), BN_bin2bn(rs + 32, 32, nullptr));
  uint8_t* der = nullptr;
  const int len = i2d_ECDSA_SIG(sig, &der);
  EVP_PKEY_CTX* v = EVP_PKEY_CTX_new(key, nullptr);
  const bool ok =
      EVP_PKEY_verify_init(v) == 1 && EVP_PKEY_verify(v, der, static_cast<size_t>(len), e, 32) == 1;
  EVP_PKEY_CTX_free(v);
  OPENSSL_free(der);
  ECDSA_SIG_free(sig);
  ERR_clear_error();
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::ZxRig r;
  static const Sm2Curve c;
  uint8_t in[kLen] = {};
  std::memcpy(in, data, size < kLen ? size : kLen);
  const uint8_t mode = in[0] & 3, change = in[0] >> 2;
  const uint8_t* e = in + 65;
  uint8_t rs[64], xy[64];
  static PointCache *const dg = new PointCache, *const kg = new PointCache;
  if (mode & 1)
    std::memcpy(xy, in + 161, 64);
  else
    std::memcpy(xy, dg->of(c, in + 1), 64);
  if (mode & 2) {
    std::memcpy(rs, in + 97, 64);
  } else {
    BIGNUM *d = to_scalar(c, in + 1), *k = to_scalar(c, in + 33);
    sign(c, d, k, kg->of(c, in + 33), e, rs);
    BN_free(d), BN_free(k);
    if ((in[97] & 3) == 0)
      for (int i = 0; i < 64; ++i) rs[i] ^= in[97 + i];
  }
  if (change == 1) {
    BIGNUM* rr = BN_bin2bn(rs, 32, nullptr);
    BN_mod_sub(rr, c.n, rr, c.n, c.ctx);  // n - r for r in [1, n-1]
    BN_bn2binpad(rr, rs + 32, 32);
    BN_free(rr);
  }
  if (change == 2) add_wrapped(c, rs, c.n);
  if (change == 3) add_wrapped(c, rs + 32, c.n);
  if (change == 4) add_wrapped(c, xy, c.p);
  if (change == 5) add_wrapped(c, xy + 32, c.p);
  const bool prefix_04 = change != 6;

  constexpr uint64_t kE = fuzz::ZxRig::kState, kKey = kE + 0x100, kSig = kE + 0x200;
  uint8_t* key = r.mem.host(kKey, 65);
  key[0] = prefix_04 ? 0x04 : static_cast<uint8_t>(0x04 ^ (in[161] | 1));
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
  const bool want = prefix_04 && openssl_verifies(c, e, xy, rs);
  if (s[Gpr::CX] != (want ? 1u : 0u)) __builtin_trap();
  if (s[Gpr::AX] != kE || s[Gpr::BX] != kKey || s[Gpr::DI] != kSig) __builtin_trap();
  return 0;
}
