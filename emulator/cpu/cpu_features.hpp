// What the guest learns about the processor: CPUID answered from the selected CPU model
// (vendor, family/model/stepping, feature bits, the Centaur leaves of §1.3), RDTSC from
// the virtual cycle counter, and the Unicorn CPU whose instruction set covers the model's.
#pragma once

#include "emulator/cpu/cpu.hpp"
#include "models/padlock.hpp"

namespace padlock::emu {

// A uc_cpu_x86 value whose translator accepts every instruction-set extension the
// model's CPUID leaf 1 advertises (SSE3, SSSE3, SSE4.x).
int unicorn_cpu_model(const Padlock& padlock);

// Answers the guest's CPUID from the model (EAX = leaf, ECX = subleaf in, EAX..EDX out;
// 32-bit results zero-extend into RAX..RDX in long mode). Returns 1: skip Unicorn's own.
int answer_cpuid(Cpu& cpu, const Padlock& padlock, bool guest64);

}  // namespace padlock::emu
