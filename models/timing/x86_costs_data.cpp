// Per-core x86 issue clocks by class (models/timing/x86_costs.hpp): the fallback for
// instructions without a measured figure (models/timing/x86_measured.hpp). The guide gives
// none; every figure is a choice with the shape of a single-issue in-order x86 pipeline
// (Nehemiah, Esther) or a wider out-of-order one (Nano), calibrated where noted on the
// 16-64 B rows of the §3.3 throughput tables through the BAES loop (bench/guest/baes.c,
// docs/timing.md). Classes that the measured rows now cover in practice (ALU, loads,
// stores, PUSHA/POPA ...) keep their entries for forms the dumps do not time.
#include <cstring>

#include "models/timing/x86_costs.hpp"

namespace padlock::timing {

namespace {

constexpr const char* kShape = "choice: in-order single-issue pipeline, L1 hit";
constexpr const char* kCal = "choice: calibrated on the §3.3 16-64 B rows (BAES loop)";
// One clock, not two: with two, Gladman's 1-block calls (about ten branches each) came out
// 15 % slow, and the §3.3 rows kept as many cells over 10 % (docs/timing.md, "x86 costs").
constexpr const char* kBranch =
    "choice: a conditional branch holds the issue slot one clock (both silicon sources)";
// Calls and returns likewise: at 2 and 3 clocks Gladman's software CTR (a call through a
// pointer per block) came out 16 % slow at 1000 blocks, and his 1-block ECB calls 10 %.
constexpr const char* kTransfer =
    "choice: a predicted call or return holds the issue slot one clock (Gladman's tables)";

// Order = InsnClass.
constexpr X86Costs esther_costs() {
  X86Costs c{};
  c.core = "Esther";
  c.clocks = {{
      {1, kShape},                                                     // Alu
      {1, kShape},                                                     // Mov
      {1, kShape},                                                     // Lea
      {1, kShape},                                                     // Shift
      {1, kShape},                                                     // Load
      {1, kShape},                                                     // Store
      {2, kShape},                                                     // AluLoad
      {3, kShape},                                                     // AluRmw
      {1, kShape},                                                     // Push
      {1, kShape},                                                     // Pop
      {9, kCal},                                                       // PushAll: 8 stores + setup
      {9, kCal},                                                       // PopAll: 8 loads + setup
      {3, "choice: pipelined multiplier"},                             // Mul
      {24, "choice: iterative divider"},                               // Div
      {1, kBranch},                                                    // Branch (average)
      {1, kShape},                                                     // Jump
      {3, "choice: no indirect target prediction"},                    // JumpIndirect
      {1, kTransfer},                                                  // Call
      {1, kTransfer},                                                  // Ret
      {1, kShape},                                                     // CmovSet
      {2, "choice: microcoded string step"},                           // String
      {6, "choice: microcode entry of a REP string instruction"},      // RepStartup
      {3, "choice: x87 add/mul latency, not pipelined"},               // X87
      {1, kShape},                                                     // Mmx
      {2, "choice: 64-bit SSE data path, 128-bit ops in two halves"},  // Sse
      {4, "choice: microcoded flag transfers (pushf/popf)"},           // Flags
      {150, "choice: user/kernel round trip of a short system call"},  // Syscall
      {30, "choice: serializing microcode (cpuid, rdtsc, fences)"},    // Serializing
      {1, kShape},                                                     // Nop
      {2, "choice: microcoded or multi-uop forms"},                    // Other
  }};
  return c;
}

constexpr X86Costs nehemiah_costs() {
  X86Costs c = esther_costs();
  c.core = "Nehemiah";
  c.clocks[static_cast<size_t>(InsnClass::PushAll)] = {8, kCal};
  c.clocks[static_cast<size_t>(InsnClass::PopAll)] = {8, kCal};
  return c;
}

// Nano (Isaiah) is superscalar and out of order: simple operations overlap.
constexpr X86Costs nano_costs() {
  X86Costs c = esther_costs();
  c.core = "Nano";
  constexpr const char* kOoo = "choice: 3-wide out-of-order core, simple ops overlap";
  for (InsnClass k : {InsnClass::Alu, InsnClass::Mov, InsnClass::Lea, InsnClass::Shift,
                      InsnClass::Load, InsnClass::Store, InsnClass::Push, InsnClass::Pop,
                      InsnClass::Jump, InsnClass::CmovSet, InsnClass::Nop, InsnClass::Mmx}) {
    c.clocks[static_cast<size_t>(k)] = {0.5, kOoo};
  }
  c.clocks[static_cast<size_t>(InsnClass::AluLoad)] = {1, kOoo};
  c.clocks[static_cast<size_t>(InsnClass::AluRmw)] = {1.5, kOoo};
  c.clocks[static_cast<size_t>(InsnClass::Sse)] = {1, kOoo};
  c.clocks[static_cast<size_t>(InsnClass::Branch)] = {1, kOoo};
  return c;
}

constexpr X86Costs kEsther = esther_costs();
constexpr X86Costs kNehemiah = nehemiah_costs();
constexpr X86Costs kNano = nano_costs();

// Nano's descendants (docs/zhaoxin.md, "x86 costs"): Nano's classes under their own name
// (choice: the classes are the fallback for forms their dumps do not time).
constexpr X86Costs nano_descendant(const char* core) {
  X86Costs c = nano_costs();
  c.core = core;
  return c;
}
constexpr X86Costs kDescendants[] = {nano_descendant("Nano3000"), nano_descendant("ZX-C"),
                                     nano_descendant("LuJiaZui")};

constexpr const char* kNames[kInsnClassCount] = {
    "alu",      "mov",      "lea",     "shift",       "load",          "store",
    "alu-load", "alu-rmw",  "push",    "pop",         "pusha",         "popa",
    "mul",      "div",      "branch",  "jump",        "jump-indirect", "call",
    "ret",      "cmov-set", "string",  "rep-startup", "x87",           "mmx",
    "sse",      "flags",    "syscall", "serializing", "nop",           "other"};

}  // namespace

const char* insn_class_name(InsnClass c) {
  return c < InsnClass::Count ? kNames[static_cast<size_t>(c)] : "?";
}

const X86Costs& x86_costs_for_core(const char* core) {
  if (core != nullptr && std::strcmp(core, "Nehemiah") == 0) return kNehemiah;
  if (core != nullptr && std::strcmp(core, "Nano") == 0) return kNano;
  for (const X86Costs& d : kDescendants) {
    if (core != nullptr && std::strcmp(core, d.core) == 0) return d;
  }
  return kEsther;
}

const X86Costs& x86_costs_for(const CpuModel& cpu) {
  return x86_costs_for_core(cpu.core);
}

uint32_t BlockCost::clocks(const X86Costs& costs) const {
  double sum = 0;
  for (size_t i = 0; i < kInsnClassCount; ++i) sum += count[i] * costs.clocks[i].value;
  const double r = sum + 0.5;
  return r < 1 && insns > 0 ? 1u : static_cast<uint32_t>(r);
}

}  // namespace padlock::timing
