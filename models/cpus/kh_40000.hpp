// CPU model: Zhaoxin KaiSheng KH-40000 ("YongFeng"), 7/0x5B/3. CPUID: InstLatx64,
// CentaurHauls/CentaurHauls00507B3_KX40000_01_CPUID.txt. Its L3 (8 MB, leaf 4) is not
// modelled: the cache model has two levels (docs/zhaoxin.md).
#pragma once

#include "models/cpu_model.hpp"
#include "models/cpus/kx_6000.hpp"
#include "models/cpus/late_nano.hpp"

namespace padlock::cpus {

constexpr CpuModel kh_40000() {
  CpuModel m =
      with_identity(kKx6000, zhaoxin_identity(
                                 {
                                     .family = 7,
                                     .model = 0x5B,
                                     .stepping = 3,
                                     .leaf1_ebx = 0x00400800,
                                     .leaf1_ecx = 0x7FFA73E3,
                                     .leaf1_edx = 0xBFCBFBFF,
                                     .l2_kb = 256,
                                     .l1i_descriptor = 0x40100140,
                                     .l2_descriptor = 0x01006140,
                                 },
                                 "CentaurHauls00507B3_KX40000_01_CPUID.txt (leaves 1, 0x80000001, "
                                 "0x80000005/6; without what the emulator cannot execute)"));
  m.name = "kh-40000";
  m.aliases = "";
  m.description =
      "Zhaoxin KaiSheng KH-40000: 64-bit; RNG, ACE2, PHE, PMM, PHE2, CCS, SM2, RSA, RNG2; "
      "C000_0001 EDX 1EC33DFF; MSR 0x1257; Zhaoxin's PHE quirks";
  m.brand = "            ZHAOXIN KaiSheng KH-40000/16@2.2GHz";
  m.default_mhz = {2200, "CentaurHauls00507B3_KX40000_01_CPUID.txt: KH-40000/16@2.2GHz"};
  m.centaur_edx_unmodelled = kParallax;
  m.memory = dumped_memory({32, 8, 256, 8, "CentaurHauls00507B3_KX40000_01_CPUID.txt"});
  m.pmm = late_nano_pmm(m.memory);
  // PHE and PHE2 clocks fitted to Zhaoxin's tcrypt figures of this part (docs/zhaoxin.md).
  m.phe = zhaoxin_phe(true);
  m.phe2 = zhaoxin_phe2(true);
  m.sources = "InstLatx64 CentaurHauls00507B3_KX40000_01_CPUID.txt (CPUID)";
  m.borrowed = kKh40000BorrowedUnits;
  return m;
}

inline constexpr CpuModel kKh40000 = kh_40000();

}  // namespace padlock::cpus
