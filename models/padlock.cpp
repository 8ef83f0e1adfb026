#include "models/padlock.hpp"

#include <cstring>
#include <type_traits>

#include "isa/msr.hpp"

namespace padlock {

Padlock::Padlock(const CpuModel& cpu, const PadlockConfig& config)
    : cpu_(cpu),
      fcr_(cpu.msr_fcr_reset),
      fcr57_(cpu.msr_fcr57_reset),
      rng_(cpu, config.seed, config.host_entropy),
      ace_(cpu),
      phe_(cpu),
      pmm_(cpu),
      phe2_(cpu),
      sm3_(cpu),
      sm4_(cpu),
      sm2_(cpu) {
  ace_.set_ctr_errata(cpu.ctr_errata && config.errata);
}

namespace {
constexpr uint32_t kStateTag = 0x504C4B31;  // "PLK1"
}

void Padlock::save(StateWriter& w) const {
  w.pod(kStateTag);
  w.str(cpu_.name);
  w.pod(fcr_);
  if (cpu_.enables == EnableScheme::Zhaoxin) w.pod(fcr57_);
  rng_.save(w);
  ace_.save(w);
}

void Padlock::load(StateReader& r) {
  r.expect(kStateTag);
  if (r.str() != cpu_.name) throw StateError("snapshot: saved on another CPU model");
  r.pod(fcr_);
  if (cpu_.enables == EnableScheme::Zhaoxin) r.pod(fcr57_);
  rng_.load(r);
  ace_.load(r);
}

uint32_t Padlock::centaur_features() const {
  const Units& u = cpu_.units;
  // §1.3: EDX[3] copies MSR 0x110B[6]; EDX[7], [9], [11], [13] reflect FCR[28].
  const bool fcr_on = fcr_enables();
  uint32_t edx = 0;
  if (u.rng) edx |= kRngPresent | (rng_enables() ? kRngEnabled : 0);
  if (u.ace) edx |= kAcePresent | (fcr_on ? kAceEnabled : 0);
  // The late parts leave EDX[9] clear with ACE2 working (CpuModel::ace2_enable_bit).
  if (u.ace2) edx |= kAce2Present | (fcr_on && cpu_.ace2_enable_bit ? kAce2Enabled : 0);
  if (u.phe) edx |= kPhePresent | (fcr_on ? kPheEnabled : 0);
  if (u.pmm) edx |= kPmmPresent | (fcr_on ? kPmmEnabled : 0);
  // The later units' enabled bits follow the same enable as PHE and PMM (a choice:
  // docs/fidelity/gmi.md); CPUID reports RNG2 and RSA although they are not modelled, so
  // clients take the paths they take on the chip.
  if (u.sm2) edx |= kSm2Present | (fcr_on ? kSm2Enabled : 0);
  if (u.ccs) edx |= kCcsPresent | (fcr_on ? kCcsEnabled : 0);
  if (u.rng2) edx |= kRng2Present | (fcr_on ? kRng2Enabled : 0);
  if (u.phe2) edx |= kPhe2Present | (fcr_on ? kPhe2Enabled : 0);
  if (u.rsa) edx |= kRsaPresent | (fcr_on ? kRsaEnabled : 0);
  return edx | cpu_.centaur_edx_unmodelled;
}

isa::Decoded Padlock::resolve(const isa::Decoded& d) const {
  if (d.id != isa::InsnId::Sm2 || cpu_.units.sm2) return d;
  isa::Decoded m = d;
  m.id = isa::InsnId::Montmul;
  m.repne = true;
  return m;
}

Outcome Padlock::execute(const isa::Decoded& decoded, ArchState& s, GuestMemory& mem,
                         const ExecEnv& env) {
  const ArchState before = s;
  return execute(decoded, s, mem, env, before);
}

Outcome Padlock::execute(const isa::Decoded& decoded, ArchState& s, GuestMemory& mem,
                         const ExecEnv& env, const ArchState& before) {
  isa::Decoded scratch;
  const isa::Decoded& d = resolved(decoded, scratch);
  if (d.status != isa::DecodeStatus::Ok) {
    if (d.rep_missing) env.report(Diag::MissingRep);
    return Outcome::fault_ud();
  }
  if (d.repne) env.report(Diag::RepnePrefix);
  // §1.2: with CR4[9] clear PadLock behaves as if disabled; §1.3: absent or disabled
  // units raise #UD.
  const isa::Unit unit = d.info().unit;
  if (!s.cr4_osfxsr || !unit_enabled(unit)) return Outcome::fault_ud();
  // CTR is an ACE2 mode (§0 note, §7.1, §7.2): absent on Nehemiah.
  if (d.id == isa::InsnId::XcryptCtr && !cpu_.units.ace2) {
    env.report(Diag::CtrOnNehemiah);
    return Outcome::fault_ud();
  }
  // After the #UD checks, as for SSE: CR0.TS set raises #NM (ArchState::cr0_ts).
  if (s.cr0_ts) return Outcome::faulted(FaultKind::DeviceNotAvailable);
  // No public semantics (docs/fidelity/gmi.md): the emulator stops rather than guess.
  if (!d.info().modelled) {
    env.report(Diag::NotModelled);
    return Outcome::faulted(FaultKind::NotModelled);
  }
  // Each unit executes, then reports what it read and wrote (Outcome's spans).
  auto run = [&](auto& u) {
    Outcome o = u.execute(d, s, mem, env);
    std::remove_reference_t<decltype(u)>::report_spans(d, before, s, mem, o);
    return o;
  };
  switch (unit) {
    case isa::Unit::Rng:
      return run(rng_);
    case isa::Unit::Ace:
      return run(ace_);
    case isa::Unit::Phe:
      return run(phe_);
    case isa::Unit::Pmm:
      return run(pmm_);
    case isa::Unit::Phe2:
      return run(phe2_);
    case isa::Unit::Ccs:
      return d.id == isa::InsnId::CcsHash ? run(sm3_) : run(sm4_);
    case isa::Unit::Sm2:
      return run(sm2_);
    case isa::Unit::Rsa:
    case isa::Unit::Rng2:
      break;  // not modelled: stopped above
  }
  return Outcome::fault_ud();
}

bool Padlock::rdmsr(uint32_t msr, uint64_t& value, const ExecEnv& env) {
  if (cpu_.enables == EnableScheme::Zhaoxin) return zhaoxin_rdmsr(msr, value);
  if (msr == isa::kMsrRng && cpu_.units.rng) {  // §1.3 EDX[2]
    value = rng_.read_msr(env);
    return true;
  }
  if (msr == isa::kMsrFcr && cpu_.has_fcr) {  // §1.5, §1.3 EDX[6]
    value = fcr_;
    return true;
  }
  return false;
}

bool Padlock::wrmsr(uint32_t msr, uint64_t value, const ExecEnv& env) {
  if (cpu_.enables == EnableScheme::Zhaoxin) return zhaoxin_wrmsr(msr, value);
  if (msr == isa::kMsrRng && cpu_.units.rng) {
    rng_.write_msr(value, env);
    return true;
  }
  if (msr == isa::kMsrFcr && cpu_.has_fcr) {
    // §1.5: only bit 28 is PadLock's; the other FCR bits are kept as written.
    fcr_ = static_cast<uint32_t>(value);
    return true;
  }
  return false;
}

// Family-7 Zhaoxin (EnableScheme::Zhaoxin, docs/zhaoxin.md "MSR 0x1257"): VirtualBox's MSR
// scan of a KX-U5581 reads 0x1107 as 0x2 and 0x1108-0x110E and 0x1257 as 0, with ACE and
// RNG enabled in CPUID. 0x1107 and 0x110B keep their values whatever is written; 0x1257
// keeps what is written, and a write with bit 7 or 8 set enables ACE or the RNG (Linux
// zhaoxin.c); nothing disables them (choice: no source shows a way).
bool Padlock::zhaoxin_rdmsr(uint32_t msr, uint64_t& value) const {
  switch (msr) {
    case isa::kMsrFcr:
      value = cpu_.msr_fcr_reset;
      return true;
    case isa::kMsrRng:
      value = 0;
      return true;
    case isa::kMsrFcr57:
      value = fcr57_;
      return true;
  }
  return false;
}

bool Padlock::zhaoxin_wrmsr(uint32_t msr, uint64_t value) {
  if (msr == isa::kMsrFcr57) {
    fcr57_ = static_cast<uint32_t>(value);
    return true;
  }
  return msr == isa::kMsrFcr || msr == isa::kMsrRng;
}

CpuidResult Padlock::cpuid(uint32_t leaf, uint32_t subleaf) const {
  CpuidResult r;
  const CpuidLeaf* best = nullptr;
  for (const CpuidLeaf& l : cpu_.cpuid) {
    if (l.leaf == leaf && (l.subleaf == subleaf || best == nullptr)) best = &l;
  }
  if (best != nullptr) r = {best->eax, best->ebx, best->ecx, best->edx};
  if (leaf == 0xC0000001) r.edx = centaur_features();
  if (leaf >= 0x80000002 && leaf <= 0x80000004) {
    // The brand string, 16 bytes per leaf, NUL padded.
    uint32_t w[4] = {};
    const char* brand = cpu_.brand;
    const size_t len = std::strlen(brand);
    const size_t off = (leaf - 0x80000002) * 16;
    for (size_t i = 0; i < 16 && off + i < len; ++i) {
      w[i / 4] |= uint32_t(uint8_t(brand[off + i])) << (8 * (i % 4));
    }
    r = {w[0], w[1], w[2], w[3]};
  }
  return r;
}

}  // namespace padlock
