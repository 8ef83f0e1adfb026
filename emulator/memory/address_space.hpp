// The guest's linear address space: one host reservation (the "window") in which guest
// address va lives at host address base + va, plus a page table of guest permissions.
// Unicorn sees the whole window as one RAM region and asks us for permissions on every
// TLB fill (UC_TLB_VIRTUAL), so mmap/munmap/mprotect are ours alone, and the models read
// guest memory through translate() at host speed.
//
// With host protections mirrored (set_mirror; guests whose generated code
// addresses the window directly, emulator/memory/direct_memory.hpp), each host page carries
// its guest page's protections, minus write while the page holds translated code
// (kPageCode: a store there must invalidate that code first).
#pragma once

#include <cstdint>
#include <memory>

#include "models/unit_interface.hpp"

namespace padlock::emu {

enum PageFlag : uint8_t {
  kPageRead = 1,
  kPageWrite = 2,
  kPageExec = 4,
  kPageMapped = 8,   // mapped, possibly with no access (PROT_NONE)
  kPageShared = 16,  // MAP_SHARED file mapping: host protections follow the guest's
  kPageCode = 32,    // writable and holds translated code (host write-protected if mirrored)
  // May hold translated code (set by the code page hook, cleared when the page's code is
  // dropped): ranges without it have no code to invalidate (may_hold_code).
  kPageTranslated = 64,
};

// The permissions a Unicorn TLB entry gets for an access of `type` (UC_MEM_READ, WRITE,
// FETCH) to a page with our `flags`, or 0 when the access faults. A data access never gets
// EXEC and a fetch never gets WRITE: a TLB entry with EXEC makes QEMU check every store to
// the page for self-modifying code. A read of a writable page also gets WRITE, since a
// read is often followed by a write.
int tlb_permissions(uint8_t flags, int type);

class AddressSpace final : public GuestMemory {
 public:
  static constexpr uint64_t kPageSize = 4096;
  static constexpr uint64_t kPageMask = kPageSize - 1;
  static constexpr unsigned kBlockBits = 6;  // the page table's summary: 64-page blocks

  // Reserves the window: 4 GiB for a 32-bit guest; for a 64-bit guest the largest of
  // 1 TiB, 256 GiB, 64 GiB that the host grants. Throws std::runtime_error on failure.
  explicit AddressSpace(bool guest64);
  ~AddressSpace() override;
  AddressSpace(const AddressSpace&) = delete;
  AddressSpace& operator=(const AddressSpace&) = delete;

  // Pages with translated code (Unicorn's code page hook, emulator/memory/code_pages.hpp) are
  // marked kPageCode while the guest may write them. `on_code_write(page, data)` runs
  // before the emulator itself writes such a page (will_write), once the page has lost
  // kPageCode; it drops the page's translated code.
  void track_code(void (*on_code_write)(uint64_t page, void* data), void* data);
  // Host protections follow the guest's from now on, kPageCode pages write-protected
  // (call before mapping anything).
  void set_mirror() { mirror_ = true; }
  // A page got translated code: kPageTranslated, and kPageCode if it is writable.
  void protect_code(uint64_t va);
  // The code of [va, va+len) is gone: its pages lose kPageTranslated, and those that had
  // kPageCode lose it (and get their protections back).
  void unprotect_code(uint64_t va, uint64_t len);
  // Whether [va, va+len) may hold translated code: while code pages are tracked, a page
  // with kPageTranslated; otherwise any executable page. Invalidating Unicorn's code for a
  // range costs a lookup per page, a million of them for a gigabyte-sized munmap.
  bool may_hold_code(uint64_t va, uint64_t len) const {
    return range_any(va, len, on_code_write_ != nullptr ? kPageTranslated : kPageExec);
  }
  // The emulator is about to write [va, va+len) itself or through a host system call
  // (where a write-protected page would give EFAULT rather than a fault we could catch).
  // translate() with Access::Write calls it.
  void will_write(uint64_t va, uint64_t len) {
    if (on_code_write_ != nullptr && range_any(va, len, kPageCode)) code_writes(va, len);
  }
  // The host range the window reserves, guard pages included.
  bool host_in_reservation(const void* p) const {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    return b >= base_ && b < base_ + reserved_;
  }

  // Copies that ignore guest protections (the loader, the GDT, mremap's move).
  void poke(uint64_t va, const void* src, uint64_t len);
  void copy(uint64_t dst, uint64_t src, uint64_t len);
  // mremap's move: the contents of [src, src+len) go to dst (mapped already, not
  // overlapping src), and src is left unmapped. Private pages move as the host's page
  // tables (one host mremap, no copy: a realloc of a large block moves in place of being
  // touched page by page); when the host refuses (the range spans host mappings of
  // different protections, or holds shared pages), the bytes are copied. dst's host
  // protections are left to the caller's protect().
  void move_pages(uint64_t dst, uint64_t src, uint64_t len);

  uint64_t size() const { return size_; }
  uint8_t* host_base() const { return base_; }
  uint8_t* host(uint64_t va) const { return base_ + va; }
  bool in_window(uint64_t va, uint64_t len) const { return va <= size_ && len <= size_ - va; }

  // Page-granular operations; va and len must be page aligned and inside the window.
  // map_anonymous replaces whatever was there with zeroed pages (MAP_FIXED semantics).
  bool map_anonymous(uint64_t va, uint64_t len, uint8_t prot);
  // MAP_SHARED of a host file; returns 0 or -errno.
  int map_shared_file(uint64_t va, uint64_t len, uint8_t prot, int fd, uint64_t offset);
  void unmap(uint64_t va, uint64_t len);
  // unmap for the guest, but the host keeps the pages (inaccessible) with their contents;
  // map_cleared over them then needs no new host pages. For the heap's break, which
  // malloc lowers and raises again (AddressSpacePolicy::brk).
  void unmap_keep_pages(uint64_t va, uint64_t len);
  // map_anonymous over a range the guest does not map: zeroed in place rather than
  // replaced, so pages the host still holds (unmap_keep_pages) come back without faults.
  bool map_cleared(uint64_t va, uint64_t len, uint8_t prot);
  // Returns 0 or -errno (-ENOMEM if any page is unmapped, as Linux does).
  int protect(uint64_t va, uint64_t len, uint8_t prot);

  uint8_t flags(uint64_t va) const {
    if (va >= size_) return 0;
    const uint64_t page = va / kPageSize;
    const uint8_t* l = leaf(page);
    return l != nullptr ? l[page & ((uint64_t{1} << kLeafBits) - 1)] : 0;
  }
  // The first run of mapped pages at or after `va` whose flags agree but for kPageCode and
  // kPageTranslated (for /proc/self/maps): its start, or size() when there is none; its
  // end and flags.
  uint64_t next_run(uint64_t va, uint64_t* end, uint8_t* flags) const;
  bool range_free(uint64_t va, uint64_t len) const;
  // Bytes of mapped pages: in all (kept as pages are mapped and unmapped), and in
  // [va, va+len) (--max-memory).
  uint64_t mapped_bytes() const { return mapped_pages_ * kPageSize; }
  uint64_t mapped_in(uint64_t va, uint64_t len) const;
  bool range_mapped(uint64_t va, uint64_t len) const;
  bool range_has(uint64_t va, uint64_t len, uint8_t flag) const;  // every page
  bool range_any(uint64_t va, uint64_t len, uint8_t flag) const;  // some page
  // The first page-aligned address in [va, end) whose page is mapped, or `end` (a leaf with
  // no mapped page is skipped whole).
  uint64_t next_mapped(uint64_t va, uint64_t end) const;
  // Highest free page-aligned range of len bytes that ends at or below `limit` and
  // starts at or above `floor`; 0 if none.
  uint64_t find_free_below(uint64_t len, uint64_t limit, uint64_t floor) const;

  // Bytes from va (at most len) whose pages all have every bit of `need`; `seen` (if
  // given) gets the union of the flags of the pages walked.
  uint64_t accessible_with(uint64_t va, uint64_t len, uint8_t need, uint8_t* seen = nullptr) const {
    if (len != 0 && va < size_ && len <= kPageSize - (va & kPageMask)) {
      // Within one page (a PadLock operand, an instruction): one look at the page table.
      const uint8_t f = flags(va);
      if ((f & need) != need) return 0;
      if (seen != nullptr) *seen = f;
      return len;
    }
    return accessible_pages(va, len, need, seen);
  }

  // GuestMemory: the window is contiguous in host memory, so any accessible range
  // translates.
  uint8_t* translate(uint64_t va, uint64_t len, Access access) override;
  uint64_t accessible(uint64_t va, uint64_t len, Access access) override;

 private:
  static constexpr unsigned kLeafBits = 18;  // 2^18 pages = 1 GiB per leaf
  uint8_t* leaf(uint64_t page) const {
    const uint64_t i = page >> kLeafBits;
    return i < nleaves_ ? leaves_[i].get() : nullptr;
  }
  // One plus the highest page in [lo, hi) that is mapped (`mapped`) or not, or 0 if none.
  uint64_t last_page(uint64_t lo, uint64_t hi, bool mapped) const;
  // A leaf's summary of its 64-page blocks (bit k % 64 of word k / 64 for block k): `any`
  // when the block has a mapped page, `full` when every page of it is mapped. Scans pass
  // over empty and full blocks without reading their flag bytes (4,096 pages per word), so
  // mmap's search and the range tests stay cheap over gigabytes. Only set_flags changes
  // whether a page is mapped, and it keeps the summary.
  static constexpr size_t kSummaryWords = (size_t{1} << (kLeafBits - kBlockBits)) / 64;
  struct Summary {
    uint64_t any[kSummaryWords] = {};
    uint64_t full[kSummaryWords] = {};
  };
  // Both of a leaf, or nulls where no leaf exists (nothing mapped there).
  struct LeafView {
    const uint8_t* flags = nullptr;
    const Summary* sum = nullptr;
  };
  LeafView view(uint64_t page) const {
    const uint64_t i = page >> kLeafBits;
    return i < nleaves_ ? LeafView{leaves_[i].get(), summaries_[i].get()} : LeafView{};
  }
  // The same over [va, va+len) page by page across leaves (cpp: leaf_runs).
  template <class F>
  bool leaf_runs(uint64_t va, uint64_t len, F f) const;
  uint8_t* leaf_alloc(uint64_t page);  // nullptr when the host has no memory for it
  // Allocates the leaves of [va, va+len); false if the host has no memory for them.
  bool leaves_for(uint64_t va, uint64_t len);
  // The flags byte of a mapped page (its leaf exists).
  uint8_t& flags_of(uint64_t page) { return leaf(page)[page & ((uint64_t{1} << kLeafBits) - 1)]; }
  void set_flags(uint64_t va, uint64_t len, uint8_t f);
  void mark_mapped(uint64_t va, uint64_t len, uint8_t prot);
  int host_prot(uint8_t flags) const;
  // mprotect [va, va+len) page runs to host_prot of their flags (mirror mode).
  int apply_host(uint64_t va, uint64_t len);
  void code_writes(uint64_t va, uint64_t len);
  // translate() across pages, and where a write reaches translated code.
  uint8_t* translate_pages(uint64_t va, uint64_t len, uint8_t need);
  // accessible_with across pages (and for len 0).
  uint64_t accessible_pages(uint64_t va, uint64_t len, uint8_t need, uint8_t* seen) const;

  uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  uint64_t reserved_ = 0;
  uint64_t mapped_pages_ = 0;
  bool mirror_ = false;
  void (*on_code_write_)(uint64_t, void*) = nullptr;
  void* on_code_write_data_ = nullptr;
  uint64_t nleaves_ = 0;
  std::unique_ptr<std::unique_ptr<uint8_t[]>[]> leaves_;
  std::unique_ptr<std::unique_ptr<Summary>[]> summaries_;
};

// Our answer to Unicorn's TLB-fill hook (UC_TLB_VIRTUAL) for Process and Machine: the
// page's flags decide (tlb_permissions), paddr = va, and a refused access is remembered
// for the exception that follows it.
struct TlbGate {
  bool grant_all = false;  // while Unicorn walks code pages itself (invalidating TBs)
  bool faulted = false;
  uint64_t fault_page = 0;
  int fault_type = 0;  // UC_MEM_READ, WRITE or FETCH
  bool fill(const AddressSpace& mem, uint64_t va, int type, uint64_t* paddr, int* perms);
};

}  // namespace padlock::emu
