// The per-core x86 cost tables (models/timing/x86_costs).
#include "models/timing/x86_costs.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "models/cpu_model.hpp"

namespace padlock::timing {
namespace {

TEST(X86Costs, EveryCoreHasEveryClassSourced) {
  for (const char* core : {"Nehemiah", "Esther", "Nano"}) {
    const X86Costs& c = x86_costs_for_core(core);
    EXPECT_STREQ(c.core, core);
    for (size_t i = 0; i < kInsnClassCount; ++i) {
      EXPECT_GT(c.clocks[i].value, 0) << core << " " << insn_class_name(InsnClass(i));
      EXPECT_STRNE(c.clocks[i].source, "") << core << " " << insn_class_name(InsnClass(i));
      EXPECT_STREQ(c.clocks[i].unit, "clocks");
    }
  }
}

TEST(X86Costs, CpuModelsMapToTheirCore) {
  for (const CpuModel* cpu : all_cpu_models())
    EXPECT_STREQ(x86_costs_for(*cpu).core, cpu->core) << cpu->name;
}

TEST(X86Costs, BlockCostSumsClasses) {
  const X86Costs& c = x86_costs_for_core("Esther");
  BlockCost b;
  b.add(InsnClass::Load);
  b.add(InsnClass::Alu);
  b.add(InsnClass::Div);
  b.add(InsnClass::Branch);
  EXPECT_EQ(b.insns, 4u);
  const double want = c.cost(InsnClass::Load) + c.cost(InsnClass::Alu) + c.cost(InsnClass::Div) +
                      c.cost(InsnClass::Branch);
  EXPECT_EQ(b.clocks(c), static_cast<uint32_t>(want + 0.5));
}

TEST(X86Costs, NonEmptyBlockCostsAtLeastOneClock) {
  BlockCost b;
  b.add(InsnClass::Nop);
  EXPECT_GE(b.clocks(x86_costs_for_core("Nano")), 1u);
  EXPECT_EQ(BlockCost{}.clocks(x86_costs_for_core("Nano")), 0u);
}

// In-order cores: a divide costs more than a multiply, which costs more than an add.
TEST(X86Costs, RelativeOrderOfExpensiveClasses) {
  for (const char* core : {"Nehemiah", "Esther", "Nano"}) {
    const X86Costs& c = x86_costs_for_core(core);
    EXPECT_GT(c.cost(InsnClass::Div), c.cost(InsnClass::Mul)) << core;
    EXPECT_GT(c.cost(InsnClass::Mul), c.cost(InsnClass::Alu)) << core;
    EXPECT_GT(c.cost(InsnClass::Syscall), c.cost(InsnClass::Div)) << core;
  }
}

TEST(X86Costs, ClassNames) {
  EXPECT_STREQ(insn_class_name(InsnClass::PushAll), "pusha");
  EXPECT_STREQ(insn_class_name(InsnClass::Other), "other");
  EXPECT_STREQ(insn_class_name(InsnClass::Count), "?");
}

}  // namespace
}  // namespace padlock::timing
