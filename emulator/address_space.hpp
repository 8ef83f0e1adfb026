// The guest's linear address space: one host reservation (the "window") in which guest
// address va lives at host address base + va, plus a page table of guest permissions.
// Unicorn sees the whole window as one RAM region and asks us for permissions on every
// TLB fill (UC_TLB_VIRTUAL), so mmap/munmap/mprotect are ours alone, and the models read
// guest memory through translate() at host speed.
#pragma once

#include <cstdint>
#include <memory>

#include "models/machine.hpp"

namespace padlock::emu {

enum PageFlag : uint8_t {
  kPageRead = 1,
  kPageWrite = 2,
  kPageExec = 4,
  kPageMapped = 8,   // mapped, possibly with no access (PROT_NONE)
  kPageShared = 16,  // MAP_SHARED file mapping: host protections follow the guest's
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

  // Reserves the window: 4 GiB for a 32-bit guest; for a 64-bit guest the largest of
  // 1 TiB, 256 GiB, 64 GiB that the host grants. Throws std::runtime_error on failure.
  explicit AddressSpace(bool guest64);
  ~AddressSpace() override;
  AddressSpace(const AddressSpace&) = delete;
  AddressSpace& operator=(const AddressSpace&) = delete;

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
  // Returns 0 or -errno (-ENOMEM if any page is unmapped, as Linux does).
  int protect(uint64_t va, uint64_t len, uint8_t prot);

  uint8_t flags(uint64_t va) const;
  bool range_free(uint64_t va, uint64_t len) const;
  bool range_mapped(uint64_t va, uint64_t len) const;
  bool range_has(uint64_t va, uint64_t len, uint8_t flag) const;  // every page
  bool range_any(uint64_t va, uint64_t len, uint8_t flag) const;  // some page
  // Highest free page-aligned range of len bytes that ends at or below `limit` and
  // starts at or above `floor`; 0 if none.
  uint64_t find_free_below(uint64_t len, uint64_t limit, uint64_t floor) const;

  // Bytes from va (at most len) whose pages all have every bit of `need`.
  uint64_t accessible_with(uint64_t va, uint64_t len, uint8_t need) const;

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
  uint8_t* leaf_alloc(uint64_t page);
  void set_flags(uint64_t va, uint64_t len, uint8_t f);

  uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  uint64_t nleaves_ = 0;
  std::unique_ptr<std::unique_ptr<uint8_t[]>[]> leaves_;
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
