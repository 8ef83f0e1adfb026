// CPU model: Zhaoxin KaiXian KX-7000 ("Century Avenue"), 7/0x6B/1. CPUID: InstLatx64,
// CentaurHauls/CentaurHauls00607B1_KX7000_05_CPUID.txt. Its L3 (32 MB, leaf 4) is not
// modelled: the cache model has two levels (docs/zhaoxin.md).
#pragma once

#include "models/cpu_model.hpp"
#include "models/cpus/kx_6000.hpp"
#include "models/cpus/late_nano.hpp"

namespace padlock::cpus {

constexpr CpuModel kx_7000() {
  CpuModel m =
      with_identity(kKx6000, zhaoxin_identity(
                                 {
                                     .family = 7,
                                     .model = 0x6B,
                                     .stepping = 1,
                                     .leaf1_ebx = 0x00400800,
                                     .leaf1_ecx = 0x7FFA73EB,
                                     .leaf1_edx = 0xBFCBFBFF,
                                     .l2_kb = 512,
                                     .l1i_descriptor = 0x40100140,
                                     .l2_descriptor = 0x02006140,
                                 },
                                 "CentaurHauls00607B1_KX7000_05_CPUID.txt (leaves 1, 0x80000001, "
                                 "0x80000005/6; without what the emulator cannot execute)"));
  m.name = "kx-7000";
  m.aliases = "";
  m.description =
      "Zhaoxin KaiXian KX-7000: 64-bit; RNG, ACE2, PHE, PMM, PHE2, CCS, SM2, RSA, RNG2; "
      "C000_0001 EDX 1EC03DFF; MSR 0x1257; Zhaoxin's PHE quirks";
  m.brand = "                        ZHAOXIN KaiXian KX-7000";
  m.default_mhz = {3000,
                   "choice: the dump's brand string names no clock and its file no frequency"};
  m.memory = dumped_memory({32, 8, 512, 8, "CentaurHauls00607B1_KX7000_05_CPUID.txt"});
  m.pmm = late_nano_pmm(m.memory);
  m.sources = "InstLatx64 CentaurHauls00607B1_KX7000_05_CPUID.txt (CPUID)";
  return m;
}

inline constexpr CpuModel kKx7000 = kx_7000();

}  // namespace padlock::cpus
