// SM2 signature verification (GB/T 32918.2-2016 §7.1) on the recommended curve of
// GB/T 32918.5-2017, for the SM2 unit (sm2_unit.cpp). The host's arithmetic only: the
// modelled clocks do not depend on it (docs/fidelity/gmi.md, "Timing").
//
// F_p in Montgomery form (four 64-bit limbs in registers, no allocation), points in
// Jacobian coordinates; [s]G from a table of the multiples j·16^i·G built once, [t]P by
// 4-bit fixed windows, one inversion (GMP's) at the end.
#include <gmp.h>

#include <array>
#include <cstdint>

#include "models/gmi/gmi_units.hpp"

namespace padlock {

namespace {

static_assert(GMP_NUMB_BITS == 64 && GMP_NAIL_BITS == 0, "four 64-bit limbs hold 256 bits");
using u128 = unsigned __int128;

// 256 bits as four 64-bit limbs, l0 the least significant. Named, not an array: the
// sanitizers' checks on indexed accesses would keep the limbs in memory in the fuzz build,
// where ASan then checks every access.
struct Fe {
  uint64_t l0, l1, l2, l3;
};

// GB/T 32918.5-2017 §A (recommended curve parameters), hexadecimal.
constexpr const char* kP = "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFF";
constexpr const char* kB = "28E9FA9E9D9F5E344D5A9E4BCF6509A7F39789F515AB8F92DDBCBD414D940E93";
constexpr const char* kN = "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54123";
constexpr const char* kGx = "32C4AE2C1F1981195F9904466A39C9948FE30BBFF2660BE1715A4589334C74C7";
constexpr const char* kGy = "BC3736A2F4F6779C59BDCEE36B692153D0A9877CC62A474002DF32E52139F0A0";
// kP in limbs, for the products (Field checks it against kP once).
constexpr Fe kPrime{0xFFFFFFFFFFFFFFFF, 0xFFFFFFFF00000000, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFEFFFFFFFF};

constexpr uint64_t inverse_mod_2_64(uint64_t odd) {  // Newton's iteration
  uint64_t inv = 1;
  for (int i = 0; i < 6; ++i) inv *= 2 - odd * inv;
  return inv;
}
constexpr uint64_t kPinv = 0 - inverse_mod_2_64(kPrime.l0);  // -p^-1 mod 2^64

constexpr uint64_t lo(u128 x) {
  return static_cast<uint64_t>(x);
}
constexpr uint64_t hi(u128 x) {
  return static_cast<uint64_t>(x >> 64);
}

Fe from_mpz(mpz_srcptr z) {
  return {mpz_getlimbn(z, 0), mpz_getlimbn(z, 1), mpz_getlimbn(z, 2), mpz_getlimbn(z, 3)};
}

Fe from_hex(const char* hex) {
  mpz_t z;
  mpz_init_set_str(z, hex, 16);
  const Fe r = from_mpz(z);
  mpz_clear(z);
  return r;
}

uint64_t be64(const uint8_t* b) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | b[i];
  return v;
}

Fe from_bytes(const uint8_t* b) {
  return {be64(b + 24), be64(b + 16), be64(b + 8), be64(b)};
}

bool is_zero(const Fe& a) {
  return (a.l0 | a.l1 | a.l2 | a.l3) == 0;
}
bool equal(const Fe& a, const Fe& b) {
  return ((a.l0 ^ b.l0) | (a.l1 ^ b.l1) | (a.l2 ^ b.l2) | (a.l3 ^ b.l3)) == 0;
}

// a - b mod 2^256; `borrow` the borrow out.
[[gnu::always_inline]] inline Fe sub_borrow(const Fe& a, const Fe& b, uint64_t& borrow) {
  Fe r;
  u128 d = u128{a.l0} - b.l0;
  r.l0 = lo(d);
  d = u128{a.l1} - b.l1 - (hi(d) & 1);
  r.l1 = lo(d);
  d = u128{a.l2} - b.l2 - (hi(d) & 1);
  r.l2 = lo(d);
  d = u128{a.l3} - b.l3 - (hi(d) & 1);
  r.l3 = lo(d);
  borrow = hi(d) & 1;
  return r;
}

// a + b mod 2^256; `carry` the carry out.
[[gnu::always_inline]] inline Fe add_carry(const Fe& a, const Fe& b, uint64_t& carry) {
  Fe r;
  u128 s = u128{a.l0} + b.l0;
  r.l0 = lo(s);
  s = u128{a.l1} + b.l1 + hi(s);
  r.l1 = lo(s);
  s = u128{a.l2} + b.l2 + hi(s);
  r.l2 = lo(s);
  s = u128{a.l3} + b.l3 + hi(s);
  r.l3 = lo(s);
  carry = hi(s);
  return r;
}

bool below(const Fe& a, const Fe& m) {
  uint64_t borrow;
  sub_borrow(a, m, borrow);
  return borrow != 0;
}

// (carry·2^256 + a) mod m for a value below 2m: one subtraction of m at most.
[[gnu::always_inline]] inline Fe reduce_once(const Fe& a, uint64_t carry, const Fe& m) {
  uint64_t borrow;
  const Fe d = sub_borrow(a, m, borrow);
  return (carry != 0 || borrow == 0) ? d : a;
}

// (a + b) mod m for a, b < m.
[[gnu::always_inline]] inline Fe add_mod(const Fe& a, const Fe& b, const Fe& m) {
  uint64_t carry;
  const Fe s = add_carry(a, b, carry);
  return reduce_once(s, carry, m);
}

// One word of Montgomery's product a·c/R mod p, interleaved (the "CIOS" order of Koc,
// Acar and Kaliski, "Analyzing and Comparing Montgomery Multiplication Algorithms"):
// t = (t + a·c_i + q·p) / 2^64 with q chosen so that the division is exact.
struct Acc {
  uint64_t t0, t1, t2, t3, t4;
};
[[gnu::always_inline]] inline Acc mont_word(Acc t, const Fe& a, uint64_t ci) {
  u128 x = u128{a.l0} * ci + t.t0;
  t.t0 = lo(x);
  x = u128{a.l1} * ci + t.t1 + hi(x);
  t.t1 = lo(x);
  x = u128{a.l2} * ci + t.t2 + hi(x);
  t.t2 = lo(x);
  x = u128{a.l3} * ci + t.t3 + hi(x);
  t.t3 = lo(x);
  x = u128{t.t4} + hi(x);
  t.t4 = lo(x);
  const uint64_t t5 = hi(x);
  const uint64_t q = t.t0 * kPinv;
  x = u128{q} * kPrime.l0 + t.t0;  // low word 0
  x = u128{q} * kPrime.l1 + t.t1 + hi(x);
  t.t0 = lo(x);
  x = u128{q} * kPrime.l2 + t.t2 + hi(x);
  t.t1 = lo(x);
  x = u128{q} * kPrime.l3 + t.t3 + hi(x);
  t.t2 = lo(x);
  x = u128{t.t4} + hi(x);
  t.t3 = lo(x);
  t.t4 = t5 + hi(x);
  return t;
}

// a·c/R mod p for a, c < p (below 2p before the last subtraction).
[[gnu::always_inline]] inline Fe mont_mul(const Fe& a, const Fe& c) {
  Acc t{0, 0, 0, 0, 0};
  t = mont_word(t, a, c.l0);
  t = mont_word(t, a, c.l1);
  t = mont_word(t, a, c.l2);
  t = mont_word(t, a, c.l3);
  return reduce_once(Fe{t.t0, t.t1, t.t2, t.t3}, t.t4, kPrime);
}

// The field: values in Montgomery form a·R mod p, R = 2^256. Products by 128-bit limb
// products in registers: GMP's mpn calls on four limbs cost more in calls (and, in the
// fuzz build, in ASan's checks of the limbs they take in memory) than in arithmetic.
struct Field {
  Fe p = from_hex(kP);
  Fe r2{};        // R^2 mod p
  Fe one{}, b{};  // Montgomery forms of 1 and of the curve's b

  Field() {
    if (!equal(p, kPrime)) __builtin_trap();
    mpz_t z, m;
    mpz_init_set_str(m, kP, 16);
    mpz_init_set_ui(z, 1);
    mpz_mul_2exp(z, z, 512);
    mpz_mod(z, z, m);
    r2 = from_mpz(z);
    mpz_clear(z);
    mpz_clear(m);
    one = to_mont(Fe{1, 0, 0, 0});
    b = to_mont(from_hex(kB));
  }

  [[gnu::always_inline]] void mul(Fe& r, const Fe& a, const Fe& c) const { r = mont_mul(a, c); }
  [[gnu::always_inline]] void sqr(Fe& r, const Fe& a) const { r = mont_mul(a, a); }
  [[gnu::always_inline]] void add(Fe& r, const Fe& a, const Fe& c) const {
    r = add_mod(a, c, kPrime);
  }
  [[gnu::always_inline]] void sub(Fe& r, const Fe& a, const Fe& c) const {
    uint64_t borrow, carry;
    const Fe d = sub_borrow(a, c, borrow);
    r = borrow != 0 ? add_carry(d, kPrime, carry) : d;  // the carry out is the borrow's
  }
  Fe to_mont(const Fe& a) const { return mont_mul(a, r2); }
  Fe from_mont(const Fe& a) const { return mont_mul(a, Fe{1, 0, 0, 0}); }
  // a^-1 for a != 0 (GMP's extended gcd; once per verify and per table entry).
  Fe inverse(const Fe& a) const {
    const Fe plain = from_mont(a);
    const mp_limb_t limbs[4] = {plain.l0, plain.l1, plain.l2, plain.l3};
    const mp_limb_t prime[4] = {p.l0, p.l1, p.l2, p.l3};
    mpz_t z, m, inv;
    mpz_init(inv);
    mpz_invert(inv, mpz_roinit_n(z, limbs, 4), mpz_roinit_n(m, prime, 4));
    const Fe r = to_mont(from_mpz(inv));
    mpz_clear(inv);
    return r;
  }
};

const Field& field() {
  static const Field f;
  return f;
}

struct Affine {
  Fe x, y;  // Montgomery form; never the point at infinity
};

// (X, Y, Z) is the affine (X/Z^2, Y/Z^3); Z = 0 is the point at infinity.
struct Jacobian {
  Fe x{}, y{}, z{};
  bool infinite() const { return is_zero(z); }
};

// The Jacobian formulas for a = -3 ("dbl-2001-b", the mixed "madd-2004-hmv" and
// "add-1998-cmo-2" of the Explicit-Formulas Database, hyperelliptic.org/EFD), with the
// cases of a point added to itself or to its negative.
struct Curve {
  const Field& f = field();

  void dbl(Jacobian& point) const {
    Jacobian q = point;  // in registers while it works (Field)
    Fe delta, gamma, beta, alpha, t;
    f.sqr(delta, q.z);
    f.sqr(gamma, q.y);
    f.mul(beta, q.x, gamma);
    f.sub(alpha, q.x, delta);
    f.add(t, q.x, delta);
    f.mul(alpha, alpha, t);
    f.add(t, alpha, alpha);
    f.add(alpha, t, alpha);  // 3 (X - delta)(X + delta)
    // Z3 = (Y + Z)^2 - gamma - delta
    f.add(t, q.y, q.z);
    f.sqr(t, t);
    f.sub(t, t, gamma);
    f.sub(q.z, t, delta);
    // X3 = alpha^2 - 8 beta
    f.add(beta, beta, beta);
    f.add(beta, beta, beta);  // 4 beta
    f.sqr(q.x, alpha);
    f.sub(q.x, q.x, beta);
    f.sub(q.x, q.x, beta);
    // Y3 = alpha (4 beta - X3) - 8 gamma^2
    f.sub(beta, beta, q.x);
    f.mul(t, alpha, beta);
    f.sqr(gamma, gamma);
    f.add(gamma, gamma, gamma);
    f.add(gamma, gamma, gamma);
    f.add(gamma, gamma, gamma);
    f.sub(q.y, t, gamma);
    point = q;
  }
  // q += a.
  void add(Jacobian& q, const Affine& a) const {
    if (q.infinite()) {
      q.x = a.x;
      q.y = a.y;
      q.z = f.one;
      return;
    }
    Fe zz, h, r;
    f.sqr(zz, q.z);
    f.mul(h, a.x, zz);  // U2
    f.sub(h, h, q.x);
    f.mul(r, zz, q.z);
    f.mul(r, r, a.y);  // S2
    f.sub(r, r, q.y);
    if (is_zero(h)) {
      if (is_zero(r)) return dbl(q);
      q.z = Fe{};  // q = -a
      return;
    }
    finish_add(q, h, r, q.x, q.y);
    f.mul(q.z, q.z, h);
  }
  // q += a, both Jacobian.
  void add(Jacobian& q, const Jacobian& a) const {
    if (a.infinite()) return;
    if (q.infinite()) {
      q = a;
      return;
    }
    Fe z1z1, z2z2, u1, h, s1, r;
    f.sqr(z1z1, q.z);
    f.sqr(z2z2, a.z);
    f.mul(u1, q.x, z2z2);
    f.mul(h, a.x, z1z1);  // U2
    f.sub(h, h, u1);
    f.mul(s1, q.y, a.z);
    f.mul(s1, s1, z2z2);
    f.mul(r, a.y, q.z);
    f.mul(r, r, z1z1);  // S2
    f.sub(r, r, s1);
    if (is_zero(h)) {
      if (is_zero(r)) return dbl(q);
      q.z = Fe{};
      return;
    }
    finish_add(q, h, r, u1, s1);
    f.mul(q.z, q.z, a.z);
    f.mul(q.z, q.z, h);
  }
  // X3 = R^2 - H^3 - 2 U1 H^2, Y3 = R (U1 H^2 - X3) - S1 H^3 (Z3 is the caller's). U1 and
  // S1 may be q's X and Y: both are read before q is written.
  void finish_add(Jacobian& q, const Fe& h, const Fe& r, const Fe& u1, const Fe& s1) const {
    Fe hh, hhh, v, t;
    f.sqr(hh, h);
    f.mul(hhh, hh, h);
    f.mul(v, u1, hh);
    f.mul(t, s1, hhh);
    f.sqr(q.x, r);
    f.sub(q.x, q.x, hhh);
    f.sub(q.x, q.x, v);
    f.sub(q.x, q.x, v);
    f.sub(v, v, q.x);
    f.mul(v, v, r);
    f.sub(q.y, v, t);
  }
  Affine to_affine(const Jacobian& q) const {
    Fe zi, zi2, zi3;
    zi = f.inverse(q.z);
    f.sqr(zi2, zi);
    f.mul(zi3, zi2, zi);
    Affine a;
    f.mul(a.x, q.x, zi2);
    f.mul(a.y, q.y, zi3);
    return a;
  }
  bool on_curve(const Affine& a) const {  // y^2 = x^3 - 3x + b
    Fe l, r;
    f.sqr(l, a.y);
    f.sqr(r, a.x);
    f.sub(r, r, f.one);
    f.sub(r, r, f.one);
    f.sub(r, r, f.one);
    f.mul(r, r, a.x);
    f.add(r, r, f.b);
    return equal(l, r);
  }
};

constexpr int kWindows = 64;  // 4-bit windows of a 256-bit scalar

unsigned window(const Fe& k, int i) {
  const uint64_t limb = i < 16 ? k.l0 : i < 32 ? k.l1 : i < 48 ? k.l2 : k.l3;
  return static_cast<unsigned>(limb >> (4 * (i % 16))) & 15;
}

// j·16^i·G for i < 64, 1 <= j <= 15, affine: [s]G is one addition per window of s.
struct BaseTable {
  std::array<std::array<Affine, 15>, kWindows> entry;
  BaseTable() {
    const Curve c;
    Affine base{c.f.to_mont(from_hex(kGx)), c.f.to_mont(from_hex(kGy))};  // 16^i·G
    for (int i = 0; i < kWindows; ++i) {
      Jacobian q;
      for (int j = 0; j < 15; ++j) {
        c.add(q, base);
        entry[i][j] = c.to_affine(q);
      }
      c.add(q, base);
      base = c.to_affine(q);
    }
  }
};

const BaseTable& base_table() {
  static const BaseTable t;
  return t;
}

// [s]G + [t]P.
Jacobian sum(const Curve& c, const Fe& s, const Fe& t, const Affine& p) {
  const BaseTable& g = base_table();
  Jacobian q;
  for (int i = 0; i < kWindows; ++i)
    if (const unsigned w = window(s, i)) c.add(q, g.entry[i][w - 1]);
  std::array<Jacobian, 16> multiple;  // j·P; [0] the point at infinity
  for (int j = 1; j < 16; ++j) {
    multiple[j] = multiple[j - 1];
    c.add(multiple[j], p);
  }
  Jacobian tp;
  for (int i = kWindows - 1; i >= 0; --i) {
    for (int k = 0; k < 4; ++k) c.dbl(tp);
    c.add(tp, multiple[window(t, i)]);
  }
  c.add(q, tp);
  return q;
}

}  // namespace

bool sm2_verify(const uint8_t e_bytes[32], const uint8_t pub[65], const uint8_t sig[64]) {
  static const Fe n = from_hex(kN);
  const Curve c;
  if (pub[0] != 0x04) return false;
  Affine q{from_bytes(pub + 1), from_bytes(pub + 33)};
  if (!below(q.x, c.f.p) || !below(q.y, c.f.p)) return false;
  q = {c.f.to_mont(q.x), c.f.to_mont(q.y)};
  if (!c.on_curve(q)) return false;
  // GB/T 32918.2-2016 §7.1: B1, B2 r and s in [1, n-1]; B5 t = (r + s) mod n != 0;
  // B6 (x1, y1) = [s]G + [t]P_A; B7 R = (e + x1) mod n, valid iff R == r.
  const Fe r = from_bytes(sig), s = from_bytes(sig + 32);
  if (is_zero(r) || !below(r, n)) return false;
  if (is_zero(s) || !below(s, n)) return false;
  const Fe t = add_mod(r, s, n);
  if (is_zero(t)) return false;
  const Jacobian sum_point = sum(c, s, t, q);
  if (sum_point.infinite()) return false;
  const Fe x1 = c.f.from_mont(c.to_affine(sum_point).x);
  // e is any 256-bit value and x1 < p: e + x1 < 2^258, reduced by GMP.
  const mp_limb_t x1_limbs[4] = {x1.l0, x1.l1, x1.l2, x1.l3}, n_limbs[4] = {n.l0, n.l1, n.l2, n.l3};
  mpz_t big_r, x, nz;
  mpz_init(big_r);
  mpz_import(big_r, 32, 1, 1, 1, 0, e_bytes);
  mpz_add(big_r, big_r, mpz_roinit_n(x, x1_limbs, 4));
  mpz_mod(big_r, big_r, mpz_roinit_n(nz, n_limbs, 4));
  const bool valid = equal(from_mpz(big_r), r);
  mpz_clear(big_r);
  return valid;
}

}  // namespace padlock
