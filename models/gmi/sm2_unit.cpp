// SM2 (F2 0F A6 C0) as openEuler's sm2-zhaoxin-gmi.c calls it: EDX = 8 verifies; EAX the
// 32-byte digest e, EBX the public key (0x04 || X || Y, 65 bytes, as the driver's
// set_pub_key keeps it), EDI the signature, ESI an 8 KB scratch area; ECX = 1 when the
// signature verifies. The signature's layout (r || s, 32-byte big-endian each), the scratch
// area's use and the registers left unchanged are our choices (docs/fidelity/gmi.md).
#include <gmp.h>

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

struct Curve {
  Z p{kP}, b{kB}, n{kN};

  void set(Point& r, const Point& a) const {
    mpz_set(r.x.v, a.x.v);
    mpz_set(r.y.v, a.y.v);
    r.inf = a.inf;
  }
  // r = a + b (r may alias neither).
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
  // r = k * a, double and add from the top bit.
  void mul(Point& r, const mpz_t k, const Point& a) const {
    Point acc, tmp;
    for (long i = static_cast<long>(mpz_sizeinbase(k, 2)) - 1; i >= 0; --i) {
      add(tmp, acc, acc);
      set(acc, tmp);
      if (mpz_tstbit(k, static_cast<mp_bitcnt_t>(i))) {
        add(tmp, acc, a);
        set(acc, tmp);
      }
    }
    set(r, acc);
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

}  // namespace

bool sm2_verify(const uint8_t e_bytes[32], const uint8_t pub[65], const uint8_t sig[64]) {
  const Curve c;
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
  Point sg, tq, sum;
  c.mul(sg, s.v, g);
  c.mul(tq, t.v, q);
  c.add(sum, sg, tq);
  if (sum.inf) return false;
  Z big_r;
  mpz_add(big_r.v, e.v, sum.x.v);
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
