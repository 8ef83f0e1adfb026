// Trampolines from Unicorn's C callbacks to an owner object (Process, or Machine for the
// function-level harness). Both own the same hook set; this is its one definition.
//
// No C++ exception crosses Unicorn's C frames (that would abort the host): each trampoline
// catches whatever its hook throws, gives it to the owner's hook_exception() (which keeps
// it and stops the emulation) and returns a value that lets Unicorn unwind; the owner
// rethrows it once uc_emu_start has returned (rethrow_hook_exception).
#pragma once

#include <unicorn/unicorn.h>

#include <cstdint>
#include <exception>

namespace padlock::emu {

// What an owner keeps of an exception thrown inside a hook.
class HookException {
 public:
  void keep(uc_engine* uc) {
    if (!error_) error_ = std::current_exception();
    uc_emu_stop(uc);
  }
  // Whether an exception is kept (hooks that run after it do nothing).
  bool pending() const { return error_ != nullptr; }
  // After uc_emu_start: throws the kept exception, if any.
  void rethrow() {
    if (!error_) return;
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }

 private:
  std::exception_ptr error_;
};

template <typename Owner>
struct UcHooks {
  // Runs `f` for the owner; an exception becomes the owner's kept one and `fallback`.
  template <typename F, typename R>
  static R guarded(uc_engine* uc, void* o, R fallback, F&& f) {
    try {
      return f(static_cast<Owner*>(o));
    } catch (...) {
      static_cast<Owner*>(o)->hook_exception().keep(uc);
      return fallback;
    }
  }

  static void syscall(uc_engine* uc, void* o) {
    guarded(uc, o, 0, [](Owner* w) { return w->on_syscall_insn(), 0; });
  }
  // The PC to go on at. When the hook threw, the instruction's own (EIP holds its address
  // here, cmake/unicorn patch): the emulation stops there with the exception kept.
  static uint64_t padlock(uc_engine* uc, const uc_padlock_state* at, void* o) {
    try {
      return static_cast<Owner*>(o)->on_padlock_insn(at);
    } catch (...) {
      static_cast<Owner*>(o)->hook_exception().keep(uc);
      return at->pc;
    }
  }
  static void sysenter(uc_engine* uc, void* o) {
    guarded(uc, o, 0, [](Owner* w) { return w->on_sysenter(), 0; });
  }
  // IN and INS: the value read from the port. OUT and OUTS.
  static uint32_t port_in(uc_engine* uc, uint32_t, int, void* o) {
    return guarded(uc, o, uint32_t{0}, [](Owner* w) { return w->on_port_io(); });
  }
  static void port_out(uc_engine* uc, uint32_t, int, uint32_t, void* o) {
    guarded(uc, o, 0, [](Owner* w) { return w->on_port_io(), 0; });
  }
  static void intr(uc_engine* uc, uint32_t intno, void* o) {
    guarded(uc, o, 0, [intno](Owner* w) { return w->on_interrupt(intno), 0; });
  }
  static void code(uc_engine* uc, uint64_t address, uint32_t, void* o) {
    guarded(uc, o, 0, [=](Owner* w) { return w->on_code(address), 0; });
  }
  // true: handled (the emulation stops anyway when an exception was kept).
  static bool invalid(uc_engine* uc, void* o) {
    return guarded(uc, o, true, [](Owner* w) { return w->on_invalid_insn(); });
  }
  static int cpuid(uc_engine* uc, void* o) {
    return guarded(uc, o, 1, [](Owner* w) { return w->on_cpuid(); });
  }
  static int rdtsc(uc_engine* uc, void* o) {
    return guarded(uc, o, 1, [](Owner* w) { return w->on_rdtsc(); });
  }
  static void block(uc_engine* uc, uint64_t address, uint32_t size, void* o) {
    guarded(uc, o, 0, [=](Owner* w) { return w->on_block(address, size), 0; });
  }
  // A REP MOVS or REP STOS about to run whole (UC_CTL_REP_STRING).
  static void rep_string(uc_engine* uc, uint64_t pc, uint64_t count, uint64_t rsi, uint64_t rdi,
                         void* o) {
    guarded(uc, o, 0, [=](Owner* w) { return w->on_rep_string(pc, count, rsi, rdi), 0; });
  }
  static void costed_block(uc_engine* uc, uint64_t address, uint32_t size, void* o) {
    guarded(uc, o, 0, [=](Owner* w) { return w->on_costed_block(address, size), 0; });
  }
  static uint32_t block_cost(uc_engine* uc, uint64_t address, uint32_t size, uint64_t* tag,
                             void* o) {
    return guarded(uc, o, uint32_t{0}, [=](Owner* w) { return w->block_cost(address, size, tag); });
  }
  // One hook of `type` over every address (UC_HOOK_INSN: of the instruction `insn`).
  static uc_err add(uc_engine* uc, uc_hook* h, int type, void* cb, void* user, int insn = -1) {
    return insn < 0 ? uc_hook_add(uc, h, type, cb, user, 1, 0)
                    : uc_hook_add(uc, h, type, cb, user, 1, 0, insn);
  }
  // The trap host's hooks, which Process and the harness Machine both install (their `user`
  // is the owner's Hooks view): the TLB fill, interrupts, invalid opcodes, SYSCALL, SYSENTER,
  // CPUID and RDTSC, and 0F A6 / 0F A7 routed to on_padlock_insn from generated code
  // (UC_CTL_PADLOCK_INSN; #UD stays the way for every other invalid opcode). Returns why
  // Unicorn refused one (a static string), or nullptr.
  static const char* install_trap_hooks(uc_engine* uc, void* user) {
    struct Entry {
      int type;
      void* cb;
      int insn;
    };
    const Entry table[] = {
        {UC_HOOK_TLB_FILL, reinterpret_cast<void*>(tlb), -1},
        {UC_HOOK_INTR, reinterpret_cast<void*>(intr), -1},
        {UC_HOOK_INSN_INVALID, reinterpret_cast<void*>(invalid), -1},
        {UC_HOOK_INSN, reinterpret_cast<void*>(syscall), UC_X86_INS_SYSCALL},
        {UC_HOOK_INSN, reinterpret_cast<void*>(sysenter), UC_X86_INS_SYSENTER},
        {UC_HOOK_INSN, reinterpret_cast<void*>(cpuid), UC_X86_INS_CPUID},
        {UC_HOOK_INSN, reinterpret_cast<void*>(rdtsc), UC_X86_INS_RDTSC},
    };
    uc_hook h;
    for (const Entry& e : table) {
      const uc_err err = add(uc, &h, e.type, e.cb, user, e.insn);
      if (err != UC_ERR_OK) return uc_strerror(err);
    }
    if (uc_ctl_padlock_insn(uc, &padlock, user) != UC_ERR_OK) {
      return "cannot route PadLock instructions (UC_CTL_PADLOCK_INSN)";
    }
    return nullptr;
  }
  // A refused fill (false) when the hook threw: the access faults, and the emulation stops.
  static bool tlb(uc_engine* uc, uint64_t va, uc_mem_type type, uc_tlb_entry* e, void* o) {
    return guarded(uc, o, false, [=](Owner* w) {
      uint64_t paddr = 0;
      int perms = 0;
      if (!w->on_tlb_fill(va, type, &paddr, &perms)) return false;
      e->paddr = paddr;
      e->perms = static_cast<uc_prot>(perms);
      return true;
    });
  }
};

}  // namespace padlock::emu
