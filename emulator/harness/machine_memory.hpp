// The harness Machine's guest memory as its user sees it (docs/python.md, "Memory"): pages
// mapped, unmapped and protected with the code translated from them dropped, reads and
// writes that ignore permissions as a debugger's do, and the arena that hands out free
// ranges. The page table itself is the AddressSpace (space()); the Machine owns both.
#pragma once

#include <cstdint>

#include "emulator/cpu/block_cache.hpp"
#include "emulator/cpu/cpu.hpp"
#include "emulator/memory/address_space.hpp"

namespace padlock::emu {

class MachineMemory {
 public:
  // The arena is [arena_base, arena_limit); `tlb` is the Machine's TLB-fill answer, which
  // must grant everything while Unicorn drops translations.
  MachineMemory(AddressSpace& space, Cpu& cpu, BlockCache& blocks, TlbGate& tlb,
                uint64_t arena_base, uint64_t arena_limit)
      : space_(space),
        cpu_(cpu),
        blocks_(blocks),
        tlb_(tlb),
        arena_next_(arena_base),
        arena_limit_(arena_limit) {}

  // Maps [va, va+len) (page aligned) as fresh zeroed pages with kPage* permissions.
  void map(uint64_t va, uint64_t len, uint8_t prot);
  void unmap(uint64_t va, uint64_t len);
  // The pages covering [va, va+len).
  void protect(uint64_t va, uint64_t len, uint8_t prot);
  // A free, page-aligned range of `len` bytes in the arena (followed by a free guard
  // page), aligned to `align`; it is not mapped.
  uint64_t reserve(uint64_t len, uint64_t align = AddressSpace::kPageSize);
  // Reads and writes ignore permissions (as a debugger does) but need mapped pages;
  // writes to executable pages drop the code translated from them.
  void read(uint64_t va, void* dst, uint64_t len) const;
  void write(uint64_t va, const void* src, uint64_t len);
  // Host-side stores bypass QEMU's self-modifying-code tracking: drop the translations.
  void invalidate_code(uint64_t va, uint64_t len);

  AddressSpace& space() { return space_; }
  const AddressSpace& space() const { return space_; }
  // Where reserve() looks next (snapshots save it).
  uint64_t arena_next() const { return arena_next_; }
  void set_arena_next(uint64_t va) { arena_next_ = va; }

 private:
  AddressSpace& space_;
  Cpu& cpu_;
  BlockCache& blocks_;
  TlbGate& tlb_;
  uint64_t arena_next_;
  uint64_t arena_limit_;
};

}  // namespace padlock::emu
