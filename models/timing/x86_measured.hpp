// Measured x86 instruction costs of the VIA and Zhaoxin cores and their lookup.
//
// The figures are InstLat measurements (public in the InstLatx64/InstLatx64 repository,
// folder CentaurHauls/), converted by scripts/import_instlat.py into the generated
// models/timing/x86_measured_data.cpp: per core, one row per normalised instruction form
// ("ADD m32, r32", "BT r32, r32", "MOV r32, m32", "SHL r32, cl") with its latency L and
// reciprocal throughput T in clocks and the "file:line" it comes from; REP string rows as
// bandwidth in L1D; the load-use latency and the MemLat cache and memory latencies.
//
// resolve_insn_cost() turns a key into the L and T the block timing model uses
// (models/timing/x86_block_model.hpp), saying which figure applies: the measured row, a
// measured row of a close form (another immediate size; the register form plus a load; ADD
// for the other simple ALU operations on memory, LOCK ADD for locked read-modify-writes;
// XCHG with its operands swapped), or, for instructions the dumps do not
// time (branches, calls, returns, system calls ...), the class table of
// models/timing/x86_costs.hpp. Lookups run once per translated block, never per
// execution, and allocate nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "models/timing/x86_costs.hpp"

namespace padlock::timing {

// The VIA cores, then the Nano 3000 ("CNB"), ZX-C+ ("CNR") and KX-U6780A ("ZXE",
// LuJiaZui) dumps, which the Zhaoxin models use (docs/zhaoxin.md, "x86 costs").
enum class X86Core : uint8_t { Nehemiah, Esther, Nano, Nano3000, ZxC, LuJiaZui };
inline constexpr size_t kX86CoreCount = 6;

// CpuModel::core ("Nehemiah", "Esther", "Nano", "Nano3000", "ZX-C", "LuJiaZui") to X86Core;
// unknown names get Esther, as x86_costs_for_core does. nehemiah-c5xl (stepping 3) uses
// the stepping-8 dump.
X86Core x86_core(const char* core);
const char* x86_core_name(X86Core core);
// Nano and its descendants issue out of order; Nehemiah and Esther issue one instruction
// at a time in order.
inline bool in_order(X86Core core) {
  return core == X86Core::Nehemiah || core == X86Core::Esther;
}

// One measured instruction form.
struct MeasuredRow {
  const char* key;     // normalised form, e.g. "ADD m32, r32"
  double latency;      // clocks; < 0: the dump gives none ("[no true dep.]", stores)
  double throughput;   // reciprocal throughput, clocks
  const char* source;  // "file:line" in the dump
};

// A REP string instruction: bandwidth in L1D over a long string.
struct RepStringRow {
  const char* key;  // "REP MOVSD", "REPE CMPSB", "REPNE SCASB" ...
  unsigned element_bytes;
  double bytes_per_clock;
  const char* source;
  double per_element() const { return element_bytes / bytes_per_clock; }
};

// A core-level figure; source "" when the dumps do not give it.
struct MeasuredFigure {
  double clocks = 0;
  const char* source = "";
  bool present() const { return source[0] != '\0'; }
};

struct MeasuredCore {
  const char* core;
  std::span<const MeasuredRow> rows;  // sorted by key (strcmp order)
  std::span<const RepStringRow> rep;  // sorted by key
  MeasuredFigure load_use;            // a load's result feeds a dependent instruction
  MeasuredFigure load_throughput;
  MeasuredFigure l1_latency;  // MemLat summary lines
  MeasuredFigure l2_latency;
  MeasuredFigure memory_latency;
};

// Generated data (x86_measured_data.cpp), order = X86Core.
extern const MeasuredCore kMeasuredCores[kX86CoreCount];

inline const MeasuredCore& measured_core(X86Core core) {
  return kMeasuredCores[static_cast<size_t>(core)];
}

// The row with exactly this key, or nullptr.
const MeasuredRow* find_measured(X86Core core, std::string_view key);

// Which figure an instruction's cost comes from.
enum class CostBasis : uint8_t {
  Measured,          // the row of its own key
  OtherImmediate,    // the row of the same form with another immediate size or a register
  RegisterPlusLoad,  // the register form's row, plus the load-use latency
  AluAnalogue,       // ADD's row of the same operand form (SUB/AND/OR/XOR/ADC/SBB/INC/...),
                     // LOCK ADD's for a locked read-modify-write (LOCK XADD, LOCK CMPXCHG)
  Class,             // the class table (models/timing/x86_costs.hpp)
};
const char* cost_basis_name(CostBasis b);

struct InsnCost {
  double latency = 1;       // clocks until the results can be used as an address
  double data_latency = 1;  // ... as data by a following instruction (see resolve_insn_cost)
  double throughput = 1;    // clocks the instruction holds the issue slot
  CostBasis basis = CostBasis::Class;
  const MeasuredRow* row = nullptr;  // the row used (nullptr for Class)
};

// The cost of the instruction with normalised `key` (may be empty) on `core`, falling back
// to `cls`. `reads_memory`: it loads (class fallback: the result waits for the load-use
// latency). Where a row gives no latency, the throughput stands in for it.
InsnCost resolve_insn_cost(X86Core core, std::string_view key, InsnClass cls, bool reads_memory);

// REP string instructions: a start-up once per execution plus a per-element cost. The
// per-element cost is the measured L1D bandwidth (element bytes / bytes per clock); the
// dumps give no start-up, so it is a choice: the class table's RepStartup (microcode entry)
// plus one String step. Without a row for the key (REPE/REPNE are tried for each other)
// the per-element cost is the class table's String step.
//
// An element whose address is not a multiple of its size (a load from ESI for MOVS, LODS,
// CMPS; a store to EDI for MOVS and STOS; SCAS compares at EDI) costs `misaligned` more:
// the measured bandwidth is for aligned strings, and Gladman's unaligned ACE tables copy
// through glibc's memcpy with a misaligned source (docs/timing.md, "REP string
// instructions"; the value is fitted by scripts/calibrate.py).
struct RepStringCost {
  double startup = 0;
  double per_element = 0;
  double misaligned = 0;  // extra clocks per misaligned element
  unsigned element_bytes = 1;
  bool reads_esi = false;             // MOVS, LODS, CMPS
  bool edi_access = false;            // MOVS, STOS, CMPS, SCAS
  const RepStringRow* row = nullptr;  // nullptr: per_element is the class fallback
  const char* startup_source = "";
  const char* misaligned_source = "";
  // Clocks for an execution that processes `count` elements, `misaligned_count` of them
  // misaligned (rounded once).
  uint64_t clocks(uint64_t count, uint64_t misaligned_count = 0) const {
    return static_cast<uint64_t>(startup + per_element * static_cast<double>(count) +
                                 misaligned * static_cast<double>(misaligned_count) + 0.5);
  }
  // Whether the elements of an execution starting at these addresses are misaligned (the
  // addresses move by whole elements, so the first element decides for all).
  bool is_misaligned(uint64_t esi, uint64_t edi) const {
    const uint64_t m = element_bytes - 1;
    return element_bytes > 1 && ((reads_esi && (esi & m)) || (edi_access && (edi & m)));
  }
};
struct MisalignedElement {
  double clocks;
  const char* source;
};
const MisalignedElement& misaligned_element(X86Core core);
// `key`: "REP MOVSD", "REPE CMPSB", "REPNE SCASW" ... (Capstone's mnemonic, upper case).
RepStringCost rep_string_cost(X86Core core, std::string_view key);
inline uint64_t rep_string_clocks(X86Core core, std::string_view key, uint64_t count) {
  return rep_string_cost(core, key).clocks(count);
}

}  // namespace padlock::timing
