#include "models/timing/cache_model.hpp"

#include <algorithm>
#include <cmath>

namespace padlock::timing {

namespace {
uint64_t as_u64(double v, uint64_t fallback) {
  return v >= 1 ? static_cast<uint64_t>(std::llround(v)) : fallback;
}
}  // namespace

CacheLevel::CacheLevel(uint64_t bytes, uint64_t line, unsigned ways) : ways_(std::max(1u, ways)) {
  sets_ = std::max<uint64_t>(1, bytes / line / ways_);
  ways_v_.resize(sets_ * ways_);
}

bool CacheLevel::touch(uint64_t line, bool write) {
  Way* set = set_of(line);
  for (unsigned i = 0; i < ways_; ++i) {
    if (set[i].stamp != 0 && set[i].line == line) {
      set[i].stamp = ++clock_;
      set[i].dirty |= write;
      return true;
    }
  }
  return false;
}

CacheLevel::Victim CacheLevel::insert(uint64_t line, bool dirty) {
  Way* set = set_of(line);
  Way* lru = &set[0];
  for (unsigned i = 0; i < ways_; ++i) {
    if (set[i].stamp == 0) {
      lru = &set[i];
      break;
    }
    if (set[i].stamp < lru->stamp) lru = &set[i];
  }
  Victim v;
  if (lru->stamp != 0) v = {true, lru->dirty, lru->line};
  *lru = Way{line, ++clock_, dirty};
  return v;
}

bool CacheLevel::take(uint64_t line, bool* dirty) {
  Way* set = set_of(line);
  for (unsigned i = 0; i < ways_; ++i) {
    if (set[i].stamp != 0 && set[i].line == line) {
      if (dirty != nullptr) *dirty = set[i].dirty;
      set[i] = Way{};
      return true;
    }
  }
  return false;
}

void CacheLevel::clear() {
  std::fill(ways_v_.begin(), ways_v_.end(), Way{});
  clock_ = 0;
}

CacheModel::CacheModel(const MemoryParams& p)
    : p_(p),
      line_(as_u64(p.line_bytes, 64)),
      line_transfer_(p.mem_bytes_per_clock.value > 0 ? double(line_) / p.mem_bytes_per_clock.value
                                                     : 0.0),
      l1_(as_u64(p.l1d_bytes, 65536), line_, static_cast<unsigned>(as_u64(p.l1d_ways, 4))),
      l2_(as_u64(p.l2_bytes, 131072), line_, static_cast<unsigned>(as_u64(p.l2_ways, 8))),
      exclusive_(p.l2_exclusive) {}

void CacheModel::clear() {
  l1_.clear();
  l2_.clear();
}

// One line touched: L1 hit costs nothing extra; else from L2 or memory into L1, with the
// L1 victim going to L2 (exclusive) or written through to it (inclusive), and any dirty
// line leaving L2 written back to memory.
double CacheModel::line_access(uint64_t line, bool write, MemCost& c) {
  if (l1_.touch(line, write)) {
    ++c.l1_hits;
    return 0;
  }
  double clocks = 0;
  bool dirty = write;
  if (exclusive_) {
    bool was_dirty = false;
    if (l2_.take(line, &was_dirty)) {
      ++c.l2_hits;
      clocks += p_.l2_hit_clocks.value;
      dirty |= was_dirty;
    } else {
      ++c.mem_fills;
      clocks += line_transfer_;
    }
    const CacheLevel::Victim v = l1_.insert(line, dirty);
    if (v.valid) {
      const CacheLevel::Victim v2 = l2_.insert(v.line, v.dirty);
      if (v2.valid && v2.dirty) {
        ++c.writebacks;
        clocks += line_transfer_;
      }
    }
  } else {
    if (l2_.touch(line, false)) {
      ++c.l2_hits;
      clocks += p_.l2_hit_clocks.value;
    } else {
      ++c.mem_fills;
      clocks += line_transfer_;
      const CacheLevel::Victim v2 = l2_.insert(line, false);
      if (v2.valid && v2.dirty) {
        ++c.writebacks;
        clocks += line_transfer_;
      }
    }
    const CacheLevel::Victim v = l1_.insert(line, dirty);
    if (v.valid && v.dirty && !l2_.touch(v.line, true)) {
      const CacheLevel::Victim v2 = l2_.insert(v.line, true);
      if (v2.valid && v2.dirty) {
        ++c.writebacks;
        clocks += line_transfer_;
      }
    }
  }
  c.miss_clocks += clocks;
  return clocks;
}

double CacheModel::access(uint64_t addr, uint64_t len, bool write, MemCost* acc) {
  if (len == 0) return 0;
  MemCost local;
  MemCost& c = acc != nullptr ? *acc : local;
  double clocks = 0;
  const uint64_t first = addr / line_, last = (addr + len - 1) / line_;
  for (uint64_t l = first; l <= last; ++l) clocks += line_access(l, write, c);
  return clocks;
}

MemCost CacheModel::stream(uint64_t in, uint64_t in_len, uint64_t out, uint64_t out_len) {
  MemCost c;
  const uint64_t steps = std::max((in_len + 15) / 16, (out_len + 15) / 16);
  const uint64_t buffer = static_cast<uint64_t>(std::max(0.0, p_.store_buffer_bytes.value));
  uint64_t last_in = ~0ull, last_out = ~0ull;
  uint64_t stored = 0;
  for (uint64_t i = 0; i < steps; ++i) {
    const uint64_t off = 16 * i;
    if (off < in_len) {
      const uint64_t n = std::min<uint64_t>(16, in_len - off);
      for (uint64_t l = (in + off) / line_; l <= (in + off + n - 1) / line_; ++l) {
        if (l == last_in) continue;  // the line just loaded
        line_access(l, false, c);
        last_in = l;
      }
    }
    if (off < out_len) {
      const uint64_t n = std::min<uint64_t>(16, out_len - off);
      for (uint64_t l = (out + off) / line_; l <= (out + off + n - 1) / line_; ++l) {
        if (l == last_out) {
          l1_.touch(l, true);
          continue;
        }
        line_access(l, true, c);
        last_out = l;
      }
      stored += n;
      if (stored > buffer) ++c.stalled_stores;
    }
  }
  c.store_clocks = static_cast<double>(c.stalled_stores) * p_.store_drain_clocks.value;
  return c;
}

double CacheModel::combine(double engine, const MemCost& m) const {
  const double hidden = p_.stream_overlap.value * std::min(engine, m.miss_clocks);
  return engine + m.store_clocks + m.miss_clocks - hidden;
}

}  // namespace padlock::timing
