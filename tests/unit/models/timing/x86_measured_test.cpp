// The measured x86 costs (models/timing/x86_measured.hpp, generated data from the InstLat
// dumps of the InstLatx64/InstLatx64 repository, folder CentaurHauls/). The expected figures
// are read off the dumps at the cited lines.
#include "models/timing/x86_measured.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <string_view>

#include "models/cpu_model.hpp"

namespace padlock::timing {
namespace {

constexpr const char* kEsther = "CentaurHauls00006A9_C5J_Esther_InstLatX86.txt";
constexpr const char* kEstherMem = "CentaurHauls00006A9_C5J_Esther_MemLatX86.txt";
constexpr const char* kNehemiah = "CentaurHauls0000698_C5P_Nehemiah_InstLatX86.txt";
constexpr const char* kNano = "CentaurHauls00006F2_CNA_Isaiah_InstLatX86.txt";
constexpr const char* kNanoMem = "CentaurHauls00006F2_CNA_Isaiah_MemLatX64.txt";

std::string at(const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line);
}

const X86Core kCores[] = {X86Core::Nehemiah, X86Core::Esther, X86Core::Nano,
                          X86Core::Nano3000, X86Core::ZxC,    X86Core::LuJiaZui};

// Binary search needs strictly sorted keys; every row cites a line of a dump.
TEST(X86Measured, RowsAreSortedUniqueAndCited) {
  for (X86Core core : kCores) {
    const MeasuredCore& mc = measured_core(core);
    EXPECT_STREQ(mc.core, x86_core_name(core));
    ASSERT_GT(mc.rows.size(), 300u) << mc.core;
    for (size_t i = 0; i < mc.rows.size(); ++i) {
      const MeasuredRow& r = mc.rows[i];
      if (i > 0) EXPECT_LT(std::strcmp(mc.rows[i - 1].key, r.key), 0) << r.key;
      EXPECT_GT(r.throughput, 0) << mc.core << " " << r.key;
      const std::string_view src = r.source;
      EXPECT_TRUE(src.starts_with("CentaurHauls")) << r.key << " " << src;
      EXPECT_NE(src.find(".txt:"), std::string_view::npos) << r.key << " " << src;
      EXPECT_EQ(find_measured(core, r.key), &r);
    }
    for (size_t i = 1; i < mc.rep.size(); ++i)
      EXPECT_LT(std::strcmp(mc.rep[i - 1].key, mc.rep[i].key), 0);
  }
}

TEST(X86Measured, CpuModelsMapToTheirCore) {
  for (const CpuModel* cpu : all_cpu_models())
    EXPECT_STREQ(x86_core_name(x86_core(cpu->core)), cpu->core) << cpu->name;
}

// Esther: "MOV r32, [m32]  L: 6.0c T: 1.00c" (InstLat line 39) and "L1D latency: 6 clks",
// "L2 latency: 17 clks", "Mem latency: 220 clks" (MemLat lines 122, 123, 121).
TEST(X86Measured, EstherLoadUseAndMemoryLatencies) {
  const MeasuredCore& e = measured_core(X86Core::Esther);
  EXPECT_EQ(e.load_use.clocks, 6.0);
  EXPECT_EQ(e.load_use.source, at(kEsther, 39));
  EXPECT_EQ(e.load_throughput.clocks, 1.0);
  EXPECT_EQ(e.l1_latency.clocks, 6.0);
  EXPECT_EQ(e.l1_latency.source, at(kEstherMem, 122));
  EXPECT_EQ(e.l2_latency.clocks, 17.0);
  EXPECT_EQ(e.l2_latency.source, at(kEstherMem, 123));
  EXPECT_EQ(e.memory_latency.clocks, 220.0);
  EXPECT_EQ(e.memory_latency.source, at(kEstherMem, 121));
}

// The Nano 3000, ZX-C+ and KX-U6780A dumps (docs/zhaoxin.md, "x86 costs"): "MOV r32,
// [m32]  L: 4.0c  T: 1.33c / 1.33c / 0.63c"; out-of-order like Nano; the models use them.
TEST(X86Measured, ZhaoxinCoresFromTheirDumps) {
  struct Row {
    X86Core core;
    double throughput;
    const char* source;
  };
  for (const Row& r :
       {Row{X86Core::Nano3000, 1.33, "CentaurHauls00006F8_CNB_Isaiah_InstLatX86.txt:37"},
        Row{X86Core::ZxC, 1.33, "CentaurHauls00006FE_CNR_Isaiah_InstLatX64.txt:84"},
        Row{X86Core::LuJiaZui, 0.63, "CentaurHauls00307B1_ZXE_InstLatX64.txt:116"}}) {
    const MeasuredCore& mc = measured_core(r.core);
    EXPECT_EQ(mc.load_use.clocks, 4.0) << mc.core;
    EXPECT_EQ(mc.load_throughput.clocks, r.throughput) << mc.core;
    EXPECT_STREQ(mc.load_use.source, r.source);
    EXPECT_FALSE(in_order(r.core));
  }
  EXPECT_EQ(x86_core(find_cpu_model("nano-3000")->core), X86Core::Nano3000);
  EXPECT_EQ(x86_core(find_cpu_model("zx-c")->core), X86Core::ZxC);
  for (const char* m : {"kx-5000", "kx-6000", "kh-40000", "kx-7000"})
    EXPECT_EQ(x86_core(find_cpu_model(m)->core), X86Core::LuJiaZui) << m;
}

// Nehemiah has no MemLat dump; Nano's 64-bit one gives 4 / 26 / 189 clocks.
TEST(X86Measured, OtherCoresLoadUseAndMemoryLatencies) {
  const MeasuredCore& n = measured_core(X86Core::Nehemiah);
  EXPECT_EQ(n.load_use.clocks, 6.0);
  EXPECT_EQ(n.load_use.source, at(kNehemiah, 38));
  EXPECT_EQ(n.load_throughput.clocks, 1.08);
  EXPECT_FALSE(n.l1_latency.present());
  const MeasuredCore& i = measured_core(X86Core::Nano);
  EXPECT_EQ(i.load_use.clocks, 4.0);
  EXPECT_EQ(i.load_use.source, at(kNano, 39));
  EXPECT_EQ(i.l1_latency.clocks, 4.0);
  EXPECT_EQ(i.l1_latency.source, at(kNanoMem, 122));
  EXPECT_EQ(i.l2_latency.clocks, 26.0);
  EXPECT_EQ(i.memory_latency.clocks, 189.0);
}

// "ADD [m32], r32  L: 8.9c T: 5.50c" (Esther line 77); Nehemiah line 75: 9.0c, 5.33c.
TEST(X86Measured, AddMemoryDestination) {
  const MeasuredRow* e = find_measured(X86Core::Esther, "ADD m32, r32");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->throughput, 5.5);
  EXPECT_EQ(e->latency, 8.9);
  EXPECT_STREQ(e->source, at(kEsther, 77).c_str());
  const MeasuredRow* n = find_measured(X86Core::Nehemiah, "ADD m32, r32");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->throughput, 5.33);
  EXPECT_STREQ(n->source, at(kNehemiah, 75).c_str());
}

// "BT r32, r32  L: [no true dep.]  T: 12.00c" on Esther (line 148) and Nehemiah (146); one
// clock on Nano (148). Without a latency the throughput stands in for it.
TEST(X86Measured, BitTestRegister) {
  const MeasuredRow* e = find_measured(X86Core::Esther, "BT r32, r32");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->throughput, 12.0);
  EXPECT_LT(e->latency, 0);
  EXPECT_STREQ(e->source, at(kEsther, 148).c_str());
  EXPECT_EQ(find_measured(X86Core::Nehemiah, "BT r32, r32")->throughput, 12.0);
  EXPECT_EQ(find_measured(X86Core::Nano, "BT r32, r32")->throughput, 1.0);
  const InsnCost c = resolve_insn_cost(X86Core::Esther, "BT r32, r32", InsnClass::Shift, false);
  EXPECT_EQ(c.basis, CostBasis::Measured);
  EXPECT_EQ(c.row, e);
  EXPECT_EQ(c.latency, 12.0);
  EXPECT_EQ(c.data_latency, 12.0);  // no load: one latency
  EXPECT_EQ(c.throughput, 12.0);
}

// Row selection of the importer: the distinct-register row wins over the same-register one
// ("XCHG r1_8, r2_8" L 2.0c at Esther line 59, "XCHG r8, r8" L 1.0c at line 56), DIV takes
// the "(full)" row (line 333: 51 clocks), PUSHAD is Capstone's PUSHAL (line 367: 9 clocks).
TEST(X86Measured, ImporterRowSelection) {
  const MeasuredRow* x = find_measured(X86Core::Esther, "XCHG r8, r8");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->latency, 2.0);
  EXPECT_STREQ(x->source, at(kEsther, 59).c_str());
  const MeasuredRow* d = find_measured(X86Core::Esther, "DIV r32");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->throughput, 51.0);
  EXPECT_STREQ(d->source, at(kEsther, 333).c_str());
  const MeasuredRow* p = find_measured(X86Core::Esther, "PUSHAL");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->throughput, 9.0);
  EXPECT_EQ(find_measured(X86Core::Esther, "PUSHAD"), nullptr);
  EXPECT_EQ(find_measured(X86Core::Esther, "ADD eax, i32"), nullptr);  // accumulator rows left out
}

TEST(X86Measured, ResolveOtherImmediateForm) {
  // MOV [m32], imm32 is not timed; MOV [m32], r32 is (Esther line 42).
  const InsnCost c = resolve_insn_cost(X86Core::Esther, "MOV m32, i32", InsnClass::Store, false);
  EXPECT_EQ(c.basis, CostBasis::OtherImmediate);
  ASSERT_NE(c.row, nullptr);
  EXPECT_STREQ(c.row->key, "MOV m32, r32");
  EXPECT_EQ(c.throughput, 1.0);
}

TEST(X86Measured, ResolveAluAnalogueForMemoryDestination) {
  const InsnCost sub = resolve_insn_cost(X86Core::Esther, "SUB m32, r32", InsnClass::AluRmw, true);
  EXPECT_EQ(sub.basis, CostBasis::AluAnalogue);
  ASSERT_NE(sub.row, nullptr);
  EXPECT_STREQ(sub.row->key, "ADD m32, r32");
  EXPECT_EQ(sub.latency, sub.row->latency);
  const InsnCost inc = resolve_insn_cost(X86Core::Esther, "INC m32", InsnClass::AluRmw, true);
  EXPECT_EQ(inc.basis, CostBasis::AluAnalogue);
  ASSERT_NE(inc.row, nullptr);
  EXPECT_STREQ(inc.row->key, "ADD m32, i8");
}

// A read-modify-write issues as its load plus its store (docs/timing.md, "x86 costs"): the
// dumps' throughput of ADD [m32], r32 (Nehemiah 5.33, Esther 5.5) is a chain on one address
// that waits for store forwarding (Nehemiah ADD [m16], r16: 2.33). Locked forms keep theirs.
TEST(X86Measured, ReadModifyWriteIssuesAsLoadPlusStore) {
  for (X86Core core : {X86Core::Nehemiah, X86Core::Esther}) {
    const MeasuredCore& mc = measured_core(core);
    const MeasuredRow* store = find_measured(core, "MOV m32, r32");
    ASSERT_NE(store, nullptr);
    const double issue = mc.load_throughput.clocks + store->throughput;
    for (const char* key : {"ADD m32, r32", "ADD m8, i8", "SUB m32, r32", "INC m8"}) {
      const InsnCost c = resolve_insn_cost(core, key, InsnClass::AluRmw, true);
      ASSERT_NE(c.row, nullptr) << key;
      EXPECT_GT(c.row->throughput, issue) << key;  // the measured chain is slower
      EXPECT_DOUBLE_EQ(c.throughput, issue) << mc.core << " " << key;
      EXPECT_EQ(c.latency, c.row->latency) << key;
    }
    // Not read-modify-writes: a store, a compare with memory, a locked add.
    EXPECT_EQ(resolve_insn_cost(core, "MOV m32, r32", InsnClass::Store, false).throughput,
              store->throughput);
    const InsnCost cmp = resolve_insn_cost(core, "CMP m32, i8", InsnClass::AluLoad, true);
    EXPECT_EQ(cmp.basis, CostBasis::RegisterPlusLoad);
    const InsnCost lock = resolve_insn_cost(core, "LOCK ADD m32, r32", InsnClass::Other, true);
    ASSERT_NE(lock.row, nullptr);
    EXPECT_EQ(lock.throughput, lock.row->throughput);
  }
}

// LOCK XADD/CMPXCHG on memory take LOCK ADD [m32], r32 (Esther line 81: 13 clocks); XCHG
// [m32], r32 is XCHG r32, [m32] (line 64).
TEST(X86Measured, ResolveLockedAndSymmetricForms) {
  const InsnCost lock =
      resolve_insn_cost(X86Core::Esther, "LOCK CMPXCHG m32, r32", InsnClass::Other, true);
  EXPECT_EQ(lock.basis, CostBasis::AluAnalogue);
  ASSERT_NE(lock.row, nullptr);
  EXPECT_STREQ(lock.row->source, at(kEsther, 81).c_str());
  EXPECT_EQ(lock.throughput, 13.0);
  const InsnCost x = resolve_insn_cost(X86Core::Esther, "XCHG m32, r32", InsnClass::AluRmw, true);
  EXPECT_EQ(x.basis, CostBasis::Measured);
  ASSERT_NE(x.row, nullptr);
  EXPECT_STREQ(x.row->source, at(kEsther, 64).c_str());
}

// CMP r32, [m32] is not timed: CMP r32, r32 (T 1.00c, Esther line 116) after a load.
TEST(X86Measured, ResolveRegisterFormPlusLoad) {
  const MeasuredCore& e = measured_core(X86Core::Esther);
  const InsnCost c = resolve_insn_cost(X86Core::Esther, "CMP r32, m32", InsnClass::AluLoad, true);
  EXPECT_EQ(c.basis, CostBasis::RegisterPlusLoad);
  ASSERT_NE(c.row, nullptr);
  EXPECT_STREQ(c.row->key, "CMP r32, r32");
  EXPECT_EQ(c.latency, e.load_use.clocks + 1.0);
  EXPECT_EQ(c.throughput, 1.0);
  // Used as data, the flags wait the compare, not the address part of the chase.
  EXPECT_EQ(c.data_latency, 1.0);
  // Memory operand 0 of CMP is a source too: CMP [m32], imm8 -> CMP r32, r32 + load.
  const InsnCost m = resolve_insn_cost(X86Core::Esther, "CMP m32, i8", InsnClass::AluLoad, true);
  EXPECT_EQ(m.basis, CostBasis::RegisterPlusLoad);
  EXPECT_EQ(m.latency, e.load_use.clocks + 1.0);
  // DIV [m32]: the divide (line 333, 51 clocks) after the load.
  const InsnCost d = resolve_insn_cost(X86Core::Esther, "DIV m32", InsnClass::Div, true);
  EXPECT_EQ(d.basis, CostBasis::RegisterPlusLoad);
  EXPECT_EQ(d.latency, e.load_use.clocks + 51.0);
  EXPECT_EQ(d.throughput, 51.0);
}

// Nothing in the dumps times a branch: the class table applies.
TEST(X86Measured, ResolveFallsBackToClassTable) {
  for (X86Core core : kCores) {
    const X86Costs& t = x86_costs_for_core(x86_core_name(core));
    const InsnCost c = resolve_insn_cost(core, "JNE i8", InsnClass::Branch, false);
    EXPECT_EQ(c.basis, CostBasis::Class);
    EXPECT_STREQ(cost_basis_name(c.basis), "class table");
    EXPECT_EQ(c.row, nullptr);
    EXPECT_EQ(c.throughput, t.cost(InsnClass::Branch));
    EXPECT_EQ(c.latency, t.cost(InsnClass::Branch));
    // A class-costed load's result waits for the load-use latency.
    const InsnCost l = resolve_insn_cost(core, "", InsnClass::Load, true);
    EXPECT_EQ(l.latency, measured_core(core).load_use.clocks);
  }
}

// "REP MOVSD  BW in L1D: 3.92 B/c" (Esther line 414): 4 / 3.92 clocks per element, plus a
// start-up (a choice: the class table's RepStartup) once.
TEST(X86Measured, RepStringStartupPlusPerElement) {
  const RepStringCost c = rep_string_cost(X86Core::Esther, "REP MOVSD");
  ASSERT_NE(c.row, nullptr);
  EXPECT_STREQ(c.row->source, at(kEsther, 414).c_str());
  EXPECT_EQ(c.row->element_bytes, 4u);
  EXPECT_DOUBLE_EQ(c.per_element, 4 / 3.92);
  EXPECT_EQ(c.startup, x86_costs_for_core("Esther").cost(InsnClass::RepStartup));
  EXPECT_STRNE(c.startup_source, "");
  for (uint64_t n : {0ull, 1ull, 7ull, 1000ull, 1000000ull}) {
    EXPECT_EQ(c.clocks(n), static_cast<uint64_t>(std::llround(c.startup + n * 4 / 3.92))) << n;
    EXPECT_EQ(rep_string_clocks(X86Core::Esther, "REP MOVSD", n), c.clocks(n));
  }
  // Charged once, the start-up does not scale with the count.
  EXPECT_LT(c.clocks(2000) - c.clocks(1000), c.clocks(1000));
  // Nano's fast strings: "REP MOVSB  BW in L1D: 12.01 B/c" (line 412).
  const RepStringCost nano = rep_string_cost(X86Core::Nano, "REP MOVSB");
  ASSERT_NE(nano.row, nullptr);
  EXPECT_STREQ(nano.row->source, at(kNano, 412).c_str());
  EXPECT_DOUBLE_EQ(nano.per_element, 1 / 12.01);
}

TEST(X86Measured, RepStringFallbacks) {
  // REPNE CMPSB is timed only as REPE CMPSB (Esther line 394: 0.66 B/c).
  const RepStringCost c = rep_string_cost(X86Core::Esther, "REPNE CMPSB");
  ASSERT_NE(c.row, nullptr);
  EXPECT_STREQ(c.row->key, "REPE CMPSB");
  EXPECT_DOUBLE_EQ(c.per_element, 1 / 0.66);
  // No 64-bit strings on Esther: the class table's String step per element.
  const RepStringCost q = rep_string_cost(X86Core::Esther, "REP MOVSQ");
  EXPECT_EQ(q.row, nullptr);
  EXPECT_EQ(q.per_element, x86_costs_for_core("Esther").cost(InsnClass::String));
}

}  // namespace
}  // namespace padlock::timing
