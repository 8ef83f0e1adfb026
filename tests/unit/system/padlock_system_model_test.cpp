// The C ABI's model queries that system mode's QEMU uses to build its CPU (docs/system.md):
// the brand string and long mode must be the ones the model's own CPUID reports (§1.3;
// leaves 0x80000002-4 hold the brand, 0x80000001 EDX bit 29 is LM).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "emulator/system/padlock_system.h"

namespace {

struct Sys {
  explicit Sys(const char* cpu) : p(padlock_sys_create(cpu, 0)) {}
  ~Sys() { padlock_sys_destroy(p); }
  padlock_sys* p;
};

std::string cpuid_brand(padlock_sys* p) {
  char text[49] = {};
  for (uint32_t i = 0; i < 3; ++i) {
    uint32_t r[4];
    if (padlock_sys_cpuid(p, 0x80000002 + i, 0, r) != 1) return "";
    std::memcpy(text + 16 * i, r, 16);
  }
  // As the leaves hold it: the Nano 3000's and Zhaoxin's brands are right-aligned, and
  // QEMU must pass the leading spaces on (docs/zhaoxin.md).
  return text;
}

bool cpuid_long_mode(padlock_sys* p) {
  uint32_t r[4] = {};
  return padlock_sys_cpuid(p, 0x80000001, 0, r) == 1 && ((r[3] >> 29) & 1u) != 0;
}

TEST(PadlockSystemModel, BrandAndLongModeMatchTheModelsCpuid_Sec1_3) {
  int long_mode_models = 0;
  for (int i = 0; i < padlock_sys_model_count(); ++i) {
    const char* name = padlock_sys_model_name(i);
    Sys s(name);
    ASSERT_NE(s.p, nullptr) << name;
    ASSERT_NE(padlock_sys_brand(s.p), nullptr) << name;
    EXPECT_EQ(padlock_sys_brand(s.p), cpuid_brand(s.p)) << name;
    EXPECT_EQ(padlock_sys_long_mode(s.p), cpuid_long_mode(s.p) ? 1 : 0) << name;
    long_mode_models += padlock_sys_long_mode(s.p);
  }
  EXPECT_GT(long_mode_models, 0);  // Nano and the Zhaoxin parts are 64-bit
}

TEST(PadlockSystemModel, EstherIs32BitAndNanoIs64Bit) {
  Sys esther("esther"), nano("nano");
  ASSERT_NE(esther.p, nullptr);
  ASSERT_NE(nano.p, nullptr);
  // C7-M "Esther": a 32-bit core (no LM); Nano (Isaiah): x86-64.
  EXPECT_EQ(padlock_sys_long_mode(esther.p), 0);
  EXPECT_EQ(padlock_sys_long_mode(nano.p), 1);
  EXPECT_STREQ(padlock_sys_brand(esther.p), "VIA Esther processor 1600MHz");
}

}  // namespace
