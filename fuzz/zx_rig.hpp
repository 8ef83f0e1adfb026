// The model the differential targets for the late Nano's and Zhaoxin's units run: nano with
// PHE2, CCS, SM2, RSA and RNG2 switched on, on flat memory.
#pragma once

#include <cstdint>

#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/flat_memory.hpp"
#include "models/padlock.hpp"

namespace padlock::fuzz {

inline CpuModel zx_model() {
  CpuModel m = *find_cpu_model("nano");
  m.units.phe2 = m.units.ccs = m.units.sm2 = m.units.rsa = m.units.rng2 = true;
  return m;
}

struct ZxRig {
  static constexpr uint64_t kState = 0x10000, kInput = 0x400000, kOutput = 0x800000;
  static constexpr uint64_t kMax = 1 << 16;
  CpuModel cpu = zx_model();
  Padlock padlock{cpu};
  FlatMemory mem;
  ZxRig() {
    mem.map(kState, 4096);
    mem.map(kInput, kMax + 4096);
    mem.map(kOutput, kMax + 4096);
  }
  // Runs the instruction to completion, resuming after interrupts every `spacing` clocks
  // (0: none), as the emulator does (§1.7); traps on any other end.
  void run(const uint8_t (&bytes)[4], ArchState& s, uint64_t spacing) {
    const isa::Decoded d = isa::decode(bytes, 4, isa::CpuMode::Protected32);
    ExecEnv env;
    for (int resumes = 0;; ++resumes) {
      if (spacing != 0) env.interrupt_at = env.now + spacing;
      const Outcome o = padlock.execute(d, s, mem, env);
      env.now += o.cycles + 1;
      if (o.status == Status::Completed) return;
      if (o.status != Status::Interrupted || resumes > 1 << 20) __builtin_trap();
    }
  }
};

}  // namespace padlock::fuzz
