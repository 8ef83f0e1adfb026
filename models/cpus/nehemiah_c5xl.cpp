// CPU model: VIA C3 Nehemiah C5XL, stepping 3 (RNG only).
// Every value cites the guide section (or public source) it comes from; "choice" marks a
// value the guide does not give, documented in docs/fidelity.md.
#include "models/cpu_model.hpp"
#include "models/cpus/cpuid_common.hpp"
#include "models/cpus/families.hpp"

namespace padlock::cpus {

namespace {
constexpr auto kCpuid = standard_leaves({
    .family = 6,
    .model = 9,
    .stepping = 3,
    .leaf1_ebx = 0,
    .leaf1_ecx = 0,
    .leaf1_edx = kFpu | kVme | kDe | kPse | kTsc | kMsr | kCx8 | kSep | kMtrr | kPge | kCmov |
                 kPat | kMmx | kFxsr | kSse,
    .leaf1_source = "§1.1 family/model/stepping; §7.1 model 9; feature bits of the Nehemiah core",
    .ext_ecx = 0,
    .ext_edx = 0,
    .ext_source = "no extended features (no NX, no LM)",
    .line_bytes = 32,
    .l2_kb = 64,
});
}  // namespace

// §2.2/§2.3: stepping 3 has one noise source (SRC is reserved) at 40-60 Mb/s raw.
constexpr RngParams stepping3_rng() {
  RngParams r = nehemiah_rng();
  r.dual_source = false;
  r.raw_rate_one_source = {
      50e6, "§2.3: stepping 3 raw 40-60 Mb/s (midpoint); whitened 8 Mb/s at p = 0.8"};
  r.raw_rate_both_sources = {50e6, "§2.2: SRC is reserved before stepping 8: one source only"};
  return r;
}

extern const CpuModel kNehemiahC5XL;
const CpuModel kNehemiahC5XL = {
    .name = "nehemiah-c5xl",
    .aliases = "",
    .core = "Nehemiah",
    .description = "VIA C3 Nehemiah C5XL stepping 3: RNG only, one noise source",
    .brand = "VIA Nehemiah",
    .family = 6,
    .model = 9,
    .stepping = 3,
    .long_mode = false,
    .default_mhz = {1000, "choice: C3 Nehemiah parts ran at 1.0-1.4 GHz"},
    .units = {.rng = true, .ace = false, .ace2 = false, .phe = false, .pmm = false},
    .ctr_errata = false,
    .msr_rng_reset = 0x00000040,  // §1.4
    .has_fcr = false,             // §1.5: every processor except Nehemiah stepping 3
    .msr_fcr_reset = 0,  // §1.2/§1.5: PadLock enabled at RESET (bit 28); other bits: choice 0
    .cpuid = kCpuid,
    .rng = stepping3_rng(),
    .ace = nehemiah_ace(),
    .phe = guide_phe(),
    .pmm = guide_pmm(nehemiah_memory()),
    .memory = nehemiah_memory(),
};

}  // namespace padlock::cpus
