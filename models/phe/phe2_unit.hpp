// PHE2: REP XSHA384 and REP XSHA512 of the late Nano and Zhaoxin (docs/fidelity/phe2.md).
#pragma once

#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/unit_interface.hpp"

namespace padlock {

class Phe2Unit {
 public:
  explicit Phe2Unit(const CpuModel& cpu);

  // One REP XSHA384 or REP XSHA512. The caller has checked that PHE2 exists and is enabled.
  Outcome execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem, const ExecEnv& env);
  static void report_spans(const isa::Decoded& d, const ArchState& before, const ArchState& after,
                           GuestMemory& mem, Outcome& o);

 private:
  const CpuModel& cpu_;
};

}  // namespace padlock
