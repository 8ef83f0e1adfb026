// PHE: REP XSHA1 and REP XSHA256 (guide §4.1-§4.3).
#pragma once

#include <cstdint>

#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/unit_interface.hpp"

namespace padlock {

class PheUnit {
 public:
  explicit PheUnit(const CpuModel& cpu);

  // One REP XSHA1 or REP XSHA256. The caller has checked that PHE exists and is enabled.
  // Clears EFLAGS[30] (§1.8).
  Outcome execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem, const ExecEnv& env);
  // Fills o.input, o.output and o.chain: what the execution from `before` to `after` read
  // and wrote (called by Padlock::execute after execute()).
  static void report_spans(const isa::Decoded& d, const ArchState& before, const ArchState& after,
                           GuestMemory& mem, Outcome& o);

 private:
  const CpuModel& cpu_;
};

}  // namespace padlock
