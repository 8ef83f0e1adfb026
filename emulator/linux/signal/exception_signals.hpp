// Linux's user-mode handling of each x86 exception vector (arch/x86/kernel/traps.c): the
// signal, its si_code, and whether si_addr is the faulting PC.
#pragma once

#include <cstdint>

#include "emulator/memory/address_space.hpp"
#include "models/unit_interface.hpp"

namespace padlock::emu {

struct VectorSignal {
  int signo;
  int code;
  bool addr_is_pc;
};

VectorSignal vector_signal(uint32_t vector);

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
