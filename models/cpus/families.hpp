// Parameter blocks shared by several CPU models. The guide gives one REP XCRYPTECB table,
// one XSTORE table and one set of PHE/PMM figures; the chaining-mode clocks are fitted to
// its Nehemiah (1.2 GHz) and Esther (1.6 GHz) throughput tables (§3.3) by
// scripts/calibrate.py, which writes them to calibrated.hpp. A model header starts from its
// family's blocks and changes only what differs.
#pragma once

#include <array>
#include <cstddef>

#include "models/cpu_model.hpp"
#include "models/cpus/calibrated.hpp"

namespace padlock::cpus {

// §3.3 REP XCRYPTECB table, ECX = 0 clocks and key-load costs: the same on every ACE.
constexpr AceParams guide_ace() {
  AceParams a{};
  a.ecb_sse_base = {{{{{9, "§3.3 ECB table 128b, EFLAGS:30=1"},
                       {45, "§3.3 ECB table 128b, EFLAGS:30=0, hardware key"},
                       {76, "§3.3 ECB table 128b, EFLAGS:30=0, memory key"}}},
                     {{{11, "§3.3 ECB table 2*128b, EFLAGS:30=1"},
                       {47, "§3.3 ECB table 2*128b, EFLAGS:30=0, hardware key"},
                       {78, "§3.3 ECB table 2*128b, EFLAGS:30=0, memory key"}}},
                     {{{11, "§3.3 ECB table N*128b, EFLAGS:30=1"},
                       {47, "§3.3 ECB table N*128b, EFLAGS:30=0, hardware key"},
                       {78, "§3.3 ECB table N*128b, EFLAGS:30=0, memory key"}}}}};
  a.ecb_int_base = {{{{{17, "§3.3 ECB table 128b integer, EFLAGS:30=1"},
                       {61, "§3.3 ECB table 128b integer, hardware key"},
                       {84, "§3.3 ECB table 128b integer, memory key"}}},
                     {{{12, "§3.3 ECB table 2*128b integer, EFLAGS:30=1"},
                       {56, "§3.3 ECB table 2*128b integer, hardware key"},
                       {79, "§3.3 ECB table 2*128b integer, memory key"}}}}};
  a.ecx0_clocks_min = {10, "§3.3: ECX = 0 takes 10..27 clocks; ours with EFLAGS:30=1"};
  a.ecx0_clocks_max = {27, "§3.3: ECX = 0 takes 10..27 clocks; ours with EFLAGS:30=0"};
  a.key_load_hw = {36, "§3.3 ECB table: 45 - 9 (hardware key row minus loaded row)"};
  a.key_load_mem = {67, "§3.3 ECB table: 76 - 9 (memory key row minus loaded row)"};
  a.iv_writeback = {0, "n/a: the guide's tables time encryption with ALIGN = 0 only"};
  a.ecb_release_many = {0, "§3.3: the overlap is comparable to a single encryption's"};
  a.store_hidden_by_rounds = {0, "none: no per-store cost to hide; a round is 1 clock (§3.3 N*R)"};
  a.dgest_per_block = {0, "n/a: no digest mode before ACE2 (§3.1)"};
  return a;
}

// The chaining modes' start-up and per-block clocks, one fit per mode (CBC, CFB, OFB, CTR).
constexpr void set_chain(PerChainMode<Clocks>& startup, PerChainMode<Clocks>& per_block,
                         const PerChainMode<ChainFit>& fits) {
  for (size_t i = 0; i < fits.size(); ++i) {
    startup[i] = {fits[i].startup, fits[i].source};
    per_block[i] = {fits[i].per_block, fits[i].source};
  }
}

// §3.3 "1.6 GHz Esther" tables, read at their nominal clock: start-up and per-block SSE
// clocks of the chaining modes with the data in L1 and no store-buffer stalls. Not the
// tables' clocks per block: those also hold the BAES loop (x86 costs), the overlap rule and
// the cache model's stalls (Esther's per-store cost among them, esther_memory()), which the
// emulator adds; the values are fitted so that the whole reproduces the tables. §3.3 has no
// aligned CTR column: aligned CTR is fitted to CTR_ERRATA.C's two timed phases (§6.6).
constexpr AceParams esther_ace() {
  using namespace calibrated;
  AceParams a = guide_ace();
  set_chain(a.chain_startup, a.chain_per_block,
            {{kEstherAlignedCbc, kEstherAlignedCfb, kEstherAlignedOfb, kEstherAlignedCtr}});
  set_chain(a.chain_startup_unaligned, a.chain_per_block_unaligned,
            {{kEstherUnalignedCbc, kEstherUnalignedCfb, kEstherUnalignedOfb, kEstherUnalignedCtr}});
  // No source reloads the key before every instruction on an Esther (BAES never does):
  // Nehemiah's chain reloads, from Gladman's tables.
  constexpr const char* kReload =
      "choice: Nehemiah's, fitted to Gladman's tables (no Esther "
      "source reloads the key per instruction)";
  a.chain_reload = {{{kNehemiahChainReload.value, kReload},
                     {kNehemiahChainReload.value, kReload},
                     {kNehemiahChainReload.value, kReload},
                     {kNehemiahChainReload.value, kReload}}};
  a.ecb_release_many = kEstherEcbRelease;
  a.dgest_per_block = kEstherDigestPerBlock;
  // Rounds beyond 10 overlap part of Esther's per-store cost (esther_memory()).
  a.store_hidden_by_rounds = kEstherStoreHiddenByRounds;
  a.iv_writeback = {kNehemiahIvWriteback.value,
                    "choice: Nehemiah's, fitted to Gladman's tables (no Esther source times "
                    "decryption)"};
  // §3.1/§3.3: ECB reads pairs (Linux padlock-aes.c ecb_fetch_blocks = 2); no prefetch
  // erratum before Nano.
  a.prefetch_ecb = 32;
  return a;
}

// §3.3 "1.2 GHz Nehemiah" table, fitted as esther_ace(). A fitted start-up may be
// negative: it is the intercept of a line through 2-1024 blocks, and a single block takes
// at least ECB's clocks (models/ace/ace_timing.cpp).
constexpr AceParams nehemiah_ace() {
  using namespace calibrated;
  constexpr ChainFit kNoCtr = {"n/a: no CTR on Nehemiah (§0, §7.1)", 0, 0};
  constexpr PerChainMode<ChainFit> kFits = {
      {kNehemiahAlignedCbc, kNehemiahAlignedCfb, kNehemiahAlignedOfb, kNoCtr}};
  AceParams a = guide_ace();
  set_chain(a.chain_startup, a.chain_per_block, kFits);
  // No ALIGN on Nehemiah (§3.2): non-aligned buffers cost as aligned ones.
  set_chain(a.chain_startup_unaligned, a.chain_per_block_unaligned, kFits);
  // One restart after a key load whatever the mode (§3.3: the microcode "resets ACE ...,
  // loads or generates the key, and restarts").
  a.chain_reload = {{kNehemiahChainReload,
                     kNehemiahChainReload,
                     kNehemiahChainReload,
                     {0, "n/a: no CTR on Nehemiah (§0, §7.1)"}}};
  a.iv_writeback = kNehemiahIvWriteback;
  a.ecb_release_many = kNehemiahEcbRelease;
  a.prefetch_ecb = 32;
  return a;
}

// §2.3 XSTORE execution clocks: one table for every chip with an RNG.
constexpr RngParams with_xstore_clocks(RngParams r) {
  r.clocks_no_data = {30, "§2.3 XSTORE table: no data ~30"};
  r.clocks_stored = {{{55, "§2.3 XSTORE table EDX=0"},
                      {310, "§2.3 XSTORE table EDX=1 (App. A 7: as printed)"},
                      {200, "§2.3 XSTORE table EDX=2"},
                      {120, "§2.3 XSTORE table EDX=3"}}};
  r.rep_single_extra = {7, "§2.3: REP XSTORE, one internal XSTORE suffices"};
  return r;
}

// One value per BIAS setting (§2.2), all from one source.
template <typename Unit>
constexpr PerBias<Sourced<Unit>> per_bias(const char* source, const PerBias<double>& v) {
  PerBias<Sourced<Unit>> out{};
  for (size_t i = 0; i < v.size(); ++i) out[i] = {v[i], source};
  return out;
}

// §2.2/§2.3: Esther RNG (no string filter; BCNT = one bit per full buffer).
constexpr RngParams esther_rng() {
  return with_xstore_clocks(RngParams{
      .variant = RngVariant::Esther,
      .dual_source = true,
      .raw_rate_one_source = {95e6,
                              "choice: half the two-source rate, as §2.3 gives for "
                              "Nehemiah"},
      .raw_rate_both_sources = {190e6,
                                "§2.3: default bias about 150-200 Mb/s; 190 keeps near the ~500 "
                                "clocks per buffer at 2 GHz (674)"},
      .raw_rate_scale = per_bias<unit::Ratio>(
          "choice: §2.3 observed 65-320 Mb/s depending on DC bias; factors give 66.5-319 Mb/s",
          {1.0, 1.25, 1.5, 1.68, 0.8, 0.6, 0.45, 0.35}),
      .raw_one_bias = per_bias<unit::Probability>(
          "choice: whitened = raw * p(1-p) spans 16.5-78 Mb/s, inside §2.3 15-80 Mb/s",
          {0.7, 0.65, 0.6, 0.57, 0.72, 0.7, 0.62, 0.55}),
  });
}

// §2.2/§2.3: Nehemiah stepping 8 RNG, two noise sources and the string filter.
constexpr RngParams nehemiah_rng() {
  return with_xstore_clocks(RngParams{
      .variant = RngVariant::Nehemiah,
      .dual_source = true,
      .raw_rate_one_source = {50e6, "§2.3: one source selected, raw 40-60 Mb/s (midpoint)"},
      .raw_rate_both_sources = {100e6, "§2.3: stepping 8, both sources 80-120 Mb/s (midpoint)"},
      .raw_rate_scale = per_bias<unit::Ratio>(
          "choice: §2.2 says BIAS may affect speed; kept within 0.85-1.15 so every setting "
          "stays inside the §2.3 80-120 / 12-20 Mb/s ranges",
          {1.0, 1.1, 0.9, 1.15, 0.85, 1.05, 0.95, 1.0}),
      .raw_one_bias = per_bias<unit::Probability>(
          "choice: whitened/raw = p(1-p) = 0.16 gives §2.3 12-20 Mb/s from 80-120 Mb/s raw",
          {0.8, 0.79, 0.81, 0.79, 0.81, 0.8, 0.8, 0.78}),
  });
}

// §4.2: PHE figures (Esther; the guide gives no others).
constexpr PheParams guide_phe() {
  return PheParams{
      .sha1_clocks_per_round = {2, "§4.2: one SHA-1 round every two clocks"},
      .sha256_clocks_per_round = {3, "§4.2: one SHA-256 round every three clocks"},
      .sha1_block_overhead = {512.0 / 2.66 - 80 * 2,
                              "§4.2: 512 bits per block at the 2.66 bit/clock asymptote, minus "
                              "80 rounds * 2 clocks"},
      .sha256_block_overhead = calibrated::kSha256BlockOverhead,
      .startup = {40,
                  "choice: §4.2 names start-up overhead (microcode entry, state load from "
                  "EDI) without a figure"},
      .padding = {20,
                  "choice: §4.2 names padding overhead (building the final block) without "
                  "a figure"},
      .partial_rax_minus1 = false,
  };
}

// §5.2: PMM figures; the carry store of factor 2 crosses the chip's cache line.
constexpr PmmParams guide_pmm(const MemoryParams& memory) {
  return PmmParams{
      .k2 = {35, "§5.2: K2 ~ 35"},
      .k1_min = {0.56, "§5.2: 0.56 <= K1"},
      .k1_max = {1.06, "§5.2: K1 <= 1.06"},
      .inner_loop_int_clocks = {15, "§5.2 factor 3: integer inner loop"},
      .inner_loop_pmm_clocks = {16, "§5.2 factor 3: PMM/MMX inner loop"},
      .cache_line_bytes = {memory.line_bytes.value,
                           "§5.2 factor 2: carry store crossing a line (memory.line_bytes)"},
      .carry_split_clocks = {16,
                             "choice: §5.2 factor 2 gives no figure; one inner step, the "
                             "most that keeps K1 <= 1.06 since it never coincides with "
                             "factor 1"},
      .tail_int_clocks = {18,
                          "choice: §5.2 factor 3; with backlog_max = 18 puts the K1 minimum "
                          "at [M] = 2304 (§5.2: 0.561 there)"},
      .backlog_max_clocks = {18,
                             "choice: §5.2 factor 3; one clock of backlog per inner step "
                             "(16 - 15), full after 18 steps = [M] 2304"},
      .fill_stall_clocks = {1,
                            "§5.2 factor 3: the integer pipeline stalls for one clock once "
                            "the MMX pipeline fills"},
      .tail_hidden_min_clocks = {16,
                                 "§5.2 factor 3: for smaller [M] the extra clocks overlap the "
                                 "outer loop's integer instructions; the pass's last inner "
                                 "step (16 PMM clocks) runs under the tail"},
      .needs_addr_prefix_in_64bit = false,
  };
}

// No per-store stall: Gladman's REP XCRYPTECB of 1000 blocks takes 9.97 clocks a block,
// the §3.3 formula N*R with R = 10, so ACE streams its stores without one.
inline constexpr const char* kNoStoreStall =
    "none: Gladman's 1000-block ECB is 9.97 clocks a block, the §3.3 N*R (docs/timing.md)";

// Memory bandwidth from a §3.3 1 MB row: an in-place stream reads and writes every byte,
// at the clock the table was measured at.
constexpr double in_place_bytes_per_clock(double gbps, const MHz& table_clock) {
  return 2 * gbps * 1e9 / 8 / (table_clock.value * 1e6);
}

// The §3.3 Esther tables are read at the clock they state (docs/timing.md, "The clock the
// §3.3 tables were measured at").
inline constexpr MHz kEstherTableNominal = {1600, "§3.3: \"1.6 GHz Esther\""};

// Esther's per-store cost beyond the store buffer: what its SSE data path takes more than
// Nehemiah's for an aligned 16-byte load and store, the data an ACE block moves. InstLat's
// MOVAPS LS pair, the one aligned 16-byte form both cores have, in RDTSC cycles: 5.92 on
// Esther, 3.92 on Nehemiah, whose ACE streams stores without a stall (kNoStoreStall). A
// measured constant, not fitted: the §3.3 Esther tables at 1.6 GHz (12 clocks a block for
// ECB, N*R = 10) check it (docs/timing.md, "Esther's clocks").
inline constexpr Clocks kEstherStoreDrain = {
    5.92 - 3.92,
    "InstLat MOVAPS LS pair T: 5.92 (CentaurHauls00006A9_C5J_Esther_InstLatX86.txt:606) - "
    "3.92 (CentaurHauls0000698_C5P_Nehemiah_InstLatX86.txt:598) (docs/timing.md)"};

// Esther caches (64 KB L1 data, 128 KB L2), the §3.3 1 MB-row bandwidth, and the per-store
// cost beyond the store buffer that makes the §3.3 ECB rows 12 clocks a block at 1.6 GHz
// where the §3.3 formula gives N*R = 10 (docs/timing.md, "Esther's clocks").
constexpr MemoryParams esther_memory() {
  return MemoryParams{
      .l1d_bytes = {65536, "Esther L1 data cache 64 KB"},
      .l2_bytes = {128 * 1024, "Esther L2 cache 128 KB"},
      .line_bytes = {64, "Esther cache line"},
      .l2_hit_clocks = {20, "choice: calibrated against the §3.3 32 KB/64 KB rows"},
      .mem_bytes_per_clock = {in_place_bytes_per_clock(3.09, kEstherTableNominal),
                              "§3.3 Esther 1 MB ECB row: 3.09 Gb/s in place (read + write) at "
                              "the table's nominal 1.6 GHz"},
      .l1d_ways = {4, "Esther L1 data cache 4-way"},
      .l2_ways = {32, "Esther L2 32-way"},
      .store_buffer_bytes = {64, "choice: calibrated on the §3.3 Esther 16-128 B rows"},
      .store_drain_clocks = kEstherStoreDrain,
      .stream_overlap = {0.6, "choice: calibrated on the §3.3 Esther 1 MB rows"},
      .l2_exclusive = true,
  };
}

// Nehemiah caches (64 KB L1 data, 64 KB L2) and the §3.3 1 MB-row bandwidth.
constexpr MemoryParams nehemiah_memory() {
  return MemoryParams{
      .l1d_bytes = {65536, "Nehemiah L1 data cache 64 KB"},
      .l2_bytes = {64 * 1024, "Nehemiah L2 cache 64 KB"},
      .line_bytes = {32, "Nehemiah cache line"},
      .l2_hit_clocks = {20, "choice: calibrated against the §3.3 32 KB/64 KB rows"},
      .mem_bytes_per_clock = {in_place_bytes_per_clock(1.05, calibrated::kNehemiahTableClock),
                              "§3.3 Nehemiah 1 MB ECB row: 1.05 Gb/s in place (read + write) at "
                              "the table's clock (calibrated.hpp)"},
      .l1d_ways = {4, "Nehemiah L1 data cache 4-way"},
      .l2_ways = {16, "Nehemiah L2 16-way"},
      .store_buffer_bytes = {64, "choice: calibrated on the §3.3 Nehemiah 16-128 B rows"},
      .store_drain_clocks = {0, kNoStoreStall},
      .stream_overlap = {0.45, "choice: calibrated on the §3.3 Nehemiah 1 MB rows"},
      .l2_exclusive = true,
  };
}

}  // namespace padlock::cpus
