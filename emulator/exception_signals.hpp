// Linux's user-mode handling of each x86 exception vector (arch/x86/kernel/traps.c): the
// signal, its si_code, and whether si_addr is the faulting PC.
#pragma once

#include <cstdint>

namespace padlock::emu {

struct VectorSignal {
  int signo;
  int code;
  bool addr_is_pc;
};

VectorSignal vector_signal(uint32_t vector);

}  // namespace padlock::emu
