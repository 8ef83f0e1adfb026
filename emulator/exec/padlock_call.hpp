// The trap host shared by the whole-program Process and the function harness Machine:
// decode the PadLock instruction at the PC, read the architectural state the models need,
// have the core run it (emulator/exec/core.hpp) and write back what it changed; and
// CPUID and RDTSC, answered from the CPU model and the virtual clock.
#pragma once

#include <cstdint>
#include <functional>

#include "emulator/cpu/cpu.hpp"
#include "emulator/exec/core.hpp"
#include "emulator/memory/address_space.hpp"
#include "emulator/time/virtual_time.hpp"
#include "isa/decoder.hpp"
#include "models/unit_interface.hpp"

namespace padlock::emu {

// Every field is set by begin_padlock_call, so a caller may keep one and reuse it (a
// value-initialized one costs a 200-byte clear per instruction).
struct PadlockCall {
  isa::Decoded decoded;
  uint64_t pc = 0;
  uint64_t before[8] = {};  // the GPRs at the trap
  ArchState state;          // the model's input; it updates it in place
  // The CPU's own registers while the Unicorn patch's helper calls us, read and written
  // without a uc_reg_* call each: the x86-64 target's 16 (uc_padlock_state::gpr) or the
  // i386 target's 8 (gpr32); both null from the invalid-opcode trap.
  uint64_t* live = nullptr;
  uint32_t* live32 = nullptr;
};

// The last PadLock instruction decoded and the bytes it was decoded from: a loop that
// issues one instruction over and over decodes it once. The decoder reads nothing past
// the instruction, so the same bytes at the same PC decode the same.
struct DecodeMemo {
  uint64_t pc = ~uint64_t{0};
  uint8_t bytes[isa::kMaxInsnLength] = {};
  isa::Decoded decoded;  // length 0: nothing memoized
};

// Decodes the instruction at the PC into `c`; false if it is not a PadLock instruction
// (the caller raises SIGILL). EFLAGS[30] comes from the caller's shadow bit: QEMU never
// holds it (§1.8, §3.2). `at`, when called from generated code (UC_CTL_PADLOCK_INSN),
// gives the PC, EFLAGS and the registers directly; `memo` (the caller's) skips decoding
// an instruction whose bytes have not changed.
bool begin_padlock_call(const Cpu& cpu, const AddressSpace& mem, bool guest64, bool eflags30,
                        PadlockCall& c, const uc_padlock_state* at = nullptr,
                        DecodeMemo* memo = nullptr);

// Re-reads the registers into c.state (a hook may have changed them).
void read_padlock_state(const Cpu& cpu, bool guest64, bool eflags30, PadlockCall& c);

// Writes back the GPRs that differ from c.before (into live32: all eight).
void finish_padlock_call(Cpu& cpu, const PadlockCall& c);

// The trap's skeleton. What differs between the owners stays with them
// (docs/architecture.md, "Entry points and their policies"): the EFLAGS[30] shadow, when
// the next interrupt is due, and what a fault becomes (a Linux signal, a GuestFault).
class PadlockTrap {
 public:
  PadlockTrap(Cpu& cpu, AddressSpace& mem, const Padlock& units, PadlockCore& core,
              VirtualTime& clock)
      : cpu_(cpu), mem_(mem), units_(units), core_(core), clock_(clock) {}

  // UC_HOOK_INSN's answers (1: handled). CPUID from the CPU model (cpu/cpu_features.hpp).
  int cpuid();
  // The virtual cycle counter in EDX:EAX. Each read advances it by one, so that a loop
  // waiting for the TSC to move always ends.
  int rdtsc();

  // The PadLock instruction at the PC (`at`: from generated code, UC_CTL_PADLOCK_INSN; null
  // from the invalid-opcode trap) with the owner's EFLAGS[30] shadow, run by the core up to
  // the interrupt point after `interrupt_at` (§1.7). `before` (may be null) sees the call
  // decoded, before the core runs it. Null: not a PadLock instruction (#UD, or a #PF where
  // c.decoded.cut_short: its bytes run onto a page that cannot be fetched), nothing run.
  const PadlockRecord* run(PadlockCall& c, const uc_padlock_state* at, bool eflags30,
                           uint64_t interrupt_at,
                           const std::function<void(PadlockCall&)>* before = nullptr);
  // Where the guest goes on after `r`: the next instruction when it completed; this one when
  // an interrupt (it resumes from the updated registers, §1.7) or a fault stopped it.
  static uint64_t next_pc(const PadlockCall& c, const PadlockRecord& r) {
    return r.outcome.status == Status::Completed ? c.pc + c.decoded.length : c.pc;
  }

 private:
  Cpu& cpu_;
  AddressSpace& mem_;
  const Padlock& units_;
  PadlockCore& core_;
  VirtualTime& clock_;
  DecodeMemo memo_;  // the last PadLock instruction decoded
};

}  // namespace padlock::emu
