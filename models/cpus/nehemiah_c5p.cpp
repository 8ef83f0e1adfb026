// CPU model: VIA C3 Nehemiah C5P, stepping 8 (RNG, ACE).
// Every value cites the guide section (or public source) it comes from; "choice" marks a
// value the guide does not give, documented in docs/fidelity.md.
#include "models/cpu_model.hpp"
#include "models/cpus/cpuid_common.hpp"
#include "models/cpus/families.hpp"

namespace padlock::cpus {

namespace {
constexpr CpuidLeaf kCpuid[] = {
    {0x00000000, 0, 0x00000001, kVendorEbx, kVendorEcx, kVendorEdx, "§1.1 vendor CentaurHauls"},
    {0x00000001, 0, signature(6, 9, 8), 0, 0,
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

extern const CpuModel kNehemiahC5P;
const CpuModel kNehemiahC5P = {
    .name = "nehemiah-c5p",
    .aliases = "nehemiah",
    .core = "Nehemiah",
    .description = "VIA C3 Nehemiah C5P stepping 8: RNG (two sources) and ACE",
    .brand = "VIA Nehemiah",
    .family = 6,
    .model = 9,
    .stepping = 8,
    .long_mode = false,
    .default_mhz = {1200, "MHz", "§3.3: the Nehemiah table was measured at 1.2 GHz"},
    .units = {.rng = true, .ace = true, .ace2 = false, .phe = false, .pmm = false},
    .ctr_errata = false,
    .msr_rng_reset = 0x00000040,  // §1.4
    .has_fcr = true,              // §1.5: every processor except Nehemiah stepping 3
    .msr_fcr_reset =
        0x10000000,  // §1.2/§1.5: PadLock enabled at RESET (bit 28); other bits: choice 0
    .cpuid = kCpuid,
    .rng = nehemiah_rng(),
    .ace = nehemiah_ace(),
    .phe = guide_phe(),
    .pmm = guide_pmm(32),
    .memory = nehemiah_memory(),
};

}  // namespace padlock::cpus
