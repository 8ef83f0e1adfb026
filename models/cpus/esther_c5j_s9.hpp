// CPU model: VIA C7 Esther C5J, stepping 9: stepping 8 without the CTR erratum.
#pragma once

#include "models/cpus/esther_c5j.hpp"
#include "models/cpus/stepping.hpp"

namespace padlock::cpus {

inline constexpr CpuModel kEstherC5JS9 =
    derive(kEstherC5J,
           {
               .name = "esther-c5j-s9",
               .aliases = "esther-late",
               .description =
                   "VIA C7 Esther C5J stepping 9: as stepping 8 without the REP XCRYPTCTR erratum",
               .stepping = 9,
               .ctr_errata = false,  // §3.1 ERRATA, §6.6: stepping 8 only
           });

}  // namespace padlock::cpus
