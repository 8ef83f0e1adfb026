// The register side of a PadLock trap, shared by the whole-program Process and the
// function harness Machine: decode the instruction at the PC, read the architectural
// state the models need, write back what they changed, and name the Linux signal of a
// fault. Timing, statistics and observers stay with the callers.
#pragma once

#include <cstdint>

#include "emulator/address_space.hpp"
#include "emulator/cpu.hpp"
#include "isa/decoder.hpp"
#include "models/machine.hpp"

namespace padlock::emu {

struct PadlockCall {
  isa::Decoded decoded;
  uint64_t pc = 0;
  uint64_t before[8] = {};  // the GPRs at the trap
  ArchState state;          // the model's input; it updates it in place
};

// Decodes the instruction at the PC into `c`; false if it is not a PadLock instruction
// (the caller raises SIGILL). EFLAGS[30] comes from the caller's shadow bit: QEMU never
// holds it (§1.8, §3.2).
bool begin_padlock_call(const Cpu& cpu, const AddressSpace& mem, bool guest64, bool eflags30,
                        PadlockCall& c);

// Re-reads the registers into c.state (a hook may have changed them).
void read_padlock_state(const Cpu& cpu, bool guest64, bool eflags30, PadlockCall& c);

// Writes back the GPRs that differ from c.before.
void finish_padlock_call(Cpu& cpu, const PadlockCall& c);

// What Linux reports for a fault of a PadLock instruction at `pc` (§1.7): #PF is SIGSEGV
// with SEGV_MAPERR or SEGV_ACCERR and the faulting address, #GP is SIGSEGV with si_addr 0
// (SI_KERNEL), #UD is SIGILL at the instruction.
struct FaultSignal {
  int signo = 0;
  int code = 0;
  int trapno = -1;
  uint64_t addr = 0;
  uint64_t error_code = 0;  // the page-fault error code (user, write, protection bits)
};
FaultSignal padlock_fault_signal(const Fault& f, const AddressSpace& mem, uint64_t pc);

}  // namespace padlock::emu
