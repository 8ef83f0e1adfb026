// The PadLock checker's findings (--check, docs/checker.md): the kinds, as one table, and
// one finding as the checker keeps it. Every Diag of models/diagnostics.hpp is a kind of
// its own (same name); the checker adds the misuses no unit reports on its own.
#pragma once

#include <cstdint>
#include <string>

#include "isa/instruction_table.hpp"
#include "models/diagnostics.hpp"

namespace padlock::emu::check {

enum class Severity : uint8_t { Note, Warning, Error };
const char* severity_name(Severity s);  // "note", "warning", "error" (SARIF levels)

// The checker's own kinds; kinds below kDiagKinds are Diag(i).
enum class Own : uint8_t {
  StaleKey,         // §1.8 EFLAGS[30] = 1 and the control word or key in memory differ
  StaleKeyAddress,  // §1.8 the same values, but at other addresses than those loaded
  OverlapPartial,   // §3.1 input and output overlap without ESI == EDI
  DigestInPlace,    // §3.1 ESI == EDI with DGEST: "not recommended"
  CtrErratum,       // §3.1 ERRATA, §6.6 REP XCRYPTCTR, ECX > 1 on stepping 8
  PrefetchPastEnd,  // §3.1 Nano's input groups reach an unmapped page
  XstoreOverrun,    // §2.1 the bytes XSTORE may store past the request are not writable
  UnitUnavailable,  // §1.2, §1.3 #UD: the unit is absent or disabled (FCR)
  AlignmentFault,   // §3.1, §4.1 #GP: a pointer the instruction needs aligned is not
  FpuNotAvailable,  // §1.2 note #NM: CR0.TS set (ring-0 code without kernel_fpu_begin)
  Count
};

inline constexpr unsigned kDiagKinds = static_cast<unsigned>(Diag::Count);
inline constexpr unsigned kKindCount = kDiagKinds + static_cast<unsigned>(Own::Count);

inline constexpr unsigned kind_of(Diag d) {
  return static_cast<unsigned>(d);
}
inline constexpr unsigned kind_of(Own o) {
  return kDiagKinds + static_cast<unsigned>(o);
}

struct KindInfo {
  const char* name;  // stable identifier (JSON, SARIF rule id)
  Severity severity;
  const char* section;  // the guide's section
  const char* summary;  // one line: what was wrong
  const char* chip;     // one line: what the real chip would do
};

const KindInfo& kind_info(unsigned kind);

// A guest address, symbolized when the run ends.
struct Frame {
  uint64_t pc = 0;
  uint32_t object = UINT32_MAX;  // SourceLookup::object_at(pc) when the frame was recorded
  std::string function;          // empty: unknown
  std::string file;              // empty: no debug information
  unsigned line = 0;
  // System mode: the kernel module holding the function (padlock_aes) and the pc's offset
  // from the function's entry; empty in user mode (docs/system.md, "Kernel symbols").
  std::string module;
  uint64_t offset = 0;
};

struct Finding {
  unsigned kind = 0;
  uint64_t pc = 0;
  uint64_t count = 0;  // occurrences at this PC
  uint64_t first = 0;  // number of the PadLock instruction (0-based) that first raised it
  isa::InsnId insn = isa::InsnId::Count;
  std::string detail;  // what the checker saw, registers and addresses
  Frame frames[5];     // frames[0] is the PC; then the callers found on the stack
  unsigned depth = 1;
};

}  // namespace padlock::emu::check
