// CPU models as data. One file per model under models/cpus/; every constant carries its
// unit and the guide section (or other public source) it comes from, so `padlock-emu
// cpus --verbose` and docs/ can show where each number came from.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace padlock {

// A sourced constant: the value, its unit, and where it comes from.
struct Param {
  double value = 0;
  const char* unit = "";
  const char* source = "";
  constexpr operator double() const { return value; }
};

struct CpuidLeaf {
  uint32_t leaf = 0;
  uint32_t subleaf = 0;
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
  const char* source = "";
};

enum class RngVariant : uint8_t {
  Nehemiah,  // string filter present; BCNT = bytes available (§2.2)
  Esther,    // no string filter; BCNT = one bit per full 8-byte buffer (§2.2)
};

// Which PadLock units exist on the chip (§1.1, §1.3 EDX[2], [6], [8], [10], [12]).
struct Units {
  bool rng = false;
  bool ace = false;
  bool ace2 = false;  // CTR, ALIGN and DGEST (§3.2, §7.1)
  bool phe = false;
  bool pmm = false;
};

// RNG generation model (§2.2, §2.3). Rates are raw bits per second into the accumulation
// buffers; the whitened rate emerges from running the von Neumann whitener over raw bits
// whose bias (probability of a 1) is set per DC-bias setting: whitened = raw * p(1-p).
struct RngParams {
  RngVariant variant = RngVariant::Esther;
  bool dual_source = true;      // SRC selects one or both sources (§2.2); false: SRC is RES
  Param raw_rate_one_source;    // raw bits/s, one source active, BIAS = 0
  Param raw_rate_both_sources;  // raw bits/s, both sources active, BIAS = 0
  std::array<Param, 8>
      raw_rate_scale;  // raw-rate factor per BIAS setting (§2.2 "may affect the speed")
  std::array<Param, 8> raw_one_bias;   // probability of a raw 1 bit per BIAS setting
  Param clocks_no_data{};              // §2.3 table: ~30 (all three: with_xstore_clocks)
  std::array<Param, 4> clocks_stored{};  // §2.3 table by EDX: ~55, ~310, ~200, ~120
  Param rep_single_extra{};            // §2.3: +7 when one internal XSTORE suffices
};

// ACE timing (§3.3). The ECB rows are the guide's table; the chaining-mode costs are
// derived from the measured throughput tables (docs/fidelity/ace.md says how).
struct AceParams {
  // REP XCRYPTECB table, SSE base clocks by data amount (1 block, 2 blocks, N blocks)
  // and key state (EFLAGS[30] = 1; = 0 with hardware keys; = 0 with memory keys).
  std::array<std::array<Param, 3>, 3> ecb_sse_base;
  std::array<std::array<Param, 3>, 2> ecb_int_base;  // integer base clocks for 1 and 2 blocks
  Param ecx0_clocks_min;  // §3.3: ECX = 0 takes 10..27 clocks (used: key loaded)
  Param ecx0_clocks_max;  // (used: EFLAGS[30] = 0)
  // Chaining modes (CBC, CFB, OFB, CTR): per-instruction start-up and per-block clocks,
  // aligned and unaligned (ALIGN = 1). Index: 0 CBC, 1 CFB, 2 OFB, 3 CTR.
  std::array<Param, 4> chain_startup;
  std::array<Param, 4> chain_per_block;
  std::array<Param, 4> chain_startup_unaligned;
  std::array<Param, 4> chain_per_block_unaligned;
  Param key_load_hw;                         // extra clocks to generate a 128-bit schedule
  Param key_load_mem;                        // extra clocks to load 256 bytes of schedule
  unsigned ctr_interrupt_granularity = 2;    // §6.6: interruptible after every 2 blocks
  unsigned ctr_interrupt_min_remaining = 3;  // §6.6: "1 < ECX < 5": none before the last pair
  unsigned chain_interrupt_granularity = 1;  // §7.1: after every block
  unsigned ecb_interrupt_granularity = 2;    // §3.3: ECB works on pairs of blocks
  // Input fetch granularity in bytes, counted from the initial ESI: the hardware reads its
  // input in groups of this size, so up to size - 16 bytes past ESI + 16*ECX are read (and
  // can fault). ECB reads at least pairs (§3.1, §3.3) whatever this says. Nano's larger
  // groups are the "prefetch errata" of OpenSSL e_padlock-x86*.pl and Linux padlock-aes.c.
  unsigned prefetch_ecb = 0, prefetch_cbc = 0, prefetch_ctr = 0;
};

// PHE timing (§4.2): hardware round rate plus start, per-block and padding overheads,
// calibrated so the asymptote is 2.66 bits/clock (SHA-1) and 2.26 bits/clock (SHA-256).
struct PheParams {
  Param sha1_clocks_per_round;    // 2
  Param sha256_clocks_per_round;  // 3
  Param sha1_block_overhead;
  Param sha256_block_overhead;
  Param startup;
  Param padding;
  bool partial_rax_minus1 = false;  // Nano: RAX = -1 hashes whole blocks, no padding
};

// PMM timing (§5.2): C = 1024*(4N^2 + K1*N) + K2, with K1 computed per outer pass from the
// operands (docs/fidelity/pmm.md): each pass costs inner steps * inner_loop_pmm_clocks +
// 32*k1_min + max(extension step or split carry store, integer tail not hidden).
struct PmmParams {
  Param k2;                     // ~35
  Param k1_min, k1_max;         // 0.56 .. 1.06
  Param inner_loop_int_clocks;  // 15
  Param inner_loop_pmm_clocks;  // 16
  Param cache_line_bytes;
  Param carry_split_clocks;                 // factor 2: 64-bit carry store crossing a cache line
  Param tail_int_clocks;                    // factor 3: outer-loop integer tail that can overlap
  Param backlog_max_clocks;                 // factor 3: PMM backlog the MMX pipeline can hold
  Param fill_stall_clocks;                  // factor 3: integer stall once the MMX pipeline fills
  bool needs_addr_prefix_in_64bit = false;  // Nano: REP MONTMUL needs 67h in 64-bit mode
};

// Caches and memory (for the large-buffer rows of §3.3), used by models/timing/cache_model.
// §3.3's clock table assumes everything in the cache and no load/store buffer stalls; these
// add what the measured tables show beyond it.
struct MemoryParams {
  Param l1d_bytes;
  Param l2_bytes;
  Param line_bytes;
  Param l2_hit_clocks;         // an L1 miss that hits L2, per line
  Param mem_bytes_per_clock;   // memory bandwidth: a line fill or write-back costs line/this
  Param l1d_ways;              // associativity (LRU)
  Param l2_ways;
  Param store_buffer_bytes;    // stores a PadLock data stream posts before it stalls
  Param store_drain_clocks;    // per 16-byte store beyond the store buffer (§3.3 "store buffer stalls")
  Param stream_overlap;        // fraction of min(engine, miss clocks) hidden by streaming
  bool l2_exclusive = true;    // the L2 holds L1 victims only (VIA C3/C7)
};

struct CpuModel {
  const char* name;     // CLI name, e.g. "esther-c5j"
  const char* aliases;  // comma-separated aliases, e.g. "esther"
  const char* core;     // "Nehemiah", "Esther", "Nano"
  const char* description;
  const char* brand;                 // CPUID 0x80000002..4 brand string
  uint32_t family, model, stepping;  // §1.1, §7.1
  bool long_mode;                    // can run 64-bit code
  Param default_mhz;
  Units units;
  bool ctr_errata;                   // §3.1 ERRATA, §6.6: Esther stepping 8
  uint32_t msr_rng_reset;            // §1.4
  bool has_fcr;                      // §1.5: every processor except Nehemiah stepping 3
  uint32_t msr_fcr_reset;            // §1.5: bit 28 set at RESET
  std::span<const CpuidLeaf> cpuid;  // standard and extended leaves (not 0xC0000001 EDX
                                     // enable bits, which follow the MSRs; see Padlock)
  RngParams rng;
  AceParams ace;
  PheParams phe;
  PmmParams pmm;
  MemoryParams memory;
};

// All models, in the order `padlock-emu cpus` lists them.
std::span<const CpuModel* const> all_cpu_models();
// Finds a model by name or alias; nullptr if unknown.
const CpuModel* find_cpu_model(std::string_view name);

}  // namespace padlock
