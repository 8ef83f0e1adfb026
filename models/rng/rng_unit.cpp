// The RNG unit: MSR 0x110B (§1.4, §2.2), XSTORE and REP XSTORE (§2.1), timing (§2.3).
// The hardware behind it (noise source, whitener, string filter, buffers) is Accumulator.
#include "models/rng/rng_unit.hpp"

#include <algorithm>

#include "isa/msr.hpp"
#include "models/rng/accumulator.hpp"

namespace padlock {

namespace {

using isa::RngMsr;

// §2.1 quality factor table, by EDX[1:0]: random bytes per XSTORE, 4-byte stores, and the
// stride at which the random bits are selected from the 64-bit accumulation buffer (our
// choice: every bit, every 2nd, 4th or 8th bit; the guide says only "selected").
struct QualityRow {
  uint8_t random_bytes;
  uint8_t stores;
  uint8_t stride;
};
constexpr QualityRow kQuality[4] = {{8, 2, 1}, {4, 1, 2}, {2, 1, 4}, {1, 1, 8}};

// MSR 0x110B fields (§2.2).
constexpr uint32_t kSrcMask = 0x3u << 8;
constexpr uint32_t kBiasMask = 0x7u << 10;
constexpr uint32_t kRbtsBit = 1u << 13;
constexpr uint32_t kFltrBit = 1u << 14;
constexpr uint32_t kFcntMask = 0x3Fu << 16;
constexpr uint32_t kFilterFields = kFltrBit | RngMsr::kFailBit | kFcntMask;  // RES on Esther

uint64_t select_bits(uint64_t buffer, unsigned stride, unsigned nbits) {
  if (stride == 1) return buffer;
  uint64_t out = 0;
  for (unsigned i = 0; i < nbits; ++i) out |= (buffer >> (i * stride) & 1) << i;
  return out;
}

}  // namespace

struct RngUnit::Impl {
  Impl(const CpuModel& cpu, uint64_t seed, bool host_entropy)
      : cpu(cpu), p(cpu.rng), acc(seed, host_entropy), mhz(cpu.default_mhz) {}

  const CpuModel& cpu;
  const RngParams& p;
  // The software-visible fields as last written (ENBL, SRC, BIAS, RBTS, FLTR, FCNT, and
  // FAIL as kept by the write); BCNT and a FAIL latched by the filter are added on read.
  uint32_t msr = isa::kMsrRngReset;
  rng::Accumulator acc;
  double mhz;

  bool nehemiah() const { return p.variant == RngVariant::Nehemiah; }

  rng::NoiseConfig config() const {
    rng::NoiseConfig c;
    const unsigned bias = (msr & kBiasMask) >> 10;
    // §2.2 SRC: 00 = A, 01 = B, 1x = both; §2.3: both sources roughly double the rate.
    const bool both = p.dual_source && (msr & (2u << 8)) != 0;
    const double rate =
        (both ? p.raw_rate_both_sources : p.raw_rate_one_source) * p.raw_rate_scale[bias];
    c.cycles_per_raw_bit = mhz * 1e6 / rate;
    c.p_one16 =
        static_cast<uint32_t>(std::clamp(p.raw_one_bias[bias].value, 0.0, 1.0) * 65536.0 + 0.5);
    c.whiten = (msr & kRbtsBit) == 0;
    c.filter = nehemiah() && (msr & kFltrBit) != 0;
    c.filter_count = std::max(1u, (msr & kFcntMask) >> 16);
    return c;
  }

  // Follows the caller's core clock; a new clock applies to buffers not yet started.
  void sync(const ExecEnv& env) {
    if (env.mhz > 0 && env.mhz != mhz) {
      mhz = env.mhz;
      acc.set_config(config());
    }
    acc.advance(env.now);
  }

  // MSR[31:5] as RDMSR and the XSTORE status word show them (§2.1, §2.2).
  uint32_t status_high() const {
    uint32_t v = msr & ~RngMsr::kBcntMask;
    if (nehemiah() && acc.filter_failed()) v |= RngMsr::kFailBit;  // §2.2 FAIL (O)
    return v;
  }

  uint32_t bcnt(uint64_t now) const {
    if (nehemiah()) {
      // §2.2: bytes available. Our choice: whole bytes accumulated (full buffers plus the
      // buffer in progress), saturating at 31, the largest value the 5-bit field holds.
      return std::min(acc.bytes_accumulated(now), 31u);
    }
    return (1u << acc.full()) - 1;  // §2.2 Esther: one bit per full buffer
  }

  Outcome xstore(ArchState& s, GuestMemory& mem, const ExecEnv& env, unsigned as);
  Outcome rep_xstore(ArchState& s, GuestMemory& mem, const ExecEnv& env, unsigned as);

  // Probes and performs the 4-byte stores of one internal XSTORE (§2.1 "All RNG stores are
  // four bytes long"). Returns false with `fault` set, having stored nothing, if any byte
  // is inaccessible.
  bool store(GuestMemory& mem, uint64_t edi, unsigned as, const QualityRow& q, uint64_t now,
             Fault& fault);
};

bool RngUnit::Impl::store(GuestMemory& mem, uint64_t edi, unsigned as, const QualityRow& q,
                          uint64_t now, Fault& fault) {
  for (unsigned k = 0; k < q.stores; ++k) {
    const uint64_t addr = ea_add(edi, 4 * k, as);
    const uint64_t ok = mem.accessible(addr, 4, Access::Write);
    if (ok < 4) {
      fault = {FaultKind::PageFault, addr + ok, true};
      return false;
    }
  }
  const uint64_t bits = select_bits(acc.take(now), q.stride, 8u * q.random_bytes);
  for (unsigned k = 0; k < q.stores; ++k) {
    // §2.1: a store with fewer than four random bytes is zero-filled above them.
    const uint32_t word = static_cast<uint32_t>(bits >> (32 * k));
    const uint8_t le[4] = {uint8_t(word), uint8_t(word >> 8), uint8_t(word >> 16),
                           uint8_t(word >> 24)};
    mem.write(ea_add(edi, 4 * k, as), le, 4);
  }
  return true;
}

Outcome RngUnit::Impl::xstore(ArchState& s, GuestMemory& mem, const ExecEnv& env, unsigned as) {
  Outcome o;
  const QualityRow& q = kQuality[s[Gpr::DX] & 3];  // §2.1: only EDX[1:0] are meaningful
  if (acc.full() == 0) {
    // §2.1: fewer than 8 bytes available: no store, zero byte count. No store is
    // attempted, so nothing can fault.
    reg_set(s, Gpr::AX, status_high(), 32);
    o.cycles = o.int_cycles = static_cast<uint64_t>(p.clocks_no_data);
    return o;
  }
  const uint64_t edi = reg_get(s, Gpr::DI, as);
  if (!store(mem, edi, as, q, env.now, o.fault)) {
    o.status = Status::Faulted;  // §1.7: registers unchanged, buffer kept
    return o;
  }
  // §2.1: EAX[31:5] = MSR[31:5], EAX[4:0] = random bytes; the full EAX is written.
  reg_set(s, Gpr::AX, status_high() | q.random_bytes, 32);
  reg_set(s, Gpr::DI, ea_add(edi, q.random_bytes, as), as);  // DF ignored
  o.cycles = o.int_cycles = static_cast<uint64_t>(p.clocks_stored[s[Gpr::DX] & 3]);
  o.bytes = q.random_bytes;
  o.blocks = q.stores;
  return o;
}

Outcome RngUnit::Impl::rep_xstore(ArchState& s, GuestMemory& mem, const ExecEnv& env, unsigned as) {
  env.report(Diag::RngRepByteCount);
  Outcome o;
  const unsigned edx = s[Gpr::DX] & 3;
  const QualityRow& q = kQuality[edx];
  const uint64_t poll = std::max<uint64_t>(1, static_cast<uint64_t>(p.clocks_no_data));
  const uint64_t per_store = static_cast<uint64_t>(p.clocks_stored[edx]);
  uint64_t remaining = reg_get(s, Gpr::CX, as);
  uint64_t edi = reg_get(s, Gpr::DI, as);
  unsigned last_count = 0;
  // §2.3: a REP XSTORE is a microcode loop of internal XSTOREs; one that a single internal
  // XSTORE satisfies costs 7 clocks more than XSTORE. We charge the 7 once per REP XSTORE.
  uint64_t c = static_cast<uint64_t>(p.rep_single_extra);

  auto write_back = [&](Status st) {
    // §2.1 "REP Prefix": ECX = bytes still to store, EDI = next location, EAX = status word.
    reg_set(s, Gpr::CX, remaining, as);
    reg_set(s, Gpr::DI, edi, as);
    reg_set(s, Gpr::AX, status_high() | last_count, 32);
    o.status = st;
    o.cycles = o.int_cycles = c;
    return o;
  };

  while (remaining > 0) {
    // §1.7: interruptible between internal XSTOREs once one has stored.
    if (o.blocks > 0 && (env.interrupt_due(c) || env.host_stop_requested())) {
      return write_back(Status::Interrupted);
    }
    acc.advance(env.now + c);
    if (acc.full() == 0) {
      // §2.1 note / §2.3: REP XSTORE waits for the generator; each internal XSTORE that
      // finds no data costs the no-data clocks.
      if (!acc.generating()) return write_back(Status::Completed);  // unreachable: enabled
      const uint64_t t = env.now + c;
      const uint64_t ready = std::max(acc.next_ready(), t + 1);
      uint64_t polls = (ready - t + poll - 1) / poll;
      if (o.blocks > 0 && env.interrupt_at < t + polls * poll) {
        polls = (env.interrupt_at - t + poll - 1) / poll;
        c += polls * poll;
        return write_back(Status::Interrupted);
      }
      c += polls * poll;
      continue;
    }
    if (!store(mem, edi, as, q, env.now + c, o.fault)) return write_back(Status::Faulted);
    // §2.1: the last store may hold up to seven bytes past the request; only requested
    // bytes are counted in ECX and EDI.
    const unsigned n = static_cast<unsigned>(std::min<uint64_t>(q.random_bytes, remaining));
    remaining -= n;
    edi = ea_add(edi, n, as);
    last_count = n;
    c += per_store;
    o.bytes += n;
    o.blocks += q.stores;
  }
  return write_back(Status::Completed);
}

RngUnit::RngUnit(const CpuModel& cpu, uint64_t seed, bool host_entropy)
    : impl_(new Impl(cpu, seed, host_entropy)) {
  // §1.4, §1.6: RESET value; buffers cleared and accumulation starts (at cycle 0).
  impl_->msr = cpu.msr_rng_reset & RngMsr::kWritableMask;
  impl_->acc.load_reset(0, impl_->config(), enabled());
}

RngUnit::~RngUnit() {
  delete impl_;
}

void RngUnit::save(StateWriter& w) const {
  w.pod(impl_->msr);
  w.pod(impl_->acc);
  w.pod(impl_->mhz);
}

void RngUnit::load(StateReader& r) {
  r.pod(impl_->msr);
  r.pod(impl_->acc);
  r.pod(impl_->mhz);
}

Outcome RngUnit::execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem,
                         const ExecEnv& env) {
  if (!enabled()) return Outcome::fault_ud();  // §2.2 ENBL = 0: XSTORE is invalid
  impl_->sync(env);
  return d.id == isa::InsnId::RepXstore ? impl_->rep_xstore(s, mem, env, d.addr_size)
                                        : impl_->xstore(s, mem, env, d.addr_size);
}

uint64_t RngUnit::read_msr(const ExecEnv& env) {
  impl_->sync(env);
  // §2.2: the EDX half is undefined; we return 0.
  return impl_->status_high() | impl_->bcnt(env.now);
}

void RngUnit::write_msr(uint64_t value, const ExecEnv& env) {
  Impl& u = *impl_;
  u.sync(env);
  const uint32_t lo = static_cast<uint32_t>(value);
  if ((lo & RngMsr::kReservedMask) != 0 || (value >> 32) != 0) env.report(Diag::RngMsrReserved);
  uint32_t v = lo & RngMsr::kWritableMask;  // BCNT is read-only
  if (!u.p.dual_source && (v & kSrcMask) != 0) {
    env.report(Diag::RngFieldReserved);  // §2.2: SRC reserved before Nehemiah stepping 8
    v &= ~kSrcMask;
  }
  if (!u.nehemiah()) {
    if ((v & kFilterFields) != 0) env.report(Diag::RngFieldReserved);  // §2.2: RES on Esther
    v &= ~kFilterFields;
  } else {
    // §2.2 FAIL: only the hardware sets it; a write can clear it (writing 1 keeps it).
    const bool fail_now = (u.status_high() & RngMsr::kFailBit) != 0;
    if (!fail_now) v &= ~RngMsr::kFailBit;
    if ((v & kFltrBit) != 0 && ((v & kFcntMask) >> 16) < 8) env.report(Diag::RngFilterCountLow);
  }
  u.msr = v;
  // §2.2: any write is a load reset: buffers cleared, options take effect.
  u.acc.load_reset(env.now, u.config(), enabled());
}

bool RngUnit::enabled() const {
  return (impl_->msr & RngMsr::kEnblBit) != 0;
}

// §2.1: the bytes stored are [EDI before, EDI after).
void RngUnit::report_spans(const isa::Decoded& d, const ArchState& before, const ArchState& after,
                           GuestMemory&, Outcome& o) {
  const unsigned as = d.addr_size;
  const uint64_t edi = reg_get(before, Gpr::DI, as);
  const uint64_t moved = reg_get(after, Gpr::DI, as) - edi;
  o.output = {edi, as == 64 ? moved : moved & ((uint64_t{1} << as) - 1)};
}

}  // namespace padlock
