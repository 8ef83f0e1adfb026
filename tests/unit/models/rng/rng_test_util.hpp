// Shared set-up for the RNG unit tests: a model, guest memory, decoded XSTORE forms and a
// diagnostics recorder.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "isa/decoder.hpp"
#include "isa/msr.hpp"
#include "models/cpu_model.hpp"
#include "models/flat_memory.hpp"
#include "models/rng/rng_unit.hpp"
#include "models/unit_interface.hpp"

namespace padlock::test {

class DiagRecorder : public DiagnosticSink {
 public:
  void report(Diag d, uint64_t) override { seen.push_back(d); }
  bool saw(Diag d) const {
    for (Diag x : seen) {
      if (x == d) return true;
    }
    return false;
  }
  std::vector<Diag> seen;
};

inline isa::Decoded decode_bytes(std::vector<uint8_t> bytes,
                                 isa::CpuMode mode = isa::CpuMode::Protected32) {
  const isa::Decoded d = isa::decode(bytes.data(), bytes.size(), mode);
  EXPECT_EQ(d.status, isa::DecodeStatus::Ok);
  return d;
}
inline isa::Decoded xstore32() {
  return decode_bytes({0x0F, 0xA7, 0xC0});
}
inline isa::Decoded rep_xstore32() {
  return decode_bytes({0xF3, 0x0F, 0xA7, 0xC0});
}
inline isa::Decoded xstore16() {
  return decode_bytes({0x67, 0x0F, 0xA7, 0xC0});
}
inline isa::Decoded rep_xstore16() {
  return decode_bytes({0x67, 0xF3, 0x0F, 0xA7, 0xC0});
}
inline isa::Decoded xstore64() {
  return decode_bytes({0x0F, 0xA7, 0xC0}, isa::CpuMode::Long64);
}
inline isa::Decoded rep_xstore64_a32() {
  return decode_bytes({0x67, 0xF3, 0x0F, 0xA7, 0xC0}, isa::CpuMode::Long64);
}

inline const CpuModel& cpu(const std::string& name) {
  const CpuModel* m = find_cpu_model(name);
  if (m == nullptr) throw std::runtime_error("unknown cpu " + name);
  return *m;
}

// MSR 0x110B field helpers (§2.2).
inline uint64_t msr_value(unsigned src, unsigned bias, bool rbts, bool fltr = false,
                          unsigned fcnt = 0) {
  return isa::RngMsr::kEnblBit | (src << 8) | (bias << 10) | (rbts ? 1u << 13 : 0) |
         (fltr ? 1u << 14 : 0) | (fcnt << 16);
}

// One CPU's RNG with a buffer at kBuf and a clock.
struct RngBench {
  static constexpr uint64_t kBuf = 0x100000;
  static constexpr uint64_t kBufLen = 0x200000;

  explicit RngBench(const std::string& name, uint64_t seed = 1, bool host = false)
      : model(cpu(name)), rng(model, seed, host) {
    mem.map(kBuf, kBufLen);
    env.mhz = model.default_mhz;
    env.diag = &diag;
  }

  // A load reset at the current time (§2.2): buffers empty, generation starts now.
  void reset(uint64_t msr = isa::kMsrRngReset) { rng.write_msr(msr, env); }
  // Lets the generator run long enough to fill all four buffers.
  void fill() { env.now += 100'000'000; }
  uint32_t msr() { return static_cast<uint32_t>(rng.read_msr(env)); }

  Outcome run(const isa::Decoded& d) {
    const Outcome o = rng.execute(d, s, mem, env);
    env.now += o.cycles;
    return o;
  }
  Outcome xstore(unsigned edx, uint64_t edi = kBuf) {
    s[Gpr::DX] = edx;
    s[Gpr::DI] = edi;
    return run(xstore32());
  }
  Outcome rep_xstore(unsigned edx, uint64_t count, uint64_t edi = kBuf) {
    s[Gpr::DX] = edx;
    s[Gpr::CX] = count;
    s[Gpr::DI] = edi;
    return run(rep_xstore32());
  }
  std::vector<uint8_t> bytes(uint64_t va, size_t n) {
    const uint8_t* p = mem.host(va, n);
    return {p, p + n};
  }
  void fill_memory(uint64_t va, size_t n, uint8_t v) { std::memset(mem.host(va, n), v, n); }

  const CpuModel& model;
  RngUnit rng;
  FlatMemory mem;
  ArchState s;
  ExecEnv env;
  DiagRecorder diag;
};

}  // namespace padlock::test
