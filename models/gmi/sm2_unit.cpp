// SM2 (F2 0F A6 C0) as openEuler's sm2-zhaoxin-gmi.c calls it: EDX = 8 verifies; EAX the
// 32-byte digest e, EBX the public key (0x04 || X || Y, 65 bytes, as the driver's
// set_pub_key keeps it), EDI the signature, ESI an 8 KB scratch area; ECX = 1 when the
// signature verifies. The signature's layout (r || s, 32-byte big-endian each), the scratch
// area's use and the registers left unchanged are our choices (docs/fidelity/gmi.md).
#include <gmp.h>

#include <algorithm>

#include "models/gmi/gmi_units.hpp"
#include "models/guest_access.hpp"
#include "models/unit_run.hpp"

namespace padlock {

namespace {

constexpr uint32_t kSm2Verify = 8;       // openEuler SM2_CWORD_VERIFY
constexpr uint64_t kScratch = 4 * 2048;  // openEuler SCRATCH_SIZE

// GB/T 32918.5-2017 §A (recommended curve parameters), hexadecimal.
constexpr const char* kP = "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFF";
constexpr const char* kB = "28E9FA9E9D9F5E344D5A9E4BCF6509A7F39789F515AB8F92DDBCBD414D940E93";
constexpr const char* kN = "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54123";
constexpr const char* kGx = "32C4AE2C1F1981195F9904466A39C9948FE30BBFF2660BE1715A4589334C74C7";
constexpr const char* kGy = "BC3736A2F4F6779C59BDCEE36B692153D0A9877CC62A474002DF32E52139F0A0";

// GMP integers that clean up after themselves.
struct Z {
  mpz_t v;
  Z() { mpz_init(v); }
  explicit Z(const char* hex) { mpz_init_set_str(v, hex, 16); }
  Z(const Z&) = delete;
  Z& operator=(const Z&) = delete;
  ~Z() { mpz_clear(v); }
};

void from_bytes(mpz_t out, const uint8_t* p, size_t n) {
  mpz_import(out, n, 1, 1, 1, 0, p);
}

// Affine points on y^2 = x^3 - 3x + b over F_p; `inf` is the point at infinity.
struct Point {
  Z x, y;
  bool inf = true;
};

// Jacobian coordinates: (X, Y, Z) is the affine (X/Z^2, Y/Z^3); Z = 0 is the point at
// infinity. The ladder below needs one inversion at the end instead of one per step.
struct Jacobian {
  Z x, y, z;
};

struct Curve {
  Z p{kP}, b{kB}, n{kN};

  void set(Point& r, const Point& a) const {
    mpz_set(r.x.v, a.x.v);
    mpz_set(r.y.v, a.y.v);
    r.inf = a.inf;
  }
  // r = a + c, affine (r may alias neither).
  void add(Point& r, const Point& a, const Point& c) const {
    if (a.inf) return set(r, c);
    if (c.inf) return set(r, a);
    Z lam, t;
    if (mpz_cmp(a.x.v, c.x.v) == 0) {
      mpz_add(t.v, a.y.v, c.y.v);
      mpz_mod(t.v, t.v, p.v);
      if (mpz_sgn(t.v) == 0) {
        r.inf = true;
        return;
      }
      // Doubling: lambda = (3x^2 - 3) / 2y.
      mpz_mul(lam.v, a.x.v, a.x.v);
      mpz_sub_ui(lam.v, lam.v, 1);
      mpz_mul_ui(lam.v, lam.v, 3);
      mpz_mul_ui(t.v, a.y.v, 2);
    } else {
      mpz_sub(lam.v, c.y.v, a.y.v);
      mpz_sub(t.v, c.x.v, a.x.v);
    }
    mpz_mod(t.v, t.v, p.v);
    mpz_invert(t.v, t.v, p.v);
    mpz_mul(lam.v, lam.v, t.v);
    mpz_mod(lam.v, lam.v, p.v);
    Z x3, y3;
    mpz_mul(x3.v, lam.v, lam.v);
    mpz_sub(x3.v, x3.v, a.x.v);
    mpz_sub(x3.v, x3.v, c.x.v);
    mpz_mod(x3.v, x3.v, p.v);
    mpz_sub(y3.v, a.x.v, x3.v);
    mpz_mul(y3.v, y3.v, lam.v);
    mpz_sub(y3.v, y3.v, a.y.v);
    mpz_mod(y3.v, y3.v, p.v);
    mpz_set(r.x.v, x3.v);
    mpz_set(r.y.v, y3.v);
    r.inf = false;
  }
  bool on_curve(const Point& a) const {
    if (mpz_cmp(a.x.v, p.v) >= 0 || mpz_cmp(a.y.v, p.v) >= 0) return false;
    Z l, r;
    mpz_mul(l.v, a.y.v, a.y.v);
    mpz_mod(l.v, l.v, p.v);
    mpz_mul(r.v, a.x.v, a.x.v);
    mpz_sub_ui(r.v, r.v, 3);
    mpz_mul(r.v, r.v, a.x.v);
    mpz_add(r.v, r.v, b.v);
    mpz_mod(r.v, r.v, p.v);
    return mpz_cmp(l.v, r.v) == 0;
  }
};

// The Jacobian formulas with their temporaries (a = -3: "dbl-2001-b" and the mixed
// addition "madd-2004-hmv" of the Explicit-Formulas Database, hyperelliptic.org/EFD).
struct Ladder {
  const Curve& c;
  Z t0, t1, t2, t3, t4;

  void mulmod(mpz_t r, const mpz_t a, const mpz_t b) {
    mpz_mul(r, a, b);
    mpz_mod(r, r, c.p.v);
  }
  void dbl(Jacobian& q) {
    mpz_t &delta = t0.v, &gamma = t1.v, &beta = t2.v, &alpha = t3.v;
    mulmod(delta, q.z.v, q.z.v);
    mulmod(gamma, q.y.v, q.y.v);
    mulmod(beta, q.x.v, gamma);
    mpz_sub(alpha, q.x.v, delta);
    mpz_add(t4.v, q.x.v, delta);
    mulmod(alpha, alpha, t4.v);
    mpz_mul_ui(alpha, alpha, 3);
    // Z3 = (Y + Z)^2 - gamma - delta
    mpz_add(q.z.v, q.y.v, q.z.v);
    mpz_mul(q.z.v, q.z.v, q.z.v);
    mpz_sub(q.z.v, q.z.v, gamma);
    mpz_sub(q.z.v, q.z.v, delta);
    mpz_mod(q.z.v, q.z.v, c.p.v);
    // X3 = alpha^2 - 8 beta
    mulmod(q.x.v, alpha, alpha);
    mpz_submul_ui(q.x.v, beta, 8);
    mpz_mod(q.x.v, q.x.v, c.p.v);
    // Y3 = alpha (4 beta - X3) - 8 gamma^2
    mpz_mul_ui(beta, beta, 4);
    mpz_sub(beta, beta, q.x.v);
    mulmod(q.y.v, alpha, beta);
    mulmod(gamma, gamma, gamma);
    mpz_submul_ui(q.y.v, gamma, 8);
    mpz_mod(q.y.v, q.y.v, c.p.v);
  }
  // q += a, a affine.
  void add(Jacobian& q, const Point& a) {
    if (a.inf) return;
    if (mpz_sgn(q.z.v) == 0) {
      mpz_set(q.x.v, a.x.v);
      mpz_set(q.y.v, a.y.v);
      mpz_set_ui(q.z.v, 1);
      return;
    }
    mpz_t &zz = t0.v, &h = t1.v, &r = t2.v, &hh = t3.v, &v = t4.v;
    mulmod(zz, q.z.v, q.z.v);
    mulmod(h, a.x.v, zz);  // U2
    mpz_sub(h, h, q.x.v);
    mpz_mod(h, h, c.p.v);
    mulmod(r, zz, q.z.v);
    mulmod(r, r, a.y.v);  // S2
    mpz_sub(r, r, q.y.v);
    mpz_mod(r, r, c.p.v);
    if (mpz_sgn(h) == 0) {
      if (mpz_sgn(r) == 0) return dbl(q);
      mpz_set_ui(q.z.v, 0);  // q = -a
      return;
    }
    mulmod(hh, h, h);
    mulmod(v, q.x.v, hh);
    mulmod(hh, hh, h);  // HHH
    mulmod(q.z.v, q.z.v, h);
    // X3 = R^2 - HHH - 2V; Y3 = R (V - X3) - Y1 HHH
    mulmod(q.x.v, r, r);
    mpz_sub(q.x.v, q.x.v, hh);
    mpz_submul_ui(q.x.v, v, 2);
    mpz_mod(q.x.v, q.x.v, c.p.v);
    mpz_sub(v, v, q.x.v);
    mulmod(v, v, r);
    mulmod(q.y.v, q.y.v, hh);
    mpz_sub(q.y.v, v, q.y.v);
    mpz_mod(q.y.v, q.y.v, c.p.v);
  }
  // x1 of [k1]a1 + [k2]a2 by one double-and-add over both scalars' bits (Shamir's
  // trick); false when the sum is the point at infinity.
  bool sum_x(mpz_t x1, const mpz_t k1, const Point& a1, const mpz_t k2, const Point& a2) {
    Point table[4];
    c.set(table[1], a1);
    c.set(table[2], a2);
    c.add(table[3], a1, a2);
    Jacobian q;  // Z = 0: infinity
    const size_t bits = std::max(mpz_sizeinbase(k1, 2), mpz_sizeinbase(k2, 2));
    for (long i = static_cast<long>(bits) - 1; i >= 0; --i) {
      dbl(q);
      const unsigned pick = mpz_tstbit(k1, static_cast<mp_bitcnt_t>(i)) |
                            mpz_tstbit(k2, static_cast<mp_bitcnt_t>(i)) << 1;
      if (pick != 0) add(q, table[pick]);
    }
    if (mpz_sgn(q.z.v) == 0) return false;
    mulmod(t0.v, q.z.v, q.z.v);
    mpz_invert(t0.v, t0.v, c.p.v);
    mulmod(x1, q.x.v, t0.v);
    return true;
  }
};

}  // namespace

bool sm2_verify(const uint8_t e_bytes[32], const uint8_t pub[65], const uint8_t sig[64]) {
  static const Curve c;
  if (pub[0] != 0x04) return false;
  Point q, g;
  from_bytes(q.x.v, pub + 1, 32);
  from_bytes(q.y.v, pub + 33, 32);
  q.inf = false;
  if (!c.on_curve(q)) return false;
  mpz_set_str(g.x.v, kGx, 16);
  mpz_set_str(g.y.v, kGy, 16);
  g.inf = false;
  // GB/T 32918.2-2016 §7.1: B1, B2 r and s in [1, n-1]; B5 t = (r + s) mod n != 0;
  // B6 (x1, y1) = [s]G + [t]P_A; B7 R = (e + x1) mod n, valid iff R == r.
  Z r, s, e, t;
  from_bytes(r.v, sig, 32);
  from_bytes(s.v, sig + 32, 32);
  from_bytes(e.v, e_bytes, 32);
  if (mpz_sgn(r.v) == 0 || mpz_cmp(r.v, c.n.v) >= 0) return false;
  if (mpz_sgn(s.v) == 0 || mpz_cmp(s.v, c.n.v) >= 0) return false;
  mpz_add(t.v, r.v, s.v);
  mpz_mod(t.v, t.v, c.n.v);
  if (mpz_sgn(t.v) == 0) return false;
  Ladder ladder{c};
  Z x1;
  if (!ladder.sum_x(x1.v, s.v, g, t.v, q)) return false;
  Z big_r;
  mpz_add(big_r.v, e.v, x1.v);
  mpz_mod(big_r.v, big_r.v, c.n.v);
  return mpz_cmp(big_r.v, r.v) == 0;
}

Outcome Sm2Unit::execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem,
                         const ExecEnv& env) {
  const unsigned as = d.addr_size;
  UnitRun run;
  if (static_cast<uint32_t>(s[Gpr::DX]) != kSm2Verify) {
    // Other operations exist (Zhaoxin's 2023 patch names verify only) but are not public.
    env.report(Diag::Sm2BadEdx);
    return run.fault(FaultKind::NotModelled, 0, false);
  }
  uint8_t e[32], pub[65], sig[64];
  uint64_t fault_at = 0;
  if (!read_wrapped(mem, reg_get(s, Gpr::AX, as), as, e, sizeof e, &fault_at) ||
      !read_wrapped(mem, reg_get(s, Gpr::BX, as), as, pub, sizeof pub, &fault_at) ||
      !read_wrapped(mem, reg_get(s, Gpr::DI, as), as, sig, sizeof sig, &fault_at))
    return run.fault(FaultKind::PageFault, fault_at, false);
  // The scratch area must be there (the driver allocates it); the model does not use it.
  if (!probe(mem, reg_get(s, Gpr::SI, as), kScratch, Access::Write, run)) return run.out;
  s[Gpr::CX] = sm2_verify(e, pub, sig) ? 1 : 0;
  run.clocks = cpu_.gmi.sm2_verify_clocks;
  run.out.bytes = sizeof sig;
  run.out.blocks = 1;
  return run.finish(Status::Completed);
}

void Sm2Unit::report_spans(const isa::Decoded& d, const ArchState& before, const ArchState&,
                           GuestMemory&, Outcome& o) {
  if (o.blocks != 0) o.input = {reg_get(before, Gpr::DI, d.addr_size), 64};
}

}  // namespace padlock
