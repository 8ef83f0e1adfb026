// CPU models as data. One header per model under models/cpus/; every constant carries its
// unit (its type, models/param.hpp) and the guide section (or other public source) it
// comes from, so `padlock-emu cpus --verbose` and docs/ can show where each number came
// from.
//
// Each *Params struct is declared from ONE field list, PADLOCK_<BLOCK>_FIELDS(PARAM,
// SETTING), which models/cpu_params.cpp also walks for the listing and the Python module:
//   PARAM(Type, name, help)            a sourced value (a Sourced<Unit> or an array of them)
//   SETTING(Type, name, default, help) a plain setting (flag, count, enum)
// Adding a field to a list adds it to the struct, to `cpus --verbose` and to Python.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "models/param.hpp"

namespace padlock {

struct CpuidLeaf {
  uint32_t leaf = 0;
  uint32_t subleaf = 0;
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
  const char* source = "";
};
// The leaves every model answers (models/cpus/cpuid_common.hpp: standard_leaves).
inline constexpr size_t kCpuidLeaves = 8;

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
  // Late Nano and Zhaoxin (docs/zhaoxin.md; C000_0001 EDX bit pairs of Zhaoxin's
  // cpufeatures patch): PHE2 (REP XSHA384/512, bits 25/26), CCS (SM3 and SM4, bits 4/5),
  // SM2 (bits 0/1), RSA (REP XMODEXP and REP MONTMUL2, bits 27/28), RNG2 (REP XRNG2,
  // bits 22/23).
  bool phe2 = false;
  bool ccs = false;
  bool sm2 = false;
  bool rsa = false;
  bool rng2 = false;
};

// Indexed tables of sourced values, named by what indexes them.
template <typename T>
using PerBias = std::array<T, 8>;  // the 3-bit DC BIAS field of MSR 0x110B (§2.2)
template <typename T>
using PerEdx = std::array<T, 4>;  // XSTORE EDX[1:0] (§2.3)
template <typename T>
using PerChainMode = std::array<T, 4>;  // CBC, CFB, OFB, CTR (ace::ChainMode)
// §3.3 REP XCRYPTECB table: rows by data amount, columns by key state (EFLAGS[30] = 1;
// = 0 with hardware keys; = 0 with memory keys).
template <size_t Rows>
using EcbTable = std::array<std::array<Clocks, 3>, Rows>;

#define PADLOCK_DECLARE_PARAM(Type, name, help) Type name{};
#define PADLOCK_DECLARE_SETTING(Type, name, init, help) Type name = init;

// RNG generation model (§2.2, §2.3). Rates are raw bits per second into the accumulation
// buffers; the whitened rate emerges from running the von Neumann whitener over raw bits
// whose bias (probability of a 1) is set per DC-bias setting: whitened = raw * p(1-p).
#define PADLOCK_RNG_FIELDS(PARAM, SETTING)                                                         \
  SETTING(RngVariant, variant, RngVariant::Esther,                                                 \
          "§2.2: Nehemiah (string filter, BCNT = bytes available) or Esther (BCNT = full "        \
          "8-byte buffers)")                                                                       \
  SETTING(bool, dual_source, true, "§2.2: SRC selects one or both noise sources; 0: SRC is RES")   \
  PARAM(BitsPerSecond, raw_rate_one_source, "raw rate into the buffers, one source, BIAS = 0")     \
  PARAM(BitsPerSecond, raw_rate_both_sources, "raw rate into the buffers, both sources, BIAS = 0") \
  PARAM(PerBias<Ratio>, raw_rate_scale,                                                            \
        "raw-rate factor per BIAS (§2.2 \"may affect the speed\")")                                \
  PARAM(PerBias<Probability>, raw_one_bias, "probability of a raw 1 bit per BIAS setting")         \
  PARAM(Clocks, clocks_no_data, "§2.3 XSTORE clocks when no data is available")                    \
  PARAM(PerEdx<Clocks>, clocks_stored, "§2.3 XSTORE clocks when data is stored, by EDX[1:0]")      \
  PARAM(Clocks, rep_single_extra, "§2.3 REP XSTORE extra clocks when one XSTORE suffices")

struct RngParams {
  PADLOCK_RNG_FIELDS(PADLOCK_DECLARE_PARAM, PADLOCK_DECLARE_SETTING)
};

// ACE timing (§3.3). The ECB rows are the guide's table; the chaining-mode costs are
// derived from the measured throughput tables (docs/fidelity/ace.md says how). The input
// fetch granularity (prefetch_*) is in bytes counted from the initial ESI: the hardware
// reads its input in groups of this size, so up to size - 16 bytes past ESI + 16*ECX are
// read (and can fault). ECB reads at least pairs (§3.1, §3.3) whatever it says. Nano's
// larger groups are the "prefetch errata" of OpenSSL e_padlock-x86*.pl and Linux
// padlock-aes.c.
#define PADLOCK_ACE_FIELDS(PARAM, SETTING)                                                     \
  PARAM(EcbTable<3>, ecb_sse_base, "§3.3 ECB SSE base clocks [1, 2, N blocks][key state]")     \
  PARAM(EcbTable<2>, ecb_int_base, "§3.3 ECB integer clocks [1, 2 blocks][key state]")         \
  PARAM(Clocks, ecx0_clocks_min, "§3.3 ECX = 0 clocks, used with the key loaded")              \
  PARAM(Clocks, ecx0_clocks_max, "§3.3 ECX = 0 clocks, used with EFLAGS[30] = 0")              \
  PARAM(PerChainMode<Clocks>, chain_startup,                                                   \
        "SSE start-up clocks [CBC, CFB, OFB, CTR], aligned, data in L1, key loaded")           \
  PARAM(PerChainMode<Clocks>, chain_per_block,                                                 \
        "SSE clocks per block [CBC, CFB, OFB, CTR], aligned, data in L1")                      \
  PARAM(PerChainMode<Clocks>, chain_startup_unaligned,                                         \
        "as chain_startup with ALIGN = 1 (§3.2); a chip without ALIGN has the aligned values") \
  PARAM(PerChainMode<Clocks>, chain_per_block_unaligned,                                       \
        "as chain_per_block with ALIGN = 1 (§3.2)")                                            \
  PARAM(PerChainMode<Clocks>, chain_reload,                                                    \
        "extra SSE clocks [CBC, CFB, OFB, CTR] to restart the chain after a key load")         \
  PARAM(Clocks, ecb_release_many,                                                              \
        "clocks integer code is released earlier than the single-encryption overlap, ECB of "  \
        "more than 2 blocks (§3.3)")                                                           \
  PARAM(Clocks, iv_writeback,                                                                  \
        "extra SSE clocks to store the chaining value to memory (§3.1: CBC/CFB decryption, "  \
        "OFB, CBC/CFB with ALIGN = 1)")                                                        \
  PARAM(Clocks, key_load_hw, "extra clocks to generate a 128-bit key schedule")                \
  PARAM(Clocks, key_load_mem, "extra clocks to load 256 bytes of key schedule")                \
  PARAM(Clocks, store_hidden_by_rounds,                                                        \
        "clocks of the per-store cost a block's rounds beyond 10 hide (§3.3: a round is 1)")   \
  PARAM(Clocks, dgest_per_block,                                                               \
        "extra SSE clocks per block in digest mode (DGEST = 1, §3.1: one output location)")    \
  SETTING(unsigned, ctr_interrupt_granularity, 2, "§6.6: interruptible after every 2 blocks")  \
  SETTING(unsigned, ctr_interrupt_min_remaining, 3,                                            \
          "§6.6 \"1 < ECX < 5\": no interrupt before the last pair")                           \
  SETTING(unsigned, chain_interrupt_granularity, 1, "§7.1: interruptible after every block")   \
  SETTING(unsigned, ecb_interrupt_granularity, 2, "§3.3: ECB works on pairs of blocks")        \
  SETTING(unsigned, prefetch_ecb, 0, "REP XCRYPTECB input fetch group in bytes (0: none)")     \
  SETTING(unsigned, prefetch_cbc, 0, "REP XCRYPTCBC input fetch group in bytes (0: none)")     \
  SETTING(unsigned, prefetch_ctr, 0, "REP XCRYPTCTR input fetch group in bytes (0: none)")

struct AceParams {
  PADLOCK_ACE_FIELDS(PADLOCK_DECLARE_PARAM, PADLOCK_DECLARE_SETTING)
};

// Start-up and per-block SSE clocks of one chaining mode, fitted to one column of a §3.3
// throughput table; `source` names the table (models/cpus/calibrated.hpp).
struct ChainFit {
  const char* source;
  double startup, per_block;
};

// PHE timing (§4.2): hardware round rate plus start, per-block and padding overheads,
// calibrated so the asymptote is 2.66 bits/clock (SHA-1) and 2.26 bits/clock (SHA-256).
#define PADLOCK_PHE_FIELDS(PARAM, SETTING)                                                    \
  PARAM(Clocks, sha1_clocks_per_round, "clocks per SHA-1 round")                              \
  PARAM(Clocks, sha256_clocks_per_round, "clocks per SHA-256 round")                          \
  PARAM(Clocks, sha1_block_overhead, "SHA-1 clocks per 64-byte block beyond the rounds")      \
  PARAM(Clocks, sha256_block_overhead, "SHA-256 clocks per 64-byte block beyond the rounds")  \
  PARAM(Clocks, startup, "clocks per REP XSHA instruction before the first block")            \
  PARAM(Clocks, padding, "clocks to build the final padded block")                            \
  SETTING(bool, partial_rax_minus1, false, "RAX = -1 hashes whole blocks, no padding (Nano)") \
  SETTING(bool, sha1_stores_32_bytes, false,                                                  \
          "XSHA1 stores 32 bytes at EDI, bytes 20-31 zero (Zhaoxin; docs/zhaoxin.md)")        \
  SETTING(bool, ecx0_does_nothing, false,                                                     \
          "XSHA1/XSHA256 with ECX = 0 change nothing, no padding (Zhaoxin; docs/zhaoxin.md)")

struct PheParams {
  PADLOCK_PHE_FIELDS(PADLOCK_DECLARE_PARAM, PADLOCK_DECLARE_SETTING)
};

// PHE2 timing (REP XSHA384/512, docs/fidelity/phe2.md): no latency is public; the values
// are documented choices (KH-40000 tcrypt calibration, zhaoxin.md, is for later).
#define PADLOCK_PHE2_FIELDS(PARAM, SETTING)                                   \
  PARAM(Clocks, startup, "clocks per REP XSHA384/512 before the first block") \
  PARAM(Clocks, sha512_block_clocks, "clocks per 128-byte SHA-512 block (80 rounds)")

struct Phe2Params {
  PADLOCK_PHE2_FIELDS(PADLOCK_DECLARE_PARAM, PADLOCK_DECLARE_SETTING)
};

// GMI timing and modes (SM3, SM4, SM2; docs/fidelity/gmi.md). No GMI figure is public
// (zhaoxin.md): every value is a documented choice.
#define PADLOCK_GMI_FIELDS(PARAM, SETTING)                                             \
  PARAM(Clocks, startup, "clocks per CCS_HASH or CCS_ENCRYPT before the first block")  \
  PARAM(Clocks, sm3_block_clocks, "clocks per 64-byte SM3 block (64 rounds)")          \
  PARAM(Clocks, sm3_padding, "clocks to build SM3's final padded block (EAX = 0)")     \
  PARAM(Clocks, sm4_key_clocks, "clocks to expand the SM4 key at EBX (32 round keys)") \
  PARAM(Clocks, sm4_block_clocks, "clocks per 16-byte SM4 block (32 rounds)")          \
  PARAM(Clocks, sm2_verify_clocks, "clocks per SM2 signature verification (EDX = 8)")  \
  SETTING(bool, sm4_chain_modes, true,                                                 \
          "SM4 CFB, OFB and CTR exist; false: ECB and CBC only (ZX-C, as openEuler's " \
          "sm4-zhaoxin-gmi.c drives it)")

struct GmiParams {
  PADLOCK_GMI_FIELDS(PADLOCK_DECLARE_PARAM, PADLOCK_DECLARE_SETTING)
};

// PMM timing (§5.2): C = 1024*(4N^2 + K1*N) + K2, with K1 computed per outer pass from the
// operands (docs/fidelity/pmm.md): each pass costs inner steps * inner_loop_pmm_clocks +
// 32*k1_min + max(extension step or split carry store, integer tail not hidden).
#define PADLOCK_PMM_FIELDS(PARAM, SETTING)                                                     \
  PARAM(Clocks, k2, "§5.2 K2: clocks per REP MONTMUL beyond the passes")                       \
  PARAM(Ratio, k1_min, "§5.2 smallest K1")                                                     \
  PARAM(Ratio, k1_max, "§5.2 largest K1")                                                      \
  PARAM(Clocks, inner_loop_int_clocks, "§5.2 factor 3: integer inner loop step")               \
  PARAM(Clocks, inner_loop_pmm_clocks, "§5.2 factor 3: PMM/MMX inner loop step")               \
  PARAM(Bytes, cache_line_bytes, "§5.2 factor 2: line a 64-bit carry store may cross")         \
  PARAM(Clocks, carry_split_clocks, "§5.2 factor 2: carry store crossing a cache line")        \
  PARAM(Clocks, tail_int_clocks, "§5.2 factor 3: outer-loop integer tail that can overlap")    \
  PARAM(Clocks, backlog_max_clocks, "§5.2 factor 3: PMM backlog the MMX pipeline can hold")    \
  PARAM(Clocks, fill_stall_clocks, "§5.2 factor 3: integer stall once the MMX pipeline fills") \
  PARAM(Clocks, tail_hidden_min_clocks,                                                        \
        "§5.2 factor 3: outer-loop tail hidden by the pass's last inner step, any [M]")        \
  SETTING(bool, needs_addr_prefix_in_64bit, false, "REP MONTMUL needs 67h in 64-bit mode")

struct PmmParams {
  PADLOCK_PMM_FIELDS(PADLOCK_DECLARE_PARAM, PADLOCK_DECLARE_SETTING)
};

// Caches and memory (for the large-buffer rows of §3.3), used by models/timing/cache_model.
// §3.3's clock table assumes everything in the cache and no load/store buffer stalls; these
// add what the measured tables show beyond it.
#define PADLOCK_MEMORY_FIELDS(PARAM, SETTING)                                                \
  PARAM(Bytes, l1d_bytes, "L1 data cache size")                                              \
  PARAM(Bytes, l2_bytes, "L2 cache size")                                                    \
  PARAM(Bytes, line_bytes, "cache line size")                                                \
  PARAM(Clocks, l2_hit_clocks, "an L1 miss that hits L2, per line")                          \
  PARAM(BytesPerClock, mem_bytes_per_clock, "memory bandwidth: a line fill costs line/this") \
  PARAM(Ways, l1d_ways, "L1 data cache associativity (LRU)")                                 \
  PARAM(Ways, l2_ways, "L2 associativity (LRU)")                                             \
  PARAM(Bytes, store_buffer_bytes, "stores a PadLock data stream posts before it stalls")    \
  PARAM(Clocks, store_drain_clocks, "per 16-byte store beyond the store buffer (§3.3)")      \
  PARAM(Ratio, stream_overlap, "fraction of min(engine, miss clocks) hidden by streaming")   \
  SETTING(bool, l2_exclusive, true, "the L2 holds L1 victims only (VIA C3/C7)")

struct MemoryParams {
  PADLOCK_MEMORY_FIELDS(PADLOCK_DECLARE_PARAM, PADLOCK_DECLARE_SETTING)
};

#undef PADLOCK_DECLARE_PARAM
#undef PADLOCK_DECLARE_SETTING

enum class EnableScheme : uint8_t {
  Via,  // FCR 0x1107 bit 28 (ACE, ACE2, PHE, PMM) and MSR 0x110B bit 6 (RNG)
  // Family-7 Zhaoxin: MSR 0x1257 (bit 7 ACE, bit 8 RNG; Linux arch/x86/kernel/cpu/
  // zhaoxin.c) sets enables, which start set; 0x1107 and 0x110B read fixed values and
  // ignore writes (VirtualBox's KX-U5581 MSR scan).
  Zhaoxin,
};
// The new units' values on every model that has them, until a part is calibrated.
constexpr Phe2Params choice_phe2() {
  return Phe2Params{
      .startup = {40, "choice: as PHE's start-up (the PHE figure of guide §4.2)"},
      .sha512_block_clocks = {304,
                              "choice: KH-40000 tcrypt SHA-512, 8192-byte row (7407.80 Mb/s) "
                              "at 2.2 GHz: 1024 bits per 304 clocks (zhaoxin.md)"},
  };
}
constexpr GmiParams choice_gmi() {
  return GmiParams{
      .startup = {40, "choice: as PHE's start-up; no GMI figure is public"},
      .sm3_block_clocks = {240, "choice: SHA-256's PHE rate (2.26 bit/clock, guide §4.2)"},
      .sm3_padding = {20, "choice: as PHE's padding"},
      .sm4_key_clocks = {32, "choice: one clock per round key"},
      .sm4_block_clocks = {32, "choice: one clock per SM4 round"},
      .sm2_verify_clocks = {200000, "choice: no public figure"},
      .sm4_chain_modes = true,
  };
}

struct CpuModel {
  const char* name;     // CLI name, e.g. "esther-c5j"
  const char* aliases;  // comma-separated aliases, e.g. "esther"
  const char* core;     // "Nehemiah", "Esther", "Nano"
  const char* description;
  const char* brand;                 // CPUID 0x80000002..4 brand string
  uint32_t family, model, stepping;  // §1.1, §7.1
  bool long_mode;                    // can run 64-bit code
  MHz default_mhz;
  Units units;
  bool ctr_errata;  // §3.1 ERRATA, §6.6: Esther stepping 8
  // Reset values, the same on every model unless it says otherwise.
  uint32_t msr_rng_reset = 0x00000040;  // §1.4
  bool has_fcr = true;                  // §1.5: every processor except Nehemiah stepping 3
  // §1.2/§1.5: PadLock enabled at RESET (bit 28); the other FCR bits: choice 0.
  uint32_t msr_fcr_reset = 0x10000000;
  // How the units are enabled: VIA's FCR and MSR 0x110B (§1.3-§1.5), or the family-7
  // Zhaoxin parts' MSR 0x1257 (docs/zhaoxin.md, "MSR 0x1257").
  EnableScheme enables = EnableScheme::Via;
  uint32_t msr_fcr57_reset = 0;
  // C000_0001 EDX bits of features no unit here models (PARALLAX 16/17, TM3 20/21 of
  // Zhaoxin's cpufeatures patch), reported as the model's dump shows them.
  uint32_t centaur_edx_unmodelled = 0;
  // EDX[9], ACE2 enabled (§1.3): clear on every Nano 3000 and Zhaoxin dump although
  // ACE2 is present and works (docs/zhaoxin.md, "CPUID").
  bool ace2_enable_bit = true;
  // The public files the model's values come from (`cpus --verbose`).
  const char* sources = "";
  // Standard and extended leaves (not 0xC0000001 EDX enable bits, which follow the MSRs;
  // see Padlock).
  std::array<CpuidLeaf, kCpuidLeaves> cpuid;
  RngParams rng;
  AceParams ace;
  PheParams phe;
  PmmParams pmm;
  MemoryParams memory;
  Phe2Params phe2 = choice_phe2();  // used when units.phe2
  GmiParams gmi = choice_gmi();     // used when units.ccs or units.sm2
  // Values measured on another chip that this model takes as a choice, with why (`cpus
  // --verbose` lists them with the choices); "" when every sourced value is this chip's.
  const char* borrowed = "";
};

// All models, in the order `padlock-emu cpus` lists them.
std::span<const CpuModel* const> all_cpu_models();
// Finds a model by name or alias; nullptr if unknown.
const CpuModel* find_cpu_model(std::string_view name);
// "name, name, ..." of every model, and "alias = name, ..." in *aliases.
std::string cpu_model_names(std::string* aliases = nullptr);
// The one message for a name no model has, in every entry point (CLI, Python).
std::string unknown_cpu_model_message(std::string_view name, const char* where = "");

}  // namespace padlock
