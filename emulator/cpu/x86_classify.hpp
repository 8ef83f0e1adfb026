// Capstone instruction -> cost class of the x86 timing model (models/timing/x86_costs.hpp).
// Used once per translated block (emulator/cpu/block_cache.cpp).
#pragma once

#include <capstone/capstone.h>

#include "models/timing/x86_costs.hpp"

namespace padlock::emu {

struct InsnCostInfo {
  bool sse = false;  // an SSE instruction: waits for ACE (§3.3 overlap)
};

// Adds the instruction's classes to `cost` (an SSE or x87 instruction with a memory operand
// adds a Load too). `insn` must have been decoded with CS_OPT_DETAIL on.
InsnCostInfo classify_insn(const cs_insn& insn, timing::BlockCost& cost);

}  // namespace padlock::emu
