// Data caches and memory of a VIA chip (MemoryParams): a set-associative LRU L1D, an L2
// (exclusive on C3/C7: it holds L1 victims) and memory of finite bandwidth. §3.3's clock
// table assumes "everything is in the cache, and there are no ... load and store buffer
// stalls"; the measured tables show what that leaves out: a small per-store cost once the
// store buffer is full, and the drop for buffers beyond the caches (32 KB, 64 KB, 1 MB rows).
//
// Costs, in clocks beyond an L1 hit:
//   L2 hit            l2_hit_clocks per line
//   memory fill       line_bytes / mem_bytes_per_clock per line
//   dirty write-back  line_bytes / mem_bytes_per_clock per line leaving the last level
//   store stall       store_drain_clocks per 16 bytes stored beyond store_buffer_bytes
//                     within one PadLock data stream
#pragma once

#include <cstdint>
#include <vector>

#include "models/cpu_model.hpp"

namespace padlock::timing {

// One cache level: sets of `ways` lines, true LRU, write-back.
class CacheLevel {
 public:
  CacheLevel(uint64_t bytes, uint64_t line, unsigned ways);

  struct Victim {
    bool valid = false;
    bool dirty = false;
    uint64_t line = 0;  // line number (address / line size)
  };
  // Hit: the line becomes most recent (and dirty on a write). Miss: nothing changes.
  bool touch(uint64_t line, bool write);
  // Inserts a line known to be absent; returns the line it evicted.
  Victim insert(uint64_t line, bool dirty);
  // Removes a line if present (exclusive L2 handing it to L1); reports its dirty bit.
  bool take(uint64_t line, bool* dirty);
  void clear();

  uint64_t sets() const { return sets_; }
  unsigned ways() const { return ways_; }

 private:
  struct Way {
    uint64_t line = ~0ull;
    uint64_t stamp = 0;  // 0: empty
    bool dirty = false;
  };
  Way* set_of(uint64_t line) { return &ways_v_[(line % sets_) * ways_]; }
  uint64_t sets_;
  unsigned ways_;
  uint64_t clock_ = 0;
  std::vector<Way> ways_v_;
};

// What a run of accesses cost.
struct MemCost {
  uint64_t l1_hits = 0, l2_hits = 0, mem_fills = 0, writebacks = 0;
  uint64_t stalled_stores = 0;  // 16-byte stores beyond the store buffer
  double miss_clocks = 0;       // L2 hits, fills and write-backs
  double store_clocks = 0;      // store-buffer stalls
  double total() const { return miss_clocks + store_clocks; }
};

class CacheModel {
 public:
  explicit CacheModel(const MemoryParams& p);

  // An ordinary load or store of [addr, addr + len): clocks beyond an L1 hit.
  double access(uint64_t addr, uint64_t len, bool write, MemCost* acc = nullptr);

  // A PadLock data stream (§3.1 REP XCRYPT, §4.1 REP XSHA): `in_len` bytes read from `in`
  // and `out_len` written to `out`, interleaved in 16-byte steps as the engine does (load a
  // block, store a block). Store-buffer stalls apply within the stream.
  MemCost stream(uint64_t in, uint64_t in_len, uint64_t out, uint64_t out_len);

  // Clocks of an instruction whose engine needs `engine` clocks with everything in L1, given
  // its stream cost: store stalls add; line transfers overlap the engine by
  // stream_overlap * min(engine, miss clocks).
  double combine(double engine, const MemCost& m) const;

  void clear();
  const MemoryParams& params() const { return p_; }
  uint64_t line_bytes() const { return line_; }

 private:
  double line_access(uint64_t line, bool write, MemCost& c);

  MemoryParams p_;
  uint64_t line_;
  double line_transfer_;  // clocks to move one line to or from memory
  CacheLevel l1_, l2_;
  bool exclusive_;
};

}  // namespace padlock::timing
