// Clocks of a translated block of ordinary x86 code, from per-instruction latency and
// reciprocal throughput (models/timing/x86_measured.hpp) and register dependencies.
//
// In-order cores (Nehemiah, Esther issue one instruction at a time):
//   issue(i) = max(issue(i-1) + T(i-1), ready(r) for every register r that i reads,
//                  addr_ready(r) for every register r that forms i's memory address)
//   ready(w) = issue(i) + Ldata(i), addr_ready(w) = issue(i) + L(i) for every w i writes
//   block    = max(issue(last) + T(last), ready(w) for every w written)
// T is the time an instruction holds the single issue slot; L the measured latency, which
// for a load is a pointer chase (its value forms the next load's address: the load-use
// latency); Ldata the latency to a use as data, shorter for loads (InsnCost::data_latency,
// a choice). The block ends when its results are ready, because each block is costed
// alone (registers ready on entry).
//
// Out-of-order core (Nano): block = max(sum of T, longest dependency chain), the chain's
// links costing as above; the core overlaps everything else.
//
// Memory dependencies (a load of what a store just wrote) are not modelled; the cache model
// (models/timing/cache_model.hpp) adds misses where it is enabled. Runs once per translated
// block: no allocation, fixed-size state.
#pragma once

#include <array>
#include <cstdint>

#include "models/timing/x86_measured.hpp"

namespace padlock::timing {

// Architectural registers as bits. Sub-registers (AL, AX, EAX, RAX) are one register;
// EFLAGS is one register; x87 stack registers are named as Capstone names them (st(i)),
// ignoring the stack rotation.
namespace reg {
inline constexpr unsigned kGpr = 0;     // 16: rax rcx rdx rbx rsp rbp rsi rdi r8..r15
inline constexpr unsigned kFlags = 16;  // 1
inline constexpr unsigned kSt = 17;     // 8: st(0)..st(7)
inline constexpr unsigned kMm = 25;     // 8: mm0..mm7
inline constexpr unsigned kXmm = 33;    // 16: xmm0..xmm15
inline constexpr unsigned kCount = 49;
}  // namespace reg
using RegMask = uint64_t;
inline constexpr RegMask reg_bit(unsigned r) {
  return RegMask{1} << r;
}

// One instruction as the block model sees it: the registers it reads as data, those it
// reads to form a memory address (base, index), and those it writes.
struct BlockInsn {
  InsnCost cost;
  RegMask reads = 0;
  RegMask writes = 0;
  RegMask addr_reads = 0;
};

class BlockTimer {
 public:
  explicit BlockTimer(X86Core core) : in_order_(in_order(core)) {}

  void add(const BlockInsn& insn);
  // The block's clocks so far (unrounded).
  double clocks() const;
  // Rounded once; at least 1 for a non-empty block.
  uint32_t rounded_clocks() const;
  uint32_t insns() const { return insns_; }
  // When the last instruction added issued (out of order: when its operands were ready).
  double last_issue() const { return last_issue_; }

 private:
  bool in_order_;
  uint32_t insns_ = 0;
  std::array<double, reg::kCount> ready_{};       // as data
  std::array<double, reg::kCount> addr_ready_{};  // as an address
  double last_issue_ = 0;
  double next_issue_ = 0;      // in order: earliest issue of the next instruction
  double last_ready_ = 0;      // latest result of the block
  double throughput_sum_ = 0;  // out of order
};

}  // namespace padlock::timing
