// The exact faulting address of a page fault from our TLB fill (fault_address.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "emulator/cpu/cpu.hpp"
#include "emulator/memory/address_space.hpp"

namespace padlock::emu {

// The first byte of `page` that the instruction at the PC accessed (type: UC_MEM_READ,
// WRITE or FETCH), or the page itself when the instruction cannot be decoded. `cs` is a
// Capstone handle with details on, in the guest's mode. `*via_stack` (if given) tells
// whether that access goes through SS (a push, pop, call or return, or an operand based
// on ESP/EBP or with an SS override), where a bad address is #SS rather than #GP.
uint64_t first_faulting_byte(size_t cs, const Cpu& cpu, const AddressSpace& mem, uint64_t page,
                             int type, bool* via_stack = nullptr);

}  // namespace padlock::emu
