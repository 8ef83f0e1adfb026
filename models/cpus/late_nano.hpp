// Parameter blocks shared by the VIA Nano 3000 and the Zhaoxin parts that descend from
// Nano (docs/zhaoxin.md). Their CPUID values come from public dumps, named in each model
// header; the PadLock figures are Nano's (the guide's Esther figures), a choice: no public
// source times PadLock on these cores.
#pragma once

#include <cstdint>

#include "models/cpu_model.hpp"
#include "models/cpus/calibrated.hpp"
#include "models/cpus/cpuid_common.hpp"
#include "models/cpus/nano.hpp"

namespace padlock::cpus {

// Leaf 0x80000001 bits the emulator cannot execute faithfully: ABM (LZCNT runs as BSR in
// Unicorn's CPU models) and RDTSCP (the modelled clock answers RDTSC only).
inline constexpr uint32_t kExtEcxNotExecutable = 1u << 5;
inline constexpr uint32_t kExtEdxNotExecutable = 1u << 27;

// A cache hierarchy as a dump's leaves 0x80000005/6 give it; the timing choices are
// Nano's (nano_memory()).
struct DumpedCaches {
  uint32_t l1d_kb, l1d_ways, l2_kb, l2_ways;
  const char* source;  // the dump
};
constexpr MemoryParams dumped_memory(const DumpedCaches& c) {
  MemoryParams m = nano_memory();
  m.l1d_bytes = {c.l1d_kb * 1024.0, c.source};
  m.l1d_ways = {static_cast<double>(c.l1d_ways), c.source};
  m.l2_bytes = {c.l2_kb * 1024.0, c.source};
  m.l2_ways = {static_cast<double>(c.l2_ways), c.source};
  m.line_bytes = {64, c.source};
  return m;
}

// Zhaoxin's PHE and PHE2 clocks are the KH-40000's, fitted to Zhaoxin's tcrypt figures
// (calibrated.hpp; docs/zhaoxin.md, "Timing"). No other Zhaoxin part has figures: they take
// the KH-40000's values, sourced as the choice that is.
inline constexpr const char* kKh40000Borrowed =
    "choice: the KH-40000's tcrypt-calibrated value; no figure times this part "
    "(docs/zhaoxin.md, \"Timing\")";
// What the Zhaoxin models take from other chips (`cpus --verbose`, docs/zhaoxin.md).
inline constexpr const char* kZhaoxinBorrowed =
    "ACE, PMM and RNG clocks: nano's, the guide's Esther figures (no source times them on "
    "Zhaoxin); PHE and PHE2 clocks: the KH-40000's tcrypt fit (docs/zhaoxin.md, \"Timing\")";
inline constexpr const char* kKh40000BorrowedUnits =
    "ACE, PMM and RNG clocks: nano's, the guide's Esther figures (no source times them on "
    "Zhaoxin; docs/zhaoxin.md, \"Timing\")";
constexpr Clocks kh40000_clocks(Clocks calibrated, bool kh40000) {
  return kh40000 ? calibrated : Clocks{calibrated.value, kKh40000Borrowed};
}

// Zhaoxin's PHE: Nano's, with the two quirks Zhaoxin describes (docs/zhaoxin.md,
// "Quirks"): XSHA1 stores 32 bytes at EDI, bytes 20-31 zero (AlanSong-oc, linux-crypto,
// 2025-06-16), and XSHA1/XSHA256 do nothing when ECX = 0 (AlanSong-oc, "lib/crypto:
// x86/sha: Add PHE Extensions support", v3 2026-01-16, v4 2026-03-13). The padding clocks
// stay Nano's choice: the tcrypt path (EAX = -1) never pads.
constexpr PheParams zhaoxin_phe(bool kh40000 = false) {
  PheParams p = nano_phe();
  p.sha1_stores_32_bytes = true;
  p.ecx0_does_nothing = true;
  p.startup = kh40000_clocks(calibrated::kKh40000PheStartup, kh40000);
  p.sha1_block_overhead = kh40000_clocks(calibrated::kKh40000Sha1BlockOverhead, kh40000);
  p.sha256_block_overhead = kh40000_clocks(calibrated::kKh40000Sha256BlockOverhead, kh40000);
  return p;
}
constexpr Phe2Params zhaoxin_phe2(bool kh40000 = false) {
  return Phe2Params{
      .startup = kh40000_clocks(calibrated::kKh40000Phe2Startup, kh40000),
      .sha512_block_clocks = kh40000_clocks(calibrated::kKh40000Sha512Block, kh40000),
  };
}

// GMI: no figure is public (zhaoxin.md). SM3 runs SHA-256's shape (64 rounds on a 64-byte
// block into a 256-bit state), so it takes the KH-40000's SHA-256 block and PHE start-up;
// SM4 keeps one clock a round (choice_gmi).
inline constexpr const char* kSm3AsSha256 =
    "choice: the KH-40000's tcrypt-calibrated SHA-256 block (SM3: 64 rounds on a 64-byte "
    "block, as SHA-256); no GMI figure is public (docs/zhaoxin.md, \"Timing\")";
inline constexpr const char* kGmiStartupAsPhe =
    "choice: the KH-40000's tcrypt-calibrated PHE start-up; no GMI figure is public "
    "(docs/zhaoxin.md, \"Timing\")";
constexpr GmiParams zhaoxin_gmi() {
  GmiParams g = choice_gmi();
  const PheParams phe = zhaoxin_phe(true);
  g.startup = {phe.startup.value, kGmiStartupAsPhe};
  g.sm3_block_clocks = {64 * phe.sha256_clocks_per_round.value + phe.sha256_block_overhead.value,
                        kSm3AsSha256};
  return g;
}

// MONTMUL needs 67h in 64-bit mode: a KX-6580 in zyantific/zydis's thread "VIA/Zhaoxin
// Padlock: 64-bit montmul, rep xsha512, GMI, partial decode" (docs/fidelity/pmm.md).
constexpr PmmParams late_nano_pmm(const MemoryParams& memory) {
  PmmParams p = guide_pmm(memory);
  p.needs_addr_prefix_in_64bit = true;
  return p;
}

// C000_0001 EDX bits PARALLAX (16/17) and TM3 (20/21) of Zhaoxin's cpufeatures patch: no
// unit here models them; the model reports them as its dump does.
inline constexpr uint32_t kParallax = 3u << 16;

// MSR 0x1257 on the family-7 parts: VirtualBox's MSR scan of a KX-U5581 reads it as 0
// while CPUID shows ACE and RNG enabled (docs/zhaoxin.md, "MSR 0x1257").
inline constexpr uint32_t kFcr57Reset = 0;
// MSR 0x1107 on the family-7 parts: the same scan reads 0x2 and shows writes ignored.
inline constexpr uint32_t kZhaoxinFcrReset = 0x2;

}  // namespace padlock::cpus

namespace padlock::cpus {

// What every Zhaoxin dump shares: leaf 0x80000001 ECX 00000121 and EDX 2C100800 (without
// what the emulator cannot execute), a 32 KB 8-way L1 data cache of 64-byte lines
// (0x80000005 ECX 20080140), the signature again in 0xC0000001 EAX; and leaf 1 ECX without
// the features the emulator cannot execute. `source` names the dump.
constexpr CpuidIdentity zhaoxin_identity(CpuidIdentity id, const char* source) {
  id.leaf1_ecx &= ~kLeaf1EcxNotExecutable;
  id.leaf1_source = source;
  id.ext_ecx = 0x00000121 & ~kExtEcxNotExecutable;
  id.ext_edx = 0x2C100800 & ~kExtEdxNotExecutable;
  id.ext_source = source;
  id.line_bytes = 64;
  id.l1d_descriptor = 0x20080140;
  id.cache_source = source;
  id.centaur_leaf_signature = true;
  return id;
}

// A model whose CPUID identity comes from a dump: `base`'s parameter blocks with the
// dump's signature and leaves (a derivation, as stepping.hpp's derive() for steppings).
constexpr CpuModel with_identity(CpuModel m, const CpuidIdentity& id) {
  m.family = id.family;
  m.model = id.model;
  m.stepping = id.stepping;
  m.cpuid = standard_leaves(id);
  return m;
}

}  // namespace padlock::cpus
