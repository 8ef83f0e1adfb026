// The block timing model (models/timing/x86_block_model.hpp) on measured costs.
#include "models/timing/x86_block_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace padlock::timing {
namespace {

constexpr RegMask kEax = reg_bit(reg::kGpr + 0), kEcx = reg_bit(reg::kGpr + 1),
                  kEdx = reg_bit(reg::kGpr + 2), kEbx = reg_bit(reg::kGpr + 3),
                  kEsi = reg_bit(reg::kGpr + 6), kFlags = reg_bit(reg::kFlags);

BlockInsn insn(X86Core core, const char* key, InsnClass cls, RegMask reads, RegMask writes,
               bool load = false) {
  return {resolve_insn_cost(core, key, cls, load), reads, writes};
}

// mov eax, [esi]   then   add ebx, eax
TEST(X86BlockModel, LoadThenDependentAluStallsByLoadUseLatency) {
  for (X86Core core : {X86Core::Nehemiah, X86Core::Esther}) {
    const MeasuredCore& mc = measured_core(core);
    BlockTimer t(core);
    t.add(insn(core, "MOV r32, m32", InsnClass::Load, kEsi, kEax, true));
    EXPECT_EQ(t.last_issue(), 0);
    t.add(insn(core, "ADD r32, r32", InsnClass::Alu, kEax | kEbx, kEbx | kFlags));
    EXPECT_EQ(t.last_issue(), mc.load_use.clocks) << mc.core;
    const double add = find_measured(core, "ADD r32, r32")->latency;
    EXPECT_EQ(t.clocks(), mc.load_use.clocks + add) << mc.core;
  }
}

// mov eax, [esi]   then   add ebx, ecx: the add issues right behind the load.
TEST(X86BlockModel, IndependentOpsDoNotStall) {
  const X86Core core = X86Core::Esther;
  const MeasuredRow* load = find_measured(core, "MOV r32, m32");
  BlockTimer t(core);
  t.add(insn(core, "MOV r32, m32", InsnClass::Load, kEsi, kEax, true));
  t.add(insn(core, "ADD r32, r32", InsnClass::Alu, kEcx | kEbx, kEbx | kFlags));
  EXPECT_EQ(t.last_issue(), load->throughput);
  t.add(insn(core, "ADD r32, r32", InsnClass::Alu, kEcx | kEdx, kEdx | kFlags));
  EXPECT_EQ(t.last_issue(), 2 * load->throughput);
  // The block still ends when the load's result is ready.
  EXPECT_EQ(t.clocks(), load->latency);
}

// Throughput: a slow instruction holds the issue slot (BT r32, r32: T 12 on Esther).
TEST(X86BlockModel, ThroughputHoldsTheIssueSlot) {
  const X86Core core = X86Core::Esther;
  BlockTimer t(core);
  t.add(insn(core, "BT r32, r32", InsnClass::Shift, kEax | kEcx, kFlags));
  t.add(insn(core, "ADD r32, r32", InsnClass::Alu, kEdx | kEbx, kEbx | kFlags));
  EXPECT_EQ(t.last_issue(), 12.0);
  EXPECT_EQ(t.rounded_clocks(), 13u);
}

// Nano: max(sum of throughputs, longest chain).
TEST(X86BlockModel, OutOfOrderCoreTakesMaxOfThroughputAndChain) {
  const X86Core core = X86Core::Nano;
  const MeasuredRow* load = find_measured(core, "MOV r32, m32");
  const MeasuredRow* add = find_measured(core, "ADD r32, r32");
  BlockTimer dep(core);
  dep.add(insn(core, "MOV r32, m32", InsnClass::Load, kEsi, kEax, true));
  dep.add(insn(core, "ADD r32, r32", InsnClass::Alu, kEax | kEbx, kEbx | kFlags));
  EXPECT_EQ(dep.clocks(),
            std::max(load->throughput + add->throughput, load->latency + add->latency));
  BlockTimer chain(core);
  for (int i = 0; i < 8; ++i)
    chain.add(insn(core, "ADD r32, r32", InsnClass::Alu, kEcx | kEbx, kEbx | kFlags));
  // A chain of eight one-clock adds through EBX.
  EXPECT_EQ(chain.clocks(), std::max(8 * add->throughput, 8 * add->latency));
  BlockTimer wide(core);
  for (int i = 0; i < 8; ++i)
    wide.add(insn(core, "MOV m32, r32", InsnClass::Store, kEsi | kEax, 0));
  EXPECT_DOUBLE_EQ(wide.clocks(), 8 * find_measured(core, "MOV m32, r32")->throughput);
}

TEST(X86BlockModel, EmptyAndMinimumBlocks) {
  BlockTimer t(X86Core::Nano);
  EXPECT_EQ(t.rounded_clocks(), 0u);
  t.add(insn(X86Core::Nano, "", InsnClass::Nop, 0, 0));
  EXPECT_GE(t.rounded_clocks(), 1u);
}

}  // namespace
}  // namespace padlock::timing
