// CPU model: Zhaoxin KaiXian KX-6000G ("LuJiaZui"), 7/0x3B/2. CPUID: InstLatx64,
// CentaurHauls/CentaurHauls00307B2_KX6000_01_CPUID.txt. Stepping 2 and this dump rather
// than the KX-U6780A's stepping 1 (..._307B1_ZXE_CPUID.txt, C000_0001 EDX 1EC33DFC): the
// 6000G has SM2, as openEuler's sm2-zhaoxin-gmi driver expects (docs/zhaoxin.md).
#pragma once

#include "models/cpu_model.hpp"
#include "models/cpus/late_nano.hpp"
#include "models/cpus/zx_c.hpp"

namespace padlock::cpus {

// The family-7 parts' common blocks on top of their CPUID identity.
constexpr CpuModel family7(CpuModel m) {
  m.enables = EnableScheme::Zhaoxin;
  m.msr_fcr_reset = kZhaoxinFcrReset;
  m.msr_fcr57_reset = kFcr57Reset;
  m.gmi.sm4_chain_modes = true;  // all five SM4 modes (GMI User Manual §1.2); only ZX-C lacks them
  return m;
}

constexpr CpuModel kx_6000() {
  CpuModel m = family7(
      with_identity(kZxC, zhaoxin_identity(
                              {
                                  .family = 7,
                                  .model = 0x3B,
                                  .stepping = 2,
                                  .leaf1_ebx = 0x00040800,
                                  .leaf1_ecx = 0x7FDA63EB,
                                  .leaf1_edx = 0xBFCBFBFF,
                                  .l2_kb = 4096,
                                  .l1i_descriptor = 0x20080140,
                                  .l2_descriptor = 0x10008140,
                              },
                              "CentaurHauls00307B2_KX6000_01_CPUID.txt (leaves 1, 0x80000001, "
                              "0x80000005/6; without what the emulator cannot execute)")));
  m.name = "kx-6000";
  m.aliases = "";
  m.core = "LuJiaZui";  // x86 costs: models/timing/x86_measured.hpp
  m.description =
      "Zhaoxin KaiXian KX-6000G: 64-bit; RNG, ACE2, PHE, PMM, PHE2, CCS, SM2, RSA, RNG2; "
      "C000_0001 EDX 1EC03DFF; MSR 0x1257; Zhaoxin's PHE quirks";
  m.brand = "              ZHAOXIN KaiXian KX-6000G/4@2.6GHz";
  m.default_mhz = {2600, "CentaurHauls00307B2_KX6000_01_CPUID.txt: KX-6000G/4@2.6GHz"};
  m.units.sm2 = true;
  m.centaur_edx_unmodelled = 0;
  m.memory = dumped_memory({32, 8, 4096, 16, "CentaurHauls00307B2_KX6000_01_CPUID.txt"});
  m.pmm = late_nano_pmm(m.memory);
  m.sources =
      "InstLatx64 CentaurHauls00307B2_KX6000_01_CPUID.txt (CPUID); VirtualBox "
      "ZHAOXIN_KaiXian_KX_U5581_1_8GHz.h (MSRs 0x1107, 0x110B, 0x1257)";
  return m;
}

inline constexpr CpuModel kKx6000 = kx_6000();

}  // namespace padlock::cpus
