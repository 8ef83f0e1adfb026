// CPU model: Zhaoxin KaiXian KX-U5581 (KX-5000, "WuDaoKou"), 7/0x1B/5, vendor
// "  Shanghai  ". CPUID and MSRs: VirtualBox's CPU database, ZHAOXIN_KaiXian_KX_U5581_1_8GHz.h
// (VBoxCpuReport of 2019-01-15).
#pragma once

#include "models/cpu_model.hpp"
#include "models/cpus/kx_6000.hpp"
#include "models/cpus/late_nano.hpp"

namespace padlock::cpus {

constexpr CpuModel kx_5000() {
  CpuModel m = with_identity(
      kKx6000,
      zhaoxin_identity(
          {
              .family = 7,
              .model = 0x1B,
              .stepping = 5,
              .leaf1_ebx = 0x00080800,
              .leaf1_ecx = 0x7EDA63EB,
              .leaf1_edx = 0xBFCBFBFF,
              .l2_kb = 4096,
              .vendor = kShanghai,
              .vendor_source = "ZHAOXIN_KaiXian_KX_U5581_1_8GHz.h, leaf 0: \"  Shanghai  \"",
              .l1i_descriptor = 0x20080140,
              .l2_descriptor = 0x10008140,
          },
          "ZHAOXIN_KaiXian_KX_U5581_1_8GHz.h (leaves 1 with APIC ID 0, 0x80000001, 0x80000005/6; "
          "without what the emulator cannot execute)"));
  m.name = "kx-5000";
  m.aliases = "";
  m.description =
      "Zhaoxin KaiXian KX-U5581: 64-bit, vendor \"  Shanghai  \"; RNG, ACE2, PHE, PMM, "
      "PHE2, CCS, RSA, RNG2; C000_0001 EDX 1EC33DFC; MSR 0x1257; Zhaoxin's PHE quirks";
  m.brand = "                ZHAOXIN KaiXian KX-U5581@1.8GHz";
  m.default_mhz = {1800, "ZHAOXIN_KaiXian_KX_U5581_1_8GHz.h: KX-U5581@1.8GHz"};
  m.units.sm2 = false;
  m.centaur_edx_unmodelled = kParallax;
  m.sources = "VirtualBox ZHAOXIN_KaiXian_KX_U5581_1_8GHz.h (CPUID and MSRs)";
  return m;
}

inline constexpr CpuModel kKx5000 = kx_5000();

}  // namespace padlock::cpus
