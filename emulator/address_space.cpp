#include "emulator/address_space.hpp"

#include <sys/mman.h>
#include <unicorn/unicorn.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace padlock::emu {

namespace {
constexpr int kReserveFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

uint8_t host_prot_for_shared(uint8_t prot) {
  int p = 0;
  if (prot & (kPageRead | kPageExec)) p |= PROT_READ;
  if (prot & kPageWrite) p |= PROT_READ | PROT_WRITE;
  return static_cast<uint8_t>(p);
}
}  // namespace

AddressSpace::AddressSpace(bool guest64) {
  const uint64_t sizes64[] = {1ull << 40, 1ull << 38, 1ull << 36};
  const uint64_t sizes32[] = {1ull << 32};
  const uint64_t* sizes = guest64 ? sizes64 : sizes32;
  const size_t n = guest64 ? 3 : 1;
  for (size_t i = 0; i < n; ++i) {
    void* p = mmap(nullptr, sizes[i], PROT_NONE, kReserveFlags, -1, 0);
    if (p != MAP_FAILED) {
      base_ = static_cast<uint8_t*>(p);
      size_ = sizes[i];
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
}

AddressSpace::~AddressSpace() {
  if (base_ != nullptr) munmap(base_, size_);
}

uint8_t* AddressSpace::leaf_alloc(uint64_t page) {
  const uint64_t i = page >> kLeafBits;
  if (!leaves_[i]) {
    leaves_[i] = std::make_unique<uint8_t[]>(size_t{1} << kLeafBits);
    std::memset(leaves_[i].get(), 0, size_t{1} << kLeafBits);
  }
  return leaves_[i].get();
}

void AddressSpace::set_flags(uint64_t va, uint64_t len, uint8_t f) {
  const uint64_t mask = (uint64_t{1} << kLeafBits) - 1;
  for (uint64_t page = va / kPageSize, end = (va + len) / kPageSize; page < end; ++page) {
    uint8_t* l = f != 0 ? leaf_alloc(page) : leaf(page);
    if (l != nullptr) l[page & mask] = f;
  }
}

uint8_t AddressSpace::flags(uint64_t va) const {
  if (va >= size_) return 0;
  const uint64_t page = va / kPageSize;
  const uint8_t* l = leaf(page);
  return l != nullptr ? l[page & ((uint64_t{1} << kLeafBits) - 1)] : 0;
}

bool AddressSpace::map_anonymous(uint64_t va, uint64_t len, uint8_t prot) {
  if (!in_window(va, len)) return false;
  if (len == 0) return true;
  void* p = mmap(base_ + va, len, PROT_READ | PROT_WRITE, MAP_FIXED | kReserveFlags, -1, 0);
  if (p == MAP_FAILED) return false;
  set_flags(va, len, static_cast<uint8_t>((prot & 7) | kPageMapped));
  return true;
}

int AddressSpace::map_shared_file(uint64_t va, uint64_t len, uint8_t prot, int fd,
                                  uint64_t offset) {
  if (!in_window(va, len)) return -ENOMEM;
  void* p = mmap(base_ + va, len, host_prot_for_shared(prot), MAP_FIXED | MAP_SHARED, fd,
                 static_cast<off_t>(offset));
  if (p == MAP_FAILED) {
    const int err = errno;
    // Leave a hole rather than whatever the failed mmap left behind.
    mmap(base_ + va, len, PROT_NONE, MAP_FIXED | kReserveFlags, -1, 0);
    set_flags(va, len, 0);
    return -err;
  }
  set_flags(va, len, static_cast<uint8_t>((prot & 7) | kPageMapped | kPageShared));
  return 0;
}

void AddressSpace::unmap(uint64_t va, uint64_t len) {
  if (!in_window(va, len) || len == 0) return;
  mmap(base_ + va, len, PROT_NONE, MAP_FIXED | kReserveFlags, -1, 0);
  set_flags(va, len, 0);
}

int AddressSpace::protect(uint64_t va, uint64_t len, uint8_t prot) {
  if (!in_window(va, len) || !range_mapped(va, len)) return -ENOMEM;
  const uint64_t mask = (uint64_t{1} << kLeafBits) - 1;
  for (uint64_t page = va / kPageSize, end = (va + len) / kPageSize; page < end; ++page) {
    uint8_t& f = leaf(page)[page & mask];
    if (f & kPageShared) {
      if (mprotect(base_ + page * kPageSize, kPageSize, host_prot_for_shared(prot)) != 0) {
        return -errno;
      }
    }
    f = static_cast<uint8_t>((f & ~7) | (prot & 7));
  }
  return 0;
}

bool AddressSpace::range_free(uint64_t va, uint64_t len) const {
  if (!in_window(va, len)) return false;
  for (uint64_t a = va; a < va + len; a += kPageSize) {
    if (flags(a) & kPageMapped) return false;
  }
  return true;
}

bool AddressSpace::range_mapped(uint64_t va, uint64_t len) const {
  return range_has(va, len, kPageMapped);
}

bool AddressSpace::range_has(uint64_t va, uint64_t len, uint8_t flag) const {
  if (!in_window(va, len)) return false;
  for (uint64_t a = va & ~kPageMask; a < va + len; a += kPageSize) {
    if ((flags(a) & flag) != flag) return false;
  }
  return true;
}

bool AddressSpace::range_any(uint64_t va, uint64_t len, uint8_t flag) const {
  for (uint64_t a = va & ~kPageMask; a < va + len && a < size_; a += kPageSize) {
    if (flags(a) & flag) return true;
  }
  return false;
}

uint64_t AddressSpace::find_free_below(uint64_t len, uint64_t limit, uint64_t floor) const {
  if (len == 0 || limit > size_ || limit < len) return 0;
  uint64_t end = limit & ~kPageMask;
  while (end >= floor + len) {
    // Walk down from `end` until a mapped page or until len bytes are free.
    uint64_t a = end;
    while (a > end - len && !(flags(a - kPageSize) & kPageMapped)) a -= kPageSize;
    if (a == end - len) return a;
    end = a - kPageSize;  // skip the mapped page at a - kPageSize
    if (end < len) break;
  }
  return 0;
}

uint64_t AddressSpace::accessible_with(uint64_t va, uint64_t len, uint8_t need) const {
  if (va >= size_) return 0;
  uint64_t done = 0;
  while (done < len) {
    const uint64_t addr = va + done;
    if (addr >= size_ || (flags(addr) & need) != need) return done;
    done += kPageSize - (addr & kPageMask);
  }
  return len;
}

uint8_t* AddressSpace::translate(uint64_t va, uint64_t len, Access access) {
  const uint8_t need = static_cast<uint8_t>(access) | kPageMapped;
  if (len == 0) return va <= size_ ? base_ + va : nullptr;
  return accessible_with(va, len, need) == len ? base_ + va : nullptr;
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
  if (!(flags & kPageMapped) || (flags & need) != need) return 0;
  return give;
}

}  // namespace padlock::emu
