// The guest address space: the page table behind GuestMemory (what the models see),
// mmap placement, and protections.
#include "emulator/memory/address_space.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
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

// A PadLock store into a page with translated code (kPageCode) drops that code first, also
// through translate()'s one-page case (a 16-byte REP XCRYPT output): the hook runs once,
// for that page, and the page loses kPageCode; a read, or a page without code, runs none.
TEST(AddressSpace, OnePageWriteIntoCodeDropsTheCode) {
  AddressSpace as(false);
  std::vector<uint64_t> dropped;
  as.track_code(
      [](uint64_t page, void* d) { static_cast<std::vector<uint64_t>*>(d)->push_back(page); },
      &dropped);
  ASSERT_TRUE(as.map_anonymous(0x10000, 2 * kPage, kPageRead | kPageWrite | kPageExec));
  as.protect_code(0x10000 + kPage);
  ASSERT_NE(as.flags(0x10000 + kPage) & kPageCode, 0);
  EXPECT_NE(as.translate(0x10000 + 0x40, 16, Access::Write), nullptr);  // no code there
  EXPECT_NE(as.translate(0x10000 + kPage + 0x40, 16, Access::Read), nullptr);
  EXPECT_TRUE(dropped.empty());
  EXPECT_EQ(as.translate(0x10000 + kPage + 0x40, 16, Access::Write),
            as.host(0x10000 + kPage + 0x40));
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0], 0x10000 + kPage);
  EXPECT_EQ(as.flags(0x10000 + kPage) & kPageCode, 0);
}

TEST(AddressSpace, UnmapDiscardsContents) {
  AddressSpace as(false);
  ASSERT_TRUE(as.map_anonymous(0x20000, kPage, kPageRead | kPageWrite));
  as.host(0x20000)[5] = 7;
  as.unmap(0x20000, kPage);
  ASSERT_TRUE(as.map_anonymous(0x20000, kPage, kPageRead | kPageWrite));
  EXPECT_EQ(as.host(0x20000)[5], 0);
}

// The break's pages (AddressSpacePolicy::brk): unmapped for the guest but held by the host, and
// mapped again cleared, as zeros. Read access to held pages faults on the host too (the
// process's mappings show no access there), and map_cleared over never-held pages works.
TEST(AddressSpace, KeptPagesAreInaccessibleAndComeBackCleared) {
  AddressSpace as(false);
  const uint64_t va = 0x30000;
  ASSERT_TRUE(as.map_anonymous(va, 4 * kPage, kPageRead | kPageWrite));
  std::memset(as.host(va), 0x5A, 4 * kPage);
  as.unmap_keep_pages(va + kPage, 3 * kPage);
  EXPECT_TRUE(as.range_free(va + kPage, 3 * kPage));
  EXPECT_EQ(as.mapped_bytes(), kPage);
  EXPECT_EQ(as.translate(va + kPage, 1, Access::Read), nullptr);
  FILE* maps = std::fopen("/proc/self/maps", "r");
  ASSERT_NE(maps, nullptr);
  char line[512];
  std::string perms_at_kept;
  const auto kept = reinterpret_cast<uintptr_t>(as.host(va + kPage));
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    uintptr_t a = 0, b = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%lx-%lx %4s", &a, &b, perms) == 3 && a <= kept && kept < b) {
      perms_at_kept = perms;
    }
  }
  std::fclose(maps);
  EXPECT_EQ(perms_at_kept.substr(0, 3), "---");
  ASSERT_TRUE(as.map_cleared(va + kPage, 6 * kPage, kPageRead | kPageWrite));
  const uint8_t* p = as.translate(va, 7 * kPage, Access::Write);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p[kPage - 1], 0x5A);  // the page kept mapped keeps its bytes
  EXPECT_TRUE(std::all_of(p + kPage, p + 7 * kPage, [](uint8_t b) { return b == 0; }));
  EXPECT_EQ(as.mapped_bytes(), 7 * kPage);
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

// The range scans test 64 and eight flag bytes at a time; each answer must equal a page-by-page
// reading of flags() for every start and length around a leaf boundary (1 GiB), with runs
// of mapped, unmapped, read-only and code pages that are not multiples of eight.
TEST(AddressSpace, RangeScansAgreeWithEachPagesFlags) {
  AddressSpace as(true);
  as.track_code([](uint64_t, void*) {}, nullptr);
  const uint64_t base = (uint64_t{1} << 30) - 90 * kPage, pages = 180;
  uint32_t seed = 12345;
  unsigned kind = 0, left = 0;
  for (uint64_t i = 0; i < pages; ++i) {
    if (left-- == 0) {
      // Runs of 1 to 99 pages, so that the scans' steps of 64 and of eight flag bytes meet
      // both short and long runs. 0, 1: unmapped; 2: read-only; 3: writable, with code; 4:
      // read-write.
      seed = seed * 1103515245 + 12345;
      kind = (seed >> 16) % 5;
      left = (seed >> 8) % (seed & 0x10000 ? 99 : 9);
    }
    if (kind >= 2) ASSERT_TRUE(as.map_anonymous(base + i * kPage, kPage, uint8_t(kind - 1)));
    if (kind == 2 || kind == 3) as.protect_code(base + i * kPage);
  }
  const auto f = [&](uint64_t i) { return as.flags(base + i * kPage); };
  for (uint64_t s = 0; s < pages; ++s) {
    for (uint64_t n = 0; s + n <= pages; ++n) {
      const uint64_t va = base + s * kPage, len = n * kPage;
      bool all_mapped = true, none_mapped = true, all_read = true, any_write = false,
           any_code = false;
      uint64_t next = va + len;
      for (uint64_t i = s + n; i-- > s;) {
        all_mapped &= (f(i) & kPageMapped) != 0;
        none_mapped &= !(f(i) & kPageMapped);
        all_read &= (f(i) & kPageRead) != 0;
        any_write |= (f(i) & kPageWrite) != 0;
        any_code |= (f(i) & kPageTranslated) != 0;
        if (f(i) & kPageMapped) next = base + i * kPage;
      }
      EXPECT_EQ(as.range_mapped(va, len), all_mapped) << s << " " << n;
      EXPECT_EQ(as.range_free(va, len), none_mapped) << s << " " << n;
      EXPECT_EQ(as.range_has(va, len, kPageRead), all_read) << s << " " << n;
      EXPECT_EQ(as.range_any(va, len, kPageWrite), any_write) << s << " " << n;
      EXPECT_EQ(as.next_mapped(va, va + len), next) << s << " " << n;
      EXPECT_EQ(as.may_hold_code(va, len), any_code) << s << " " << n;
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
  // unprotect_code clears kPageCode and kPageTranslated in its range only.
  for (uint64_t i = 0; i < pages; ++i) before[i] = f(i);
  bool had_code = false;
  for (uint64_t i = 0; i < pages; ++i) had_code |= (f(i) & kPageCode) != 0;
  ASSERT_TRUE(had_code);
  const uint64_t cut = pages / 2 + 3;
  as.unprotect_code(base + kPage + 5, (cut - 1) * kPage);  // pages 1 .. cut
  for (uint64_t i = 0; i < pages; ++i) {
    const bool cleared = i >= 1 && i <= cut;
    EXPECT_EQ(f(i), cleared ? uint8_t(before[i] & ~(kPageCode | kPageTranslated)) : before[i]) << i;
  }
}

// next_run (what /proc/self/maps lists) against a page-by-page reading: runs of one to
// thousands of pages with one protection, some with translated code (which does not split
// a run), across the leaf boundary at 1 GiB, from every start page.
TEST(AddressSpace, NextRunAgreesWithEachPagesFlags) {
  AddressSpace as(false);
  as.track_code([](uint64_t, void*) {}, nullptr);
  const uint64_t base = (uint64_t{1} << 30) - 3000 * kPage, pages = 6000;
  std::mt19937_64 rng(7);
  for (uint64_t i = 0; i < pages;) {
    const uint64_t n = std::min(pages - i, 1 + rng() % (rng() % 3 == 0 ? 2500 : 70));
    const unsigned kind = rng() % 4;  // 0: unmapped, else the protection
    if (kind != 0) ASSERT_TRUE(as.map_anonymous(base + i * kPage, n * kPage, uint8_t(kind)));
    for (uint64_t k = 0; kind != 0 && k < n; ++k) {
      if (rng() % 5 == 0) as.protect_code(base + (i + k) * kPage);
    }
    i += n;
  }
  // One run over the leaf boundary with code in its last pages before it, which the scan
  // reads eight and one flag bytes at a time (fewer than 64 are left in the leaf).
  ASSERT_TRUE(as.map_anonymous(base + 2900 * kPage, 200 * kPage, kPageRead | kPageWrite));
  for (uint64_t i = 2940; i < 3060; i += 3) as.protect_code(base + i * kPage);
  const uint8_t same = static_cast<uint8_t>(~(kPageCode | kPageTranslated));
  const auto f = [&](uint64_t i) { return i < pages ? as.flags(base + i * kPage) : uint8_t{0}; };
  bool split_by_code = false;
  for (uint64_t s = 0; s <= pages; s += 1 + s % 7) {
    uint64_t p = s;
    while (p < pages && !(f(p) & kPageMapped)) ++p;
    uint64_t e = p + 1;
    while (e < pages && (f(e) & same) == (f(p) & same)) split_by_code |= f(e++) != f(p);
    uint64_t end = 0;
    uint8_t flags = 0xEE;
    const uint64_t start = as.next_run(base + s * kPage, &end, &flags);
    if (p == pages) {
      EXPECT_EQ(start, as.size()) << s;
      EXPECT_EQ(end, as.size()) << s;
      EXPECT_EQ(flags, 0) << s;
    } else {
      EXPECT_EQ(start, base + p * kPage) << s;
      EXPECT_EQ(end, base + e * kPage) << s;
      EXPECT_EQ(flags, f(p) & same) << s;
    }
  }
  EXPECT_TRUE(split_by_code);  // the layout has runs that only code marks would split
}

// The same over a larger space, with runs up to thousands of pages across a leaf boundary
// (1 GiB), changed by maps and unmaps at random: the scans skip whole 64-page blocks and
// words of 64 blocks by the leaf's summary, which must follow every change.
TEST(AddressSpace, SummarisedScansAgreeWithEachPagesFlags) {
  AddressSpace as(true);
  const uint64_t base = (uint64_t{1} << 30) - 20000 * kPage, pages = 40000;
  std::mt19937_64 rng(99);
  for (int k = 0; k < 300; ++k) {
    const uint64_t s = rng() % pages, n = 1 + rng() % (rng() % 4 == 0 ? 9000 : 70);
    const uint64_t len = std::min(n, pages - s) * kPage;
    if (rng() % 3 == 0) {
      as.unmap(base + s * kPage, len);
    } else {
      ASSERT_TRUE(as.map_anonymous(base + s * kPage, len, uint8_t(1 + rng() % 3)));
    }
  }
  std::vector<uint8_t> f(pages);
  uint64_t mapped = 0;
  for (uint64_t i = 0; i < pages; ++i) {
    f[i] = as.flags(base + i * kPage);
    mapped += (f[i] & kPageMapped) != 0;
  }
  EXPECT_EQ(as.mapped_in(base, pages * kPage), mapped * kPage);
  EXPECT_EQ(as.mapped_bytes(), mapped * kPage);
  for (int q = 0; q < 400; ++q) {
    const uint64_t s = rng() % pages, n = rng() % std::min<uint64_t>(pages - s, 1 + rng() % 30000);
    const uint64_t va = base + s * kPage, len = n * kPage;
    bool all_mapped = true, none = true, all_read = true, any_write = false;
    uint64_t count = 0, next = va + len;
    for (uint64_t i = s + n; i-- > s;) {
      const bool m = (f[i] & kPageMapped) != 0;
      all_mapped &= m;
      none &= !m;
      all_read &= (f[i] & kPageRead) != 0;
      any_write |= (f[i] & kPageWrite) != 0;
      count += m;
      if (m) next = base + i * kPage;
    }
    const std::string at = std::to_string(s) + " " + std::to_string(n);
    EXPECT_EQ(as.range_mapped(va, len), all_mapped) << at;
    EXPECT_EQ(as.range_free(va, len), none) << at;
    EXPECT_EQ(as.range_has(va, len, kPageRead), all_read) << at;
    EXPECT_EQ(as.range_any(va, len, kPageWrite), any_write) << at;
    EXPECT_EQ(as.next_mapped(va, va + len), next) << at;
    EXPECT_EQ(as.mapped_in(va, len), count * kPage) << at;
    // find_free_below: the highest free run of m pages in [base, va + len).
    const uint64_t m = 1 + rng() % (rng() % 2 ? 40 : 3000);
    uint64_t want = 0, free_run = 0;
    for (uint64_t e = s + n; e-- > 0;) {
      free_run = (f[e] & kPageMapped) ? 0 : free_run + 1;
      if (free_run == m) {
        want = base + e * kPage;
        break;
      }
    }
    EXPECT_EQ(as.find_free_below(m * kPage, va + len, base), want) << at << " m " << m;
    // accessible_with: the readable prefix of [va + off, + len), and the union of the
    // flags of its pages.
    const uint64_t off = rng() % kPage, blen = len + rng() % kPage;
    uint64_t ok = 0;
    uint8_t seen = 0;
    for (uint64_t i = s; i < pages && ok < blen; ++i) {
      if ((f[i] & (kPageMapped | kPageRead)) != (kPageMapped | kPageRead)) break;
      seen |= f[i];
      ok += kPage - (i == s ? off : 0);
    }
    uint8_t got_seen = 0xFF;
    EXPECT_EQ(as.accessible_with(va + off, blen, kPageMapped | kPageRead, &got_seen),
              std::min(ok, blen))
        << at << " +" << off;
    if (blen != 0) EXPECT_EQ(got_seen, seen) << at;
  }
}

// With protections mirrored (direct memory), each host page carries its guest page's
// protections, minus write on a page with translated code. mprotect is applied a run of
// equal flag bytes at a time, eight bytes per step: the host's own view (/proc/self/maps)
// must agree with every page's flags after runs of every length around a leaf boundary.
TEST(AddressSpace, MirroredHostProtectionsFollowEachPage) {
  AddressSpace as(false);
  as.set_mirror();
  as.track_code([](uint64_t, void*) {}, nullptr);
  const uint64_t base = (uint64_t{1} << 30) - 90 * kPage, pages = 180;
  uint32_t seed = 777;
  const auto next = [&seed] { return (seed = seed * 1103515245 + 12345) >> 8; };
  unsigned kind = 0, left = 0;
  for (uint64_t i = 0; i < pages; ++i) {
    if (left-- == 0) {
      kind = next() % 6;  // 0: unmapped; 1..4: R, W (with code), RW, X; 5: PROT_NONE
      left = next() % (next() % 2 ? 99 : 9);
    }
    const uint8_t prot[] = {0, kPageRead, kPageWrite, kPageRead | kPageWrite, kPageExec, 0};
    if (kind != 0) ASSERT_TRUE(as.map_anonymous(base + i * kPage, kPage, prot[kind]));
    if (kind == 2) as.protect_code(base + i * kPage);
  }
  // protect() over mapped runs re-applies the host protections of whole ranges.
  for (int k = 0; k < 40; ++k) {
    const uint64_t s = next() % pages, n = 1 + next() % 90;
    if (s + n <= pages && as.range_mapped(base + s * kPage, n * kPage)) {
      ASSERT_EQ(as.protect(base + s * kPage, n * kPage, uint8_t(next() % 8)), 0);
    }
  }
  std::vector<std::string> host(pages, "---");
  FILE* maps = std::fopen("/proc/self/maps", "r");
  ASSERT_NE(maps, nullptr);
  char line[512];
  const auto lo = reinterpret_cast<uintptr_t>(as.host(base));
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    uintptr_t a = 0, b = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%lx-%lx %4s", &a, &b, perms) != 3) continue;
    for (uintptr_t h = std::max(a, lo); h < b && h < lo + pages * kPage; h += kPage) {
      host[(h - lo) / kPage] = std::string(perms, 3);
    }
  }
  std::fclose(maps);
  for (uint64_t i = 0; i < pages; ++i) {
    const uint8_t f = as.flags(base + i * kPage);
    std::string want = "---";
    if (f & kPageMapped) {
      if (f & (kPageRead | kPageWrite | kPageExec)) want[0] = 'r';
      if ((f & kPageWrite) && !(f & kPageCode)) want[1] = 'w';
    }
    EXPECT_EQ(host[i], want) << "page " << i << " flags " << int(f);
  }
}

// mremap's move: the bytes arrive at dst, the source is unmapped and stays reserved (the
// host shows no access there), with the host's page tables moved (private pages, one host
// mapping) or the bytes copied (pages of different host protections when mirrored, which
// the host's mremap refuses to move in one call).
TEST(AddressSpace, MovePagesMovesBytesAndLeavesTheSourceReserved) {
  for (const bool mirror : {false, true}) {
    AddressSpace as(false);
    if (mirror) as.set_mirror();
    const uint64_t src = 0x100000, dst = 0x400000, n = 6;
    ASSERT_TRUE(as.map_anonymous(src, n * kPage, kPageRead | kPageWrite));
    for (uint64_t i = 0; i < n; ++i) std::memset(as.host(src + i * kPage), int(0x40 + i), kPage);
    if (mirror) ASSERT_EQ(as.protect(src + 2 * kPage, kPage, kPageRead), 0);  // two host maps
    ASSERT_TRUE(as.map_anonymous(dst, (n + 2) * kPage, kPageRead | kPageWrite));
    as.move_pages(dst, src, n * kPage);
    ASSERT_EQ(as.protect(dst, (n + 2) * kPage, kPageRead | kPageWrite), 0);
    for (uint64_t i = 0; i < n + 2; ++i) {
      const uint8_t want = i < n ? uint8_t(0x40 + i) : 0;
      const uint8_t* h = as.host(dst + i * kPage);
      EXPECT_EQ(h[0], want) << mirror << " " << i;
      EXPECT_EQ(h[kPage - 1], want) << mirror << " " << i;
    }
    EXPECT_TRUE(as.range_free(src, n * kPage));
    EXPECT_EQ(as.mapped_bytes(), (n + 2) * kPage);
    // The source is part of the window's PROT_NONE reservation again, not a hole.
    FILE* maps = std::fopen("/proc/self/maps", "r");
    ASSERT_NE(maps, nullptr);
    char line[512];
    bool reserved = false;
    const auto lo = reinterpret_cast<uintptr_t>(as.host(src));
    while (std::fgets(line, sizeof line, maps) != nullptr) {
      uintptr_t a = 0, b = 0;
      char perms[5] = {};
      if (std::sscanf(line, "%lx-%lx %4s", &a, &b, perms) == 3 && a <= lo && lo + n * kPage <= b) {
        reserved = std::string(perms, 3) == "---";
      }
    }
    std::fclose(maps);
    EXPECT_TRUE(reserved) << mirror;
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
