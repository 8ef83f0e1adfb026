// CPU model: VIA C7 Esther C5J, stepping 8 (RNG, ACE2, PHE, PMM; CTR erratum).
// Every value cites the guide section (or public source) it comes from; "choice" marks a
// value the guide does not give, documented in docs/fidelity.md.
#pragma once

#include "models/cpu_model.hpp"
#include "models/cpus/cpuid_common.hpp"
#include "models/cpus/families.hpp"

namespace padlock::cpus {

inline constexpr CpuModel kEstherC5J = {
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
    .default_mhz = {1600, "§3.3: the Esther tables were measured at 1.6 GHz"},
    .units = {.rng = true, .ace = true, .ace2 = true, .phe = true, .pmm = true},
    .ctr_errata = true,
    .cpuid = standard_leaves({
        .family = 6,
        .model = 10,
        .stepping = 8,
        .leaf1_ebx = 0x00000800,
        .leaf1_ecx = kSse3,
        .leaf1_edx = kFpu | kVme | kDe | kPse | kTsc | kMsr | kPae | kMce | kCx8 | kApic | kSep |
                     kMtrr | kPge | kCmov | kPat | kClflush | kAcpi | kMmx | kFxsr | kSse | kSse2 |
                     kTm,
        .leaf1_source = "§1.1 family/model/stepping; §7.1 model 10; feature bits as "
                        "/proc/cpuinfo shows them on C7 6.10.9 parts (pni only in ECX; no mca, "
                        "pbe, est, tm2, xtpr: those are C7-M model 13)",
        .ext_ecx = 0,
        .ext_edx = kNx,
        .ext_source = "NX; no long mode",
        .line_bytes = 64,
        .l2_kb = 128,
    }),
    .rng = esther_rng(),
    .ace = esther_ace(),
    .phe = guide_phe(),
    .pmm = guide_pmm(esther_memory()),
    .memory = esther_memory(),
};

}  // namespace padlock::cpus
