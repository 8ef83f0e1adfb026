// The CPU model data: identity, CPUID leaves, units, reset values and lookup (guide §1.1,
// §1.3, §1.4, §1.5, §7.1).
#include "models/cpu_model.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "isa/msr.hpp"
#include "models/padlock.hpp"

namespace padlock {
namespace {

const CpuModel& model(const char* name) {
  const CpuModel* m = find_cpu_model(name);
  if (m == nullptr) throw std::runtime_error(std::string("no model ") + name);
  return *m;
}

// Expected identity per model: §1.1 table (family 6, type 0; C5XL stepping 3, C5P and Esther
// steppings 8-F), §7.1 (model 9 = Nehemiah, 10 = Esther); Nano: family 6 model 15.
struct Identity {
  const char* name;
  uint32_t model, stepping;
  bool sse2, lm;
  uint32_t centaur_edx;  // §1.3 EDX at RESET: presence and enable bits
};
constexpr Identity kIdentities[] = {
    {"nehemiah-c5xl", 9, 3, false, false, 0x0000000C},  // RNG
    {"nehemiah-c5p", 9, 8, false, false, 0x000000CC},   // RNG, ACE
    {"esther-c5j", 10, 8, true, false, 0x00003FCC},     // RNG, ACE, ACE2, PHE, PMM
    {"esther-c5j-s9", 10, 9, true, false, 0x00003FCC}, {"nano", 15, 2, true, true, 0x00003FCC},
};

TEST(CpuModel, AllModelsListedAndFound) {
  const auto models = all_cpu_models();
  // Then the Nano 3000 and Zhaoxin models (zhaoxin_models_test.cpp, docs/zhaoxin.md).
  ASSERT_EQ(models.size(), std::size(kIdentities) + 6);
  for (size_t i = 0; i < std::size(kIdentities); ++i) {
    EXPECT_STREQ(models[i]->name, kIdentities[i].name);
    EXPECT_EQ(find_cpu_model(models[i]->name), models[i]);
  }
}

TEST(CpuModel, FindByAlias) {
  EXPECT_EQ(find_cpu_model("nehemiah"), &model("nehemiah-c5p"));
  EXPECT_EQ(find_cpu_model("esther"), &model("esther-c5j"));
  EXPECT_EQ(find_cpu_model("esther-late"), &model("esther-c5j-s9"));
  for (const char* bad : {"", "esther-c5", "ESTHER", "nano ", "c5j", ",", "nehemiah,esther"}) {
    EXPECT_EQ(find_cpu_model(bad), nullptr) << '"' << bad << '"';
  }
}

// §1.1 (App. A 1): vendor "CentaurHauls" in EBX, EDX, ECX.
TEST(CpuModel, VendorCentaurHauls_S1_1) {
  for (const CpuModel* m : all_cpu_models()) {
    Padlock p(*m);
    const CpuidResult r = p.cpuid(0, 0);
    char vendor[13] = {};
    std::memcpy(vendor, &r.ebx, 4);
    std::memcpy(vendor + 4, &r.edx, 4);
    std::memcpy(vendor + 8, &r.ecx, 4);
    // Zhaoxin's KX-U5581 reports its own vendor (docs/zhaoxin.md).
    const bool shanghai = std::string(m->name) == "kx-5000";
    EXPECT_STREQ(vendor, shanghai ? "  Shanghai  " : "CentaurHauls") << m->name;
    EXPECT_GE(r.eax, 1u) << m->name;
  }
}

// §1.1, §7.1: family/model/stepping and type in leaf 1 EAX, agreeing with the model fields.
TEST(CpuModel, SignatureFamilyModelStepping_S1_1_S7_1) {
  for (const Identity& id : kIdentities) {
    const CpuModel& m = model(id.name);
    Padlock p(m);
    const uint32_t eax = p.cpuid(1, 0).eax;
    EXPECT_EQ(eax >> 8 & 0xF, 6u) << id.name << " family";
    EXPECT_EQ(eax >> 12 & 0x3, 0u) << id.name << " type";
    EXPECT_EQ(eax >> 4 & 0xF, id.model) << id.name << " model";
    EXPECT_EQ(eax & 0xF, id.stepping) << id.name << " stepping";
    EXPECT_EQ(eax >> 16, 0u) << id.name << " no extended family/model";
    EXPECT_EQ(m.family, 6u);
    EXPECT_EQ(m.model, id.model);
    EXPECT_EQ(m.stepping, id.stepping);
  }
}

// Leaf 1 features: SSE and FXSR everywhere (§1.2 needs CR4[9]/FXSR); SSE2 from Esther on;
// long mode (0x80000001 EDX[29]) on Nano only.
TEST(CpuModel, FeatureBits_S1_2) {
  for (const Identity& id : kIdentities) {
    const CpuModel& m = model(id.name);
    Padlock p(m);
    const CpuidResult l1 = p.cpuid(1, 0);
    EXPECT_TRUE(l1.edx & (1u << 25)) << id.name << " SSE";
    EXPECT_TRUE(l1.edx & (1u << 24)) << id.name << " FXSR";
    EXPECT_EQ((l1.edx >> 26 & 1) != 0, id.sse2) << id.name << " SSE2";
    const bool lm =
        p.cpuid(0x80000000, 0).eax >= 0x80000001 && (p.cpuid(0x80000001, 0).edx >> 29 & 1) != 0;
    EXPECT_EQ(lm, id.lm) << id.name << " LM";
    EXPECT_EQ(m.long_mode, id.lm) << id.name;
  }
}

// §1.3: 0xC0000000 returns EAX >= 0xC0000001; 0xC0000001 EDX has the PadLock bits.
TEST(CpuModel, CentaurLeaves_S1_3) {
  for (const Identity& id : kIdentities) {
    Padlock p(model(id.name));
    EXPECT_GE(p.cpuid(0xC0000000, 0).eax, 0xC0000001u) << id.name;
    EXPECT_EQ(p.cpuid(0xC0000001, 0).edx, id.centaur_edx) << id.name;
    EXPECT_EQ(p.centaur_features(), id.centaur_edx) << id.name;
  }
}

// §1.1 "Supports" row, §1.3 EDX[8]: "For Esther processors, bit 8 is a copy of bit 6".
TEST(CpuModel, UnitsPerModel_S1_1_S1_3) {
  const Units c5xl = model("nehemiah-c5xl").units, c5p = model("nehemiah-c5p").units,
              est = model("esther-c5j").units;
  EXPECT_TRUE(c5xl.rng && !c5xl.ace && !c5xl.ace2 && !c5xl.phe && !c5xl.pmm);
  EXPECT_TRUE(c5p.rng && c5p.ace && !c5p.ace2 && !c5p.phe && !c5p.pmm);
  EXPECT_TRUE(est.rng && est.ace && est.ace2 && est.phe && est.pmm);
  for (const CpuModel* m : all_cpu_models()) {
    if (m->units.ace2) {
      EXPECT_TRUE(m->units.ace) << m->name;
    }
  }
}

// §1.4: MSR 0x110B = 0x40 at RESET; §1.5: no FCR on Nehemiah stepping 3; FCR[28] = 1 at
// RESET (§1.2: "The RESET default is enabled").
TEST(CpuModel, ResetValues_S1_4_S1_5) {
  for (const CpuModel* m : all_cpu_models()) {
    if (m->enables != EnableScheme::Via) continue;  // zhaoxin_models_test.cpp, EnableMsrs
    EXPECT_EQ(m->msr_rng_reset, isa::kMsrRngReset) << m->name;
    const bool c5xl = std::string(m->name) == "nehemiah-c5xl";
    EXPECT_EQ(m->has_fcr, !c5xl) << m->name;
    if (m->has_fcr) {
      EXPECT_NE(m->msr_fcr_reset & isa::kFcrPadlockEnable, 0u) << m->name;
    }
    Padlock p(*m);
    ExecEnv env;
    uint64_t v = 0;
    ASSERT_TRUE(p.rdmsr(isa::kMsrRng, v, env));
    EXPECT_EQ(v, 0x40u) << m->name;
    EXPECT_EQ(p.rdmsr(isa::kMsrFcr, v, env), m->has_fcr) << m->name;
    if (m->has_fcr) {
      EXPECT_EQ(v, m->msr_fcr_reset) << m->name;
    }
  }
}

// §3.1 ERRATA / §6.6: the CTR erratum is on Esther stepping 8 only.
TEST(CpuModel, CtrErrataOnlyOnEstherStepping8) {
  for (const CpuModel* m : all_cpu_models()) {
    const bool c5j8 = std::string(m->core) == "Esther" && m->stepping == 8;
    EXPECT_EQ(m->ctr_errata, c5j8) << m->name;
  }
}

// §2.2: the RNG variant follows the core (string filter and byte-count BCNT on Nehemiah);
// SRC is reserved before Nehemiah stepping 8. Every RNG constant carries a unit and source.
TEST(CpuModel, RngParams_S2_2_S2_3) {
  for (const CpuModel* m : all_cpu_models()) {
    const RngParams& r = m->rng;
    const bool nehemiah = std::string(m->core) == "Nehemiah";
    EXPECT_EQ(r.variant == RngVariant::Nehemiah, nehemiah) << m->name;
    EXPECT_EQ(r.dual_source, !(nehemiah && m->stepping < 8)) << m->name;
    auto sourced = [&](const auto& p) {
      EXPECT_GT(std::strlen(p.unit), 0u) << m->name;
      EXPECT_GT(std::strlen(p.source), 0u) << m->name;
    };
    sourced(r.raw_rate_one_source);
    sourced(r.raw_rate_both_sources);
    for (const Ratio& p : r.raw_rate_scale) sourced(p);
    for (const Probability& p : r.raw_one_bias) {
      sourced(p);
      EXPECT_GT(p.value, 0.0);
      EXPECT_LT(p.value, 1.0);
    }
    sourced(r.clocks_no_data);
    for (const Clocks& p : r.clocks_stored) sourced(p);
    sourced(r.rep_single_extra);
    // §2.3 XSTORE clocks table.
    EXPECT_EQ(r.clocks_no_data.value, 30);
    EXPECT_EQ(r.clocks_stored[0].value, 55);
    EXPECT_EQ(r.clocks_stored[1].value, 310);
    EXPECT_EQ(r.clocks_stored[2].value, 200);
    EXPECT_EQ(r.clocks_stored[3].value, 120);
    EXPECT_EQ(r.rep_single_extra.value, 7);
  }
}

// The brand string through leaves 0x80000002..4, which 0x80000000 must announce.
TEST(CpuModel, BrandString) {
  for (const CpuModel* m : all_cpu_models()) {
    Padlock p(*m);
    ASSERT_GE(p.cpuid(0x80000000, 0).eax, 0x80000004u) << m->name;
    char brand[49] = {};
    for (uint32_t i = 0; i < 3; ++i) {
      const CpuidResult r = p.cpuid(0x80000002 + i, 0);
      const uint32_t w[4] = {r.eax, r.ebx, r.ecx, r.edx};
      std::memcpy(brand + 16 * i, w, 16);
    }
    EXPECT_STREQ(brand, m->brand) << m->name;
    const std::string b(brand);
    EXPECT_TRUE(b.find("VIA") != std::string::npos || b.find("ZHAOXIN") != std::string::npos);
  }
}

}  // namespace
}  // namespace padlock
