// Capstone instruction -> what the x86 timing model needs of it (models/timing/
// x86_measured.hpp, x86_block_model.hpp): its normalised key ("ADD m32, r32"), the class
// that applies when no measured figure does, the registers it reads and writes, whether
// it loads, and for a REP string instruction the key of its REP row ("REP MOVSD").
// Used once per translated block (emulator/cpu/block_cache.cpp).
#pragma once

#include <capstone/capstone.h>

#include <string_view>

#include "models/timing/x86_block_model.hpp"

namespace padlock::emu {

struct InsnTimingInfo {
  timing::InsnClass cls = timing::InsnClass::Other;
  char key[48] = {};          // "" when the instruction has no key form (then cls applies)
  timing::RegMask reads = 0;  // as data
  timing::RegMask writes = 0;
  timing::RegMask addr_reads = 0;  // to form a memory address (base, index)
  bool reads_memory = false;
  bool sse = false;  // an SSE instruction: waits for ACE (§3.3 overlap)
  // REP string instructions (REP MOVS/STOS/LODS, REPE/REPNE CMPS/SCAS).
  bool rep_string = false;
  char rep_key[16] = {};     // "REP MOVSD", "REPE CMPSB" ...
  bool rep_whole = false;    // REP MOVS or REP STOS: one loop, charged once (Process)
  unsigned count_bits = 32;  // width of the count register (CX/ECX/RCX, address size)

  std::string_view key_view() const { return key; }
  std::string_view rep_key_view() const { return rep_key; }
};

// `insn` must have been decoded with CS_OPT_DETAIL on, with handle `cs`.
InsnTimingInfo describe_insn(csh cs, const cs_insn& insn, bool guest64);

// The block model's view of the instruction on `core`.
timing::BlockInsn block_insn(timing::X86Core core, const InsnTimingInfo& info);

}  // namespace padlock::emu
