// CPU model: Zhaoxin ZX-C+ C4580 ("CNR", Isaiah), 6/0x0F/0xE: the Nano 3000 with CCS
// (SM3, SM4) and Zhaoxin's PHE quirks. CPUID: InstLatx64, CentaurHauls/
// CentaurHauls00006FE_CNR_Isaiah_CPUID3.txt (its brand is the ZX-C+ C4580; the file
// ..._CNR_Isaiah_CPUID.txt of the same signature is a VIA Eden X4 C4250 without CCS).
#pragma once

#include "models/cpu_model.hpp"
#include "models/cpus/late_nano.hpp"
#include "models/cpus/nano_3000.hpp"

namespace padlock::cpus {

constexpr CpuModel zx_c() {
  CpuModel m = with_identity(kNano3000,
                             zhaoxin_identity(
                                 {
                                     .family = 6,
                                     .model = 15,
                                     .stepping = 14,
                                     .leaf1_ebx = 0x00040800,
                                     .leaf1_ecx = 0x76DA63AB,
                                     .leaf1_edx = 0xBFCBFBFF,
                                     .l2_kb = 2048,
                                     .l1i_descriptor = 0x20080140,
                                     .l2_descriptor = 0x08008140,
                                 },
                                 "CentaurHauls00006FE_CNR_Isaiah_CPUID3.txt (leaves 1, 0x80000001, "
                                 "0x80000005/6; without what the emulator cannot execute)"));
  m.name = "zx-c";
  m.aliases = "";
  m.core = "ZX-C";  // x86 costs: models/timing/x86_measured.hpp
  m.description =
      "Zhaoxin ZX-C+ C4580 (CNR): 64-bit; RNG, ACE2, PHE, PMM, PHE2, CCS, RSA, RNG2; "
      "C000_0001 EDX 1EC33DFC; Zhaoxin's PHE quirks";
  m.brand = "            ZHAOXIN KaiXian ZX-C+ C4580@1.83GHz";
  m.default_mhz = {1830, "CentaurHauls00006FE_CNR_Isaiah_CPUID3.txt: C4580@1.83GHz"};
  m.units.ccs = true;
  m.memory = dumped_memory({32, 8, 2048, 16, "CentaurHauls00006FE_CNR_Isaiah_CPUID3.txt"});
  m.pmm = late_nano_pmm(m.memory);
  m.phe = zhaoxin_phe();
  m.phe2 = zhaoxin_phe2();
  m.gmi = zhaoxin_gmi();
  // SM4 ECB and CBC only: openEuler's sm4-zhaoxin-gmi.c runs CTR, CFB and OFB on ZX-C
  // (family 6, model 0x0F) as one-block ECB calls (docs/zhaoxin.md).
  m.gmi.sm4_chain_modes = false;
  m.sources = "InstLatx64 CentaurHauls00006FE_CNR_Isaiah_CPUID3.txt (CPUID)";
  m.borrowed = kZhaoxinBorrowed;
  return m;
}

inline constexpr CpuModel kZxC = zx_c();

}  // namespace padlock::cpus
