// Runs a span of 16-byte blocks of one REP XCRYPT through the AES kernels. Contiguous
// guest ranges go to the kernels in bulk; ranges that wrap, cross host-discontiguous pages
// or overlap ahead of the input (output above input) take the exact path, which follows
// the hardware's order: load one input group, then store its results.
#pragma once

#include <cstdint>

#include "models/ace/aes_core.hpp"
#include "models/unit_interface.hpp"

namespace padlock::ace {

enum class Mode : uint8_t { Ecb, Cbc, Ctr, Cfb, Ofb };

struct BlockJob {
  Mode mode = Mode::Ecb;
  bool decrypt = false;             // CRYPT; selects the inverse cipher only in ECB and CBC
  const RoundKeys* keys = nullptr;  // forward or inverse schedule as the mode needs
  uint64_t in = 0;                  // ESI at the start of the instruction
  uint64_t out = 0;                 // EDI at the start of the instruction
  unsigned out_stride = 16;         // 0 in digest mode (§3.1 DGEST)
  unsigned asz = 32;
  unsigned group = 1;               // input load granularity in blocks (§3.3, prefetch)
  alignas(16) uint8_t iv[16] = {};  // chaining value (see Kernels)
};

// A default Outcome, defined where AceUnit::execute cannot see its value: that copies it
// with vector moves, where GCC clears a new one (144 bytes) with REP STOSQ, whose start-up
// perf showed as a quarter of AceUnit::execute's time in a single-block instruction.
extern const Outcome kFreshOutcome;

// Processes blocks [first, last) of the job; the caller has probed them.
void run_blocks(const Kernels& k, GuestMemory& mem, BlockJob& job, uint64_t first, uint64_t last);

}  // namespace padlock::ace
