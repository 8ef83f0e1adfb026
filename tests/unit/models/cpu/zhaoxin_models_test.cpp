// The VIA Nano 3000 and Zhaoxin models against their public CPUID dumps (docs/zhaoxin.md):
// signature, vendor string, brand, C000_0001 EDX at reset, caches; MSR 0x1257 and the
// fixed 0x1107/0x110B of the family-7 parts (VirtualBox's KX-U5581 MSR scan).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "isa/msr.hpp"
#include "models/cpus/calibrated.hpp"
#include "models/flat_memory.hpp"
#include "models/padlock.hpp"

namespace padlock {
namespace {

// One row per model, the values as printed in the dump the model cites.
struct Dumped {
  const char* model;
  uint32_t signature;  // leaf 1 EAX
  const char* vendor;
  uint32_t c1_edx;  // C000_0001 EDX
  uint32_t l2_ecx;  // leaf 0x80000006 ECX
  const char* brand;
  bool family7;
};
constexpr Dumped kDumps[] = {
    // CentaurHauls00006F8_CNB_Isaiah_CPUID.txt
    {"nano-3000", 0x6F8, "CentaurHauls", 0x1EC33DCC, 0x04008140, "VIA Nano L3050@1800MHz", false},
    // CentaurHauls00006FE_CNR_Isaiah_CPUID3.txt
    {"zx-c", 0x6FE, "CentaurHauls", 0x1EC33DFC, 0x08008140, "ZHAOXIN KaiXian ZX-C+ C4580@1.83GHz",
     false},
    // VirtualBox ZHAOXIN_KaiXian_KX_U5581_1_8GHz.h
    {"kx-5000", 0x107B5, "  Shanghai  ", 0x1EC33DFC, 0x10008140, "ZHAOXIN KaiXian KX-U5581@1.8GHz",
     true},
    // CentaurHauls00307B2_KX6000_01_CPUID.txt
    {"kx-6000", 0x307B2, "CentaurHauls", 0x1EC03DFF, 0x10008140,
     "ZHAOXIN KaiXian KX-6000G/4@2.6GHz", true},
    // CentaurHauls00507B3_KX40000_01_CPUID.txt
    {"kh-40000", 0x507B3, "CentaurHauls", 0x1EC33DFF, 0x01006140,
     "ZHAOXIN KaiSheng KH-40000/16@2.2GHz", true},
    // CentaurHauls00607B1_KX7000_05_CPUID.txt
    {"kx-7000", 0x607B1, "CentaurHauls", 0x1EC03DFF, 0x02006140, "ZHAOXIN KaiXian KX-7000", true},
};

// The C000_0001 EDX pairs of the units the PHE2/GMI work adds (Zhaoxin's cpufeatures
// patch): SM2 0/1, CCS 4/5, RNG2 22/23, PHE2 25/26, RSA 27/28.
constexpr uint32_t kLaterUnitBits = 0x3u | 0x30u | (3u << 22) | (3u << 25) | (3u << 27);

std::string vendor_of(const Padlock& p) {
  const CpuidResult r = p.cpuid(0, 0);
  char v[13] = {};
  std::memcpy(v, &r.ebx, 4);
  std::memcpy(v + 4, &r.edx, 4);
  std::memcpy(v + 8, &r.ecx, 4);
  return v;
}

std::string brand_of(const Padlock& p) {
  std::string b;
  for (uint32_t leaf = 0x80000002; leaf <= 0x80000004; ++leaf) {
    const CpuidResult r = p.cpuid(leaf, 0);
    for (const uint32_t w : {r.eax, r.ebx, r.ecx, r.edx})
      for (int i = 0; i < 4; ++i) b += static_cast<char>(w >> (8 * i));
  }
  b.resize(std::strlen(b.c_str()));
  return b.substr(b.find_first_not_of(' '));
}

class ZhaoxinModel : public ::testing::TestWithParam<Dumped> {};

TEST_P(ZhaoxinModel, CpuidMatchesItsDump) {
  const Dumped& d = GetParam();
  const CpuModel* m = find_cpu_model(d.model);
  ASSERT_NE(m, nullptr);
  const Padlock p(*m);
  EXPECT_EQ(p.cpuid(1, 0).eax, d.signature);
  EXPECT_EQ(p.cpuid(0xC0000001, 0).eax, d.signature);  // repeated there in every dump
  EXPECT_EQ(vendor_of(p), d.vendor);
  EXPECT_EQ(brand_of(p), d.brand);
  EXPECT_EQ(p.cpuid(0x80000006, 0).ecx, d.l2_ecx);
  EXPECT_EQ(static_cast<double>(p.cpuid(0x80000006, 0).ecx >> 16), m->memory.l2_bytes.value / 1024);
  EXPECT_EQ(p.cpuid(0xC0000000, 0).eax, 0xC0000001u);
  // The bits of the units modelled so far and the reported ones without a unit; the
  // later units' pairs come with their enablement (models/padlock.cpp).
  EXPECT_EQ(p.centaur_features() & ~kLaterUnitBits, d.c1_edx & ~kLaterUnitBits)
      << std::hex << d.c1_edx;
  EXPECT_EQ(m->family == 7, d.family7);
  EXPECT_TRUE(m->long_mode);
  // Leaf 1 never offers what the emulator cannot execute (AVX, XSAVE, RDRAND, ...).
  EXPECT_EQ(p.cpuid(1, 0).ecx & ((1u << 26) | (1u << 27) | (1u << 28) | (1u << 30)), 0u);
}

TEST_P(ZhaoxinModel, UnitsFollowTheDumpsPresentBits) {
  const Dumped& d = GetParam();
  const Units& u = find_cpu_model(d.model)->units;
  EXPECT_EQ(u.sm2, (d.c1_edx & 0x1) != 0);
  EXPECT_EQ(u.ccs, (d.c1_edx & 0x10) != 0);
  EXPECT_EQ(u.rng2, (d.c1_edx & (1u << 22)) != 0);
  EXPECT_EQ(u.phe2, (d.c1_edx & (1u << 25)) != 0);
  EXPECT_EQ(u.rsa, (d.c1_edx & (1u << 27)) != 0);
  EXPECT_TRUE(u.rng && u.ace && u.ace2 && u.phe && u.pmm);
}

// Zhaoxin's PHE quirks on every Zhaoxin model, not on the (VIA) Nano 3000; MONTMUL needs
// 67h in 64-bit mode on all of them.
TEST_P(ZhaoxinModel, QuirkSettings) {
  const Dumped& d = GetParam();
  const CpuModel& m = *find_cpu_model(d.model);
  const bool zhaoxin = std::strcmp(d.model, "nano-3000") != 0;
  EXPECT_EQ(m.phe.sha1_stores_32_bytes, zhaoxin);
  EXPECT_EQ(m.phe.ecx0_does_nothing, zhaoxin);
  EXPECT_TRUE(m.phe.partial_rax_minus1);
  EXPECT_TRUE(m.pmm.needs_addr_prefix_in_64bit);
}

// PHE and PHE2 clocks: the KH-40000's are fitted to Zhaoxin's tcrypt figures (sourced
// "calibrated"); the other Zhaoxin models take the same values as a choice; the Nano 3000
// (VIA's) keeps nano's PHE and the PHE2 choice. SM3 takes the KH-40000's SHA-256 block.
TEST_P(ZhaoxinModel, PheTimingFromTheKh40000Tcrypt) {
  const Dumped& d = GetParam();
  const CpuModel& m = *find_cpu_model(d.model);
  const std::string kind = std::strcmp(d.model, "kh-40000") == 0 ? "calibrated:" : "choice:";
  auto same = [&](const Clocks& got, const Clocks& want) {
    EXPECT_EQ(got.value, want.value) << d.model;
    EXPECT_EQ(std::string(got.source).rfind(kind, 0), 0u) << d.model << ": " << got.source;
  };
  if (std::strcmp(d.model, "nano-3000") == 0) {
    const CpuModel& nano = *find_cpu_model("nano");
    EXPECT_EQ(m.phe.startup.value, nano.phe.startup.value);
    EXPECT_EQ(m.phe.sha1_block_overhead.value, nano.phe.sha1_block_overhead.value);
    EXPECT_EQ(m.phe.sha256_block_overhead.value, nano.phe.sha256_block_overhead.value);
    EXPECT_EQ(m.phe2.sha512_block_clocks.value, choice_phe2().sha512_block_clocks.value);
    return;
  }
  same(m.phe.startup, cpus::calibrated::kKh40000PheStartup);
  same(m.phe.sha1_block_overhead, cpus::calibrated::kKh40000Sha1BlockOverhead);
  same(m.phe.sha256_block_overhead, cpus::calibrated::kKh40000Sha256BlockOverhead);
  same(m.phe2.startup, cpus::calibrated::kKh40000Phe2Startup);
  same(m.phe2.sha512_block_clocks, cpus::calibrated::kKh40000Sha512Block);
  EXPECT_EQ(m.gmi.sm3_block_clocks.value, 64 * m.phe.sha256_clocks_per_round.value +
                                              cpus::calibrated::kKh40000Sha256BlockOverhead.value);
  EXPECT_EQ(std::string(m.gmi.sm3_block_clocks.source).rfind("choice:", 0), 0u);
  EXPECT_EQ(m.gmi.startup.value, cpus::calibrated::kKh40000PheStartup.value);
}

// MSR 0x1257 on the family-7 parts: present, reset 0 (VirtualBox's scan), keeps what is
// written; 0x1107 reads 0x2 and 0x110B reads 0 whatever is written; the units stay
// enabled. The family-6 models have no 0x1257 (#GP) and VIA's FCR.
TEST_P(ZhaoxinModel, EnableMsrs) {
  const Dumped& d = GetParam();
  Padlock p(*find_cpu_model(d.model));
  const ExecEnv env;
  uint64_t v = 1;
  if (!d.family7) {
    EXPECT_FALSE(p.rdmsr(isa::kMsrFcr57, v, env));
    EXPECT_FALSE(p.wrmsr(isa::kMsrFcr57, 0, env));
    ASSERT_TRUE(p.wrmsr(isa::kMsrFcr, 0, env));  // §1.5: FCR[28] clear disables ACE
    EXPECT_EQ(p.centaur_features() & 0x80u, 0u);
    return;
  }
  ASSERT_TRUE(p.rdmsr(isa::kMsrFcr57, v, env));
  EXPECT_EQ(v, 0u);
  ASSERT_TRUE(p.wrmsr(isa::kMsrFcr57, isa::kFcr57AceEnable | isa::kFcr57RngEnable, env));
  ASSERT_TRUE(p.rdmsr(isa::kMsrFcr57, v, env));
  EXPECT_EQ(v, isa::kFcr57AceEnable | isa::kFcr57RngEnable);
  const uint32_t before = p.centaur_features();
  EXPECT_TRUE(p.wrmsr(isa::kMsrFcr57, 0, env));
  EXPECT_TRUE(p.wrmsr(isa::kMsrFcr, 0, env));
  EXPECT_TRUE(p.wrmsr(isa::kMsrRng, 0, env));
  ASSERT_TRUE(p.rdmsr(isa::kMsrFcr, v, env));
  EXPECT_EQ(v, 0x2u);
  ASSERT_TRUE(p.rdmsr(isa::kMsrRng, v, env));
  EXPECT_EQ(v, 0u);
  EXPECT_EQ(p.centaur_features(), before);  // nothing disables the units
  EXPECT_EQ(before & 0xCCu, 0xCCu);         // RNG and ACE present and enabled
  EXPECT_TRUE(p.unit_enabled(isa::Unit::Ace) && p.unit_enabled(isa::Unit::Rng));
  EXPECT_FALSE(p.rdmsr(0x1258, v, env));
}

INSTANTIATE_TEST_SUITE_P(Dumps, ZhaoxinModel, ::testing::ValuesIn(kDumps),
                         [](const ::testing::TestParamInfo<Dumped>& i) {
                           std::string n = i.param.model;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// VIA's models keep today's C000_0001 EDX and FCR behaviour.
TEST(ViaModels, Unchanged) {
  for (const char* name : {"esther-c5j", "nano"}) {
    const CpuModel& m = *find_cpu_model(name);
    EXPECT_EQ(Padlock(m).centaur_features(), 0x3FCCu) << name;
    EXPECT_FALSE(m.phe.sha1_stores_32_bytes || m.phe.ecx0_does_nothing) << name;
    EXPECT_EQ(m.enables, EnableScheme::Via);
  }
}

}  // namespace
}  // namespace padlock
