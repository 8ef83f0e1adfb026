#include "emulator/cpu/cpu_features.hpp"

#include <unicorn/unicorn.h>

namespace padlock::emu {

int unicorn_cpu_model(const Padlock& padlock) {
  const CpuidResult leaf1 = padlock.cpuid(1, 0);
  // The smallest of Unicorn's CPU models (QEMU target/i386/cpu.c) that executes every
  // reported feature; the chip check (chip_check.hpp) refuses the ones it adds.
  if (leaf1.ecx & ((1u << 25) | (1u << 1))) return UC_CPU_X86_WESTMERE;  // AES, PCLMULQDQ
  if (leaf1.ecx & ((1u << 20) | (1u << 23))) return UC_CPU_X86_NEHALEM;  // SSE4.2, POPCNT
  if (leaf1.ecx & (1u << 19)) return UC_CPU_X86_PENRYN;                  // SSE4.1
  if (leaf1.ecx & (1u << 9)) return UC_CPU_X86_CORE2DUO;                 // SSSE3
  return UC_CPU_X86_QEMU64;                                              // SSE, SSE2, SSE3
}

int answer_cpuid(Cpu& cpu, const Padlock& padlock, bool guest64) {
  const uint32_t leaf = static_cast<uint32_t>(cpu.reg(UC_X86_REG_EAX));
  const uint32_t subleaf = static_cast<uint32_t>(cpu.reg(UC_X86_REG_ECX));
  const CpuidResult r = padlock.cpuid(leaf, subleaf);
  const int ids64[4] = {UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX};
  const int ids32[4] = {UC_X86_REG_EAX, UC_X86_REG_EBX, UC_X86_REG_ECX, UC_X86_REG_EDX};
  const uint64_t vals[4] = {r.eax, r.ebx, r.ecx, r.edx};
  for (int i = 0; i < 4; ++i) cpu.set_reg(guest64 ? ids64[i] : ids32[i], vals[i]);
  return 1;
}

}  // namespace padlock::emu
