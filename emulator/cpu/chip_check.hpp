// The chip check: an instruction whose CPUID feature the modelled chip does not report
// is an invalid opcode there (#UD), as on the chip: SSE2 on a Nehemiah, SSSE3 on an
// Esther. Unicorn's CPU model covers at least the model's features (cpu_features.hpp), so
// such an instruction would otherwise run. Each translated block is checked once, with
// Capstone, when it is decoded (BlockCache); nothing is checked per executed instruction.
#pragma once

#include <capstone/capstone.h>

#include <cstdint>

#include "models/padlock.hpp"

namespace padlock::emu {

// A CPUID feature bit: leaf, register (0 EAX .. 3 EDX) and bit, with the name Linux's
// /proc/cpuinfo gives it where there is one.
struct CpuidFeature {
  uint32_t leaf;
  uint8_t reg;
  uint8_t bit;
  const char* name;
};

// The features the chip reports: the leaves an instruction can need, read once.
class ChipFeatures {
 public:
  explicit ChipFeatures(const Padlock& padlock);
  bool has(const CpuidFeature& f) const;

 private:
  uint32_t leaf1_[4] = {}, leaf7_[4] = {}, ext1_[4] = {};
};

// The first feature `insn` (decoded with CS_OPT_DETAIL) needs that `chip` lacks; nullptr
// when it needs none or the chip has them all.
const CpuidFeature* missing_feature(const cs_insn& insn, const ChipFeatures& chip);

}  // namespace padlock::emu
