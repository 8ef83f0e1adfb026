#include "models/timing/x86_block_model.hpp"

#include <algorithm>
#include <bit>

namespace padlock::timing {

void BlockTimer::add(const BlockInsn& insn) {
  ++insns_;
  double sources = 0;  // when every register the instruction reads is ready
  for (RegMask m = insn.reads; m != 0; m &= m - 1) {
    const unsigned r = static_cast<unsigned>(std::countr_zero(m));
    if (r < reg::kCount) sources = std::max(sources, ready_[r]);
  }
  for (RegMask m = insn.addr_reads; m != 0; m &= m - 1) {
    const unsigned r = static_cast<unsigned>(std::countr_zero(m));
    if (r < reg::kCount) sources = std::max(sources, addr_ready_[r]);
  }
  // In order the instruction also waits for the issue slot; out of order only for its
  // operands (the throughput sum bounds the block instead).
  const double issue = in_order_ ? std::max(next_issue_, sources) : sources;
  last_issue_ = issue;
  const double done = issue + insn.cost.data_latency;
  const double addr_done = issue + insn.cost.latency;
  for (RegMask m = insn.writes; m != 0; m &= m - 1) {
    const unsigned r = static_cast<unsigned>(std::countr_zero(m));
    if (r < reg::kCount) {
      ready_[r] = done;
      addr_ready_[r] = addr_done;
    }
  }
  if (insn.writes != 0) last_ready_ = std::max(last_ready_, done);
  next_issue_ = issue + insn.cost.throughput;
  throughput_sum_ += insn.cost.throughput;
}

double BlockTimer::clocks() const {
  return in_order_ ? std::max(next_issue_, last_ready_) : std::max(throughput_sum_, last_ready_);
}

uint32_t BlockTimer::rounded_clocks() const {
  if (insns_ == 0) return 0;
  return std::max(1u, static_cast<uint32_t>(clocks() + 0.5));
}

}  // namespace padlock::timing
