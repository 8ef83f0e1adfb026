// The guest address space: the page table behind GuestMemory (what the models see),
// mmap placement, and protections.
#include "emulator/memory/address_space.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace padlock::emu {
namespace {

constexpr uint64_t kPage = AddressSpace::kPageSize;

TEST(AddressSpace, WindowSizes) {
  AddressSpace a32(false);
  EXPECT_EQ(a32.size(), uint64_t{1} << 32);
  AddressSpace a64(true);
  EXPECT_GE(a64.size(), uint64_t{1} << 36);
}

TEST(AddressSpace, MapTranslateAndPermissions) {
  AddressSpace as(false);
  EXPECT_EQ(as.translate(0x10000, 4, Access::Read), nullptr);  // unmapped
  ASSERT_TRUE(as.map_anonymous(0x10000, 3 * kPage, kPageRead | kPageWrite));
  uint8_t* p = as.translate(0x10000, 3 * kPage, Access::Write);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p, as.host(0x10000));
  EXPECT_EQ(p[0], 0);  // fresh pages are zero
  std::memset(p, 0xAB, 3 * kPage);
  // Read-only middle page: reads pass, writes see the first inaccessible byte.
  ASSERT_EQ(as.protect(0x10000 + kPage, kPage, kPageRead), 0);
  EXPECT_NE(as.translate(0x10000, 3 * kPage, Access::Read), nullptr);
  EXPECT_EQ(as.translate(0x10000, 3 * kPage, Access::Write), nullptr);
  EXPECT_EQ(as.accessible(0x10000 + 100, 3 * kPage, Access::Write), kPage - 100);
  // Partly unmapped range.
  EXPECT_EQ(as.accessible(0x10000 + 2 * kPage + 8, 2 * kPage, Access::Read), kPage - 8);
  // GuestMemory::read/write across pages.
  uint8_t buf[16];
  EXPECT_TRUE(as.read(0x10000 + kPage - 8, buf, 16));
  EXPECT_EQ(buf[15], 0xAB);
  EXPECT_FALSE(as.write(0x10000 + kPage - 8, buf, 16));
  // PROT_NONE is mapped but inaccessible; unmap makes it free again.
  ASSERT_EQ(as.protect(0x10000, kPage, 0), 0);
  EXPECT_EQ(as.flags(0x10000), kPageMapped);
  EXPECT_EQ(as.accessible(0x10000, 1, Access::Read), 0u);
  as.unmap(0x10000, 3 * kPage);
  EXPECT_TRUE(as.range_free(0x10000, 3 * kPage));
  EXPECT_EQ(as.protect(0x10000, kPage, kPageRead), -ENOMEM);  // Linux: ENOMEM if unmapped
}

TEST(AddressSpace, UnmapDiscardsContents) {
  AddressSpace as(false);
  ASSERT_TRUE(as.map_anonymous(0x20000, kPage, kPageRead | kPageWrite));
  as.host(0x20000)[5] = 7;
  as.unmap(0x20000, kPage);
  ASSERT_TRUE(as.map_anonymous(0x20000, kPage, kPageRead | kPageWrite));
  EXPECT_EQ(as.host(0x20000)[5], 0);
}

TEST(AddressSpace, MappedBytesFollowMapAndUnmap) {
  // --max-memory counts these: overlapping maps count once, PROT_NONE counts, a partial
  // unmap subtracts what it removed, and a range across a leaf boundary (1 GiB) too.
  AddressSpace as(true);
  EXPECT_EQ(as.mapped_bytes(), 0u);
  ASSERT_TRUE(as.map_anonymous(0x10000, 4 * kPage, kPageRead));
  ASSERT_TRUE(as.map_anonymous(0x10000 + 2 * kPage, 4 * kPage, kPageRead | kPageWrite));
  EXPECT_EQ(as.mapped_bytes(), 6 * kPage);
  ASSERT_EQ(as.protect(0x10000, kPage, 0), 0);
  EXPECT_EQ(as.mapped_bytes(), 6 * kPage);
  EXPECT_EQ(as.mapped_in(0x10000 - kPage, 3 * kPage), 2 * kPage);
  as.unmap(0x10000 + kPage, 2 * kPage);
  EXPECT_EQ(as.mapped_bytes(), 4 * kPage);
  EXPECT_EQ(as.mapped_in(0x10000, 6 * kPage), 4 * kPage);
  const uint64_t gib = uint64_t{1} << 30;
  ASSERT_TRUE(as.map_anonymous(gib - 2 * kPage, 4 * kPage, kPageRead));
  EXPECT_EQ(as.mapped_in(gib - 4 * kPage, 8 * kPage), 4 * kPage);
  as.unmap(0, 2 * gib);
  EXPECT_EQ(as.mapped_bytes(), 0u);
}

TEST(AddressSpace, FindFreeBelowSkipsMappings) {
  AddressSpace as(false);
  const uint64_t top = 0x80000000;
  ASSERT_TRUE(as.map_anonymous(top - 2 * kPage, 2 * kPage, kPageRead));
  EXPECT_EQ(as.find_free_below(kPage, top, 0x10000), top - 3 * kPage);
  ASSERT_TRUE(as.map_anonymous(top - 4 * kPage, kPage, kPageRead));
  // Now only [top-3p, top-2p) is free above top-4p: one page fits there, two do not.
  EXPECT_EQ(as.find_free_below(2 * kPage, top, 0x10000), top - 6 * kPage);
  EXPECT_EQ(as.find_free_below(kPage, top, 0x10000), top - 3 * kPage);
  EXPECT_EQ(as.find_free_below(kPage, 0x10000 + kPage, 0x10000), 0x10000u);
  EXPECT_EQ(as.find_free_below(2 * kPage, 0x10000 + kPage, 0x10000), 0u);
}

// The range scans test eight flag bytes at a time; each answer must equal a page-by-page
// reading of flags() for every start and length around a leaf boundary (1 GiB), with runs
// of mapped, unmapped, read-only and code pages that are not multiples of eight.
TEST(AddressSpace, RangeScansAgreeWithEachPagesFlags) {
  AddressSpace as(true);
  as.track_code([](uint64_t, void*) {}, nullptr);
  const uint64_t base = (uint64_t{1} << 30) - 40 * kPage, pages = 80;
  uint32_t seed = 12345;
  for (uint64_t i = 0; i < pages; ++i) {
    seed = seed * 1103515245 + 12345;
    // 0, 1: unmapped; 2: read-only; 3: writable, with code; 4: read-write.
    const unsigned kind = (seed >> 16) % 5;
    if (kind >= 2) ASSERT_TRUE(as.map_anonymous(base + i * kPage, kPage, uint8_t(kind - 1)));
    if (kind == 3) as.protect_code(base + i * kPage);
  }
  const auto f = [&](uint64_t i) { return as.flags(base + i * kPage); };
  for (uint64_t s = 0; s < pages; ++s) {
    for (uint64_t n = 0; s + n <= pages; ++n) {
      const uint64_t va = base + s * kPage, len = n * kPage;
      bool all_mapped = true, none_mapped = true, all_read = true, any_write = false;
      uint64_t next = va + len;
      for (uint64_t i = s + n; i-- > s;) {
        all_mapped &= (f(i) & kPageMapped) != 0;
        none_mapped &= !(f(i) & kPageMapped);
        all_read &= (f(i) & kPageRead) != 0;
        any_write |= (f(i) & kPageWrite) != 0;
        if (f(i) & kPageMapped) next = base + i * kPage;
      }
      EXPECT_EQ(as.range_mapped(va, len), all_mapped) << s << " " << n;
      EXPECT_EQ(as.range_free(va, len), none_mapped) << s << " " << n;
      EXPECT_EQ(as.range_has(va, len, kPageRead), all_read) << s << " " << n;
      EXPECT_EQ(as.range_any(va, len, kPageWrite), any_write) << s << " " << n;
      EXPECT_EQ(as.next_mapped(va, va + len), next) << s << " " << n;
      // find_free_below: the highest free run of n pages in [base, va + len).
      uint64_t want = 0;
      for (uint64_t e = s + n; n > 0 && e >= n && want == 0; --e) {
        bool free = true;
        for (uint64_t i = e - n; i < e; ++i) free &= !(f(i) & kPageMapped);
        if (free) want = base + (e - n) * kPage;
      }
      if (n > 0) EXPECT_EQ(as.find_free_below(len, va + len, base), want) << s << " " << n;
    }
  }
  // protect on a mapped run keeps kPageCode only where it stays writable.
  uint64_t s = 0;
  while (!(f(s) & kPageMapped)) ++s;
  uint64_t e = s;
  while (e < pages && (f(e) & kPageMapped)) ++e;
  std::vector<uint8_t> before;
  for (uint64_t i = 0; i < pages; ++i) before.push_back(f(i));
  ASSERT_EQ(as.protect(base + s * kPage, (e - s) * kPage, kPageRead | kPageWrite), 0);
  for (uint64_t i = 0; i < pages; ++i) {
    const uint8_t want =
        i >= s && i < e ? uint8_t((before[i] & ~7) | kPageRead | kPageWrite) : before[i];
    EXPECT_EQ(f(i), want) << i;
  }
  // unprotect_code clears kPageCode in its range only.
  for (uint64_t i = 0; i < pages; ++i) before[i] = f(i);
  bool had_code = false;
  for (uint64_t i = 0; i < pages; ++i) had_code |= (f(i) & kPageCode) != 0;
  ASSERT_TRUE(had_code);
  const uint64_t cut = pages / 2 + 3;
  as.unprotect_code(base + kPage + 5, (cut - 1) * kPage);  // pages 1 .. cut
  for (uint64_t i = 0; i < pages; ++i) {
    const bool cleared = i >= 1 && i <= cut;
    EXPECT_EQ(f(i), cleared ? uint8_t(before[i] & ~kPageCode) : before[i]) << i;
  }
}

TEST(AddressSpace, OutsideTheWindow) {
  AddressSpace as(false);
  EXPECT_FALSE(as.map_anonymous(0xFFFFF000, 2 * kPage, kPageRead));
  EXPECT_EQ(as.translate(0xFFFFFFFF, 2, Access::Read), nullptr);
  EXPECT_EQ(as.flags(uint64_t{1} << 33), 0);
}

}  // namespace
}  // namespace padlock::emu
