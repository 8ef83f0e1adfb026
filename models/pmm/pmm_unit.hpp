// PMM: REP MONTMUL (guide §5.1, §5.2, §1.7).
#pragma once

#include <cstdint>

#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/unit_interface.hpp"

namespace padlock {

class PmmUnit {
 public:
  explicit PmmUnit(const CpuModel& cpu);

  // One REP MONTMUL. The caller has checked that PMM exists and is enabled.
  // Neither reads nor writes EFLAGS[30] (§1.8).
  Outcome execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem, const ExecEnv& env);
  // Fills o.input, o.output and o.chain: what the execution from `before` to `after` read
  // and wrote (called by Padlock::execute after execute()).
  static void report_spans(const isa::Decoded& d, const ArchState& before, const ArchState& after,
                           GuestMemory& mem, Outcome& o);

 private:
  const CpuModel& cpu_;
};

}  // namespace padlock
