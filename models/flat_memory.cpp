#include "models/flat_memory.hpp"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace padlock {

void FlatMemory::map(uint64_t va, uint64_t len, uint8_t perm) {
  const uint64_t start = va & ~(kPage - 1);
  const uint64_t end = (va + len + kPage - 1) & ~(kPage - 1);
  for (const Region& r : regions_) {
    if (start < r.base + r.size && r.base < end) throw std::invalid_argument("FlatMemory: overlap");
  }
  Region r;
  r.base = start;
  r.size = end - start;
  r.bytes = std::make_unique<uint8_t[]>(r.size);
  std::memset(r.bytes.get(), 0, r.size);
  r.perms.assign(r.size / kPage, perm);
  regions_.push_back(std::move(r));
}

FlatMemory::Region* FlatMemory::find(uint64_t va) {
  for (Region& r : regions_) {
    if (va >= r.base && va - r.base < r.size) return &r;
  }
  return nullptr;
}

void FlatMemory::protect(uint64_t va, uint64_t len, uint8_t perm) {
  for (uint64_t p = va & ~(kPage - 1); p < va + len; p += kPage) {
    Region* r = find(p);
    if (r == nullptr) throw std::invalid_argument("FlatMemory::protect: unmapped");
    r->perms[(p - r->base) / kPage] = perm;
  }
}

uint8_t* FlatMemory::host(uint64_t va, uint64_t len) {
  Region* r = find(va);
  if (r == nullptr || va + len > r->base + r->size) throw std::invalid_argument("FlatMemory::host");
  return r->bytes.get() + (va - r->base);
}

uint64_t FlatMemory::accessible(uint64_t va, uint64_t len, Access access) {
  const uint8_t need = static_cast<uint8_t>(access);
  uint64_t done = 0;
  while (done < len) {
    const uint64_t addr = va + done;
    if (addr < va) return done;  // wrapped past the top of the address space
    Region* r = find(addr);
    if (r == nullptr) return done;
    const uint64_t page = (addr - r->base) / kPage;
    if ((r->perms[page] & need) != need) return done;
    const uint64_t page_end = r->base + (page + 1) * kPage;
    done += page_end - addr;
  }
  return len;
}

uint8_t* FlatMemory::translate(uint64_t va, uint64_t len, Access access) {
  Region* r = find(va);
  if (r == nullptr || len > r->base + r->size - va) return nullptr;
  if (accessible(va, len, access) != len) return nullptr;
  return r->bytes.get() + (va - r->base);
}

}  // namespace padlock
