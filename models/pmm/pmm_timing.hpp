// REP MONTMUL clocks (§5.2): C = 1024 * (4N^2 + K1 * N) + K2, N = [M] / 1024.
// The 4N^2 term is the inner loop: [M]/32 outer passes (one per 32-bit word of B), each of
// [M]/128 inner steps of 16 clocks. K1 * N * 1024 is the sum over the 32N outer passes of
//   32 * k1_min + max(factor 1 + factor 2, factor 3)
// where factor 1 is the extra (partial) inner step once the inner loop was extended after
// an overflow, factor 2 the 64-bit carry store crossing a cache line, and factor 3 the
// integer tail of the outer loop not hidden behind the PMM backlog (15- vs 16-clock inner
// loop). Each term is at most one inner step, so 0.56 <= K1 <= 1.06. docs/fidelity/pmm.md
// derives the constants.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "models/cpu_model.hpp"

namespace padlock {

struct PmmTiming {
  double k2 = 0;                // per execution (§5.2 K2)
  double pass_base = 0;         // 32 * k1_min: outer-loop work never overlapped
  double inner_step = 0;        // PMM clocks per 128-bit inner step (16)
  double backlog_per_step = 0;  // PMM minus integer clocks per inner step (16 - 15)
  double backlog_max = 0;
  double tail = 0;
  double tail_hidden_min = 0;
  double stall = 0;
  double carry_split = 0;
  uint64_t line = 64;

  static PmmTiming from(const PmmParams& p) {
    PmmTiming t;
    t.k2 = p.k2;
    t.pass_base = 32 * p.k1_min;
    t.inner_step = p.inner_loop_pmm_clocks;
    t.backlog_per_step = p.inner_loop_pmm_clocks - p.inner_loop_int_clocks;
    t.backlog_max = p.backlog_max_clocks;
    t.tail = p.tail_int_clocks;
    t.tail_hidden_min = p.tail_hidden_min_clocks;
    t.stall = p.fill_stall_clocks;
    t.carry_split = p.carry_split_clocks;
    t.line = static_cast<uint64_t>(p.cache_line_bytes.value);
    return t;
  }

  static uint64_t round(double clocks) { return static_cast<uint64_t>(std::llround(clocks)); }

  // Factor 3: the integer pipeline runs the inner loop a clock per step ahead of the PMM,
  // so `steps` steps leave a backlog the outer-loop tail overlaps; once the MMX pipeline is
  // full the integer pipeline stalls (§5.2). For small [M] "these extra clocks ... simply
  // overlap some of the integer instructions needed for the outer loop": the pass's last
  // inner step hides tail_hidden_min of the tail whatever the backlog (docs/fidelity/pmm.md).
  double tail_not_hidden(unsigned steps) const {
    const double backlog = steps * backlog_per_step;
    const double hidden = std::max(tail_hidden_min, std::min(backlog, backlog_max));
    double r = std::max(0.0, tail - hidden);
    if (backlog > backlog_max) r += stall;
    return r;
  }

  // Factor 2: the carry's 64-bit store at t_addr + 4 * (len - 1) crosses a cache line.
  bool carry_store_splits(uint64_t t_addr, unsigned len) const {
    const uint64_t at = t_addr + 4ull * (len - 1);
    return at % line + 8 > line;
  }

  // One outer pass over n words with an inner loop of len words (len > n after overflow).
  double pass_clocks(unsigned n, unsigned len, uint64_t t_addr) const {
    const unsigned steps = n / 4;
    const double extension = len > n ? inner_step : 0;                       // factor 1
    const double split = carry_store_splits(t_addr, len) ? carry_split : 0;  // factor 2
    return steps * inner_step + pass_base + std::max(extension + split, tail_not_hidden(steps));
  }
};

}  // namespace padlock
