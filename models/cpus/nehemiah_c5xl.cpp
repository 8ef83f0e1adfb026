// CPU model: VIA C3 Nehemiah C5XL, stepping 3 (RNG only).
// Every value cites the guide section (or public source) it comes from; "choice" marks a
// value the guide does not give, documented in docs/fidelity.md.
#include "models/cpu_model.hpp"
#include "models/cpus/cpuid_common.hpp"
#include "models/cpus/families.hpp"

namespace padlock::cpus {

namespace {
constexpr CpuidLeaf kCpuid[] = {
    {0x00000000, 0, 0x00000001, kVendorEbx, kVendorEcx, kVendorEdx, "§1.1 vendor CentaurHauls"},
    {0x00000001, 0, signature(6, 9, 3), 0, 0,
     kFpu | kVme | kDe | kPse | kTsc | kMsr | kCx8 | kSep | kMtrr | kPge | kCmov | kPat | kMmx |
         kFxsr | kSse,
     "§1.1 family/model/stepping; §7.1 model 9; feature bits of the Nehemiah core"},
    {0x80000000, 0, 0x80000006, 0, 0, 0, "extended leaves up to the L2 descriptor"},
    {0x80000001, 0, 0, 0, 0, 0, "no extended features (no NX, no LM)"},
    {0x80000005, 0, 0, 0, l1_descriptor(64, 4, 32), l1_descriptor(64, 4, 32),
     "L1: 64 KB data, 64 KB instruction"},
    {0x80000006, 0, 0, 0, l2_descriptor(64, 0x8, 32), 0, "L2: 64 KB"},
    {0xC0000000, 0, 0xC0000001, 0, 0, 0, "§1.3: Centaur extended leaves supported"},
    // 0xC0000001 EDX is computed from the units and the MSR enables (§1.3): see padlock.cpp.
    {0xC0000001, 0, 0, 0, 0, 0, "§1.3"},
};
}  // namespace

// §2.2/§2.3: stepping 3 has one noise source (SRC is reserved) at 40-60 Mb/s raw.
constexpr RngParams stepping3_rng() {
  RngParams r = nehemiah_rng();
  r.dual_source = false;
  r.raw_rate_one_source = {
      50e6, "bit/s", "§2.3: stepping 3 raw 40-60 Mb/s (midpoint); whitened 8 Mb/s at p = 0.8"};
  r.raw_rate_both_sources = {50e6, "bit/s",
                             "§2.2: SRC is reserved before stepping 8: one source only"};
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
    .default_mhz = {1000, "MHz", "choice: C3 Nehemiah parts ran at 1.0-1.4 GHz"},
    .units = {.rng = true, .ace = false, .ace2 = false, .phe = false, .pmm = false},
    .ctr_errata = false,
    .msr_rng_reset = 0x00000040,  // §1.4
    .has_fcr = false,             // §1.5: every processor except Nehemiah stepping 3
    .msr_fcr_reset = 0,  // §1.2/§1.5: PadLock enabled at RESET (bit 28); other bits: choice 0
    .cpuid = kCpuid,
    .rng = stepping3_rng(),
    .ace = nehemiah_ace(),
    .phe = guide_phe(),
    .pmm = guide_pmm(32),
    .memory = nehemiah_memory(),
};

}  // namespace padlock::cpus
