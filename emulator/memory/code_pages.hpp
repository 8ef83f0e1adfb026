// Pages that hold translated code. Guest stores to them go through Unicorn's TLB (which
// invalidates the code they overwrite) or, with direct memory, fault on the host
// (direct_memory.hpp); writes by the emulator itself (a read() into a guest buffer, a
// PadLock result) would miss both, so AddressSpace marks such pages kPageCode from
// Unicorn's code page hook and drops their code before the emulator writes them.
#pragma once

#include <unicorn/unicorn.h>

#include "emulator/memory/address_space.hpp"

namespace padlock::emu {

// Reports code pages of `uc` to `mem`; false if Unicorn refuses.
bool track_code_pages(uc_engine* uc, AddressSpace& mem);

}  // namespace padlock::emu
