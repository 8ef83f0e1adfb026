// CPU model: VIA C3 Nehemiah C5XL, stepping 3: the RNG only, with one noise source, and no
// FCR (§1.1, §1.5, §2.2).
#pragma once

#include "models/cpus/nehemiah_c5p.hpp"
#include "models/cpus/stepping.hpp"

namespace padlock::cpus {

// §2.2/§2.3: stepping 3 has one noise source (SRC is reserved) at 40-60 Mb/s raw.
constexpr RngParams stepping3_rng() {
  RngParams r = nehemiah_rng();
  r.dual_source = false;
  r.raw_rate_one_source = {
      50e6, "§2.3: stepping 3 raw 40-60 Mb/s (midpoint); whitened 8 Mb/s at p = 0.8"};
  r.raw_rate_both_sources = {50e6, "§2.2: SRC is reserved before stepping 8: one source only"};
  return r;
}

inline constexpr CpuModel kNehemiahC5XL = derive(
    kNehemiahC5P, {
                      .name = "nehemiah-c5xl",
                      .aliases = "",
                      .description = "VIA C3 Nehemiah C5XL stepping 3: RNG only, one noise source",
                      .stepping = 3,
                      .default_mhz = MHz{1000, "choice: C3 Nehemiah parts ran at 1.0-1.4 GHz"},
                      .units = Units{.rng = true},
                      .has_fcr = false,  // §1.5: every processor except Nehemiah stepping 3
                      .msr_fcr_reset = 0,
                      .rng = stepping3_rng(),
                  });

}  // namespace padlock::cpus
