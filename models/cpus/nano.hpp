// CPU model: VIA Nano (Isaiah), 64-bit capable.
// Every value cites the guide section (or public source) it comes from; "choice" marks a
// value the guide does not give, documented in docs/fidelity.md.
#pragma once

#include "models/cpu_model.hpp"
#include "models/cpus/cpuid_common.hpp"
#include "models/cpus/families.hpp"

namespace padlock::cpus {

// The guide predates Nano: its ACE, RNG, PHE and PMM figures are Esther's (choice), except
// what real 64-bit clients rely on (OpenSSL engines/asm/e_padlock-x86_64.pl, GnuTLS
// lib/accelerated/x86, Linux drivers/crypto/padlock-*.c): see docs/fidelity/ace.md, phe.md.
// Every Nano ACE part with its reasoning: docs/fidelity/ace.md, "Nano's ACE parts".
inline constexpr double kNanoRealignPerBlock = 32 * 0.333 / 4;  // 8 dwords at REP MOVSD's rate
inline constexpr double kNanoRealignPerCall = 2 * 6.0;          // two REP MOVSD start-ups
inline constexpr double kNanoHardwareAlignGain = 1.7;           // "up to 70 % more efficient"
constexpr AceParams nano_ace() {
  AceParams a = esther_ace();
  // OpenSSL "prefetch errata" (ecb 128, cbc 64, ctr32 32) and Linux padlock-aes.c (Nano
  // stepping 2: ECB 8 blocks, CBC 4 blocks): input is read in groups of this many bytes.
  a.prefetch_ecb = 128;
  a.prefetch_cbc = 64;
  a.prefetch_ctr = 32;
  // Nano has no per-store cost (nano_memory()), so no rounds hide one.
  a.store_hidden_by_rounds = {0, "none: no per-store cost to hide (nano_memory)"};
  // OpenSSL e_padlock-x86_64.pl: Nano "handles unaligned data more gracefully", its
  // hardware realignment up to 70 % more efficient than software realignment. So ALIGN = 1
  // costs the aligned clocks plus a software realignment (copy in and out at Nano's REP
  // MOVSD rate, InstLat 12.02 B/clock, and two REP start-ups) divided by 1.7.
  constexpr const char* kAlign =
      "OpenSSL e_padlock-x86_64.pl: the aligned clocks plus a software realignment (32 bytes a "
      "block at Nano's REP MOVSD rate, two REP start-ups a call) / 1.7 (docs/fidelity/ace.md)";
  for (size_t i = 0; i < a.chain_startup.size(); ++i) {
    a.chain_startup_unaligned[i] = {
        a.chain_startup[i].value + kNanoRealignPerCall / kNanoHardwareAlignGain, kAlign};
    a.chain_per_block_unaligned[i] = {
        a.chain_per_block[i].value + kNanoRealignPerBlock / kNanoHardwareAlignGain, kAlign};
  }
  return a;
}
constexpr PheParams nano_phe() {
  PheParams p = guide_phe();
  p.partial_rax_minus1 = true;  // RAX = -1: whole blocks, no padding (OpenSSL, GnuTLS)
  return p;
}
constexpr MemoryParams nano_memory() {
  return MemoryParams{
      .l1d_bytes = {65536, "Nano L1 data cache 64 KB"},
      .l2_bytes = {1024 * 1024, "Nano L2 cache 1024 KB"},
      .line_bytes = {64, "Nano cache line"},
      .l2_hit_clocks = {15, "choice: calibrated against the §3.3 32 KB/64 KB rows"},
      .mem_bytes_per_clock = {1.0, "choice: the guide predates Nano"},
      .l1d_ways = {8, "Nano L1 data cache 8-way"},
      .l2_ways = {16, "Nano L2 16-way"},
      .store_buffer_bytes = {256, "choice: the guide predates Nano"},
      // Esther's rule (kEstherStoreDrain): InstLat's MOVAPS LS pair on Nano, 2.00 clocks, is
      // below Nehemiah's 3.92, whose ACE streams stores without a stall.
      .store_drain_clocks = {0,
                             "none: InstLat MOVAPS LS pair T 2.00 "
                             "(CentaurHauls00006F2_CNA_Isaiah_InstLatX86.txt:622), below "
                             "Nehemiah's 3.92 (docs/timing.md)"},
      .stream_overlap = {0.5, "choice: the guide predates Nano"},
      .l2_exclusive = true,
  };
}
constexpr PmmParams nano_pmm() {
  PmmParams p = guide_pmm(nano_memory());
  p.needs_addr_prefix_in_64bit = true;  // see docs/fidelity/pmm.md
  return p;
}

// What Nano takes from Esther's sources (docs/timing.md, "Nano").
inline constexpr const char* kNanoBorrowed =
    "ACE, PHE, PMM and RNG clocks: the guide's Esther figures and Esther's fits (no source "
    "times Nano's PadLock; docs/timing.md, \"Nano\")";

inline constexpr CpuModel kNano = {
    .name = "nano",
    .aliases = "",
    .core = "Nano",
    .description = "VIA Nano L2200 (Isaiah): 64-bit capable; RNG, ACE2, PHE, PMM",
    .brand = "VIA Nano processor L2200@1600MHz",
    .family = 6,
    .model = 15,
    .stepping = 2,
    .long_mode = true,
    .default_mhz = {1600, "VIA Nano L2200 runs at 1.6 GHz"},
    .units = {.rng = true, .ace = true, .ace2 = true, .phe = true, .pmm = true},
    .ctr_errata = false,
    .cpuid = standard_leaves({
        .family = 6,
        .model = 15,
        .stepping = 2,
        .leaf1_ebx = 0x00000800,
        .leaf1_ecx = kSse3 | kEst | kTm2 | kSsse3 | kCx16 | kXtpr,
        .leaf1_edx = kFpu | kVme | kDe | kPse | kTsc | kMsr | kPae | kMce | kCx8 | kApic | kSep |
                     kMtrr | kPge | kMca | kCmov | kPat | kClflush | kAcpi | kMmx | kFxsr | kSse |
                     kSse2 | kTm | kPbe | kPse36 | kSs,
        .leaf1_source = "§1.1 family/model/stepping; §7.1 model 15; feature bits of the Nano core",
        .ext_ecx = kLahfLm,
        .ext_edx = kSyscall | kNx | kLm,
        .ext_source = "SYSCALL, NX, long mode",
        .line_bytes = 64,
        .l2_kb = 1024,
    }),
    .rng = esther_rng(),
    .ace = nano_ace(),
    .phe = nano_phe(),
    .pmm = nano_pmm(),
    .memory = nano_memory(),
    .borrowed = kNanoBorrowed,
};

}  // namespace padlock::cpus
