// ACE clocks (§3.3). REP XCRYPTECB follows the guide's table exactly; the chaining modes
// use a start-up plus per-block cost per CPU model, derived from the measured throughput
// tables (docs/fidelity/ace.md says how).
#pragma once

#include <cstdint>

#include "models/cpu_model.hpp"

namespace padlock::ace {

// Key state on entry, the column of the §3.3 table: EFLAGS[30] = 1, or = 0 with a
// hardware-generated (KEYGN = 0) or memory (KEYGN = 1) schedule.
enum class KeyState : uint8_t { Loaded = 0, Hardware = 1, Memory = 2 };

enum class ChainMode : uint8_t { Cbc = 0, Cfb = 1, Ofb = 2, Ctr = 3 };

class BlockClock {
 public:
  static BlockClock ecb(const AceParams& p, unsigned rounds, uint64_t n, KeyState ks);
  // Chaining modes: start-up + n * per-block (SSE clocks); integer code is released the
  // single-encryption overlap earlier (§3.3: the final overlap "is comparable to the extra
  // clocks available when doing a single encryption"), which depends on the round count.
  // `stores_iv`: the instruction ends by storing its chaining value to memory (§3.1).
  // `digest`: DGEST = 1, every block's output to the same EDI (§3.1).
  static BlockClock chain(const AceParams& p, ChainMode m, bool unaligned, uint64_t n, KeyState ks,
                          unsigned rounds = 10, bool stores_iv = false, bool digest = false);

  // Clocks when k blocks have been processed (interrupt and fault points, k < n).
  uint64_t at(uint64_t k) const;
  // Clocks for the whole instruction: seen by a following SSE/PadLock instruction, and
  // by following integer code (§3.3 overlap).
  uint64_t sse_total() const { return sse_total_; }
  uint64_t int_total() const { return int_total_; }

 private:
  double base_ = 0;
  double per_block_ = 0;
  uint64_t sse_total_ = 0;
  uint64_t int_total_ = 0;
};

// The clocks one block's rounds take: R, the guide's ECB formula, less the part of the
// per-store cost that rounds beyond 10 hide (docs/timing.md, "Rounds").
double round_clocks(const AceParams& p, unsigned rounds);

// Blocks a chaining instruction of n blocks is charged for: n, but aligned CTR rounds up to
// its groups of ctr_interrupt_granularity (§6.6, the ECB pairs of §3.3).
uint64_t ctr_charged_blocks(const AceParams& p, ChainMode m, bool unaligned, uint64_t n);

// §3.3: ECX = 0 takes 10..27 clocks. Ours: the minimum with the key already loaded, the
// maximum when EFLAGS[30] = 0.
uint64_t ecx0_clocks(const AceParams& p, bool key_loaded);

}  // namespace padlock::ace
