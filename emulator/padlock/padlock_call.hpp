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

// Writes back the GPRs that differ from c.before.
void finish_padlock_call(Cpu& cpu, const PadlockCall& c);

}  // namespace padlock::emu
