// The register side of a PadLock trap, shared by the whole-program Process and the
// function harness Machine: decode the instruction at the PC, read the architectural
// state the models need and write back what they changed. Execution itself is the core's
// (emulator/padlock/core.hpp).
#pragma once

#include <cstdint>

#include "emulator/cpu/cpu.hpp"
#include "emulator/memory/address_space.hpp"
#include "isa/decoder.hpp"
#include "models/unit_interface.hpp"

namespace padlock::emu {

struct PadlockCall {
  isa::Decoded decoded;
  uint64_t pc = 0;
  uint64_t before[8] = {};  // the GPRs at the trap
  ArchState state;          // the model's input; it updates it in place
  // The CPU's own 16 registers while the Unicorn patch's helper calls us
  // (uc_padlock_state::gpr), read and written without a uc_reg_* call each; null from
  // the invalid-opcode trap.
  uint64_t* live = nullptr;
};

// Decodes the instruction at the PC into `c`; false if it is not a PadLock instruction
// (the caller raises SIGILL). EFLAGS[30] comes from the caller's shadow bit: QEMU never
// holds it (§1.8, §3.2). `at`, when called from generated code (UC_CTL_PADLOCK_INSN),
// gives the PC, EFLAGS and the registers directly.
bool begin_padlock_call(const Cpu& cpu, const AddressSpace& mem, bool guest64, bool eflags30,
                        PadlockCall& c, const uc_padlock_state* at = nullptr);

// Re-reads the registers into c.state (a hook may have changed them).
void read_padlock_state(const Cpu& cpu, bool guest64, bool eflags30, PadlockCall& c);

// Writes back the GPRs that differ from c.before.
void finish_padlock_call(Cpu& cpu, const PadlockCall& c);

}  // namespace padlock::emu
