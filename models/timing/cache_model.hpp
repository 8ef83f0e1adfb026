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
//
// A stream is walked line by line: only the 16-byte steps that reach a new line change the
// caches (the others touch the line the step before touched). For a stream much longer
// than the caches the walk stops once the caches' state repeats, shifted by the stream's
// advance, over one period of lines; the remaining periods then cost what the first one
// did, line for line, so they are added without walking them (`stream_by_steps` is the
// definition; tests/unit/models/timing/cache_model_test.cpp compares the two). A stream that hit
// L1 on every line leaves its lines most recent in its own order; the same stream again,
// with no other access in between, hits alike and leaves the same order, so it costs what
// it cost and is not walked.
//
// Calls over data that goes on past them repeat too: a loop of 1 MiB steps from one buffer
// into another, or the same 64 MiB buffers again. A stream moved by whole periods (or not
// at all) from a recorded one, from the caches that one started from moved alike, does
// exactly what it did, moved: its cost is the same. Proven by the stream right after it,
// the record also says how the caches move (in O(1): a level keeps its lines relative to
// a base), and the calls that follow by the same advance are not compared again.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/cpu_model.hpp"
#include "models/state_io.hpp"

namespace padlock::timing {

// One cache level: sets of `ways` lines, true LRU, write-back. Each set keeps its ways in
// order of use besides their stamps, so that encode() reads the LRU order without sorting.
class CacheLevel {
 public:
  CacheLevel(uint64_t bytes, uint64_t line, unsigned ways);

  struct Victim {
    bool valid = false;
    bool dirty = false;
    uint64_t line = 0;  // line number (address / line size)
  };
  // Hit: the line becomes most recent (and dirty on a write). Miss: nothing changes.
  bool touch(uint64_t abs_line, bool write) {
    const uint64_t line = abs_line - base_;
    Way* w = recent_;
    if (w == nullptr || w->stamp == 0 || w->line != line) {
      const uint64_t s = set_index(abs_line);
      w = find_rel(s, line);
      if (w == nullptr) return false;
      move_to_front(s, position(s, static_cast<uint16_t>(w - &ways_v_[s * ways_])));
      recent_ = w;
    }
    // recent_ is the way used last in the whole level: already first in its set's order.
    w->stamp = ++clock_;
    w->dirty |= write;
    return true;
  }
  // Inserts a line known to be absent; returns the line it evicted.
  Victim insert(uint64_t line, bool dirty);
  // Removes a line if present (exclusive L2 handing it to L1); reports its dirty bit.
  bool take(uint64_t line, bool* dirty);
  void clear();

  uint64_t sets() const { return sets_; }
  unsigned ways() const { return ways_; }

  // The contents in LRU order set by set, lines less `shift`: two states that encode alike
  // behave alike on any accesses shifted by `shift` lines (a multiple of sets()).
  void encode(uint64_t shift, std::vector<uint64_t>& out) const;
  // Adds `delta` (a multiple of sets()) to every line held: O(1), the base moves.
  void shift_lines(uint64_t delta) { base_ += delta; }

  // The lines, their LRU stamps and dirty bits (a level of the same geometry loads them).
  void save(StateWriter& w) const;
  void load(StateReader& r);

 private:
  struct Way {
    uint64_t line = ~0ull;
    uint64_t stamp = 0;  // 0: empty
    bool dirty = false;
  };
  // Of an absolute line (a relative one may have wrapped below 0).
  uint64_t set_index(uint64_t line) const { return pow2_ ? line & (sets_ - 1) : line % sets_; }
  // `line` relative to base_ (equality holds modulo 2^64).
  Way* find_rel(uint64_t s, uint64_t line) {
    Way* set = &ways_v_[s * ways_];
    for (unsigned i = 0; i < ways_; ++i) {
      if (set[i].line == line && set[i].stamp != 0) return &set[i];
    }
    return nullptr;
  }
  // Where way `way` of set `s` stands in the set's order, and moving the way at `at` to
  // the front (most recent).
  unsigned position(uint64_t s, uint16_t way) const;
  void move_to_front(uint64_t s, unsigned at);
  // The order rebuilt from the stamps (after load()).
  void rebuild_order();

  uint64_t sets_;
  bool pow2_;  // sets_ is a power of two
  // Ways hold lines less base_ (shift_lines moves it; save() writes absolute lines).
  uint64_t base_ = 0;
  unsigned ways_;
  uint64_t clock_ = 0;
  std::vector<Way> ways_v_;
  // Per set, the indices of its held ways from most to least recent (held_[s] of them),
  // then the empty ones.
  std::vector<uint16_t> order_;
  std::vector<uint16_t> held_;
  // The way touched or filled last: a stream touches the same line several times running.
  // Its test needs no invalidation, since a line is held by at most one way.
  Way* recent_ = nullptr;
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
  MemCost stream(uint64_t in, uint64_t in_len, uint64_t out, uint64_t out_len) {
    // The same stream again after one that hit L1 throughout: nothing moved since, so
    // it hits again (a loop of short instructions over one buffer asks this each time).
    const AllHit& h = all_hit_;
    if (h.valid && h.in == in && h.in_len == in_len && h.out == out && h.out_len == out_len) {
      unwalked_lines_ += h.cost.l1_hits;
      return h.cost;
    }
    return stream_walk(in, in_len, out, out_len);
  }
  // The same stream walked one 16-byte step at a time: the definition stream() follows.
  MemCost stream_by_steps(uint64_t in, uint64_t in_len, uint64_t out, uint64_t out_len);

  // Clocks of an instruction whose engine needs `engine` clocks with everything in L1, given
  // its stream cost: store stalls add; line transfers overlap the engine by
  // stream_overlap * min(engine, miss clocks).
  double combine(double engine, const MemCost& m) const {
    const double hidden = p_.stream_overlap.value * std::min(engine, m.miss_clocks);
    return engine + m.store_clocks + m.miss_clocks - hidden;
  }

  void clear();
  // Both levels and the repeated-stream memo (Machine.snapshot()): restored, the same
  // accesses cost the same clocks.
  void save(StateWriter& w) const;
  void load(StateReader& r);
  const MemoryParams& params() const { return p_; }
  // Lines of streams whose cost came from a repeated period or a repeated stream instead
  // of the walk.
  uint64_t unwalked_lines() const { return unwalked_lines_; }
  uint64_t line_bytes() const { return line_; }

 private:
  double line_access(uint64_t line, bool write, MemCost& c) {
    if (l1_.touch(line, write)) {
      ++c.l1_hits;
      return 0;
    }
    return line_miss(line, write, c);
  }
  double line_miss(uint64_t line, bool write, MemCost& c);
  // stream() past its repeat of an all-hit stream.
  MemCost stream_walk(uint64_t in, uint64_t in_len, uint64_t out, uint64_t out_len);
  uint64_t line_of(uint64_t addr) const {
    return line_shift_ >= 0 ? addr >> line_shift_ : addr / line_;
  }
  uint64_t line_start(uint64_t line) const { return line * line_; }

  // One stream's walk (cache_model.cpp).
  struct Walk;
  void step(Walk& w, uint64_t i);
  uint64_t stalled_stores(uint64_t out_len) const;
  void encode_state(const Walk& w, uint64_t shift, std::vector<uint64_t>& out) const;

  MemoryParams p_;
  uint64_t line_;
  int line_shift_;        // log2(line_) when a power of two, else -1
  double line_transfer_;  // clocks to move one line to or from memory
  CacheLevel l1_, l2_;
  bool exclusive_;
  uint64_t period_lines_;  // lines after which both levels' sets repeat
  // Scratch of the steady-state search, sized once: two encoded states and the clocks each
  // line access of one period added, in order.
  std::vector<uint64_t> state_a_, state_b_;
  std::vector<double> period_clocks_;
  bool recording_ = false;
  // A stream walked from a state encoded before it (`start`): from any state equal to
  // that one moved by whole periods, the stream so moved costs what it cost. Proven once
  // the stream after it, with nothing in between, found the state it left equal to its
  // start moved by `advance` lines: then such a repeat leaves the state before it moved by
  // `advance`. A candidate (cand_) becomes the proven one (ref_); a proven one stays until
  // then. Not saved: they only spare walks.
  struct Repeat {
    bool recorded = false;
    uint64_t in = 0, in_len = 0, out = 0, out_len = 0;
    uint64_t advance = 0;
    MemCost cost;
    std::vector<uint64_t> start;
    bool same_lengths(uint64_t il, uint64_t ol) const {
      return recorded && in_len == il && out_len == ol;
    }
  } ref_, cand_;
  // The last cache operation recorded cand_ (just_recorded_), or was a repeat of ref_ at
  // last_in_/last_out_ (settled_: the next one moved by `advance` need not compare).
  bool just_recorded_ = false, settled_ = false;
  uint64_t last_in_ = 0, last_out_ = 0;
  uint64_t last_in_len_ = ~0ull, last_out_len_ = ~0ull;  // the last stream's lengths
  // The lines from `from_in` to `in`, when that is whole periods and the output (if any)
  // moved alike.
  bool moved_from(uint64_t from_in, uint64_t from_out, uint64_t in, uint64_t out, uint64_t out_len,
                  uint64_t* lines) const;
  MemCost take_repeat(uint64_t in, uint64_t out);
  void forget_repeats();
  uint64_t unwalked_lines_ = 0;
  // The last cache operation, when it was a stream that hit L1 on every line.
  struct AllHit {
    bool valid = false;
    uint64_t in, in_len, out, out_len;
    MemCost cost;
  } all_hit_;
};

}  // namespace padlock::timing
