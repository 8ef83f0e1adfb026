// CPU model: VIA C7 Esther C5J, stepping 8 (RNG, ACE2, PHE, PMM; CTR erratum).
// Every value cites the guide section (or public source) it comes from; "choice" marks a
// value the guide does not give, documented in docs/fidelity.md.
#include "models/cpu_model.hpp"
#include "models/cpus/cpuid_common.hpp"
#include "models/cpus/families.hpp"

namespace padlock::cpus {

namespace {
constexpr CpuidLeaf kCpuid[] = {
    {0x00000000, 0, 0x00000001, kVendorEbx, kVendorEcx, kVendorEdx, "§1.1 vendor CentaurHauls"},
    {0x00000001, 0, signature(6, 10, 8), 0x00000800, kSse3,
     kFpu | kVme | kDe | kPse | kTsc | kMsr | kPae | kMce | kCx8 | kApic | kSep | kMtrr | kPge |
         kCmov | kPat | kClflush | kAcpi | kMmx | kFxsr | kSse | kSse2 | kTm,
     "§1.1 family/model/stepping; §7.1 model 10; feature bits as /proc/cpuinfo shows them on C7 "
     "6.10.9 parts (pni only in ECX; no mca, pbe, est, tm2, xtpr: those are C7-M model 13)"},
    {0x80000000, 0, 0x80000006, 0, 0, 0, "extended leaves up to the L2 descriptor"},
    {0x80000001, 0, 0, 0, 0, kNx, "NX; no long mode"},
    {0x80000005, 0, 0, 0, l1_descriptor(64, 4, 64), l1_descriptor(64, 4, 64),
     "L1: 64 KB data, 64 KB instruction"},
    {0x80000006, 0, 0, 0, l2_descriptor(128, 0x8, 64), 0, "L2: 128 KB"},
    {0xC0000000, 0, 0xC0000001, 0, 0, 0, "§1.3: Centaur extended leaves supported"},
    // 0xC0000001 EDX is computed from the units and the MSR enables (§1.3): see padlock.cpp.
    {0xC0000001, 0, 0, 0, 0, 0, "§1.3"},
};
}  // namespace

extern const CpuModel kEstherC5J;
const CpuModel kEstherC5J = {
    .name = "esther-c5j",
    .aliases = "esther",
    .core = "Esther",
    .description =
        "VIA C7 Esther C5J stepping 8: RNG, ACE2, PHE, PMM; carries the REP XCRYPTCTR erratum",
    .brand = "VIA Esther processor 1600MHz",
    .family = 6,
    .model = 10,
    .stepping = 8,
    .long_mode = false,
    .default_mhz = {1600, "MHz", "§3.3: the Esther tables were measured at 1.6 GHz"},
    .units = {.rng = true, .ace = true, .ace2 = true, .phe = true, .pmm = true},
    .ctr_errata = true,
    .msr_rng_reset = 0x00000040,  // §1.4
    .has_fcr = true,              // §1.5: every processor except Nehemiah stepping 3
    .msr_fcr_reset =
        0x10000000,  // §1.2/§1.5: PadLock enabled at RESET (bit 28); other bits: choice 0
    .cpuid = kCpuid,
    .rng = esther_rng(),
    .ace = esther_ace(),
    .phe = guide_phe(),
    .pmm = guide_pmm(64),
    .memory = esther_memory(),
};

}  // namespace padlock::cpus
