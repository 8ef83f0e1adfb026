// Test rig for the late Nano's and Zhaoxin's units (PHE2, GMI, and the instructions with no
// public semantics): a Padlock on FlatMemory for a CPU model built here from `nano` with
// the new unit flags on (the Zhaoxin models themselves are data under models/cpus/), the
// instruction decoded from its bytes. OpenSSL libcrypto is the independent reference.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/counting_sink.hpp"
#include "common/random_bytes.hpp"
#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/flat_memory.hpp"
#include "models/padlock.hpp"

namespace padlock::test {

// nano with PHE2, CCS, SM2, RSA and RNG2 present (C000_0001 EDX bits 0-5, 22-28, as on the
// KX-6000 of docs/zhaoxin.md).
inline CpuModel zhaoxin_like(bool chain_modes = true) {
  CpuModel m = *find_cpu_model("nano");
  m.name = "nano-gmi-test";
  m.units.phe2 = m.units.ccs = m.units.sm2 = m.units.rsa = m.units.rng2 = true;
  m.gmi.sm4_chain_modes = chain_modes;
  return m;
}

class ZxRig {
 public:
  static constexpr uint64_t kStateVa = 0x10000;  // state, key, IV, hash, signature
  static constexpr uint64_t kInputVa = 0x400000;
  static constexpr uint64_t kOutputVa = 0x800000;

  explicit ZxRig(CpuModel model = zhaoxin_like(), uint64_t capacity = 1 << 20)
      : cpu_(std::move(model)), padlock_(cpu_) {
    mem.map(kStateVa, 0x10000);
    mem.map(kInputVa, capacity + 4096);
    mem.map(kOutputVa, capacity + 4096);
    env.diag = &diag;
  }

  void put(uint64_t va, const uint8_t* data, size_t len) {
    if (len != 0) std::memcpy(mem.host(va, len), data, len);
  }
  void put(uint64_t va, const std::vector<uint8_t>& v) { put(va, v.data(), v.size()); }
  std::vector<uint8_t> get(uint64_t va, size_t len) {
    const uint8_t* p = mem.host(va, len);
    return std::vector<uint8_t>(p, p + len);
  }
  uint64_t& reg(Gpr r) { return s.gpr[static_cast<int>(r)]; }

  // Executes the instruction `bytes` (prefixes included).
  Outcome exec(std::vector<uint8_t> bytes, isa::CpuMode mode = isa::CpuMode::Protected32) {
    last = isa::decode(bytes.data(), bytes.size(), mode);
    const Outcome o = padlock_.execute(last, s, mem, env);
    env.now += o.cycles;
    return o;
  }

  const CpuModel& cpu() const { return cpu_; }
  Padlock& padlock() { return padlock_; }

  FlatMemory mem;
  ArchState s;
  ExecEnv env;
  CountingSink diag;
  isa::Decoded last;

 private:
  CpuModel cpu_;
  Padlock padlock_;
};

inline const std::vector<uint8_t> kXsha384 = {0xF3, 0x0F, 0xA6, 0xD8};
inline const std::vector<uint8_t> kXsha512 = {0xF3, 0x0F, 0xA6, 0xE0};
inline const std::vector<uint8_t> kCcsHash = {0xF3, 0x0F, 0xA6, 0xE8};
inline const std::vector<uint8_t> kCcsEncrypt = {0xF3, 0x0F, 0xA7, 0xF0};
inline const std::vector<uint8_t> kSm2 = {0xF2, 0x0F, 0xA6, 0xC0};
inline const std::vector<uint8_t> kMontmul2 = {0xF3, 0x0F, 0xA6, 0xF0};
inline const std::vector<uint8_t> kXmodexp = {0xF3, 0x0F, 0xA6, 0xF8};
inline const std::vector<uint8_t> kXrng2 = {0xF3, 0x0F, 0xA7, 0xF8};

}  // namespace padlock::test
