#include "emulator/memory/address_space.hpp"

#include <emmintrin.h>  // SSE2: the x86-64 baseline
#include <sys/mman.h>
#include <unicorn/unicorn.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>

namespace padlock::emu {

namespace {
constexpr int kReserveFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
// Past the window: an access at its last byte addressed directly (0xFFFFFFFF in a 32-bit
// window) spills up to 15 bytes beyond it, which must fault rather than touch a host
// mapping.
constexpr uint64_t kGuard = 64 * 1024;

// The page table's scans test 64 flag bytes per step (four SSE2 compares), then eight,
// then one: a mapping of gigabytes is millions of pages, and under the sanitizers each step
// costs far more than the bytes it tests.
constexpr uint64_t kBlock = 64;
constexpr uint64_t kEachByte = 0x0101010101010101ull;
uint64_t eight(const uint8_t* f) {
  uint64_t w;
  std::memcpy(&w, f, 8);
  return w;
}

// Bit i set: (f[i] & mask) == value, for the 64 flag bytes at f.
uint64_t block_where(const uint8_t* f, uint8_t mask, uint8_t value) {
  const __m128i m = _mm_set1_epi8(static_cast<char>(mask));
  const __m128i v = _mm_set1_epi8(static_cast<char>(value));
  uint64_t bits = 0;
  for (unsigned k = 0; k < 4; ++k) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f + 16 * k));
    const auto hit =
        static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(b, m), v)));
    bits |= uint64_t{hit} << (16 * k);
  }
  return bits;
}
// Bit i set: f[i] has a bit of `flag`.
uint64_t block_any(const uint8_t* f, uint8_t flag) {
  return ~block_where(f, flag, 0);
}

// The index of the first of the n flag bytes at f with a bit of `flag` set, or n.
uint64_t first_with(const uint8_t* f, uint64_t n, uint8_t flag) {
  uint64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    if (const uint64_t m = block_any(f + i, flag)) return i + std::countr_zero(m);
  }
  while (i + 8 <= n && !(eight(f + i) & (flag * kEachByte))) i += 8;
  while (i < n && !(f[i] & flag)) ++i;
  return i;
}

// Whether each of the n flag bytes at f has every bit of `flag`.
// The index of the first of the n flag bytes at f lacking a bit of `need`, or n.
uint64_t first_without(const uint8_t* f, uint64_t n, uint8_t need) {
  uint64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    const uint64_t m = block_where(f + i, need, need);
    if (m != ~uint64_t{0}) return i + static_cast<uint64_t>(std::countr_one(m));
  }
  while (i + 8 <= n && (eight(f + i) & (need * kEachByte)) == need * kEachByte) i += 8;
  while (i < n && (f[i] & need) == need) ++i;
  return i;
}

// Whether each of the n flag bytes at f has every bit of `flag`.
bool all_with(const uint8_t* f, uint64_t n, uint8_t flag) {
  return first_without(f, n, flag) == n;
}

// The union of the n flag bytes at f.
uint8_t or_of(const uint8_t* f, uint64_t n) {
  __m128i acc = _mm_setzero_si128();
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc = _mm_or_si128(acc, _mm_loadu_si128(reinterpret_cast<const __m128i*>(f + i)));
  }
  alignas(16) uint8_t b[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(b), acc);
  uint8_t all = 0;
  for (const uint8_t v : b) all |= v;
  for (; i < n; ++i) all |= f[i];
  return all;
}

// One plus the index of the last of the n flag bytes at f whose `flag` bits are set (`set`)
// or all clear (!set), or 0 when there is none.
uint64_t last_where(const uint8_t* f, uint64_t n, uint8_t flag, bool set) {
  static_assert(std::endian::native == std::endian::little);  // byte k is bits 8k..8k+7
  for (; n >= kBlock; n -= kBlock) {
    const uint64_t clear = block_where(f + n - kBlock, flag, 0);
    if (const uint64_t m = set ? ~clear : clear) {
      return n - kBlock + static_cast<uint64_t>(63 - std::countl_zero(m)) + 1;
    }
  }
  const uint64_t bits = flag * kEachByte;
  for (; n >= 8; n -= 8) {
    uint64_t w = eight(f + n - 8) & bits;
    if (!set) w ^= bits;
    if (w != 0) return n - 8 + static_cast<uint64_t>(63 - std::countl_zero(w)) / 8 + 1;
  }
  while (n > 0 && ((f[n - 1] & flag) != 0) != set) --n;
  return n;
}

// Bytes from f on whose bits of `mask` equal `value`, at most n.
uint64_t run_of(const uint8_t* f, uint64_t n, uint8_t value, uint8_t mask = 0xFF) {
  uint64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    const uint64_t m = block_where(f + i, mask, value);
    if (m != ~uint64_t{0}) return i + std::countr_one(m);
  }
  while (i + 8 <= n && (eight(f + i) & (mask * kEachByte)) == value * kEachByte) i += 8;
  while (i < n && (f[i] & mask) == value) ++i;
  return i;
}

// A leaf's pages [a, b) as segments (page indices within the leaf): runs of empty blocks,
// runs of full blocks (AddressSpace::Summary), and the pages between them whose flag bytes
// must be read. seg(kind, start, n) sees them from a up (forward) or from b down; it
// returns false to stop, and then so does segments().
enum class Seg { Empty, Full, Bytes };
constexpr uint64_t kBlockPages = uint64_t{1} << AddressSpace::kBlockBits;
static_assert(kBlockPages == kBlock, "set_flags reads a summary block in one block_where");

bool bit(const uint64_t* w, uint64_t k) {
  return (w[k / 64] >> (k % 64)) & 1;
}

// The first block at or after k (below kend) whose bit in w is not `value`, or kend.
uint64_t run_end(const uint64_t* w, uint64_t k, uint64_t kend, bool value) {
  while (k < kend) {
    if (k % 64 == 0 && kend - k >= 64) {
      const uint64_t other = value ? ~w[k / 64] : w[k / 64];
      if (other == 0) {
        k += 64;
        continue;
      }
      return k + static_cast<uint64_t>(std::countr_zero(other));
    }
    if (bit(w, k) != value) return k;
    ++k;
  }
  return kend;
}

// The lowest k at or above kmin such that every block of [k, kend) has `value` in w.
uint64_t run_start(const uint64_t* w, uint64_t kend, uint64_t kmin, bool value) {
  uint64_t k = kend;
  while (k > kmin) {
    if (k % 64 == 0 && k - kmin >= 64) {
      const uint64_t other = value ? ~w[k / 64 - 1] : w[k / 64 - 1];
      if (other == 0) {
        k -= 64;
        continue;
      }
      return k - static_cast<uint64_t>(std::countl_zero(other));
    }
    if (bit(w, k - 1) != value) return k;
    --k;
  }
  return kmin;
}

template <class F>
bool segments(const uint64_t* any, const uint64_t* full, uint64_t a, uint64_t b, bool forward,
              F seg) {
  if (forward) {
    for (uint64_t i = a; i < b;) {
      if (i % kBlockPages != 0 || b - i < kBlockPages) {
        const uint64_t e = std::min(b, (i | (kBlockPages - 1)) + 1);
        if (!seg(Seg::Bytes, i, e - i)) return false;
        i = e;
        continue;
      }
      const uint64_t k0 = i / kBlockPages, kend = b / kBlockPages;
      uint64_t k = k0;
      Seg kind = Seg::Bytes;
      if (!bit(any, k)) {
        kind = Seg::Empty;
        k = run_end(any, k, kend, false);
      } else if (bit(full, k)) {
        kind = Seg::Full;
        k = run_end(full, k, kend, true);
      } else {
        while (++k < kend && bit(any, k) && !bit(full, k)) {
        }
      }
      if (!seg(kind, i, (k - k0) * kBlockPages)) return false;
      i = k * kBlockPages;
    }
    return true;
  }
  for (uint64_t j = b; j > a;) {
    if (j % kBlockPages != 0 || j - a < kBlockPages) {
      const uint64_t s = std::max(a, (j - 1) & ~(kBlockPages - 1));
      if (!seg(Seg::Bytes, s, j - s)) return false;
      j = s;
      continue;
    }
    const uint64_t kend = j / kBlockPages, kmin = (a + kBlockPages - 1) / kBlockPages;
    uint64_t k = kend - 1;
    Seg kind = Seg::Bytes;
    if (!bit(any, k)) {
      kind = Seg::Empty;
      k = run_start(any, kend, kmin, false);
    } else if (bit(full, k)) {
      kind = Seg::Full;
      k = run_start(full, kend, kmin, true);
    } else {
      while (k > kmin && bit(any, k - 1) && !bit(full, k - 1)) --k;
    }
    if (!seg(kind, k * kBlockPages, j - k * kBlockPages)) return false;
    j = k * kBlockPages;
  }
  return true;
}

// The scans of one leaf (f its flag bytes, any/full its summary), pages [a, b). Every flag
// bit implies kPageMapped, so an empty block has none of them.
// The first page with a bit of `flag`, or b.
uint64_t first_in(const uint8_t* f, const uint64_t* any, const uint64_t* full, uint64_t a,
                  uint64_t b, uint8_t flag) {
  uint64_t at = b;
  segments(any, full, a, b, true, [&](Seg kind, uint64_t s, uint64_t n) {
    if (kind == Seg::Empty) return true;
    const uint64_t i = kind == Seg::Full && flag == kPageMapped ? 0 : first_with(f + s, n, flag);
    if (i == n) return true;
    at = s + i;
    return false;
  });
  return at;
}

// One plus the last page that is mapped (`mapped`) or not, or 0.
uint64_t last_in(const uint8_t* f, const uint64_t* any, const uint64_t* full, uint64_t a,
                 uint64_t b, bool mapped) {
  uint64_t at = 0;
  segments(any, full, a, b, false, [&](Seg kind, uint64_t s, uint64_t n) {
    if (kind != Seg::Bytes) {
      if ((kind == Seg::Full) != mapped) return true;
      at = s + n;
      return false;
    }
    const uint64_t i = last_where(f + s, n, kPageMapped, mapped);
    if (i == 0) return true;
    at = s + i;
    return false;
  });
  return at;
}

// Whether every page has each bit of `flag` (not 0).
bool all_in(const uint8_t* f, const uint64_t* any, const uint64_t* full, uint64_t a, uint64_t b,
            uint8_t flag) {
  return segments(any, full, a, b, true, [&](Seg kind, uint64_t s, uint64_t n) {
    if (kind == Seg::Empty) return false;
    return (kind == Seg::Full && flag == kPageMapped) || all_with(f + s, n, flag);
  });
}
}  // namespace

AddressSpace::AddressSpace(bool guest64) {
  const uint64_t sizes64[] = {1ull << 40, 1ull << 38, 1ull << 36};
  const uint64_t sizes32[] = {1ull << 32};
  const uint64_t* sizes = guest64 ? sizes64 : sizes32;
  const size_t n = guest64 ? 3 : 1;
  for (size_t i = 0; i < n; ++i) {
    void* p = mmap(nullptr, sizes[i] + kGuard, PROT_NONE, kReserveFlags, -1, 0);
    if (p != MAP_FAILED) {
      base_ = static_cast<uint8_t*>(p);
      size_ = sizes[i];
      reserved_ = sizes[i] + kGuard;
      break;
    }
  }
  if (base_ == nullptr) {
    throw std::runtime_error(std::string("cannot reserve guest address space: ") +
                             std::strerror(errno));
  }
  nleaves_ = (size_ / kPageSize) >> kLeafBits;
  if (nleaves_ == 0) nleaves_ = 1;
  leaves_ = std::make_unique<std::unique_ptr<uint8_t[]>[]>(nleaves_);
  summaries_ = std::make_unique<std::unique_ptr<Summary>[]>(nleaves_);
}

AddressSpace::~AddressSpace() {
  if (base_ != nullptr) munmap(base_, reserved_);
}

void AddressSpace::track_code(void (*on_code_write)(uint64_t, void*), void* data) {
  on_code_write_ = on_code_write;
  on_code_write_data_ = data;
}

// Private anonymous pages stay read-write on the host unless protections are mirrored;
// MAP_SHARED pages always carry the guest's (another process may see them).
int AddressSpace::host_prot(uint8_t f) const {
  if (!(f & kPageMapped)) return PROT_NONE;
  if (!mirror_ && !(f & kPageShared)) return PROT_READ | PROT_WRITE;
  int p = 0;
  if (f & (kPageRead | kPageExec)) p |= PROT_READ;
  if (f & kPageWrite) p |= PROT_READ | PROT_WRITE;
  if (mirror_ && (f & kPageCode)) p &= ~PROT_WRITE;
  return p;
}

int AddressSpace::apply_host(uint64_t va, uint64_t len) {
  // One mprotect per run of pages with equal host protections: glibc reserves and
  // mprotects ranges of many MiB at once. The flag bytes are walked a leaf at a time, and
  // pages whose flag byte repeats the one before eight at a time (a lazily mapped bss of a
  // terabyte is 2^28 pages); a missing leaf is one run of unmapped pages.
  uint64_t run = va;
  int run_prot = -1;
  auto flush = [&](uint64_t end) -> int {
    if (run_prot >= 0 && end > run && mprotect(base_ + run, end - run, run_prot) != 0) {
      return -errno;
    }
    return 0;
  };
  const uint64_t mask = (uint64_t{1} << kLeafBits) - 1;
  for (uint64_t page = va / kPageSize, end = (va + len) / kPageSize; page < end;) {
    const uint64_t n = std::min(end, (page | mask) + 1) - page;
    const uint8_t* l = leaf(page);
    const uint8_t* f = l != nullptr ? l + (page & mask) : nullptr;
    for (uint64_t i = 0; i < n;) {
      const uint8_t flags = f != nullptr ? f[i] : 0;
      // Without mirroring only shared pages have host protections of their own.
      const int p = (mirror_ || (flags & kPageShared)) ? host_prot(flags) : -1;
      if (p != run_prot) {
        if (const int r = flush((page + i) * kPageSize); r != 0) return r;
        run = (page + i) * kPageSize;
        run_prot = p;
      }
      if (f == nullptr) break;
      i += run_of(f + i, n - i, flags);
    }
    page += n;
  }
  return flush(va + len);
}

void AddressSpace::protect_code(uint64_t va) {
  if (on_code_write_ == nullptr || va >= size_) return;
  va &= ~kPageMask;
  const uint8_t f = flags(va);
  if (!(f & kPageMapped)) return;
  flags_of(va / kPageSize) = static_cast<uint8_t>(f | kPageTranslated);
  if (!(f & kPageWrite) || (f & kPageCode)) return;
  const uint8_t code = static_cast<uint8_t>(f | kPageTranslated | kPageCode);
  flags_of(va / kPageSize) = code;
  if (mirror_) mprotect(base_ + va, kPageSize, host_prot(code));
}

void AddressSpace::unprotect_code(uint64_t va, uint64_t len) {
  const uint64_t start = va & ~kPageMask;
  const uint64_t end = std::min(size_, (va + len + kPageMask) & ~kPageMask);
  // A leaf's run at a time: munmap of a large range passes here.
  const uint64_t mask = (uint64_t{1} << kLeafBits) - 1;
  for (uint64_t page = start / kPageSize, last = end / kPageSize; page < last;) {
    const uint64_t n = std::min(last, (page | mask) + 1) - page;
    if (uint8_t* l = leaf(page)) {
      const Summary& sum = *summaries_[page >> kLeafBits];
      const uint8_t code = kPageCode | kPageTranslated;
      const uint64_t a = page & mask, b = a + n;
      for (uint64_t i = first_in(l, sum.any, sum.full, a, b, code); i < b;
           i = first_in(l, sum.any, sum.full, i + 1, b, code)) {
        const bool had_code = (l[i] & kPageCode) != 0;
        l[i] &= static_cast<uint8_t>(~code);
        if (had_code && mirror_) {
          mprotect(base_ + (page - a + i) * kPageSize, kPageSize, host_prot(l[i]));
        }
      }
    }
    page += n;
  }
}

void AddressSpace::code_writes(uint64_t va, uint64_t len) {
  for (uint64_t a = va & ~kPageMask; a < va + len && a < size_; a += kPageSize) {
    if (flags(a) & kPageCode) {
      unprotect_code(a, kPageSize);
      on_code_write_(a, on_code_write_data_);
    }
  }
}

void AddressSpace::poke(uint64_t va, const void* src, uint64_t len) {
  if (len == 0) return;
  const uint64_t start = va & ~kPageMask, end = (va + len + kPageMask) & ~kPageMask;
  if (mirror_) mprotect(base_ + start, end - start, PROT_READ | PROT_WRITE);
  std::memcpy(base_ + va, src, len);
  if (mirror_) apply_host(start, end - start);
}

void AddressSpace::copy(uint64_t dst, uint64_t src, uint64_t len) {
  if (len == 0) return;
  const uint64_t mask = kPageMask;
  const uint64_t s0 = src & ~mask, s1 = (src + len + mask) & ~mask;
  const uint64_t d0 = dst & ~mask, d1 = (dst + len + mask) & ~mask;
  if (mirror_) {
    mprotect(base_ + s0, s1 - s0, PROT_READ);
    mprotect(base_ + d0, d1 - d0, PROT_READ | PROT_WRITE);
  }
  std::memmove(base_ + dst, base_ + src, len);
  if (mirror_) {
    apply_host(s0, s1 - s0);
    apply_host(d0, d1 - d0);
  }
}

void AddressSpace::move_pages(uint64_t dst, uint64_t src, uint64_t len) {
  if (len == 0) return;
  if (range_any(src, len, kPageShared) ||
      mremap(base_ + src, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, base_ + dst) == MAP_FAILED) {
    copy(dst, src, len);
  }
  unmap(src, len);  // after a move, reserves the hole it left in the window again
}

uint8_t* AddressSpace::leaf_alloc(uint64_t page) {
  const uint64_t i = page >> kLeafBits;
  if (!leaves_[i]) {
    std::unique_ptr<uint8_t[]> flags(new (std::nothrow) uint8_t[size_t{1} << kLeafBits]);
    std::unique_ptr<Summary> sum(new (std::nothrow) Summary);
    if (!flags || !sum) return nullptr;
    std::memset(flags.get(), 0, size_t{1} << kLeafBits);
    leaves_[i] = std::move(flags);
    summaries_[i] = std::move(sum);
  }
  return leaves_[i].get();
}

bool AddressSpace::leaves_for(uint64_t va, uint64_t len) {
  if (len == 0) return true;
  for (uint64_t page = va / kPageSize, last = (va + len - 1) / kPageSize; page <= last;
       page = ((page >> kLeafBits) + 1) << kLeafBits) {
    if (leaf_alloc(page) == nullptr) return false;
  }
  return true;
}

namespace {
// Mapped pages among `n` flag bytes (kPageMapped is bit 3 of each byte).
uint64_t count_mapped(const uint8_t* f, uint64_t n) {
  static_assert(kPageMapped == 8);
  uint64_t pages = 0, i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    pages += static_cast<uint64_t>(std::popcount(block_any(f + i, kPageMapped)));
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, f + i, 8);
    pages += static_cast<uint64_t>(std::popcount((w >> 3) & 0x0101010101010101ull));
  }
  for (; i < n; ++i) pages += (f[i] >> 3) & 1;
  return pages;
}

// Mapped pages of a leaf's pages [a, b).
uint64_t count_in(const uint8_t* f, const uint64_t* any, const uint64_t* full, uint64_t a,
                  uint64_t b) {
  uint64_t pages = 0;
  segments(any, full, a, b, true, [&](Seg kind, uint64_t s, uint64_t n) {
    pages += kind == Seg::Empty ? 0 : kind == Seg::Full ? n : count_mapped(f + s, n);
    return true;
  });
  return pages;
}
}  // namespace

void AddressSpace::set_flags(uint64_t va, uint64_t len, uint8_t f) {
  // A leaf's run at a time (a range of gigabytes is millions of pages).
  const uint64_t mask = (uint64_t{1} << kLeafBits) - 1;
  for (uint64_t page = va / kPageSize, end = (va + len) / kPageSize; page < end;) {
    const uint64_t run = std::min(end, (page | mask) + 1) - page;
    uint8_t* l = f != 0 ? leaf_alloc(page) : leaf(page);
    if (l != nullptr) {
      Summary& sum = *summaries_[page >> kLeafBits];
      const uint64_t a = page & mask, b = a + run;
      mapped_pages_ -= count_in(l, sum.any, sum.full, a, b);
      std::memset(l + a, f, run);
      if (f & kPageMapped) mapped_pages_ += run;
      // The summary of the blocks the run touched: whole ones from f, the two ends read.
      for (uint64_t k = a / kBlockPages; k * kBlockPages < b; ++k) {
        const uint64_t lo = k * kBlockPages;
        uint64_t mapped = (f & kPageMapped) ? ~uint64_t{0} : 0;
        if (lo < a || lo + kBlockPages > b) mapped = block_any(l + lo, kPageMapped);
        const uint64_t one = uint64_t{1} << (k % 64);
        sum.any[k / 64] = mapped != 0 ? sum.any[k / 64] | one : sum.any[k / 64] & ~one;
        sum.full[k / 64] = ~mapped == 0 ? sum.full[k / 64] | one : sum.full[k / 64] & ~one;
      }
    }
    page += run;
  }
}

uint64_t AddressSpace::mapped_in(uint64_t va, uint64_t len) const {
  const uint64_t mask = (uint64_t{1} << kLeafBits) - 1;
  uint64_t pages = 0;
  for (uint64_t page = va / kPageSize, end = std::min(va + len, size_) / kPageSize; page < end;) {
    const uint64_t run = std::min(end, (page | mask) + 1) - page;
    if (const LeafView v = view(page); v.flags != nullptr) {
      pages += count_in(v.flags, v.sum->any, v.sum->full, page & mask, (page & mask) + run);
    }
    page += run;
  }
  return pages * kPageSize;
}

uint64_t AddressSpace::next_mapped(uint64_t va, uint64_t end) const {
  const uint64_t mask = (uint64_t{1} << kLeafBits) - 1;
  uint64_t page = va / kPageSize;
  const uint64_t last = std::min(end, size_) / kPageSize;
  while (page < last) {
    const LeafView v = view(page);
    const uint64_t leaf_end = std::min(last, (page | mask) + 1);
    if (v.flags != nullptr) {
      const uint64_t a = page & mask, b = a + (leaf_end - page);
      const uint64_t i = first_in(v.flags, v.sum->any, v.sum->full, a, b, kPageMapped);
      if (i < b) return (page - a + i) * kPageSize;
    }
    page = leaf_end;
  }
  return end;
}

uint64_t AddressSpace::next_run(uint64_t va, uint64_t* end, uint8_t* run_flags) const {
  // The run's start from the summaries, its end 64 flag bytes a step: /proc/self/maps walks
  // the whole window, and the i386 stack's leaf is 2^18 mostly unmapped pages.
  const uint64_t mask = (uint64_t{1} << kLeafBits) - 1;
  const uint8_t same = static_cast<uint8_t>(~(kPageCode | kPageTranslated));
  const uint64_t last = size_ / kPageSize, start = next_mapped(va, size_);
  if (start >= size_) {
    *end = std::max(va / kPageSize, last) * kPageSize;
    *run_flags = 0;
    return size_;
  }
  const uint8_t want = flags(start) & same;
  uint64_t page = start / kPageSize + 1;
  while (page < last) {
    const uint8_t* l = leaf(page);
    if (l == nullptr) break;
    const uint64_t n = std::min(last, (page | mask) + 1) - page;
    const uint64_t i = run_of(l + (page & mask), n, want, same);
    page += i;
    if (i < n) break;
  }
  *end = page * kPageSize;
  *run_flags = want;
  return start;
}

bool AddressSpace::map_anonymous(uint64_t va, uint64_t len, uint8_t prot) {
  if (!in_window(va, len)) return false;
  if (len == 0) return true;
  // The page table first: a host allocation failure leaves the mapping as it was.
  if (!leaves_for(va, len)) return false;
  void* p = mmap(base_ + va, len, PROT_READ | PROT_WRITE, MAP_FIXED | kReserveFlags, -1, 0);
  if (p == MAP_FAILED) return false;
  mark_mapped(va, len, prot);
  return true;
}

// Pages the host holds read-write become the guest's private pages with `prot`.
void AddressSpace::mark_mapped(uint64_t va, uint64_t len, uint8_t prot) {
  const uint8_t f = static_cast<uint8_t>((prot & 7) | kPageMapped);
  set_flags(va, len, f);
  if (host_prot(f) != (PROT_READ | PROT_WRITE)) mprotect(base_ + va, len, host_prot(f));
}

bool AddressSpace::map_cleared(uint64_t va, uint64_t len, uint8_t prot) {
  if (!in_window(va, len)) return false;
  if (len == 0) return true;
  if (!leaves_for(va, len)) return false;
  // Unmapped pages are private anonymous on the host (the reserve, or kept pages). Pages
  // the host holds are cleared in place; the others (never touched, or swapped out) are
  // dropped, so they come back as zeros on first touch and clearing costs them nothing.
  if (mprotect(base_ + va, len, PROT_READ | PROT_WRITE) != 0) return false;
  unsigned char resident[512];
  const uint64_t most = sizeof resident * kPageSize;
  for (uint64_t done = 0; done < len; done += most) {
    const uint64_t pages = std::min(len - done, most) / kPageSize;
    uint8_t* p = base_ + va + done;
    if (mincore(p, pages * kPageSize, resident) != 0) std::memset(resident, 1, pages);
    for (uint64_t i = 0, j = 0; i < pages; i = j) {
      while (j < pages && (resident[j] & 1) == (resident[i] & 1)) ++j;
      if (resident[i] & 1) {
        std::memset(p + i * kPageSize, 0, (j - i) * kPageSize);
      } else {
        madvise(p + i * kPageSize, (j - i) * kPageSize, MADV_DONTNEED);
      }
    }
  }
  mark_mapped(va, len, prot);
  return true;
}

int AddressSpace::map_shared_file(uint64_t va, uint64_t len, uint8_t prot, int fd,
                                  uint64_t offset) {
  if (!in_window(va, len)) return -ENOMEM;
  const uint8_t f = static_cast<uint8_t>((prot & 7) | kPageMapped | kPageShared);
  if (!leaves_for(va, len)) return -ENOMEM;
  void* p =
      mmap(base_ + va, len, host_prot(f), MAP_FIXED | MAP_SHARED, fd, static_cast<off_t>(offset));
  if (p == MAP_FAILED) {
    const int err = errno;
    // Leave a hole rather than whatever the failed mmap left behind.
    mmap(base_ + va, len, PROT_NONE, MAP_FIXED | kReserveFlags, -1, 0);
    set_flags(va, len, 0);
    return -err;
  }
  set_flags(va, len, f);
  return 0;
}

void AddressSpace::unmap(uint64_t va, uint64_t len) {
  if (!in_window(va, len) || len == 0) return;
  mmap(base_ + va, len, PROT_NONE, MAP_FIXED | kReserveFlags, -1, 0);
  set_flags(va, len, 0);
}

void AddressSpace::unmap_keep_pages(uint64_t va, uint64_t len) {
  if (!in_window(va, len) || len == 0) return;
  mprotect(base_ + va, len, PROT_NONE);
  set_flags(va, len, 0);
}

int AddressSpace::protect(uint64_t va, uint64_t len, uint8_t prot) {
  if (!in_window(va, len) || !range_mapped(va, len)) return -ENOMEM;
  // A leaf's run at a time (every leaf exists: the range is mapped).
  const uint64_t mask = (uint64_t{1} << kLeafBits) - 1;
  const uint8_t keep = static_cast<uint8_t>(~7 & ((prot & kPageWrite) ? 0xFF : ~kPageCode));
  for (uint64_t page = va / kPageSize, end = (va + len) / kPageSize; page < end;) {
    const uint64_t n = std::min(end, (page | mask) + 1) - page;
    uint8_t* f = leaf(page) + (page & mask);
    uint64_t i = 0;
    const __m128i keep16 = _mm_set1_epi8(static_cast<char>(keep));
    const __m128i prot16 = _mm_set1_epi8(static_cast<char>(prot & 7));
    for (; i + 16 <= n; i += 16) {
      auto* p = reinterpret_cast<__m128i*>(f + i);
      _mm_storeu_si128(p, _mm_or_si128(_mm_and_si128(_mm_loadu_si128(p), keep16), prot16));
    }
    for (; i + 8 <= n; i += 8) {
      const uint64_t w = (eight(f + i) & (keep * kEachByte)) | ((prot & 7) * kEachByte);
      std::memcpy(f + i, &w, 8);
    }
    for (; i < n; ++i) f[i] = static_cast<uint8_t>((f[i] & keep) | (prot & 7));
    page += n;
  }
  return apply_host(va, len);
}

// Calls f(view, a, b) for the leaf-sized runs of the pages of [va, va + len) (va rounded
// down, the end up): the leaf and the run's page indices within it. Stops early, returning
// false, when f returns false. The range functions below work this way rather than page by
// page with a leaf lookup each: a guest's mmap or munmap of gigabytes is millions of pages.
template <class F>
bool AddressSpace::leaf_runs(uint64_t va, uint64_t len, F f) const {
  const uint64_t mask = (uint64_t{1} << kLeafBits) - 1;
  for (uint64_t page = va / kPageSize, end = (va + len + kPageMask) / kPageSize; page < end;) {
    const uint64_t run = std::min(end, (page | mask) + 1) - page;
    if (!f(view(page), page & mask, (page & mask) + run)) return false;
    page += run;
  }
  return true;
}

bool AddressSpace::range_free(uint64_t va, uint64_t len) const {
  if (!in_window(va, len)) return false;
  if (len == 0) return true;
  return leaf_runs(va, len, [](LeafView v, uint64_t a, uint64_t b) {
    return v.flags == nullptr || first_in(v.flags, v.sum->any, v.sum->full, a, b, kPageMapped) == b;
  });
}

bool AddressSpace::range_mapped(uint64_t va, uint64_t len) const {
  return range_has(va, len, kPageMapped);
}

bool AddressSpace::range_has(uint64_t va, uint64_t len, uint8_t flag) const {
  if (!in_window(va, len)) return false;
  return leaf_runs(va, len, [flag](LeafView v, uint64_t a, uint64_t b) {
    if (flag == 0) return true;
    return v.flags != nullptr && all_in(v.flags, v.sum->any, v.sum->full, a, b, flag);
  });
}

bool AddressSpace::range_any(uint64_t va, uint64_t len, uint8_t flag) const {
  if (va >= size_) return false;
  return !leaf_runs(va, std::min(len, size_ - va), [flag](LeafView v, uint64_t a, uint64_t b) {
    return v.flags == nullptr || first_in(v.flags, v.sum->any, v.sum->full, a, b, flag) == b;
  });
}

uint64_t AddressSpace::last_page(uint64_t lo, uint64_t hi, bool mapped) const {
  const uint64_t mask = (uint64_t{1} << kLeafBits) - 1;
  while (hi > lo) {
    const uint64_t first = std::max(lo, (hi - 1) & ~mask);
    if (const LeafView v = view(hi - 1); v.flags != nullptr) {
      const uint64_t a = first & mask, b = a + (hi - first);
      const uint64_t i = last_in(v.flags, v.sum->any, v.sum->full, a, b, mapped);
      if (i != 0) return first - a + i;
    } else if (!mapped) {
      return hi;  // a missing leaf maps nothing
    }
    hi = first;
  }
  return 0;
}

uint64_t AddressSpace::find_free_below(uint64_t len, uint64_t limit, uint64_t floor) const {
  if (len == 0 || limit > size_ || limit < len) return 0;
  const uint64_t n = (len + kPageMask) / kPageSize, bottom = (floor + kPageMask) / kPageSize;
  // Candidate runs end at page `top` (exclusive). A mapped page in the top n pages moves
  // the end below the whole mapped run it belongs to: both scans skip eight flag bytes at
  // a time, so a mapping of gigabytes is not walked page by page.
  uint64_t top = limit / kPageSize;
  while (top >= bottom + n) {
    const uint64_t mapped = last_page(top - n, top, true);
    if (mapped == 0) return (top - n) * kPageSize;
    top = last_page(bottom, mapped - 1, false);
    if (top == 0) break;
  }
  return 0;
}

uint64_t AddressSpace::accessible_pages(uint64_t va, uint64_t len, uint8_t need,
                                        uint8_t* seen) const {
  if (va >= size_) return 0;
  if (seen != nullptr) *seen = 0;
  if (len == 0) return 0;
  // A leaf's run at a time, 64 flag bytes per step: PadLock probes whole buffers (a REP
  // XCRYPT over 64 MiB is 16,384 pages) at each start and each resumption.
  const uint64_t end = va + std::min(len, size_ - va);
  const uint64_t mask = (uint64_t{1} << kLeafBits) - 1;
  uint64_t page = va / kPageSize;
  const uint64_t last = (end + kPageMask) / kPageSize;
  uint8_t all = 0;
  while (page < last) {
    const uint64_t n = std::min(last, (page | mask) + 1) - page;
    const uint8_t* l = leaf(page);
    if (l == nullptr) {
      if (need != 0) break;  // a missing leaf's pages have flags 0
      page += n;
      continue;
    }
    const uint64_t i = first_without(l + (page & mask), n, need);
    all |= or_of(l + (page & mask), i);
    page += i;
    if (i < n) break;
  }
  if (seen != nullptr) *seen = all;
  return page * kPageSize > va ? std::min(page * kPageSize, end) - va : 0;
}

uint8_t* AddressSpace::translate(uint64_t va, uint64_t len, Access access) {
  const uint8_t need = static_cast<uint8_t>(access) | kPageMapped;
  if (len != 0 && va < size_ && len <= kPageSize - (va & kPageMask)) {
    // Within one page (a short PadLock operand): one look at the page table, and no
    // stack frame unless translated code is written.
    const uint8_t f = flags(va);
    if ((f & need) != need) return nullptr;
    if (!((need & kPageWrite) && (f & kPageCode) && on_code_write_ != nullptr)) return base_ + va;
  }
  return translate_pages(va, len, need);
}

uint8_t* AddressSpace::translate_pages(uint64_t va, uint64_t len, uint8_t need) {
  if (len == 0) return va <= size_ ? base_ + va : nullptr;
  uint8_t seen = 0;
  if (accessible_with(va, len, need, &seen) != len) return nullptr;
  if ((need & kPageWrite) && (seen & kPageCode) && on_code_write_ != nullptr) {
    code_writes(va, len);  // the caller writes, or hands the pointer to the host kernel
  }
  return base_ + va;
}

uint64_t AddressSpace::accessible(uint64_t va, uint64_t len, Access access) {
  return accessible_with(va, len, static_cast<uint8_t>(access) | kPageMapped);
}

bool TlbGate::fill(const AddressSpace& mem, uint64_t va, int type, uint64_t* paddr, int* perms) {
  const int give = grant_all ? UC_PROT_ALL : tlb_permissions(mem.flags(va), type);
  if (give == 0) {
    faulted = true;
    fault_page = va;
    fault_type = type;
    return false;
  }
  *paddr = va;
  *perms = give;
  return true;
}

int tlb_permissions(uint8_t flags, int type) {
  uint8_t need = kPageRead;
  int give = UC_PROT_READ;
  if (type == UC_MEM_WRITE) {
    need = kPageWrite;
    give = UC_PROT_READ | UC_PROT_WRITE;
  } else if (type == UC_MEM_FETCH) {
    need = kPageExec;
    give = UC_PROT_READ | UC_PROT_EXEC;
  } else if (flags & kPageWrite) {
    give = UC_PROT_READ | UC_PROT_WRITE;
  }
  // An entry that may write an executable page says it may run it too: Unicorn stops
  // checking a page's stores for translated code after one that overwrote none (a PadLock
  // ModRM byte, which no block covers) when the entry has no execute permission
  // (docs/emulator.md, "Code pages").
  if ((give & UC_PROT_WRITE) && (flags & kPageExec)) give |= UC_PROT_EXEC;
  if (!(flags & kPageMapped) || (flags & need) != need) return 0;
  return give;
}

}  // namespace padlock::emu
