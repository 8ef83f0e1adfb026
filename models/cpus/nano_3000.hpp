// CPU model: VIA Nano 3000 ("CNB", Isaiah), 6/0x0F/8: Nano with PHE2, RSA and RNG2.
// CPUID: InstLatx64, CentaurHauls/CentaurHauls00006F8_CNB_Isaiah_CPUID.txt (a VIA Nano
// L3050); every other block is the nano model's (docs/zhaoxin.md).
#pragma once

#include "models/cpu_model.hpp"
#include "models/cpus/late_nano.hpp"
#include "models/cpus/nano.hpp"

namespace padlock::cpus {

inline constexpr const char* kCnbDump = "CentaurHauls00006F8_CNB_Isaiah_CPUID.txt";

constexpr CpuModel nano_3000() {
  CpuModel m = with_identity(
      kNano, {
                 .family = 6,
                 .model = 15,
                 .stepping = 8,
                 .leaf1_ebx = 0x00010800,
                 .leaf1_ecx = 0x008863A9,
                 .leaf1_edx = 0xAFC9FBFF,
                 .leaf1_source = "CentaurHauls00006F8_CNB_Isaiah_CPUID.txt, leaf 1",
                 .ext_ecx = 0x00000001,
                 .ext_edx = 0x20100800,
                 .ext_source = "CentaurHauls00006F8_CNB_Isaiah_CPUID.txt, leaf 0x80000001",
                 .line_bytes = 64,
                 .l2_kb = 1024,
                 .l1d_descriptor = 0x40100140,
                 .l1i_descriptor = 0x40100140,
                 .l2_descriptor = 0x04008140,
                 .cache_source = "CentaurHauls00006F8_CNB_Isaiah_CPUID.txt, leaves 0x80000005/6",
                 .centaur_leaf_signature = true,
             });
  m.name = "nano-3000";
  m.aliases = "";
  m.core = "Nano3000";  // x86 costs: models/timing/x86_measured.hpp
  m.description =
      "VIA Nano L3050 (Nano 3000, CNB): 64-bit; RNG, ACE2, PHE, PMM, PHE2, RSA, RNG2; "
      "C000_0001 EDX 1EC33DCC";
  m.brand = "                         VIA Nano L3050@1800MHz";
  m.default_mhz = {1800, "CentaurHauls00006F8_CNB_Isaiah_CPUID.txt: VIA Nano L3050@1800MHz"};
  m.units = {.rng = true,
             .ace = true,
             .ace2 = true,
             .phe = true,
             .pmm = true,
             .phe2 = true,
             .rsa = true,
             .rng2 = true};
  m.memory = dumped_memory({64, 16, 1024, 16, "CentaurHauls00006F8_CNB_Isaiah_CPUID.txt"});
  m.pmm = late_nano_pmm(m.memory);
  m.centaur_edx_unmodelled = kParallax;
  m.ace2_enable_bit = false;
  m.sources = "InstLatx64 CentaurHauls00006F8_CNB_Isaiah_CPUID.txt (CPUID)";
  return m;
}

inline constexpr CpuModel kNano3000 = nano_3000();

}  // namespace padlock::cpus
