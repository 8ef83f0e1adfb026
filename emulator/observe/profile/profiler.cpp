#include "emulator/observe/profile/profiler.hpp"

namespace padlock::emu::profile {

const EventInfo kEvents[kEventCount] = {
    {"Cyc", "modelled cycles (virtual time)"},
    {"Ir", "guest instructions"},
    {"PLIns", "PadLock instructions"},
    {"PLCyc", "PadLock cycles"},
    {"PLBytes", "PadLock bytes processed"},
    {"PLReload", "ACE key reloads"},
    {"PLIntr", "PadLock instructions interrupted"},
};

Profiler::Profiler(const ObjectMap& objects) : objects_(objects), fast_(kFastSlots) {
  // blocks_[0] collects what happens before the first block (nothing, normally).
  blocks_.push_back(BlockCost{0, ObjectMap::kAnonymousFn, objects_.generation(), {}});
  blocks_.reserve(4096);
  cur_ = &blocks_[0];
}

uint32_t Profiler::slow_find(uint64_t addr) {
  const uint32_t fn = objects_.function_at(addr);
  auto it = block_index_.find(addr);
  if (it != block_index_.end()) {
    BlockCost& b = blocks_[it->second];
    if (b.fn == fn) {
      b.generation = objects_.generation();
      return it->second;
    }
  }
  // New code, or other code at a reused address: a record of its own. Growing blocks_
  // may move it, so cur_ is re-pointed by index.
  const size_t cur_index = static_cast<size_t>(cur_ - blocks_.data());
  const uint32_t index = static_cast<uint32_t>(blocks_.size());
  blocks_.push_back(BlockCost{addr, fn, objects_.generation(), {}});
  cur_ = &blocks_[cur_index];
  block_index_[addr] = index;
  return index;
}

Costs Profiler::totals() const {
  Costs t = pl_totals_;
  t[kCyc] = last_now_;
  t[kIr] = total_ir_;
  return t;
}

void Profiler::control_flow(uint64_t target) {
  if (pending_ == BlockExit::Call) {
    if (stack_.size() >= kMaxDepth) {
      ++dropped_calls_;
      return;
    }
    const uint32_t callee = find(target)->fn;
    auto [it, added] =
        edge_index_.try_emplace(EdgeKey{call_site_, target}, static_cast<uint32_t>(edges_.size()));
    if (added) edges_.push_back(Edge{caller_, callee, call_site_, target});
    stack_.push_back(Frame{return_to_, it->second, totals()});
    if (stack_.size() > max_depth_) max_depth_ = stack_.size();
    return;
  }
  // BlockExit::Ret: back to the innermost frame that expects this address.
  for (size_t i = stack_.size(); i-- > 0;) {
    if (stack_[i].return_to == target) {
      pop_to(i);
      return;
    }
  }
}

void Profiler::on_block_log(const uint64_t* p, const uint64_t* end, const BlockInfo* const* blocks,
                            size_t nblocks, uint64_t now) {
  if (counts_.size() < nblocks) counts_.resize(nblocks);
  while (p != end) {
    if (block_log::packed(*p) && pending_ == BlockExit::Other) {
      // Neither this block nor the one before calls or returns: count it and the packed
      // ones after it; their records get runs, cycles and instructions at the end of the
      // batch. The block before them (unless counted too) is owed the time up to here.
      if (!counting_) {
        cur_->costs[kCyc] += now - last_now_ - excluded_;
        excluded_ = 0;
        counting_ = true;
      }
      Count* const counts = counts_.data();
      uint64_t ir = 0;
      uint32_t last = 0;
      do {
        const uint64_t e = *p;
        if (!block_log::packed(e)) break;
        const uint32_t index = block_log::index(e);
        Count& c = counts[index];
        if (c.runs == 0) counted_.push_back(index);
        ++c.runs;
        c.cycles += block_log::cost(e);
        ir += block_log::insns(e);
        now += block_log::cost(e);
        last = index;
      } while (++p != end);
      total_ir_ += ir;
      last_counted_ = last;
      continue;
    }
    const uint64_t e = *p++;
    stop_counting(blocks, now);
    on_block(*blocks[block_log::index(e)], now);
    now += block_log::cost(e);
  }
  stop_counting(blocks, now);
  for (const uint32_t index : counted_) {
    Count& c = counts_[index];
    const BlockInfo& b = *blocks[index];
    BlockCost* rec = record(b);
    rec->costs[kCyc] += c.cycles;
    rec->costs[kIr] += c.runs * b.insns;
    c = Count{};
  }
  counted_.clear();
}

// The counted blocks end at `now`: time from then on is owed to the last of them.
void Profiler::stop_counting(const BlockInfo* const* blocks, uint64_t now) {
  if (!counting_) return;
  counting_ = false;
  cur_ = record(*blocks[last_counted_]);
  last_now_ = now;
}

void Profiler::pop_to(size_t depth) {
  const Costs now = totals();
  while (stack_.size() > depth) {
    const Frame& f = stack_.back();
    Edge& e = edges_[f.edge];
    ++e.calls;
    for (size_t k = 0; k < kEventCount; ++k) e.inclusive[k] += now[k] - f.at_call[k];
    stack_.pop_back();
  }
}

void Profiler::on_padlock(uint64_t pc, uint64_t t0, uint64_t t1, uint64_t cycles, uint64_t bytes,
                          bool key_reloaded, bool interrupted) {
  auto [it, added] = padlock_.try_emplace(pc);
  if (added) it->second.fn = objects_.function_at(pc);
  Costs c{};
  c[kCyc] = t1 - t0;
  c[kPlIns] = 1;
  c[kPlCyc] = cycles;
  c[kPlBytes] = bytes;
  c[kPlReload] = key_reloaded ? 1 : 0;
  c[kPlIntr] = interrupted ? 1 : 0;
  for (size_t k = 0; k < kEventCount; ++k) {
    it->second.costs[k] += c[k];
    if (k != kCyc) pl_totals_[k] += c[k];
  }
  // The block's share of the time since it started excludes this instruction's.
  excluded_ += t1 - t0;
}

void Profiler::finish(uint64_t now) {
  cur_->costs[kCyc] += now - last_now_ - excluded_;
  last_now_ = now;
  excluded_ = 0;
  pending_ = BlockExit::Other;
  pop_to(0);
}

}  // namespace padlock::emu::profile
