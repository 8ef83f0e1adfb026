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

BlockInsn insn_addr(X86Core core, const char* key, InsnClass cls, RegMask addr, RegMask writes) {
  BlockInsn i = insn(core, key, cls, 0, writes, true);
  i.addr_reads = addr;
  return i;
}

// mov eax, [esi]   then   mov ebx, [eax]: the second load waits for the measured load-use
// latency (a pointer chase, which is what the dumps measure).
TEST(X86BlockModel, LoadFeedingAnAddressStallsByLoadUseLatency) {
  for (X86Core core : {X86Core::Nehemiah, X86Core::Esther}) {
    const MeasuredCore& mc = measured_core(core);
    BlockTimer t(core);
    t.add(insn_addr(core, "MOV r32, m32", InsnClass::Load, kEsi, kEax));
    EXPECT_EQ(t.last_issue(), 0);
    t.add(insn_addr(core, "MOV r32, m32", InsnClass::Load, kEax, kEbx));
    EXPECT_EQ(t.last_issue(), mc.load_use.clocks) << mc.core;
  }
}

// add eax, [esi]   then   add ebx, eax: the value is used as data, which waits the load
// form's latency less the address part of the chase (Esther: 7 - 6 = 1 clock), so the add
// follows the load without a stall, while an address use waits the whole chase.
TEST(X86BlockModel, LoadFeedingDataWaitsOnlyTheOperation) {
  const X86Core core = X86Core::Esther;
  const MeasuredCore& mc = measured_core(core);
  const MeasuredRow* load = find_measured(core, "ADD r32, m32");
  const InsnCost c = resolve_insn_cost(core, "ADD r32, m32", InsnClass::AluLoad, true);
  EXPECT_EQ(c.latency, load->latency);
  EXPECT_EQ(c.data_latency, load->latency - mc.load_use.clocks);
  BlockTimer t(core);
  BlockInsn first = insn(core, "ADD r32, m32", InsnClass::AluLoad, kEax, kEax | kFlags, true);
  first.addr_reads = kEsi;
  t.add(first);
  t.add(insn(core, "ADD r32, r32", InsnClass::Alu, kEax | kEbx, kEbx | kFlags));
  EXPECT_EQ(t.last_issue(), std::max(c.data_latency, load->throughput));
  // The same value as an address: mov ecx, [eax] waits the chase.
  t.add(insn_addr(core, "MOV r32, m32", InsnClass::Load, kEax, kEcx));
  EXPECT_EQ(t.last_issue(), c.latency);
}

// mov eax, [esi]   then   add ebx, ecx: the add issues right behind the load.
TEST(X86BlockModel, IndependentOpsDoNotStall) {
  const X86Core core = X86Core::Esther;
  const MeasuredRow* load = find_measured(core, "MOV r32, m32");
  BlockTimer t(core);
  t.add(insn_addr(core, "MOV r32, m32", InsnClass::Load, kEsi, kEax));
  t.add(insn(core, "ADD r32, r32", InsnClass::Alu, kEcx | kEbx, kEbx | kFlags));
  EXPECT_EQ(t.last_issue(), load->throughput);
  t.add(insn(core, "ADD r32, r32", InsnClass::Alu, kEcx | kEdx, kEdx | kFlags));
  EXPECT_EQ(t.last_issue(), 2 * load->throughput);
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
  // A pointer chase: the second load's address waits for the first; its value is ready
  // for data one clock after it issues.
  BlockTimer dep(core);
  dep.add(insn_addr(core, "MOV r32, m32", InsnClass::Load, kEsi, kEax));
  dep.add(insn_addr(core, "MOV r32, m32", InsnClass::Load, kEax, kEbx));
  EXPECT_EQ(dep.clocks(), std::max(2 * load->throughput, load->latency + 1));
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
