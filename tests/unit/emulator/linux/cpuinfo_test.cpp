// /proc/cpuinfo as the guest reads it (docs/emulator.md, "What the guest sees"), from the
// generator directly: the fields of Linux's show_cpuinfo (arch/x86/kernel/cpu/proc.c) for
// the modelled chip, and the PadLock flags Linux names from CPUID 0xC0000001 EDX (§1.3;
// arch/x86/include/asm/cpufeatures.h word 5: rng rng_en ace ace_en ace2 ace2_en phe phe_en
// pmm pmm_en at bits 2, 3, 6-13).
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "emulator/linux/guest_proc.hpp"
#include "models/cpu_model.hpp"
#include "models/padlock.hpp"

namespace padlock::emu::test {
namespace {

struct CpuInfo {
  std::map<std::string, std::string> fields;
  std::vector<std::string> flags;
};

CpuInfo cpuinfo(const char* cpu, double mhz) {
  const CpuModel* m = find_cpu_model(cpu);
  EXPECT_NE(m, nullptr) << cpu;
  const Padlock padlock(*m);
  std::istringstream in(cpuinfo_text(*m, padlock, mhz));
  CpuInfo r;
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    r.fields[key] = value;
  }
  std::istringstream f(r.fields["flags"]);
  for (std::string w; f >> w;) r.flags.push_back(w);
  return r;
}

// The PadLock flags Linux prints for CPUID 0xC0000001 EDX, in its order.
std::vector<std::string> padlock_flags_of(const char* cpu) {
  static const std::pair<unsigned, const char*> kBits[] = {
      {2, "rng"},     {3, "rng_en"}, {6, "ace"},     {7, "ace_en"}, {8, "ace2"},
      {9, "ace2_en"}, {10, "phe"},   {11, "phe_en"}, {12, "pmm"},   {13, "pmm_en"}};
  const Padlock padlock(*find_cpu_model(cpu));
  const uint32_t edx = padlock.cpuid(0xC0000001, 0).edx;
  std::vector<std::string> out;
  for (const auto& [bit, name] : kBits)
    if ((edx >> bit) & 1u) out.push_back(name);
  return out;
}

std::vector<std::string> only_padlock(const std::vector<std::string>& flags) {
  static const std::string kNames[] = {"rng",     "rng_en", "ace",    "ace_en", "ace2",
                                       "ace2_en", "phe",    "phe_en", "pmm",    "pmm_en"};
  std::vector<std::string> out;
  for (const auto& f : flags)
    for (const auto& n : kNames)
      if (f == n) out.push_back(f);
  return out;
}

TEST(CpuInfo, EstherIsA32BitCentaurWithEveryUnit) {
  const CpuInfo c = cpuinfo("esther", 1600);
  EXPECT_EQ(c.fields.at("processor"), "0");
  EXPECT_EQ(c.fields.at("vendor_id"), "CentaurHauls");
  EXPECT_EQ(c.fields.at("cpu family"), "6");
  EXPECT_EQ(c.fields.at("model"), "10");
  EXPECT_EQ(c.fields.at("stepping"), "8");
  EXPECT_EQ(c.fields.at("model name"), "VIA Esther processor 1600MHz");
  EXPECT_EQ(c.fields.at("cpu MHz"), "1600.000");
  EXPECT_EQ(c.fields.count("fdiv_bug"), 1u);  // a 32-bit kernel's lines
  ASSERT_GE(c.flags.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(c.flags.begin(), c.flags.begin() + 4),
            (std::vector<std::string>{"fpu", "vme", "de", "pse"}));
  EXPECT_EQ(only_padlock(c.flags),
            (std::vector<std::string>{"rng", "rng_en", "ace", "ace_en", "ace2", "ace2_en", "phe",
                                      "phe_en", "pmm", "pmm_en"}));
}

TEST(CpuInfo, PadlockFlagsFollowTheUnits_Sec1_3) {
  for (const char* cpu : {"nehemiah-c5xl", "nehemiah-c5p", "esther", "nano"}) {
    EXPECT_EQ(only_padlock(cpuinfo(cpu, 1000).flags), padlock_flags_of(cpu)) << cpu;
  }
  EXPECT_EQ(only_padlock(cpuinfo("nehemiah-c5xl", 1000).flags),
            (std::vector<std::string>{"rng", "rng_en"}));
}

TEST(CpuInfo, NanoIs64Bit) {
  const CpuInfo c = cpuinfo("nano", 1600);
  EXPECT_EQ(c.fields.at("model"), "15");
  EXPECT_EQ(c.fields.at("stepping"), "2");
  EXPECT_EQ(c.fields.count("fdiv_bug"), 0u);
  EXPECT_EQ(c.fields.at("address sizes"), "36 bits physical, 48 bits virtual");
  bool lm = false;
  for (const auto& f : c.flags) lm |= f == "lm";
  EXPECT_TRUE(lm);
}

TEST(CpuInfo, MhzAndBogomipsFollowTheClock) {
  const CpuInfo c = cpuinfo("esther", 1234.5);
  EXPECT_EQ(c.fields.at("cpu MHz"), "1234.500");
  EXPECT_EQ(c.fields.at("bogomips"), "2469.00");
}

}  // namespace
}  // namespace padlock::emu::test
