// Class cost table of ordinary x86 instructions on the VIA cores: the FALLBACK of the
// measured model. Per-instruction figures measured on our three cores (InstLat dumps,
// models/timing/x86_measured.hpp) take precedence; an instruction takes its class's cost
// here only when the dumps time neither its form nor a close one (resolve_insn_cost says
// which figure applies: CostBasis::Class is this table). In practice that is branches,
// jumps, calls and returns, system calls, and rare forms (ENTER, LOOP ...); the
// RepStartup entry is also the start-up of REP string instructions, which the dumps do
// not measure.
//
// Each instruction falls into one class; a class costs a fixed number of issue clocks on
// a given core, with an L1 hit assumed for memory operands. The guide gives no x86
// timings. The figures are choices (docs/timing.md): the usual shape of a single-issue
// in-order x86 pipeline (one clock for simple operations, a few for multiplies and
// microcoded string/stack forms, tens for divides), scaled per core and calibrated so that
// the BAES loop (bench/guest/baes.c) reproduced the 16-64 B rows of the §3.3 throughput
// tables. Data lives in models/timing/x86_costs_data.cpp.
#pragma once

#include <array>
#include <cstdint>

#include "models/cpu_model.hpp"

namespace padlock::timing {

enum class InsnClass : uint8_t {
  Alu,           // add/sub/and/or/xor/cmp/test/inc/dec/neg/not, register or immediate
  Mov,           // mov/movzx/movsx register-register or immediate, xchg of registers
  Lea,           //
  Shift,         // shifts and rotates, bt*
  Load,          // mov/movzx/movsx reg <- memory
  Store,         // mov memory <- reg/imm
  AluLoad,       // ALU op with a memory source
  AluRmw,        // ALU op with a memory destination (read-modify-write)
  Push,          //
  Pop,           //
  PushAll,       // pusha/pushad
  PopAll,        // popa/popad
  Mul,           // mul/imul
  Div,           // div/idiv
  Branch,        // conditional jump (average of taken and not taken)
  Jump,          // direct jmp
  JumpIndirect,  // jmp reg/mem
  Call,          //
  Ret,           //
  CmovSet,       // cmovcc, setcc
  String,        // movs/stos/lods/cmps/scas (one iteration, also the per-iteration REP cost)
  RepStartup,    // extra cost of a REP prefix on a string instruction
  X87,           // x87 arithmetic
  Mmx,           // MMX
  Sse,           // SSE/SSE2 (register form; a memory operand adds `Load`)
  Flags,         // pushf/popf/sahf/lahf/cld/std/clc/stc/cmc
  Syscall,       // int/sysenter/syscall (user side only: the kernel's work is not modelled)
  Serializing,   // cpuid, rdtsc, lfence/mfence/sfence
  Nop,           //
  Other,         // anything else (bswap, xadd, cmpxchg, bit scans, leave, enter ...)
  Count
};

inline constexpr size_t kInsnClassCount = static_cast<size_t>(InsnClass::Count);

const char* insn_class_name(InsnClass c);

// Issue clocks per class for one core, each a sourced value.
struct X86Costs {
  const char* core = "";
  std::array<Clocks, kInsnClassCount> clocks;
  double cost(InsnClass c) const { return clocks[static_cast<size_t>(c)].value; }
};

// The table for a core ("Nehemiah", "Esther", "Nano": CpuModel::core). Unknown cores get
// Esther's.
const X86Costs& x86_costs_for(const CpuModel& cpu);
const X86Costs& x86_costs_for_core(const char* core);

// The cost of a block as a sum of class costs (the model before the measured one; kept for
// comparison and tests).
struct BlockCost {
  std::array<uint16_t, kInsnClassCount> count{};
  uint32_t insns = 0;
  void add(InsnClass c) {
    ++count[static_cast<size_t>(c)];
    ++insns;
  }
  // Clocks on `costs`, rounded once (fractional class costs are averages).
  uint32_t clocks(const X86Costs& costs) const;
};

}  // namespace padlock::timing
