// The CPU model data as data: typed units, the field lists behind `padlock-emu cpus
// --verbose`, steppings derived from their siblings, and the calibrated chaining-mode
// clocks (models/param.hpp, models/cpu_params.hpp, models/cpus/).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <type_traits>

#include "models/ace/ace_timing.hpp"
#include "models/cpu_model.hpp"
#include "models/cpu_params.hpp"
#include "models/cpus/calibrated.hpp"
#include "models/cpus/esther_c5j.hpp"
#include "models/cpus/esther_c5j_s9.hpp"
#include "models/cpus/families.hpp"
#include "models/cpus/nehemiah_c5p.hpp"
#include "models/cpus/nehemiah_c5xl.hpp"

namespace padlock {
namespace {

// A value of one unit cannot become a value of another: Clocks{...} = Bytes{...} does not
// compile. A sourced value stays as cheap as a double for the models' per-instruction reads.
static_assert(!std::is_convertible_v<Bytes, Clocks>);
static_assert(!std::is_assignable_v<Clocks&, Bytes>);
static_assert(!std::is_constructible_v<Ratio, Probability>);
static_assert(!std::is_constructible_v<Clocks, Bytes, const char*>);  // Clocks{bytes, "..."}
static_assert(std::is_constructible_v<Clocks, double, const char*>);
static_assert(std::is_assignable_v<Clocks&, Clocks>);
static_assert(std::is_trivially_copyable_v<Clocks> && std::is_trivially_copyable_v<AceParams>);
static_assert(std::is_same_v<decltype(AceParams::chain_startup)::value_type, Clocks>);
static_assert(std::is_same_v<decltype(MemoryParams::l2_ways), Ways>);
static_assert(std::is_same_v<decltype(RngParams::raw_one_bias)::value_type, Probability>);

// Indexes of AceParams::chain_* (PerChainMode).
constexpr size_t kCbc = static_cast<size_t>(ace::ChainMode::Cbc);
constexpr size_t kCfb = static_cast<size_t>(ace::ChainMode::Cfb);
constexpr size_t kOfb = static_cast<size_t>(ace::ChainMode::Ofb);
constexpr size_t kCtr = static_cast<size_t>(ace::ChainMode::Ctr);

std::map<std::string, NamedParam> listing(const CpuModel& m) {
  std::map<std::string, NamedParam> out;
  for (const NamedParam& p : cpu_listing(m)) out.emplace(p.name, p);
  return out;
}

std::string field_of(const std::string& name) {
  return name.substr(0, name.find('['));
}

// Every entry names its unit (from its type) and source, or is a setting; each field has a
// help text, printed once, at its first element.
TEST(CpuParams, ListingHasUnitsSourcesAndOneHelpPerField) {
  for (const CpuModel* m : all_cpu_models()) {
    std::set<std::string> names, fields, firsts;
    for (const NamedParam& p : cpu_listing(*m)) {
      EXPECT_TRUE(names.insert(p.name).second) << m->name << " " << p.name;
      EXPECT_GT(std::strlen(p.help), 0u) << m->name << " " << p.name;
      fields.insert(field_of(p.name));
      if (p.first) EXPECT_TRUE(firsts.insert(field_of(p.name)).second) << p.name;
      if (p.setting) {
        EXPECT_STREQ(p.unit, "") << p.name;
      } else {
        EXPECT_GT(std::strlen(p.unit), 0u) << m->name << " " << p.name;
        EXPECT_GT(std::strlen(p.source), 0u) << m->name << " " << p.name;
      }
    }
    EXPECT_EQ(firsts, fields) << m->name;
    EXPECT_EQ(cpu_params(*m).size() + cpu_settings(*m).size(), names.size()) << m->name;
  }
  EXPECT_TRUE(cpu_param_coverage_gaps().empty());
}

TEST(CpuParams, UnitTextComesFromTheType) {
  const auto l = listing(*find_cpu_model("esther-c5j"));
  const std::map<std::string, std::string> want = {
      {"default_mhz", "MHz"},
      {"rng.raw_rate_both_sources", "bit/s"},
      {"rng.raw_rate_scale[3]", "ratio"},
      {"rng.raw_one_bias[0]", "probability"},
      {"ace.ecb_sse_base[2][1]", "clocks"},
      {"pmm.k1_min", "ratio"},
      {"pmm.cache_line_bytes", "bytes"},
      {"memory.mem_bytes_per_clock", "bytes/clock"},
      {"memory.l2_ways", "ways"},
  };
  for (const auto& [name, unit] : want) {
    ASSERT_TRUE(l.count(name)) << name;
    EXPECT_EQ(l.at(name).unit, unit) << name;
  }
  EXPECT_TRUE(l.at("ace.prefetch_ecb").setting);
  EXPECT_EQ(l.at("ace.prefetch_ecb").value, 32);
}

// What a derived stepping lists differs from its sibling only where the stepping says.
std::set<std::string> differences(const CpuModel& a, const CpuModel& b) {
  const auto la = listing(a), lb = listing(b);
  std::set<std::string> out;
  for (const auto& [name, p] : la) {
    const NamedParam& q = lb.at(name);
    if (p.value != q.value || std::strcmp(p.source, q.source) != 0) out.insert(name);
  }
  return out;
}

TEST(CpuModel, SteppingIsItsSiblingWithFewChanges) {
  using cpus::kEstherC5J, cpus::kEstherC5JS9;
  EXPECT_TRUE(differences(kEstherC5J, kEstherC5JS9).empty());
  EXPECT_EQ(kEstherC5JS9.stepping, 9u);
  EXPECT_TRUE(kEstherC5J.ctr_errata);
  EXPECT_FALSE(kEstherC5JS9.ctr_errata);
  EXPECT_STREQ(kEstherC5JS9.brand, kEstherC5J.brand);
  // CPUID: the same leaves but leaf 1's signature, re-signed with the new stepping (§1.1).
  for (size_t i = 0; i < kCpuidLeaves; ++i) {
    const CpuidLeaf &a = kEstherC5J.cpuid[i], &b = kEstherC5JS9.cpuid[i];
    EXPECT_EQ(a.leaf, b.leaf);
    EXPECT_EQ(a.eax == b.eax, a.leaf != 1) << std::hex << a.leaf;
    EXPECT_EQ(a.edx, b.edx) << std::hex << a.leaf;
  }

  using cpus::kNehemiahC5P, cpus::kNehemiahC5XL;
  const std::set<std::string> c5xl = {"default_mhz", "rng.dual_source", "rng.raw_rate_one_source",
                                      "rng.raw_rate_both_sources"};
  EXPECT_EQ(differences(kNehemiahC5P, kNehemiahC5XL), c5xl);
  EXPECT_FALSE(kNehemiahC5XL.has_fcr);
  EXPECT_FALSE(kNehemiahC5XL.units.ace);
}

// The chaining-mode clocks come from the generated calibrated.hpp, each with its table's one
// provenance line; Esther's aligned CTR comes from the CTR_ERRATA run (§3.3 has no aligned
// CTR column) and Nehemiah, without ALIGN (§3.2), costs non-aligned buffers as aligned ones.
TEST(CpuModel, ChainClocksComeFromTheCalibratedFits) {
  namespace cal = cpus::calibrated;
  const AceParams& e = find_cpu_model("esther-c5j")->ace;
  EXPECT_EQ(e.chain_startup[kCbc].value, cal::kEstherAlignedCbc.startup);
  EXPECT_EQ(e.chain_per_block[kOfb].value, cal::kEstherAlignedOfb.per_block);
  EXPECT_EQ(e.chain_per_block[kCbc].source, cal::kEstherAlignedTable);
  EXPECT_EQ(e.chain_startup_unaligned[kCfb].value, cal::kEstherUnalignedCfb.startup);
  EXPECT_EQ(e.chain_per_block_unaligned[kCtr].source, cal::kEstherUnalignedTable);
  EXPECT_EQ(e.chain_startup[kCtr].value, cal::kEstherAlignedCtr.startup);
  EXPECT_EQ(e.chain_per_block[kCtr].value, cal::kEstherAlignedCtr.per_block);
  EXPECT_EQ(e.chain_startup[kCtr].source, cal::kCtrErrataRun);
  // The v3 parts: digest mode, rounds, SHA-256 (docs/timing.md).
  EXPECT_EQ(e.dgest_per_block.value, cal::kEstherDigestPerBlock.value);
  EXPECT_EQ(e.store_hidden_by_rounds.value, cal::kEstherStoreHiddenByRounds.value);
  EXPECT_EQ(find_cpu_model("esther-c5j")->phe.sha256_block_overhead.value,
            cal::kSha256BlockOverhead.value);

  const AceParams& n = find_cpu_model("nehemiah-c5p")->ace;
  EXPECT_EQ(n.chain_per_block[kCfb].value, cal::kNehemiahAlignedCfb.per_block);
  EXPECT_EQ(n.chain_per_block[kCfb].source, cal::kNehemiahAlignedTable);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(n.chain_startup_unaligned[i].value, n.chain_startup[i].value);
    EXPECT_EQ(n.chain_per_block_unaligned[i].value, n.chain_per_block[i].value);
  }
  EXPECT_EQ(n.chain_per_block[kCtr].value, 0);  // no CTR on Nehemiah (§7.1)
}

// Esther's per-store cost is measured, not fitted: InstLat's aligned 16-byte load and store
// pair (MOVAPS LS pair T) takes 5.92 clocks on Esther and 3.92 on Nehemiah, whose stores
// cost nothing (docs/timing.md, "Esther's clocks").
TEST(CpuModel, EsthersStoreCostIsInstLatsLoadStorePairOverNehemiahs) {
  const MemoryParams& e = find_cpu_model("esther-c5j")->memory;
  EXPECT_DOUBLE_EQ(e.store_drain_clocks.value, 2.0);
  const std::string source = e.store_drain_clocks.source;
  EXPECT_NE(source.find("C5J_Esther_InstLatX86.txt:606"), std::string::npos) << source;
  EXPECT_NE(source.find("C5P_Nehemiah_InstLatX86.txt:598"), std::string::npos) << source;
  EXPECT_EQ(find_cpu_model("esther-c5j-s9")->memory.store_drain_clocks.value, 2.0);
  EXPECT_EQ(find_cpu_model("nehemiah-c5p")->memory.store_drain_clocks.value, 0.0);
}

}  // namespace
}  // namespace padlock
