// Trampolines from Unicorn's C callbacks to an owner object (Process, or Machine for the
// function-level harness). Both own the same hook set; this is its one definition.
#pragma once

#include <unicorn/unicorn.h>

#include <cstdint>

namespace padlock::emu {

template <typename Owner>
struct UcHooks {
  static void syscall(uc_engine*, void* o) { static_cast<Owner*>(o)->on_syscall_insn(); }
  static void sysenter(uc_engine*, void* o) { static_cast<Owner*>(o)->on_sysenter(); }
  static void intr(uc_engine*, uint32_t intno, void* o) {
    static_cast<Owner*>(o)->on_interrupt(intno);
  }
  static bool invalid(uc_engine*, void* o) { return static_cast<Owner*>(o)->on_invalid_insn(); }
  static uint64_t padlock(uc_engine*, void* o) { return static_cast<Owner*>(o)->on_padlock_insn(); }
  static int cpuid(uc_engine*, void* o) { return static_cast<Owner*>(o)->on_cpuid(); }
  static int rdtsc(uc_engine*, void* o) { return static_cast<Owner*>(o)->on_rdtsc(); }
  static void block(uc_engine*, uint64_t address, uint32_t size, void* o) {
    static_cast<Owner*>(o)->on_block(address, size);
  }
  static void costed_block(uc_engine*, uint64_t address, uint32_t size, void* o) {
    static_cast<Owner*>(o)->on_costed_block(address, size);
  }
  static void code(uc_engine*, uint64_t address, uint32_t, void* o) {
    static_cast<Owner*>(o)->on_code(address);
  }
  static uint32_t block_cost(uc_engine*, uint64_t address, uint32_t size, uint64_t* tag, void* o) {
    return static_cast<Owner*>(o)->block_cost(address, size, tag);
  }
  static bool tlb(uc_engine*, uint64_t va, uc_mem_type type, uc_tlb_entry* e, void* o) {
    uint64_t paddr = 0;
    int perms = 0;
    if (!static_cast<Owner*>(o)->on_tlb_fill(va, type, &paddr, &perms)) return false;
    e->paddr = paddr;
    e->perms = static_cast<uc_prot>(perms);
    return true;
  }
};

}  // namespace padlock::emu
