#include "emulator/padlock/padlock_call.hpp"

#include <cstring>

namespace padlock::emu {

void read_padlock_state(const Cpu& cpu, bool guest64, bool eflags30, PadlockCall& c) {
  cpu.read_gpr8(c.before);
  std::memcpy(c.state.gpr, c.before, sizeof c.before);
  c.state.eflags =
      (cpu.reg(guest64 ? UC_X86_REG_RFLAGS : UC_X86_REG_EFLAGS) & ~ArchState::kEflags30) |
      (eflags30 ? ArchState::kEflags30 : 0);
  c.state.cr4_osfxsr = true;  // §1.2: Linux always sets CR4[9]
}

bool begin_padlock_call(const Cpu& cpu, const AddressSpace& mem, bool guest64, bool eflags30,
                        PadlockCall& c) {
  c.pc = cpu.pc();
  const uint64_t avail = mem.accessible_with(c.pc, 15, kPageMapped | kPageExec);
  c.decoded = isa::decode(mem.host(c.pc), avail,
                          guest64 ? isa::CpuMode::Long64 : isa::CpuMode::Protected32);
  if (c.decoded.status == isa::DecodeStatus::NotPadlock) return false;
  read_padlock_state(cpu, guest64, eflags30, c);
  return true;
}

void finish_padlock_call(Cpu& cpu, const PadlockCall& c) {
  uint8_t changed = 0;
  for (int i = 0; i < 8; ++i) {
    if (c.state.gpr[i] != c.before[i]) changed |= static_cast<uint8_t>(1u << i);
  }
  cpu.write_gpr8(c.state.gpr, changed);
}

}  // namespace padlock::emu
