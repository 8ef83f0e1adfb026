// Documented clock cases of the models, for scripts/calibrate.py (docs/timing.md): the
// §3.3 REP XCRYPTECB table (R = 10, 12, 14), the §2.3 XSTORE table as the model's data, the
// §4.2 PHE asymptote, and the §5.2 PMM formula for ECX from 256 to 32768. The emulator-level
// checks of the same figures are tests/integration/test_timing.py.
#include <cmath>
#include <cstdio>

#include "models/ace/ace_timing.hpp"
#include "models/cpu_model.hpp"
#include "models/phe/phe_timing.hpp"
#include "models/pmm/pmm_timing.hpp"

using namespace padlock;

int main() {
  const CpuModel& cpu = *find_cpu_model("esther-c5j");
  std::printf(
      "REP XCRYPTECB (§3.3 table; R = 12, 14: rounds less the store clocks they hide, from the "
      "Dedibox; "
      "SSE / integer clocks; N > 2 integer = our choice)\n");
  std::printf("%-3s %-9s %8s %8s %8s %8s %8s\n", "R", "key", "N=1", "N=2", "N=3", "N=4", "N=64");
  const char* ks[] = {"loaded", "hardware", "memory"};
  for (unsigned r : {10u, 12u, 14u}) {
    for (int k = 0; k < 3; ++k) {
      std::printf("%-3u %-9s", r, ks[k]);
      for (uint64_t n : {1ull, 2ull, 3ull, 4ull, 64ull}) {
        const ace::BlockClock c = ace::BlockClock::ecb(cpu.ace, r, n, ace::KeyState(k));
        char cell[32];
        std::snprintf(cell, sizeof cell, "%llu/%llu", (unsigned long long)c.sse_total(),
                      (unsigned long long)c.int_total());
        std::printf(" %8s", cell);
      }
      std::printf("\n");
    }
  }
  std::printf(
      "\nXSTORE (§2.3 table): no data %.0f; EDX 0..3 with data %.0f %.0f %.0f %.0f; "
      "REP XSTORE satisfied by one internal XSTORE +%.0f\n",
      cpu.rng.clocks_no_data.value, cpu.rng.clocks_stored[0].value, cpu.rng.clocks_stored[1].value,
      cpu.rng.clocks_stored[2].value, cpu.rng.clocks_stored[3].value,
      cpu.rng.rep_single_extra.value);

  std::printf(
      "\nPHE asymptote (§4.2: 2.66 bits/clock SHA-1; SHA-256 from the Dedibox ratio, not §4.2's "
      "2.26), data in cache\n");
  for (bool sha256 : {false, true}) {
    const PheTiming t = PheTiming::from(cpu.phe, sha256);
    for (double mb : {1.0, 100.0}) {
      const double bytes = mb * 1048576, blocks = bytes / 64;
      const double clocks = t.startup + blocks * t.per_block + t.padding;
      std::printf("  %-7s %6.0f MB: %.4f bits/clock\n", sha256 ? "SHA-256" : "SHA-1", mb,
                  bytes * 8 / clocks);
    }
  }

  std::printf("\nPMM (§5.2: C = 1024(4N^2 + K1 N) + K2, 0.56 <= K1 <= 1.06, K2 ~ 35)\n");
  std::printf(
      "  K1 without overflow or split carry store (T at 16 mod 64), and with an\n"
      "  extension step or split store on every pass (the maximum)\n");
  std::printf("  %6s %12s %8s %12s %8s\n", "ECX", "clocks", "K1", "clocks max", "K1 max");
  const PmmTiming p = PmmTiming::from(cpu.pmm);
  for (unsigned bits = 256; bits <= 32768; bits *= 2) {
    for (unsigned b : {bits, bits == 2048 ? 2304u : 0u}) {
      if (b == 0) continue;
      const unsigned n = b / 32;
      const double N = b / 1024.0;
      double c = p.k2, cmax = p.k2;
      for (unsigned pass = 0; pass < n; ++pass) {
        c += p.pass_clocks(n, n, 0x100000 + 16);  // carry store at 12 mod 16 of a line: no split
        cmax += n / 4 * p.inner_step + p.pass_base + p.inner_step;  // factor 1 or 2 every pass
      }
      const double k1 = ((std::round(c) - p.k2) / 1024 - 4 * N * N) / N;
      const double k1max = ((std::round(cmax) - p.k2) / 1024 - 4 * N * N) / N;
      std::printf("  %6u %12.0f %8.4f %12.0f %8.4f\n", b, std::round(c), k1, std::round(cmax),
                  k1max);
    }
  }
  return 0;
}
