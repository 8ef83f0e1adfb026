// What a debugger sees of a process's guest threads (the gdb stub: qfThreadInfo, Hg, g/p;
// docs/debugging.md): their TIDs and the saved registers of a thread that is switched out.
// The running thread's registers are the CPU's, not here. The one write is gdb's register
// write (G, P) to a switched-out thread, which it runs with when it is switched in.
#pragma once

#include <vector>

#include "emulator/cpu/cpu.hpp"

namespace padlock::emu {

class GuestThreads {
 public:
  virtual std::vector<int> live_tids() const = 0;  // in creation order (the round robin's)
  virtual int running_tid() const = 0;
  // A switched-out live thread's registers; null for the running thread or no live thread.
  virtual const CpuContext* saved_registers(int tid) const = 0;
  // false (nothing written) where saved_registers is null.
  virtual bool set_saved_registers(int tid, const CpuContext& regs) = 0;

 protected:
  ~GuestThreads() = default;
};

}  // namespace padlock::emu
