#include "emulator/harness/machine_memory.hpp"

#include <cstring>
#include <string>

#include "emulator/harness/machine.hpp"
#include "emulator/memory/address_text.hpp"

namespace padlock::emu {

namespace {
constexpr uint64_t kPage = AddressSpace::kPageSize;
}  // namespace

void MachineMemory::map(uint64_t va, uint64_t len, uint8_t prot) {
  if ((va | len) & (kPage - 1)) throw MachineError("map: address and length must be page aligned");
  if (!space_.in_window(va, len))
    throw MachineError("map: " + hex(va) + " is outside the address space");
  invalidate_code(va, len);
  if (!space_.map_anonymous(va, len, prot)) throw MachineError("map: cannot map " + hex(va));
  uc_ctl_flush_tlb(cpu_.uc());
}

void MachineMemory::unmap(uint64_t va, uint64_t len) {
  if ((va | len) & (kPage - 1))
    throw MachineError("unmap: address and length must be page aligned");
  invalidate_code(va, len);
  space_.unmap(va, len);
  uc_ctl_flush_tlb(cpu_.uc());
}

void MachineMemory::protect(uint64_t va, uint64_t len, uint8_t prot) {
  const uint64_t start = va & ~(kPage - 1), end = (va + len + kPage - 1) & ~(kPage - 1);
  invalidate_code(start, end - start);
  if (space_.protect(start, end - start, prot) != 0) {
    throw MachineError("protect: " + hex(va) + ": not mapped");
  }
  uc_ctl_flush_tlb(cpu_.uc());
}

uint64_t MachineMemory::reserve(uint64_t len, uint64_t align) {
  if (align < kPage) align = kPage;
  if (align & (align - 1)) throw MachineError("reserve: alignment must be a power of two");
  len = (len + kPage - 1) & ~(kPage - 1);
  if (len == 0) len = kPage;
  uint64_t va = (arena_next_ + align - 1) & ~(align - 1);
  // Skip over anything the user mapped by hand.
  while (va + len + kPage <= arena_limit_ && !space_.range_free(va, len + kPage)) {
    va = (va + kPage + align - 1) & ~(align - 1);
  }
  if (va + len + kPage > arena_limit_) throw MachineError("the allocation arena is exhausted");
  arena_next_ = va + len + kPage;  // a free guard page after each range
  return va;
}

void MachineMemory::read(uint64_t va, void* dst, uint64_t len) const {
  if (len == 0) return;
  if (!space_.in_window(va, len) || !space_.range_mapped(va, len)) {
    throw MachineError("read of " + std::to_string(len) + " bytes at " + hex(va) + ": not mapped");
  }
  std::memcpy(dst, space_.host(va), len);
}

void MachineMemory::write(uint64_t va, const void* src, uint64_t len) {
  if (len == 0) return;
  if (!space_.in_window(va, len) || !space_.range_mapped(va, len)) {
    throw MachineError("write of " + std::to_string(len) + " bytes at " + hex(va) + ": not mapped");
  }
  invalidate_code(va, len);
  std::memcpy(space_.host(va), src, len);
}

void MachineMemory::invalidate_code(uint64_t va, uint64_t len) {
  if (len == 0 || !space_.may_hold_code(va, len)) return;
  tlb_.grant_all = true;  // the removal walks the code TLB, which must not fault
  uc_ctl_remove_cache(cpu_.uc(), va, va + len);
  tlb_.grant_all = false;
  uc_ctl_flush_tlb(cpu_.uc());
  blocks_.invalidate(va, len);
}

}  // namespace padlock::emu
