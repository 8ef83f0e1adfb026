#include "models/timing/cache_model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

namespace padlock::timing {

namespace {
uint64_t as_u64(double v, uint64_t fallback) {
  return v >= 1 ? static_cast<uint64_t>(std::llround(v)) : fallback;
}

// A stream of at least this many periods of lines (both streams counted) encodes the
// caches before its walk, to be compared with the next stream's start: below it the
// walk is cheaper than the encoding.
constexpr uint64_t kRecordPeriods = 1;

bool is_pow2(uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

// `acc` plus the values of `seq` added one at a time, in order, `k` times over: the sum the
// line walk would reach, rounding included. While the sum stays within one binade [2^(e-1),
// 2^e) every addition of a value rounds to the same multiple of the binade's ulp (unless
// the value is a tie there), so whole periods add as integers in ulps; elsewhere, and for
// ties, the period is added value by value.
double add_periods(double acc, const std::vector<double>& seq, uint64_t k) {
  constexpr uint64_t kMantissa = 1ull << 53;
  while (k > 0) {
    if (acc >= 1.0 && std::isfinite(acc)) {
      int e = 0;
      std::frexp(acc, &e);
      const double ulp = std::ldexp(1.0, e - 53);
      const uint64_t a = static_cast<uint64_t>(acc / ulp);  // exact: acc is a multiple of ulp
      uint64_t inc = 0;
      bool exact = true;
      for (const double v : seq) {
        const double q = v / ulp;  // exact: ulp is a power of two
        if (!(q >= 0) || q >= static_cast<double>(kMantissa)) {
          exact = false;
          break;
        }
        const double whole = std::floor(q), frac = q - whole;
        if (frac == 0.5) {  // a tie rounds to even: depends on the sum so far
          exact = false;
          break;
        }
        inc += static_cast<uint64_t>(whole) + (frac > 0.5 ? 1 : 0);
        if (inc >= kMantissa) {
          exact = false;
          break;
        }
      }
      if (exact) {
        if (inc == 0) return acc;  // every value is below half an ulp: the sum stays
        const uint64_t m = std::min(k, (kMantissa - 1 - a) / inc);
        if (m > 0) {
          acc = static_cast<double>(a + m * inc) * ulp;
          k -= m;
          continue;
        }
      }
    }
    for (const double v : seq) acc += v;
    --k;
  }
  return acc;
}
}  // namespace

CacheLevel::CacheLevel(uint64_t bytes, uint64_t line, unsigned ways)
    : ways_(std::clamp(ways, 1u, 65535u)) {
  sets_ = std::max<uint64_t>(1, bytes / line / ways_);
  pow2_ = is_pow2(sets_);
  ways_v_.resize(sets_ * ways_);
  order_.resize(sets_ * ways_);
  held_.resize(sets_);
  rebuild_order();
}

unsigned CacheLevel::position(uint64_t s, uint16_t way) const {
  const uint16_t* order = &order_[s * ways_];
  unsigned at = 0;
  while (order[at] != way) ++at;
  return at;
}

void CacheLevel::move_to_front(uint64_t s, unsigned at) {
  uint16_t* order = &order_[s * ways_];
  const uint16_t way = order[at];
  std::copy_backward(order, order + at, order + at + 1);
  order[0] = way;
}

CacheLevel::Victim CacheLevel::insert(uint64_t line, bool dirty) {
  const uint64_t s = set_index(line);
  Way* set = &ways_v_[s * ways_];
  uint16_t way;
  Victim v;
  if (held_[s] < ways_) {
    way = 0;  // the first empty way
    while (set[way].stamp != 0) ++way;
    ++held_[s];
    move_to_front(s, position(s, way));
  } else {
    way = order_[s * ways_ + ways_ - 1];  // the least recent
    v = {true, set[way].dirty, set[way].line + base_};
    move_to_front(s, ways_ - 1);
  }
  set[way] = Way{line - base_, ++clock_, dirty};
  recent_ = &set[way];
  return v;
}

bool CacheLevel::take(uint64_t line, bool* dirty) {
  const uint64_t s = set_index(line);
  Way* w = find_rel(s, line - base_);
  if (w == nullptr) return false;
  if (dirty != nullptr) *dirty = w->dirty;
  *w = Way{};
  // The way goes behind the held ones.
  const auto way = static_cast<uint16_t>(w - &ways_v_[s * ways_]);
  uint16_t* order = &order_[s * ways_];
  const unsigned at = position(s, way);
  std::copy(order + at + 1, order + held_[s], order + at);
  order[--held_[s]] = way;
  return true;
}

void CacheLevel::clear() {
  std::fill(ways_v_.begin(), ways_v_.end(), Way{});
  clock_ = 0;
  base_ = 0;
  recent_ = nullptr;
  rebuild_order();
}

void CacheLevel::rebuild_order() {
  for (uint64_t s = 0; s < sets_; ++s) {
    const Way* set = &ways_v_[s * ways_];
    uint16_t* order = &order_[s * ways_];
    std::iota(order, order + ways_, uint16_t{0});
    // Held ways first, most recent first (stamps are unique); empty ways after.
    std::sort(order, order + ways_, [set](uint16_t a, uint16_t b) {
      return set[a].stamp > set[b].stamp || (set[a].stamp == set[b].stamp && a < b);
    });
    held_[s] = static_cast<uint16_t>(
        std::count_if(set, set + ways_, [](const Way& w) { return w.stamp != 0; }));
  }
}

void CacheLevel::save(StateWriter& w) const {
  w.pod(clock_);
  if (base_ == 0) {
    w.pods(ways_v_);
  } else {  // absolute lines, as a level that never moved holds them
    std::vector<Way> ways = ways_v_;
    for (Way& way : ways) {
      if (way.stamp != 0) way.line += base_;
    }
    w.pods(ways);
  }
  w.pod<int64_t>(recent_ == nullptr ? -1 : recent_ - ways_v_.data());
}

void CacheLevel::load(StateReader& r) {
  const size_t size = ways_v_.size();
  base_ = 0;
  r.pod(clock_);
  r.pods(ways_v_);
  const auto recent = r.pod<int64_t>();
  if (ways_v_.size() != size || recent < -1 || recent >= static_cast<int64_t>(size)) {
    throw StateError("snapshot: saved with another cache geometry");
  }
  recent_ = recent < 0 ? nullptr : &ways_v_[static_cast<size_t>(recent)];
  rebuild_order();
}

void CacheLevel::encode(uint64_t shift, std::vector<uint64_t>& out) const {
  for (uint64_t s = 0; s < sets_; ++s) {
    const Way* set = &ways_v_[s * ways_];
    const uint16_t* order = &order_[s * ways_];
    const unsigned n = held_[s];
    out.push_back(n);
    for (unsigned k = n; k-- > 0;) {  // least recent first
      const Way& w = set[order[k]];
      out.push_back(((w.line + base_ - shift) << 1) | (w.dirty ? 1 : 0));
    }
  }
}

CacheModel::CacheModel(const MemoryParams& p)
    : p_(p),
      line_(as_u64(p.line_bytes, 64)),
      line_transfer_(p.mem_bytes_per_clock.value > 0 ? double(line_) / p.mem_bytes_per_clock.value
                                                     : 0.0),
      l1_(as_u64(p.l1d_bytes, 65536), line_, static_cast<unsigned>(as_u64(p.l1d_ways, 4))),
      l2_(as_u64(p.l2_bytes, 131072), line_, static_cast<unsigned>(as_u64(p.l2_ways, 8))),
      exclusive_(p.l2_exclusive),
      period_lines_(std::lcm(l1_.sets(), l2_.sets())) {
  line_shift_ = is_pow2(line_) ? std::countr_zero(line_) : -1;
  const uint64_t held = (l1_.sets() * l1_.ways() + l2_.sets() * l2_.ways());
  state_a_.reserve(held + l1_.sets() + l2_.sets() + 2);
  state_b_.reserve(state_a_.capacity());
  ref_.start.reserve(state_a_.capacity());
  cand_.start.reserve(state_a_.capacity());
  // At most two line accesses per stream per 16-byte step, one per line and stream
  // otherwise.
  period_clocks_.reserve(4 * period_lines_ + 16);
}

void CacheModel::save(StateWriter& w) const {
  l1_.save(w);
  l2_.save(w);
  w.pod(unwalked_lines_);
  w.pod(all_hit_);
}

void CacheModel::load(StateReader& r) {
  l1_.load(r);
  l2_.load(r);
  r.pod(unwalked_lines_);
  r.pod(all_hit_);
  forget_repeats();
}

void CacheModel::forget_repeats() {
  ref_.recorded = cand_.recorded = false;
  just_recorded_ = settled_ = false;
  last_in_len_ = last_out_len_ = ~0ull;
}

void CacheModel::clear() {
  all_hit_.valid = false;
  forget_repeats();
  l1_.clear();
  l2_.clear();
}

// One line touched: L1 hit costs nothing extra; else from L2 or memory into L1, with the
// L1 victim going to L2 (exclusive) or written through to it (inclusive), and any dirty
// line leaving L2 written back to memory.
double CacheModel::line_miss(uint64_t line, bool write, MemCost& c) {
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
  if (recording_ && clocks != 0 && period_clocks_.size() < period_clocks_.capacity()) {
    period_clocks_.push_back(clocks);
  }
  return clocks;
}

double CacheModel::access(uint64_t addr, uint64_t len, bool write, MemCost* acc) {
  if (len == 0) return 0;
  all_hit_.valid = false;
  just_recorded_ = settled_ = false;  // ref_ stays true of any later state
  MemCost local;
  MemCost& c = acc != nullptr ? *acc : local;
  double clocks = 0;
  const uint64_t first = addr / line_, last = (addr + len - 1) / line_;
  for (uint64_t l = first; l <= last; ++l) clocks += line_access(l, write, c);
  return clocks;
}

struct CacheModel::Walk {
  Walk(uint64_t in_, uint64_t in_len_, uint64_t out_, uint64_t out_len_)
      : in(in_), in_len(in_len_), out(out_), out_len(out_len_) {}
  uint64_t in, in_len, out, out_len;
  uint64_t last_in = ~0ull, last_out = ~0ull;  // the lines each stream touched last
  MemCost c;
};

// Step i of a stream: load a block, store a block (the stored bytes are counted apart).
// A line the stream has just touched is not loaded again; a stored one is touched again.
inline void CacheModel::step(Walk& w, uint64_t i) {
  const uint64_t off = 16 * i;
  if (off < w.in_len) {
    const uint64_t n = std::min<uint64_t>(16, w.in_len - off);
    for (uint64_t l = line_of(w.in + off); l <= line_of(w.in + off + n - 1); ++l) {
      if (l == w.last_in) continue;  // the line just loaded
      line_access(l, false, w.c);
      w.last_in = l;
    }
  }
  if (off < w.out_len) {
    const uint64_t n = std::min<uint64_t>(16, w.out_len - off);
    for (uint64_t l = line_of(w.out + off); l <= line_of(w.out + off + n - 1); ++l) {
      if (l == w.last_out) {
        l1_.touch(l, true);
        continue;
      }
      line_access(l, true, w.c);
      w.last_out = l;
    }
  }
}

// 16-byte stores beyond the store buffer: every step whose running total of stored bytes
// exceeds it (all steps store 16 bytes but the last).
uint64_t CacheModel::stalled_stores(uint64_t out_len) const {
  const uint64_t steps = (out_len + 15) / 16;
  if (steps == 0) return 0;
  const uint64_t buffer = static_cast<uint64_t>(std::max(0.0, p_.store_buffer_bytes.value));
  const uint64_t free_steps = buffer / 16;  // steps k with 16k <= buffer
  return (steps - 1 > free_steps ? steps - 1 - free_steps : 0) + (out_len > buffer ? 1 : 0);
}

MemCost CacheModel::stream_by_steps(uint64_t in, uint64_t in_len, uint64_t out, uint64_t out_len) {
  Walk w{in, in_len, out, out_len};
  const uint64_t steps = std::max((in_len + 15) / 16, (out_len + 15) / 16);
  const uint64_t buffer = static_cast<uint64_t>(std::max(0.0, p_.store_buffer_bytes.value));
  uint64_t stored = 0;
  for (uint64_t i = 0; i < steps; ++i) {
    step(w, i);
    if (16 * i < out_len) {
      stored += std::min<uint64_t>(16, out_len - 16 * i);
      if (stored > buffer) ++w.c.stalled_stores;
    }
  }
  w.c.store_clocks = static_cast<double>(w.c.stalled_stores) * p_.store_drain_clocks.value;
  return w.c;
}

void CacheModel::encode_state(const Walk& w, uint64_t shift, std::vector<uint64_t>& out) const {
  out.clear();
  l1_.encode(shift, out);
  l2_.encode(shift, out);
  out.push_back(w.in_len != 0 ? w.last_in - shift : 0);
  out.push_back(w.out_len != 0 ? w.last_out - shift : 0);
}

// The steps that reach no new line only touch again the line the step before touched
// (nothing else happens in its set in between), so the walk goes from one step that
// reaches a new line to the next. Now and then the state is compared with the state one
// period (period_lines_ lines: both levels' set indices repeat) earlier, shifted by that
// period; when they are equal the rest of the whole steps repeats the recorded period
// exactly, shifted, so its counts are added and the caches shifted, and the walk goes on
// from there. The first state compared is the one after the stream's first step: a stream
// resumed after an interrupt (§3.1: REP XCRYPT stops between blocks) is then in the state
// its first part settled to, and is walked for one period only.
MemCost CacheModel::stream_walk(uint64_t in, uint64_t in_len, uint64_t out, uint64_t out_len) {
  uint64_t moved = 0;
  if (settled_ && ref_.same_lengths(in_len, out_len) &&
      moved_from(last_in_, last_out_, in, out, out_len, &moved) && moved == ref_.advance) {
    return take_repeat(in, out);
  }
  if (ref_.same_lengths(in_len, out_len) &&
      moved_from(ref_.in, ref_.out, in, out, out_len, &moved)) {
    Walk none{in, 0, out, 0};  // no stream has stepped yet: encoded as the recorded one
    encode_state(none, moved, state_b_);
    if (state_b_ == ref_.start) return take_repeat(in, out);
  }
  if (just_recorded_ && cand_.same_lengths(in_len, out_len) &&
      moved_from(cand_.in, cand_.out, in, out, out_len, &moved)) {
    Walk none{in, 0, out, 0};
    encode_state(none, moved, state_b_);
    if (state_b_ == cand_.start) {  // the state cand_ left: proven
      cand_.advance = moved;
      std::swap(ref_, cand_);
      cand_.recorded = false;
      return take_repeat(in, out);
    }
  }
  // A candidate is recorded when a loop is likely (the lengths of the stream before) and
  // the walk costs more than encoding the caches. The proven one stays until a candidate
  // is proven, so that a loop an interrupt splits (§3.1) resumes with one comparison.
  const uint64_t stream_lines = (in_len + out_len) / line_;
  const bool record = stream_lines >= kRecordPeriods * period_lines_ && in_len == last_in_len_ &&
                      out_len == last_out_len_;
  if (record) {
    Walk none{in, 0, out, 0};
    encode_state(none, 0, cand_.start);
  }
  Walk w{in, in_len, out, out_len};
  const uint64_t steps = std::max((in_len + 15) / 16, (out_len + 15) / 16);
  const uint64_t in_last = in_len != 0 ? line_of(in + in_len - 1) : 0;
  const uint64_t out_last = out_len != 0 ? line_of(out + out_len - 1) : 0;
  // Steps below `whole` are whole 16-byte steps of every stream present.
  const uint64_t whole =
      std::min(in_len != 0 ? in_len / 16 : ~0ull, out_len != 0 ? out_len / 16 : ~0ull);
  const uint64_t period_bytes = period_lines_ * line_;
  const uint64_t period = period_bytes % 16 == 0 ? period_bytes / 16 : 0;
  // Pairs of states one period apart: from after the first step (before it, the line each
  // stream touched last is none, where the part before an interrupt left one), then, after
  // each mismatch, twice as far on as the last gap (a stream settles within the caches'
  // capacity).
  uint64_t check = period != 0 && whole >= 3 * period + 1 ? 1 : ~0ull;
  uint64_t gap = period;
  bool comparing = false;  // state_a_ holds the state one period before `check`
  MemCost at_check;        // the counts when state_a_ was taken

  uint64_t i = 0;
  while (i < steps) {
    if (i >= check) {
      // The state now is the state after step check - 1: the steps between changed nothing.
      if (comparing) {
        recording_ = false;
        comparing = false;
        encode_state(w, period_lines_, state_b_);
        const bool recorded = period_clocks_.size() < period_clocks_.capacity();
        if (recorded && state_a_ == state_b_) {
          const uint64_t k = (whole - check) / period;
          const uint64_t shift = k * period_lines_;
          w.c.l1_hits += k * (w.c.l1_hits - at_check.l1_hits);
          w.c.l2_hits += k * (w.c.l2_hits - at_check.l2_hits);
          w.c.mem_fills += k * (w.c.mem_fills - at_check.mem_fills);
          w.c.writebacks += k * (w.c.writebacks - at_check.writebacks);
          w.c.miss_clocks = add_periods(w.c.miss_clocks, period_clocks_, k);
          unwalked_lines_ += shift;
          l1_.shift_lines(shift);
          l2_.shift_lines(shift);
          if (in_len != 0) w.last_in += shift;
          if (out_len != 0) w.last_out += shift;
          i += k * period;
          check = ~0ull;
          continue;
        }
        check += gap;
        gap *= 2;
        if (whole < check + 2 * period) check = ~0ull;
      } else {
        encode_state(w, 0, state_a_);
        at_check = w.c;
        period_clocks_.clear();
        recording_ = true;
        comparing = true;
        check += period;
      }
    }
    step(w, i);
    uint64_t next = steps;
    if (in_len != 0 && w.last_in != in_last) next = (line_start(w.last_in + 1) - in) / 16;
    if (out_len != 0 && w.last_out != out_last) {
      next = std::min(next, (line_start(w.last_out + 1) - out) / 16);
    }
    i = next;
  }
  recording_ = false;
  w.c.stalled_stores = stalled_stores(out_len);
  w.c.store_clocks = static_cast<double>(w.c.stalled_stores) * p_.store_drain_clocks.value;
  all_hit_ =
      AllHit{w.c.l2_hits + w.c.mem_fills + w.c.writebacks == 0, in, in_len, out, out_len, w.c};
  if (record) {
    cand_.recorded = true;
    cand_.in = in;
    cand_.in_len = in_len;
    cand_.out = out;
    cand_.out_len = out_len;
    cand_.cost = w.c;
  }
  just_recorded_ = record;
  settled_ = false;
  last_in_len_ = in_len;
  last_out_len_ = out_len;
  return w.c;
}

// Whole periods, the same for the output: then every line maps to the set it mapped to.
bool CacheModel::moved_from(uint64_t from_in, uint64_t from_out, uint64_t in, uint64_t out,
                            uint64_t out_len, uint64_t* lines) const {
  const uint64_t moved = in - from_in;  // modulo 2^64: a stream may move down
  if (out_len != 0 && out - from_out != moved) return false;
  const uint64_t period_bytes = period_lines_ * line_;
  // Whole periods either way.
  if (moved % period_bytes != 0 && (0 - moved) % period_bytes != 0) return false;
  *lines = line_of(in) - line_of(from_in);
  return true;
}

// ref_'s cost again. The state now is ref_'s start moved by some M (compared, or the last
// repeat's state moved by `advance`); the walk would leave ref_'s end moved by M, which is
// ref_'s start moved by M + advance (proven): the state now moved by `advance`.
MemCost CacheModel::take_repeat(uint64_t in, uint64_t out) {
  const Repeat& r = ref_;
  l1_.shift_lines(r.advance);
  l2_.shift_lines(r.advance);
  settled_ = true;
  just_recorded_ = false;
  last_in_ = in;
  last_out_ = out;
  last_in_len_ = r.in_len;
  last_out_len_ = r.out_len;
  const MemCost& c = r.cost;
  unwalked_lines_ += c.l1_hits + c.l2_hits + c.mem_fills;
  all_hit_ = AllHit{c.l2_hits + c.mem_fills + c.writebacks == 0, in, r.in_len, out, r.out_len, c};
  return c;
}

}  // namespace padlock::timing
