// Direct guest memory: generated code reaches the guest's window through the host's %gs,
// with no softmmu TLB lookup per access, as qemu-user does (our Unicorn patch,
// UC_CTL_DIRECT_MEMORY; docs/emulator.md, "Direct memory"). A 32-bit guest's addresses are
// bounded by the 0x67 prefix; a 64-bit guest's are tested against the window's size first,
// and one past it takes the softmmu path, whose TLB fill refuses it.
//
// The host mapping then has to say what the TLB said: AddressSpace mirrors the guest's
// protections onto it, and write-protects pages that hold translated code (kPageCode,
// code_pages.hpp). A host SIGSEGV on the window is one of two things:
//   - a store to such a code page: the page gets its protections back, its translated
//     blocks are dropped (restarting the block that wrote, if it was one of them: precise
//     self-modifying code), and the store runs again;
//   - a guest fault from generated code: Unicorn's TLB fill refuses it exactly as it
//     would have in the softmmu path, and the guest gets its SIGSEGV from there.
// Anything else is the emulator's own crash and goes to the previous handler.
#pragma once

#include <unicorn/unicorn.h>

#include "emulator/memory/address_space.hpp"

namespace padlock::emu {

// Turns direct memory on for `uc` (UC_TLB_VIRTUAL over `mem`'s window, code pages
// tracked) before anything is mapped, and installs the SIGSEGV handler. False, and nothing changed,
// where the host cannot (not x86-64 Linux, no GS base, or another guest already has it: the handler
// serves one).
bool direct_memory_enable(uc_engine* uc, AddressSpace& mem);
// Restores the previous SIGSEGV action.
void direct_memory_disable();

}  // namespace padlock::emu
