// The address-space policy of a Linux process: where mmap places a mapping, what brk,
// munmap, mprotect and mremap do to the page table (emulator/memory/address_space.hpp),
// the layout they work in and the names /proc/self/maps shows. The results are Linux's
// return values (mmap(2), brk(2), mremap(2)). What the CPU must learn of a change (its TLB,
// translated code) and what the observers see reach the process through VmHost.
#pragma once

#include <cstdint>

#include "emulator/linux/guest_paths.hpp"
#include "emulator/linux/vm/map_names.hpp"
#include "emulator/memory/address_space.hpp"

namespace padlock::emu {

namespace vm {
// Lengths and addresses as the memory system calls take them: whole pages (a length near
// 2^64 wraps to a small one, which the calls check).
inline uint64_t page_up(uint64_t v) {
  return (v + AddressSpace::kPageMask) & ~AddressSpace::kPageMask;
}
inline bool aligned(uint64_t v) {
  return (v & AddressSpace::kPageMask) == 0;
}
}  // namespace vm

// The page-granular layout we give a process.
struct MemoryLayout {
  uint64_t stack_top = 0;
  uint64_t stack_size = 0;
  uint64_t mmap_top = 0;  // mmap searches downwards from here
  uint64_t mmap_floor = 0;
  uint64_t brk_start = 0, brk = 0;
  uint64_t brk_kept = 0;     // end of the pages above the break kept for its regrowth (brk)
  uint64_t system_page = 0;  // GDT and boot stub (2 pages)
};

// The process around the policy.
class VmHost {
 public:
  virtual ~VmHost() = default;
  // [va, va+len) may hold translated code and is about to be unmapped, replaced or
  // reprotected: drop the blocks translated from it (QEMU's and our block facts).
  virtual void drop_code(uint64_t va, uint64_t len) = 0;
  // The guest's view of [va, va+len) changed: stale TLB entries go.
  virtual void memory_changed(uint64_t va, uint64_t len) = 0;
  // For the profiler and the trace: a file's code was mapped at `va`, a range unmapped.
  virtual void file_mapped(int fd, uint64_t va, uint64_t offset) = 0;
  virtual void unmapped(uint64_t va, uint64_t len) = 0;
};

struct VmConfig {
  uint64_t max_memory = 0;  // --max-memory (0: none), as RLIMIT_AS
  // PROT_READ gives PROT_EXEC: an i386 program without PT_GNU_STACK (Linux's
  // READ_IMPLIES_EXEC personality).
  bool read_implies_exec = false;
};

class AddressSpacePolicy {
 public:
  // `paths` names mapped files as the guest sees them.
  AddressSpacePolicy(AddressSpace& mem, VmHost& host, const GuestPaths& paths, VmConfig config)
      : mem_(mem), host_(host), paths_(paths), config_(config) {}

  // The system calls; Linux return values.
  int64_t mmap(uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags, int fd, uint64_t offset);
  int64_t munmap(uint64_t addr, uint64_t len);
  int64_t mprotect(uint64_t addr, uint64_t len, uint64_t prot);
  int64_t brk(uint64_t addr);
  int64_t mremap(uint64_t old_addr, uint64_t old_len, uint64_t new_len, uint64_t flags,
                 uint64_t new_addr);
  // Before [va, va+len) is unmapped, replaced or reprotected: if it holds executable
  // pages, drop the blocks translated from them (VmHost::drop_code).
  void invalidate_code(uint64_t va, uint64_t len);

  MemoryLayout& layout() { return layout_; }
  MapNames& map_names() { return map_names_; }  // /proc/self/maps

 private:
  uint8_t prot_to_flags(uint64_t prot) const;
  // A range the guest may map, unmap, protect or move.
  bool user_range(uint64_t va, uint64_t len) const;
  // --max-memory: would `adding` more bytes of mappings pass the cap?
  bool over_cap(uint64_t adding) const;

  AddressSpace& mem_;
  VmHost& host_;
  const GuestPaths& paths_;
  VmConfig config_;
  MemoryLayout layout_;
  MapNames map_names_;
};

}  // namespace padlock::emu
