// CPU model: VIA C3 Nehemiah C5P, stepping 8 (RNG, ACE).
// Every value cites the guide section (or public source) it comes from; "choice" marks a
// value the guide does not give, documented in docs/fidelity.md.
#pragma once

#include "models/cpu_model.hpp"
#include "models/cpus/cpuid_common.hpp"
#include "models/cpus/families.hpp"

namespace padlock::cpus {

inline constexpr CpuModel kNehemiahC5P = {
    .name = "nehemiah-c5p",
    .aliases = "nehemiah",
    .core = "Nehemiah",
    .description = "VIA C3 Nehemiah C5P stepping 8: RNG (two sources) and ACE",
    .brand = "VIA Nehemiah",
    .family = 6,
    .model = 9,
    .stepping = 8,
    .long_mode = false,
    .default_mhz = {1200, "§3.3: the Nehemiah table was measured at 1.2 GHz"},
    .units = {.rng = true, .ace = true, .ace2 = false, .phe = false, .pmm = false},
    .ctr_errata = false,
    .cpuid = standard_leaves({
        .family = 6,
        .model = 9,
        .stepping = 8,
        .leaf1_ebx = 0,
        .leaf1_ecx = 0,
        .leaf1_edx = kFpu | kVme | kDe | kPse | kTsc | kMsr | kCx8 | kSep | kMtrr | kPge | kCmov |
                     kPat | kMmx | kFxsr | kSse,
        .leaf1_source =
            "§1.1 family/model/stepping; §7.1 model 9; feature bits of the Nehemiah core",
        .ext_ecx = 0,
        .ext_edx = 0,
        .ext_source = "no extended features (no NX, no LM)",
        .line_bytes = 32,
        .l2_kb = 64,
    }),
    .rng = nehemiah_rng(),
    .ace = nehemiah_ace(),
    .phe = guide_phe(),
    .pmm = guide_pmm(nehemiah_memory()),
    .memory = nehemiah_memory(),
};

}  // namespace padlock::cpus
