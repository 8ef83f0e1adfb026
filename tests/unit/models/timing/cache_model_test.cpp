// The cache/memory model (models/timing/cache_model): LRU sets, the exclusive L2, memory
// bandwidth, store-buffer stalls and how a PadLock stream's cost combines with the engine's.
#include "models/timing/cache_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "models/cpu_model.hpp"
#include "models/state_io.hpp"

namespace padlock::timing {
namespace {

MemoryParams small_params() {
  MemoryParams p{};
  p.l1d_bytes = {4096, "test"};
  p.l2_bytes = {8192, "test"};
  p.line_bytes = {64, "test"};
  p.l2_hit_clocks = {20, "test"};
  p.mem_bytes_per_clock = {0.5, "test"};
  p.l1d_ways = {4, "test"};
  p.l2_ways = {8, "test"};
  p.store_buffer_bytes = {64, "test"};
  p.store_drain_clocks = {2, "test"};
  p.stream_overlap = {0.5, "test"};
  p.l2_exclusive = true;
  return p;
}

TEST(CacheLevel, LruEvictsLeastRecentInASet) {
  CacheLevel c(4 * 64, 64, 4);  // one set of 4 ways
  for (uint64_t l = 0; l < 4; ++l) EXPECT_FALSE(c.insert(l, false).valid);
  EXPECT_TRUE(c.touch(0, false));  // 0 becomes most recent; 1 is now the LRU
  const CacheLevel::Victim v = c.insert(9, false);
  ASSERT_TRUE(v.valid);
  EXPECT_EQ(v.line, 1u);
  EXPECT_TRUE(c.touch(0, false));
  EXPECT_FALSE(c.touch(1, false));
}

TEST(CacheLevel, DirtyBitFollowsWrites) {
  CacheLevel c(64, 64, 1);
  c.insert(5, false);
  c.touch(5, true);
  const CacheLevel::Victim v = c.insert(6, false);
  EXPECT_TRUE(v.valid);
  EXPECT_TRUE(v.dirty);
  EXPECT_EQ(v.line, 5u);
}

TEST(CacheModel, SecondPassOverL1ResidentDataHits) {
  CacheModel m(small_params());
  MemCost first, second;
  m.access(0x10000, 2048, false, &first);
  m.access(0x10000, 2048, false, &second);
  EXPECT_EQ(first.mem_fills, 32u);                  // 2 KB of 64-byte lines, cold
  EXPECT_DOUBLE_EQ(first.miss_clocks, 32 * 128.0);  // 64 B / 0.5 B per clock each
  EXPECT_EQ(second.l1_hits, 32u);
  EXPECT_DOUBLE_EQ(second.miss_clocks, 0);
}

// Exclusive L2: a buffer larger than L1 but within L1 + L2 comes back from L2 (cyclic LRU
// access misses L1 every time; the victims went to L2).
TEST(CacheModel, ExclusiveL2HoldsL1Victims) {
  CacheModel m(small_params());
  const uint64_t len = 8192;  // 128 lines: L1 holds 64, L2 128
  m.stream(0x20000, len, 0x20000, len);
  const MemCost c = m.stream(0x20000, len, 0x20000, len);
  EXPECT_EQ(c.mem_fills, 0u);
  EXPECT_EQ(c.l2_hits, 128u);
  EXPECT_DOUBLE_EQ(c.miss_clocks, 128 * 20.0);
}

// Beyond L1 + L2: every line comes from memory, and each dirty line written back costs a
// second transfer: in place, twice the line traffic.
TEST(CacheModel, LargeInPlaceStreamIsBandwidthBound) {
  CacheModel m(small_params());
  const uint64_t len = 64 * 1024;  // 1024 lines, 5x the capacity
  m.stream(0x100000, len, 0x100000, len);
  const MemCost c = m.stream(0x100000, len, 0x100000, len);
  EXPECT_EQ(c.mem_fills, 1024u);
  EXPECT_EQ(c.writebacks, 1024u);
  EXPECT_DOUBLE_EQ(c.miss_clocks, 2048 * 128.0);
}

TEST(CacheModel, FiveLinesInOneFourWaySetConflict) {
  MemoryParams p = small_params();
  CacheModel m(p);
  // L1: 4096 / 64 / 4 = 16 sets; lines 16 apart share a set. L2 (exclusive) catches them.
  for (int pass = 0; pass < 2; ++pass)
    for (uint64_t i = 0; i < 5; ++i) m.access(i * 16 * 64, 4, false);
  MemCost c;
  for (uint64_t i = 0; i < 5; ++i) m.access(i * 16 * 64, 4, false, &c);
  EXPECT_EQ(c.l1_hits, 0u);
  EXPECT_EQ(c.l2_hits, 5u);
}

TEST(CacheModel, StoreBufferStallsAfterItsCapacity) {
  CacheModel m(small_params());
  m.stream(0x30000, 1024, 0x30000, 1024);                    // warm
  const MemCost c = m.stream(0x30000, 1024, 0x30000, 1024);  // 64 stores of 16 bytes
  EXPECT_EQ(c.stalled_stores, 64u - 4u);                     // 64-byte buffer: 4 free
  EXPECT_DOUBLE_EQ(c.store_clocks, 60 * 2.0);
  EXPECT_DOUBLE_EQ(c.miss_clocks, 0);
  const MemCost small = m.stream(0x30000, 48, 0x30000, 48);
  EXPECT_EQ(small.stalled_stores, 0u);
}

TEST(CacheModel, UnalignedStreamTouchesBothLines) {
  CacheModel m(small_params());
  const MemCost c = m.stream(0x40000 + 1, 64, 0x40000 + 1, 64);
  EXPECT_EQ(c.mem_fills, 2u);
}

TEST(CacheModel, CombineAddsStoresAndOverlapsMisses) {
  CacheModel m(small_params());
  MemCost c;
  c.store_clocks = 10;
  c.miss_clocks = 100;
  EXPECT_DOUBLE_EQ(m.combine(40, c), 40 + 10 + 100 - 0.5 * 40);
  EXPECT_DOUBLE_EQ(m.combine(400, c), 400 + 10 + 100 - 0.5 * 100);
  EXPECT_DOUBLE_EQ(m.combine(400, MemCost{}), 400);
}

// stream() walks lines and skips the steady state; stream_by_steps() is the 16-byte step
// walk it must equal. Both run on twin models through the same sequences of streams, over
// many sizes, alignments, in/out distances and prior states, every figure compared
// exactly (miss_clocks bit for bit), then every line near the streams probed on both.
struct Geometry {
  const char* name;
  MemoryParams p;
};

std::vector<Geometry> geometries() {
  std::vector<Geometry> g;
  g.push_back({"small exclusive", small_params()});
  MemoryParams inclusive = small_params();
  inclusive.l2_exclusive = false;
  g.push_back({"small inclusive", inclusive});
  // Clocks with low bits set, so that sums meet binade edges and rounding ties.
  MemoryParams odd = small_params();
  odd.l2_hit_clocks = {1 + std::ldexp(1.0, -40), "test"};
  odd.mem_bytes_per_clock = {64 / (3 + std::ldexp(1.0, -41)), "test"};
  odd.line_bytes = {32, "test"};
  g.push_back({"odd clocks", odd});
  MemoryParams three_sets = small_params();  // sets not a power of two
  three_sets.l1d_bytes = {3 * 4 * 64, "test"};
  three_sets.l2_bytes = {5 * 8 * 64, "test"};
  g.push_back({"3 and 5 sets", three_sets});
  for (const char* cpu : {"esther", "nehemiah", "nano"}) {
    g.push_back({cpu, find_cpu_model(cpu)->memory});
  }
  return g;
}

void expect_same(const MemCost& a, const MemCost& b, const std::string& where) {
  EXPECT_EQ(a.l1_hits, b.l1_hits) << where;
  EXPECT_EQ(a.l2_hits, b.l2_hits) << where;
  EXPECT_EQ(a.mem_fills, b.mem_fills) << where;
  EXPECT_EQ(a.writebacks, b.writebacks) << where;
  EXPECT_EQ(a.stalled_stores, b.stalled_stores) << where;
  EXPECT_EQ(std::memcmp(&a.miss_clocks, &b.miss_clocks, sizeof(double)), 0)
      << where << ": " << a.miss_clocks << " vs " << b.miss_clocks;
  EXPECT_EQ(std::memcmp(&a.store_clocks, &b.store_clocks, sizeof(double)), 0) << where;
}

TEST(CacheModel, LineWalkAndSteadyStateEqualTheStepWalk) {
  uint64_t steady = 0;
  for (const Geometry& g : geometries()) {
    const uint64_t cap = static_cast<uint64_t>(g.p.l1d_bytes.value + g.p.l2_bytes.value);
    const uint64_t line = static_cast<uint64_t>(g.p.line_bytes.value);
    // Below, around and far beyond the caches.
    const uint64_t sizes[] = {16,
                              48,
                              64,
                              80,
                              1008,
                              4096 + 16,
                              cap / 2,
                              cap + 48,
                              3 * cap + 16 * 7,
                              9 * cap,
                              13 * cap + 16 * 33};
    const int64_t distances[] = {0, 16, 5 * 64 + 16, -8192, 40960, 1 << 20};
    const uint64_t misalign[] = {0, 4, 16, 60};
    for (uint64_t seed = 0; seed < 3; ++seed) {
      CacheModel fast(g.p), ref(g.p);
      std::mt19937_64 rng(seed);
      uint64_t lo = ~0ull, hi = 0;
      for (const uint64_t size : sizes) {
        for (const int64_t dist : distances) {
          for (const uint64_t mis : misalign) {
            if (rng() % 3 != 0) continue;  // a third of the combinations per seed
            // A prior state of scattered loads and stores.
            for (int k = 0; k < 40; ++k) {
              const uint64_t a = 0x400000 + (rng() % 4096) * line, n = 1 + rng() % 100;
              const bool wr = rng() & 1;
              ASSERT_EQ(fast.access(a, n, wr), ref.access(a, n, wr));
            }
            const uint64_t in = 0x1000000 + (rng() % 64) * 4096 + mis;
            const uint64_t out = static_cast<uint64_t>(static_cast<int64_t>(in) + dist);
            const bool sha = rng() % 4 == 0;  // REP XSHA: no stores
            const uint64_t out_len = sha ? 0 : size;
            const std::string where = std::string(g.name) + " size " + std::to_string(size) +
                                      " dist " + std::to_string(dist) + " +" + std::to_string(mis) +
                                      (sha ? " sha" : "") + " seed " + std::to_string(seed);
            expect_same(fast.stream(in, size, out, out_len),
                        ref.stream_by_steps(in, size, out, out_len), where);
            if (size <= cap && rng() % 2 == 0) {  // the same again: may hit L1 throughout
              expect_same(fast.stream(in, size, out, out_len),
                          ref.stream_by_steps(in, size, out, out_len), where + " again");
            }
            lo = std::min({lo, in, out});
            hi = std::max({hi, in + size, out + out_len});
          }
        }
      }
      // The states left behind: every line the streams and the scattered accesses reached,
      // probed alike.
      const uint64_t ranges[2][2] = {{0x400000, 0x400000 + 4096 * line}, {lo - cap, hi + cap}};
      for (const auto& r : ranges) {
        for (uint64_t a = r[0]; a < r[1]; a += line) {
          MemCost cf, cr;
          fast.access(a, 1, (a / line) % 3 == 0, &cf);
          ref.access(a, 1, (a / line) % 3 == 0, &cr);
          expect_same(cf, cr, std::string(g.name) + " probe");
          if (::testing::Test::HasFailure()) return;
        }
      }
      steady += fast.unwalked_lines();
      EXPECT_EQ(ref.unwalked_lines(), 0u);
    }
  }
  EXPECT_GT(steady, 0u);  // the steady state was reached, not only the walk
}

// One long stream in parts, as REP XCRYPT resumes after an interrupt (§3.1): each part
// starts where the one before stopped, at a block boundary inside a line or at a line's
// start, sometimes after an ordinary access. Every part costs what the step walk says, and
// a part that starts settled is walked for one period only.
TEST(CacheModel, ResumedStreamPartsEqualTheStepWalk) {
  for (const Geometry& g : geometries()) {
    const uint64_t cap = static_cast<uint64_t>(g.p.l1d_bytes.value + g.p.l2_bytes.value);
    const uint64_t line = static_cast<uint64_t>(g.p.line_bytes.value);
    for (const int64_t dist : {int64_t{0}, int64_t{16}, int64_t{40960}, int64_t{-1} << 20}) {
      for (const bool sha : {false, true}) {
        CacheModel fast(g.p), ref(g.p);
        std::mt19937_64 rng(static_cast<uint64_t>(dist) ^ (sha ? 7 : 0));
        uint64_t in = 0x4000000 + 16 * (rng() % 8);
        // Lines after which both levels' set indices repeat (the steady state's period).
        const uint64_t period =
            std::lcm(static_cast<uint64_t>(g.p.l1d_bytes.value / line / g.p.l1d_ways.value),
                     static_cast<uint64_t>(g.p.l2_bytes.value / line / g.p.l2_ways.value));
        uint64_t settled_parts = 0;
        for (int part = 0; part < 24; ++part) {
          const std::string where = std::string(g.name) + " dist " + std::to_string(dist) +
                                    (sha ? " sha" : "") + " part " + std::to_string(part);
          // Parts from a few blocks to several times the caches, ending inside a line or
          // at a line's end.
          uint64_t len = 16 * (1 + rng() % (part % 3 == 0 ? 64 : 6 * cap / 16));
          if (rng() % 2 == 0) len += (line - (in + len) % line) % line;
          const uint64_t out = static_cast<uint64_t>(static_cast<int64_t>(in) + dist);
          const uint64_t out_len = sha ? 0 : len;
          const uint64_t before = fast.unwalked_lines();
          expect_same(fast.stream(in, len, out, out_len),
                      ref.stream_by_steps(in, len, out, out_len), where);
          // Walked: one period from the start, then the tail after the last whole period.
          if (len >= 3 * cap && len / line < 2 * period + fast.unwalked_lines() - before) {
            ++settled_parts;
          }
          if (rng() % 5 == 0) {  // the interrupt's handler touches a line
            const uint64_t a = 0x400000 + (rng() % 4096) * line;
            ASSERT_EQ(fast.access(a, 8, true), ref.access(a, 8, true)) << where;
          }
          in += len;
          if (::testing::Test::HasFailure()) return;
        }
        // Long parts that start settled are walked for less than two periods.
        EXPECT_GT(settled_parts, 0u) << g.name << " dist " << dist << (sha ? " sha" : "");
      }
    }
  }
}

// Bytes of both caches, of a line, and of the period after which both levels' set
// indices repeat.
struct Sizes {
  uint64_t cap, line, period;
};
Sizes sizes_of(const MemoryParams& p) {
  const uint64_t line = static_cast<uint64_t>(p.line_bytes.value);
  return {static_cast<uint64_t>(p.l1d_bytes.value + p.l2_bytes.value), line,
          line * std::lcm(static_cast<uint64_t>(p.l1d_bytes.value / line / p.l1d_ways.value),
                          static_cast<uint64_t>(p.l2_bytes.value / line / p.l2_ways.value))};
}

// Loops of streams, each the one before moved by a stride (whole periods, less than a
// period, down, or not at all: the same buffers again), in place, into a separate buffer,
// with the output behind the input, into one output buffer that stays, or hashing; now and then
// broken by an ordinary access or a stream of another length. stream() takes the repeats without
// walking once a state repeats; every call costs what the step walk says, and the states left
// agree.
TEST(CacheModel, MovedAndRepeatedStreamsEqualTheStepWalk) {
  uint64_t repeated = 0;
  for (const Geometry& g : geometries()) {
    const auto [cap, line, period] = sizes_of(g.p);
    for (uint64_t seed = 0; seed < 6; ++seed) {
      CacheModel fast(g.p), ref(g.p);
      std::mt19937_64 rng(seed * 77 + 5);
      std::set<uint64_t> reached;  // lines the caches may still hold
      for (int loop = 0; loop < 6; ++loop) {
        // Lengths from below a period to beyond the caches, ending anywhere in a line.
        const uint64_t len = 16 * (1 + rng() % ((rng() % 2 ? period : 3 * cap) / 16));
        const int64_t strides[] = {0,
                                   static_cast<int64_t>(period),
                                   static_cast<int64_t>(period * (1 + len / period)),
                                   -static_cast<int64_t>(period * (2 + len / period)),
                                   static_cast<int64_t>(len),
                                   static_cast<int64_t>(period) + 16};
        const int64_t stride = strides[rng() % 6];
        // In place, separate, behind, hash, into a buffer that stays.
        const int shape = static_cast<int>(rng() % 5);
        const int64_t dist[] = {0, 0x4000000 + 16 * static_cast<int64_t>(rng() % 8), -16 * 3, 0, 0};
        const uint64_t in0 = 0x10000000 + 16 * (rng() % 512);
        uint64_t in = in0;
        const uint64_t out_len = shape == 3 ? 0 : len;
        const int calls = 2 + static_cast<int>(rng() % 9);
        for (int c = 0; c < calls; ++c) {
          const uint64_t out = shape == 4
                                   ? in0 - 2 * cap
                                   : static_cast<uint64_t>(static_cast<int64_t>(in) + dist[shape]);
          const std::string where = std::string(g.name) + " len " + std::to_string(len) +
                                    " stride " + std::to_string(stride) + " shape " +
                                    std::to_string(shape) + " call " + std::to_string(c) +
                                    " seed " + std::to_string(seed);
          if (len >= 32 && rng() % 6 == 0) {  // an interrupt splits it into two parts (§3.1)
            const uint64_t k = 16 * (1 + rng() % (len / 16 - 1)), k_out = out_len != 0 ? k : 0;
            expect_same(fast.stream(in, k, out, k_out), ref.stream_by_steps(in, k, out, k_out),
                        where + " part 1");
            expect_same(fast.stream(in + k, len - k, out + k, out_len - k_out),
                        ref.stream_by_steps(in + k, len - k, out + k, out_len - k_out),
                        where + " part 2");
          } else {
            const uint64_t before = fast.unwalked_lines();
            const MemCost f = fast.stream(in, len, out, out_len);
            expect_same(f, ref.stream_by_steps(in, len, out, out_len), where);
            if (fast.unwalked_lines() - before == f.l1_hits + f.l2_hits + f.mem_fills) ++repeated;
          }
          for (const uint64_t end : {in + len, out + out_len}) {
            for (uint64_t a = end - std::min(end, 2 * cap); a < end + cap; a += line) {
              reached.insert(a / line);
            }
          }
          if (rng() % 8 == 0) {  // an interrupt handler's store, or a short stream elsewhere
            const uint64_t a = 0x400000 + (rng() % 4096) * line;
            if (rng() % 2) {
              ASSERT_EQ(fast.access(a, 8, true), ref.access(a, 8, true)) << where;
            } else {
              expect_same(fast.stream(a, 64, a, 64), ref.stream_by_steps(a, 64, a, 64), where);
            }
          }
          in = static_cast<uint64_t>(static_cast<int64_t>(in) + stride);
          if (::testing::Test::HasFailure()) return;
        }
      }
      // Every line the loops reached last, probed alike.
      for (const uint64_t l : reached) {
        const uint64_t a = l * line;
        MemCost cf, cr;
        fast.access(a, 1, (a / line) % 3 == 0, &cf);
        ref.access(a, 1, (a / line) % 3 == 0, &cr);
        expect_same(cf, cr, std::string(g.name) + " probe");
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
  EXPECT_GT(repeated, 50u);  // the repeats were taken, not only walked
}

// Settled loops broken by an ordinary store over other data, by a stream whose output
// moves a period more than its input, by one whose input and output move by another
// stride, and by one moved less than a line: each costs and leaves what the step walk
// says. Over buffers the caches hold (the same again) and over longer steps.
TEST(CacheModel, SettledLoopLeftByOneStreamEqualsTheStepWalk) {
  for (const Geometry& g : geometries()) {
    const auto [cap, line, period] = sizes_of(g.p);
    for (const bool sha : {false, true}) {
      // cap / 2 + 32: moved 48 bytes, the stream starts in the same line and ends in the next.
      for (const uint64_t len : {cap / 2 + 32, 2 * cap + 48}) {
        const uint64_t stride = len < cap ? 0 : period * (len / period + 1);
        CacheModel fast(g.p), ref(g.p);
        const uint64_t in0 = 0x10000000, out0 = 0x30000000;
        uint64_t in = in0, out = out0;
        for (int c = 0; c < 13; ++c) {
          const std::string where = std::string(g.name) + (sha ? " sha" : "") + " len " +
                                    std::to_string(len) + " call " + std::to_string(c);
          const uint64_t out_len = sha ? 0 : len;
          expect_same(fast.stream(in, len, out, out_len),
                      ref.stream_by_steps(in, len, out, out_len), where);
          if (c == 3) {
            ASSERT_EQ(fast.access(0x50000000, cap / 4, true),
                      ref.access(0x50000000, cap / 4, true));
          }
          in += stride + (c == 8 ? period : 0) + (c == 10 ? 48 : 0);
          out += stride + (c == 6 || c == 8 ? period : 0) + (c == 10 ? 48 : 0);
          if (::testing::Test::HasFailure()) return;
        }
        for (const uint64_t from : {in0, out0}) {
          for (uint64_t a = from; a < from + (in - in0) + len + cap; a += line) {
            MemCost cf, cr;
            fast.access(a, 1, false, &cf);
            ref.access(a, 1, false, &cr);
            expect_same(cf, cr, std::string(g.name) + " probe");
            if (::testing::Test::HasFailure()) return;
          }
        }
      }
    }
  }
}

// A loop of 1 MiB steps from one 64 MiB buffer into another, and the same 64 MiB buffers
// again and again, on every CPU model: once the caches hold only the loop's lines, no line
// is walked, also after a step an interrupt split.
TEST(CacheModel, StepLoopsAndRepeatedBuffersAreNotWalked) {
  for (const CpuModel* cpu : all_cpu_models()) {
    CacheModel m(cpu->memory);
    const uint64_t step = 1 << 20, in = 0x10000000, out = 0x20000000;
    MemCost third;
    for (uint64_t k = 0; k < 64; ++k) {
      const uint64_t before = m.unwalked_lines();
      const MemCost c = m.stream(in + k * step, step, out + k * step, step);
      const uint64_t lines = c.l1_hits + c.l2_hits + c.mem_fills;
      if (k == 8) third = c;
      if (k >= 8) {  // settled (the caches hold at most 8 MiB)
        EXPECT_EQ(m.unwalked_lines() - before, lines) << cpu->name << " step " << k;
        expect_same(c, third, std::string(cpu->name) + " step " + std::to_string(k));
      }
    }
    // An interrupt splits step 64 (§3.1): step 65 resumes the loop with one comparison.
    const uint64_t half = step / 2;
    m.stream(in + 64 * step, half, out + 64 * step, half);
    m.stream(in + 64 * step + half, half, out + 64 * step + half, half);
    const uint64_t before = m.unwalked_lines();
    const MemCost c = m.stream(in + 65 * step, step, out + 65 * step, step);
    EXPECT_EQ(m.unwalked_lines() - before, c.l1_hits + c.l2_hits + c.mem_fills) << cpu->name;
    expect_same(c, third, std::string(cpu->name) + " after a split step");
    const uint64_t big = 64 << 20;
    for (int k = 0; k < 4; ++k) {
      const uint64_t before = m.unwalked_lines();
      const MemCost c = m.stream(in, big, out, big);
      if (k >= 2) {
        EXPECT_EQ(m.unwalked_lines() - before, c.l1_hits + c.l2_hits + c.mem_fills) << cpu->name;
      }
    }
  }
}

// A model restored from a snapshot (Machine.snapshot()) costs what the saved one costs,
// access for access and stream for stream: the LRU order of each set, which the model keeps
// beside the stamps, comes back from the stamps.
TEST(CacheModel, RestoredModelCostsWhatTheSavedOneCosts) {
  for (const Geometry& g : geometries()) {
    const uint64_t line = static_cast<uint64_t>(g.p.line_bytes.value);
    CacheModel saved(g.p);
    std::mt19937_64 rng(3);
    // Sets partly filled, lines taken back by the exclusive L2, dirty lines.
    for (int k = 0; k < 3000; ++k) saved.access((rng() % 600) * line, 1 + rng() % 90, rng() & 1);
    std::vector<uint8_t> bytes;
    StateWriter w(bytes);
    saved.save(w);
    CacheModel restored(g.p);
    restored.stream(0x9000000, 1 << 16, 0x9000000, 1 << 16);  // a different state, overwritten
    StateReader r(bytes.data(), bytes.size());
    restored.load(r);
    for (int k = 0; k < 3000; ++k) {
      const uint64_t a = (rng() % 900) * line, n = 1 + rng() % 90;
      const bool wr = rng() & 1;
      MemCost cs, cr;
      saved.access(a, n, wr, &cs);
      restored.access(a, n, wr, &cr);
      expect_same(cs, cr, std::string(g.name) + " access " + std::to_string(k));
      if (k % 500 == 0) {
        const uint64_t in = (rng() % 64) * 4096, len = 16 * (1 + rng() % 20000);
        expect_same(saved.stream(in, len, in + 4096, len), restored.stream(in, len, in + 4096, len),
                    std::string(g.name) + " stream " + std::to_string(k));
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// A model saved after a loop of moved streams (its levels' lines relative to a moved base)
// restores to one that costs what the saved one costs.
TEST(CacheModel, RestoredAfterMovedStreamsCostsWhatTheSavedOneCosts) {
  for (const Geometry& g : geometries()) {
    const auto [cap, line, period] = sizes_of(g.p);
    CacheModel saved(g.p);
    const uint64_t len = 2 * cap + 16, stride = period * (len / period + 1);
    for (uint64_t k = 0; k < 6; ++k) {
      saved.stream(0x10000000 + k * stride, len, 0x30000000 + k * stride, len);
    }
    std::vector<uint8_t> bytes;
    StateWriter w(bytes);
    saved.save(w);
    CacheModel restored(g.p);
    StateReader r(bytes.data(), bytes.size());
    restored.load(r);
    // The tails the caches hold, newest first (an older line's miss would evict the line
    // probed next: a forward sweep misses throughout).
    for (const uint64_t from : {0x10000000 + 5 * stride, 0x30000000 + 5 * stride}) {
      for (uint64_t a = from + len - 1; a + cap > from + len; a -= line) {
        MemCost cs, cr;
        saved.access(a, 1, false, &cs);
        restored.access(a, 1, false, &cr);
        expect_same(cs, cr, std::string(g.name) + " probe");
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

// The same stream twice over data L1 holds: the second costs the same, and is not walked.
TEST(CacheModel, RepeatedAllHitStreamIsNotWalked) {
  CacheModel m(small_params());
  m.stream(0x50000, 1024, 0x50000, 1024);  // fills L1
  const MemCost first = m.stream(0x50000, 1024, 0x50000, 1024);
  EXPECT_EQ(first.mem_fills + first.l2_hits, 0u);
  const uint64_t walked_before = m.unwalked_lines();
  const MemCost again = m.stream(0x50000, 1024, 0x50000, 1024);
  expect_same(again, first, "again");
  EXPECT_EQ(m.unwalked_lines() - walked_before, first.l1_hits);
  m.access(0x90000, 4, false);  // anything in between: walked again
  m.stream(0x50000, 1024, 0x50000, 1024);
  EXPECT_EQ(m.unwalked_lines() - walked_before, first.l1_hits);
}

// The all-hit repeat (CacheModel::stream, inline) is of the very same stream: another input,
// output or length after it is walked, as the step walk of a model in the same state gives
// it, and another buffer in cold memory misses.
TEST(CacheModel, AllHitRepeatNeedsTheSameStream) {
  struct Case {
    const char* name;
    uint64_t in, in_len, out, out_len;
    bool cold;  // a buffer in cold memory: every line misses
  };
  const Case cases[] = {{"input", 0x70000, 1024, 0x50000, 1024, true},
                        {"input length", 0x50000, 512, 0x50000, 1024, false},
                        {"output", 0x50000, 1024, 0x70000, 1024, true},
                        {"output length", 0x50000, 1024, 0x50000, 512, false}};
  for (const Case& k : cases) {
    CacheModel m(small_params()), ref(small_params());
    for (CacheModel* c : {&m, &ref}) {
      c->stream(0x50000, 1024, 0x50000, 1024);
      c->stream(0x50000, 1024, 0x50000, 1024);  // all hits: kept for a repeat
    }
    const MemCost got = m.stream(k.in, k.in_len, k.out, k.out_len);
    expect_same(got, ref.stream_by_steps(k.in, k.in_len, k.out, k.out_len), k.name);
    if (k.cold) EXPECT_EQ(got.mem_fills, 1024u / 64) << k.name;
  }
}

// A long in-place stream reaches the steady state on every CPU model: most of its lines
// are not walked.
TEST(CacheModel, LongStreamTakesTheSteadyState) {
  for (const CpuModel* cpu : all_cpu_models()) {
    CacheModel m(cpu->memory);
    const uint64_t len = 64ull << 20;
    m.stream(0x10000000, len, 0x10000000, len);
    EXPECT_GT(m.unwalked_lines() * m.line_bytes(), len * 9 / 10) << cpu->name;
  }
}

// Every CPU model has a usable memory block.
TEST(CacheModel, EveryCpuModelHasGeometry) {
  for (const CpuModel* cpu : all_cpu_models()) {
    const MemoryParams& p = cpu->memory;
    EXPECT_GE(p.l1d_bytes.value, 16384) << cpu->name;
    EXPECT_GE(p.l1d_ways.value, 1) << cpu->name;
    EXPECT_GE(p.l2_ways.value, 1) << cpu->name;
    EXPECT_GT(p.mem_bytes_per_clock.value, 0) << cpu->name;
    EXPECT_GE(p.stream_overlap.value, 0) << cpu->name;
    EXPECT_LE(p.stream_overlap.value, 1) << cpu->name;
    CacheModel m(p);
    EXPECT_EQ(m.line_bytes(), static_cast<uint64_t>(p.line_bytes.value));
  }
}

}  // namespace
}  // namespace padlock::timing
