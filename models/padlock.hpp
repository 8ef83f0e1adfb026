// The PadLock security units of one CPU: enable rules (§1.2, §1.3, §1.5), MSRs, the
// Centaur CPUID leaves, and dispatch of a decoded instruction to its unit.
#pragma once

#include <array>
#include <cstdint>

#include "isa/decoder.hpp"
#include "isa/msr.hpp"
#include "models/ace/ace_unit.hpp"
#include "models/cpu_model.hpp"
#include "models/gmi/gmi_units.hpp"
#include "models/phe/phe2_unit.hpp"
#include "models/phe/phe_unit.hpp"
#include "models/pmm/pmm_unit.hpp"
#include "models/rng/rng_unit.hpp"
#include "models/unit_interface.hpp"

namespace padlock {

struct PadlockConfig {
  uint64_t seed = 0;          // RNG bits are reproducible from this seed
  bool host_entropy = false;  // RNG bits from host entropy instead
  bool errata = true;         // apply the model's errata (the Esther stepping-8 CTR erratum)
};

struct CpuidResult {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

// CPUID 0xC0000001 EDX bits (§1.3).
inline constexpr uint32_t kRngPresent = 1u << 2;
inline constexpr uint32_t kRngEnabled = 1u << 3;
inline constexpr uint32_t kAcePresent = 1u << 6;
inline constexpr uint32_t kAceEnabled = 1u << 7;
inline constexpr uint32_t kAce2Present = 1u << 8;
inline constexpr uint32_t kAce2Enabled = 1u << 9;
inline constexpr uint32_t kPhePresent = 1u << 10;
inline constexpr uint32_t kPheEnabled = 1u << 11;
inline constexpr uint32_t kPmmPresent = 1u << 12;
inline constexpr uint32_t kPmmEnabled = 1u << 13;
// The late Nano's and Zhaoxin's bit pairs (Zhaoxin's cpufeatures patch, docs/zhaoxin.md).
inline constexpr uint32_t kSm2Present = 1u << 0;
inline constexpr uint32_t kSm2Enabled = 1u << 1;
inline constexpr uint32_t kCcsPresent = 1u << 4;
inline constexpr uint32_t kCcsEnabled = 1u << 5;
inline constexpr uint32_t kRng2Present = 1u << 22;
inline constexpr uint32_t kRng2Enabled = 1u << 23;
inline constexpr uint32_t kPhe2Present = 1u << 25;
inline constexpr uint32_t kPhe2Enabled = 1u << 26;
inline constexpr uint32_t kRsaPresent = 1u << 27;
inline constexpr uint32_t kRsaEnabled = 1u << 28;

class Padlock {
 public:
  Padlock(const CpuModel& cpu, const PadlockConfig& config = {});

  // The row this chip executes for `d`: F2 0F A6 C0 is SM2 where the SM2 unit exists and
  // REPNE MONTMUL elsewhere (guide §5.1: REPNE undefined, run as REP; docs/isa.md).
  isa::Decoded resolve(const isa::Decoded& d) const;
  // The same without a copy where the row stays (every instruction but that one): `d`
  // itself, or `scratch` filled with resolve(d).
  const isa::Decoded& resolved(const isa::Decoded& d, isa::Decoded& scratch) const {
    if (d.id != isa::InsnId::Sm2 || cpu_.units.sm2) return d;
    return scratch = resolve(d);
  }

  // Executes one decoded PadLock instruction. #UD when the unit is absent or disabled
  // (§1.3), when CR4[9] is clear (§1.2) or when the prefixes are illegal.
  Outcome execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem, const ExecEnv& env);
  // The same where the caller keeps a copy of `s` as it was on entry (`before`, the execution
  // core's record): the spans are reported against it, with no copy of its own.
  Outcome execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem, const ExecEnv& env,
                  const ArchState& before);

  // RDMSR/WRMSR of 0x110B, 0x1107 and (family-7 Zhaoxin) 0x1257. Return false where the
  // instruction raises #GP (§1.3: the unit is absent; other MSR numbers are not ours).
  bool rdmsr(uint32_t msr, uint64_t& value, const ExecEnv& env);
  bool wrmsr(uint32_t msr, uint64_t value, const ExecEnv& env);

  // CPUID as the model's chip answers it; 0xC0000001 EDX follows the MSR enables.
  CpuidResult cpuid(uint32_t leaf, uint32_t subleaf) const;
  uint32_t centaur_features() const;
  bool unit_enabled(isa::Unit unit) const {
    // The present and enabled bits of centaur_features() (§1.3), read without building the
    // whole word: this runs for every PadLock instruction (inline, for the same reason).
    const Units& u = cpu_.units;
    const bool fcr_on = fcr_enables();
    switch (unit) {
      case isa::Unit::Rng:
        return u.rng && rng_enables();
      case isa::Unit::Ace:
        return u.ace && fcr_on;
      case isa::Unit::Phe:
        return u.phe && fcr_on;
      case isa::Unit::Pmm:
        return u.pmm && fcr_on;
      case isa::Unit::Phe2:
        return u.phe2 && fcr_on;
      case isa::Unit::Ccs:
        return u.ccs && fcr_on;
      case isa::Unit::Sm2:
        return u.sm2 && fcr_on;
      case isa::Unit::Rsa:
        return u.rsa && fcr_on;
      case isa::Unit::Rng2:
        return u.rng2 && fcr_on;
    }
    return false;
  }

  const CpuModel& model() const { return cpu_; }
  RngUnit& rng() { return rng_; }
  AceUnit& ace() { return ace_; }
  PheUnit& phe() { return phe_; }
  PmmUnit& pmm() { return pmm_; }
  Phe2Unit& phe2() { return phe2_; }

  // The state the units carry between instructions: FCR, the RNG's and ACE's (PHE and PMM
  // keep none). load() needs a stream saved by a Padlock of the same CPU model.
  void save(StateWriter& w) const;
  void load(StateReader& r);

 private:
  // §1.5: FCR[28] enables ACE, ACE2, PHE and PMM (on chips that have the FCR). The
  // family-7 Zhaoxin parts keep them enabled (zhaoxin_wrmsr).
  bool fcr_enables() const {
    return cpu_.enables == EnableScheme::Zhaoxin ||
           (cpu_.has_fcr && (fcr_ & isa::kFcrPadlockEnable) != 0);
  }
  // §1.3 EDX[3]: MSR 0x110B[6]; always on the family-7 Zhaoxin parts.
  bool rng_enables() const { return cpu_.enables == EnableScheme::Zhaoxin || rng_.enabled(); }
  bool zhaoxin_rdmsr(uint32_t msr, uint64_t& value) const;
  bool zhaoxin_wrmsr(uint32_t msr, uint64_t value);

  const CpuModel& cpu_;
  uint32_t fcr_;
  uint32_t fcr57_;  // MSR 0x1257 on the family-7 Zhaoxin parts
  RngUnit rng_;
  AceUnit ace_;
  PheUnit phe_;
  PmmUnit pmm_;
  Phe2Unit phe2_;
  Sm3Unit sm3_;
  Sm4Unit sm4_;
  Sm2Unit sm2_;
};

}  // namespace padlock
