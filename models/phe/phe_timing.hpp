// REP XSHA clocks (§4.2), from the CPU model's PheParams:
//   clocks = startup + blocks * (rounds * clocks_per_round + block_overhead) [+ padding]
// With block_overhead = 512 / asymptote - rounds * clocks_per_round the asymptote is
// exactly 2.66 bits/clock (SHA-1) and 2.26 bits/clock (SHA-256); docs/fidelity/phe.md
// has the derivation. Fractional clocks accumulate and are rounded once per execution.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "models/cpu_model.hpp"
#include "models/unit_interface.hpp"

namespace padlock {

struct PheTiming {
  double startup = 0;    // entering the microcode, loading the state from EDI (§4.2)
  double per_block = 0;  // one 64-byte block: rounds plus endian/alignment overhead (§4.2)
  double padding = 0;    // building the final padded block(s) (§4.1 "Padding", §4.2)

  static PheTiming from(const PheParams& p, bool sha256) {
    PheTiming t;
    t.startup = p.startup;
    t.per_block = sha256 ? 64 * p.sha256_clocks_per_round + p.sha256_block_overhead
                         : 80 * p.sha1_clocks_per_round + p.sha1_block_overhead;
    t.padding = p.padding;
    return t;
  }

  static uint64_t round(double clocks) { return static_cast<uint64_t>(std::llround(clocks)); }

  // Fewest further blocks (at least 1) after which an interrupt is due, given `spent`
  // clocks already; UINT64_MAX when none is pending.
  uint64_t blocks_until_interrupt(const ExecEnv& env, double spent) const {
    if (env.interrupt_at == std::numeric_limits<uint64_t>::max()) return UINT64_MAX;
    if (env.interrupt_due(round(spent + per_block))) return 1;
    const double gap = static_cast<double>(env.interrupt_at - env.now) - spent;
    uint64_t k = static_cast<uint64_t>(std::max(1.0, std::floor(gap / per_block)));
    while (k > 1 && env.interrupt_due(round(spent + (k - 1) * per_block))) --k;
    while (!env.interrupt_due(round(spent + k * per_block))) ++k;
    return k;
  }
};

}  // namespace padlock
