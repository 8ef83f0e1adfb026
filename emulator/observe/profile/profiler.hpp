// --profile: where the modelled cycles go, per function, with call edges, written in
// callgrind format (callgrind_annotate, KCachegrind).
//
// Costs are attributed per translated block, never per instruction: at each block entry
// the virtual time that passed since the previous block entry belongs to the previous
// block (its instructions, the PadLock instruction that ended it, a system call it made),
// minus PadLock time, which is booked at the PadLock instruction's own address. Calls
// and returns come from how each block ends (BlockInfo::exit, decoded once per block): a
// block ending in CALL pushes a shadow frame when the next block starts; a block ending
// in RET pops back to the frame whose return address the next block starts at (frames
// left by longjmp or a non-returning call are popped with it; a RET to an address no
// frame expects pops nothing). Each popped frame adds its inclusive cost, the totals
// between its call and its return, to its call edge.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "emulator/cpu/block_cache.hpp"
#include "emulator/observe/profile/object_map.hpp"

namespace padlock::emu::profile {

// The events of the profile, in file order.
enum Event : size_t {
  kCyc,       // modelled cycles (virtual time)
  kIr,        // guest instructions executed
  kPlIns,     // PadLock instructions executed
  kPlCyc,     // cycles charged by PadLock instructions (Outcome.cycles)
  kPlBytes,   // bytes processed by PadLock instructions
  kPlReload,  // ACE key and control-word reloads (EFLAGS[30] was 0, §1.8)
  kPlIntr,    // PadLock instructions stopped by an interrupt (§1.7)
  kEventCount
};
using Costs = std::array<uint64_t, kEventCount>;

struct EventInfo {
  const char* name;
  const char* description;
};
extern const EventInfo kEvents[kEventCount];

class Profiler {
 public:
  explicit Profiler(const ObjectMap& objects);

  // Hot path: a translated block starts executing at virtual time `now`.
  void on_block(const BlockInfo& b, uint64_t now) {
    cur_->costs[kCyc] += now - last_now_ - excluded_;
    last_now_ = now;
    excluded_ = 0;
    if (pending_ != BlockExit::Other) control_flow(b.address);
    BlockCost* rec = record(b);
    rec->costs[kIr] += b.insns;
    total_ir_ += b.insns;
    cur_ = rec;
    pending_ = b.exit;
    if (pending_ == BlockExit::Call) {
      call_site_ = b.address + b.exit_offset;
      return_to_ = b.address + b.size;
      caller_ = rec->fn;
    }
  }

  // A batch of Unicorn's block log (Process::replay_block_log): entries (block_log::entry)
  // naming blocks by index into `blocks` (nblocks of them), the first starting at virtual time
  // `now`, each the next. The same as on_block for each; blocks that neither call nor return (nor
  // follow one that does) are only counted, and their records booked once per batch.
  void on_block_log(const uint64_t* begin, const uint64_t* end, const BlockInfo* const* blocks,
                    size_t nblocks, uint64_t now);
  // A PadLock instruction at `pc` charged `cycles` (Outcome.cycles) and held the clock
  // from virtual time t0 to t1 (t1 - t0 is less than `cycles` when integer code may
  // overlap the unit's work, §3.3).
  void on_padlock(uint64_t pc, uint64_t t0, uint64_t t1, uint64_t cycles, uint64_t bytes,
                  bool key_reloaded, bool interrupted);

  // End of the run at virtual time `now`: books the last block and closes open frames.
  void finish(uint64_t now);

  // The callgrind file. `cmd` is the guest command line for the cmd: line.
  void write(FILE* out, const std::string& cmd, const std::string& creator) const;

  size_t max_depth() const { return max_depth_; }

 private:
  struct BlockCost {
    uint64_t addr = 0;
    uint32_t fn = 0;
    uint64_t generation = 0;
    Costs costs{};
  };
  struct Frame {
    uint64_t return_to;
    uint32_t edge;
    Costs at_call;
  };
  struct Edge {
    uint32_t caller_fn, callee_fn;
    uint64_t call_site, callee_entry;
    uint64_t calls = 0;
    Costs inclusive{};
  };
  struct EdgeKey {
    uint64_t call_site, callee_entry;
    bool operator==(const EdgeKey&) const = default;
  };
  struct EdgeKeyHash {
    size_t operator()(const EdgeKey& k) const {
      return std::hash<uint64_t>()(k.call_site * 0x9E3779B97F4A7C15ull ^ k.callee_entry);
    }
  };

  BlockCost* find(uint64_t addr) {
    Slot& s = fast_[(addr ^ (addr >> 12)) & (kFastSlots - 1)];
    if (s.addr == addr && s.index != 0 && blocks_[s.index].generation == objects_.generation()) {
      return &blocks_[s.index];
    }
    const uint32_t index = slow_find(addr);
    s = {addr, index};
    return &blocks_[index];
  }
  // find(), remembered in the BlockInfo for the current object-map generation.
  BlockCost* record(const BlockInfo& b) {
    if (b.profile_record != 0 && b.profile_generation == objects_.generation()) {
      return &blocks_[b.profile_record];
    }
    BlockCost* rec = find(b.address);
    b.profile_record = static_cast<uint32_t>(rec - blocks_.data());
    b.profile_generation = objects_.generation();
    return rec;
  }
  uint32_t slow_find(uint64_t addr);
  void control_flow(uint64_t target);
  Costs totals() const;
  void pop_to(size_t depth);

  static constexpr size_t kFastSlots = 1 << 14;
  static constexpr size_t kMaxDepth = 1 << 16;
  struct Slot {
    uint64_t addr = 0;
    uint32_t index = 0;  // 0: empty (blocks_[0] is the "before the first block" record)
  };

  // on_block_log: blocks counted in this batch, by block-log index (block_log::entry).
  struct Count {
    uint64_t runs = 0, cycles = 0;
  };
  void stop_counting(const BlockInfo* const* blocks, uint64_t now);

  const ObjectMap& objects_;
  std::vector<BlockCost> blocks_;
  std::vector<Count> counts_;
  std::vector<uint32_t> counted_;  // indices with runs != 0
  bool counting_ = false;
  uint32_t last_counted_ = 0;
  std::unordered_map<uint64_t, uint32_t> block_index_;
  std::vector<Slot> fast_;
  BlockCost* cur_;
  uint64_t last_now_ = 0, excluded_ = 0;
  uint64_t total_ir_ = 0;
  Costs pl_totals_{};  // the PadLock events (kPlIns.. kPlIntr)

  // The block that just ran ended with a call or a return.
  BlockExit pending_ = BlockExit::Other;
  uint64_t call_site_ = 0, return_to_ = 0;
  uint32_t caller_ = 0;

  std::vector<Frame> stack_;
  size_t max_depth_ = 0;
  uint64_t dropped_calls_ = 0;  // calls deeper than kMaxDepth
  std::vector<Edge> edges_;
  std::unordered_map<EdgeKey, uint32_t, EdgeKeyHash> edge_index_;

  // PadLock instructions: costs at their own address.
  struct PadlockCost {
    uint32_t fn;
    Costs costs{};
  };
  std::unordered_map<uint64_t, PadlockCost> padlock_;
};

}  // namespace padlock::emu::profile
