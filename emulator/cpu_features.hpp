// What the guest learns about the processor: CPUID answered from the selected CPU model
// (vendor, family/model/stepping, feature bits, the Centaur leaves of §1.3), RDTSC from
// the virtual cycle counter, and the Unicorn CPU whose instruction set covers the model's.
#pragma once

#include "models/padlock.hpp"

namespace padlock::emu {

// A uc_cpu_x86 value whose translator accepts every instruction-set extension the
// model's CPUID leaf 1 advertises (SSE3, SSSE3, SSE4.x).
int unicorn_cpu_model(const Padlock& padlock);

}  // namespace padlock::emu
