// The cache/memory model (models/timing/cache_model): LRU sets, the exclusive L2, memory
// bandwidth, store-buffer stalls and how a PadLock stream's cost combines with the engine's.
#include "models/timing/cache_model.hpp"

#include <gtest/gtest.h>

#include "models/cpu_model.hpp"

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
