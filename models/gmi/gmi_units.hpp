// GMI: CCS_HASH (SM3), CCS_ENCRYPT (SM4) and SM2 verify of Zhaoxin's parts (GMI User
// Manual Rev 1.0 §1.1, §1.2; openEuler arch/x86/crypto/sm{2,3,4}-zhaoxin-gmi.c). The
// choices where they are silent are in docs/fidelity/gmi.md.
#pragma once

#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/unit_interface.hpp"

namespace padlock {

class Sm3Unit {
 public:
  explicit Sm3Unit(const CpuModel& cpu) : cpu_(cpu) {}
  Outcome execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem, const ExecEnv& env);
  static void report_spans(const isa::Decoded& d, const ArchState& before, const ArchState& after,
                           GuestMemory& mem, Outcome& o);

 private:
  const CpuModel& cpu_;
};

class Sm4Unit {
 public:
  explicit Sm4Unit(const CpuModel& cpu) : cpu_(cpu) {}
  Outcome execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem, const ExecEnv& env);
  static void report_spans(const isa::Decoded& d, const ArchState& before, const ArchState& after,
                           GuestMemory& mem, Outcome& o);

 private:
  const CpuModel& cpu_;
};

class Sm2Unit {
 public:
  explicit Sm2Unit(const CpuModel& cpu) : cpu_(cpu) {}
  Outcome execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem, const ExecEnv& env);
  static void report_spans(const isa::Decoded& d, const ArchState& before, const ArchState& after,
                           GuestMemory& mem, Outcome& o);

 private:
  const CpuModel& cpu_;
};

// SM2 signature verification (GB/T 32918.2-2016 §7.1) on the curve of GB/T 32918.5-2017:
// `e` the 32-byte digest, `pub` 0x04 || X || Y, `sig` r || s (32-byte big-endian each).
bool sm2_verify(const uint8_t e[32], const uint8_t pub[65], const uint8_t sig[64]);

}  // namespace padlock
