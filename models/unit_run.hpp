// The bookkeeping the PHE2 and GMI executions share: clocks rounded once, the status and
// the fault.
#pragma once

#include <cmath>

#include "models/unit_interface.hpp"

namespace padlock {

struct UnitRun {
  Outcome out;
  double clocks = 0;

  uint64_t now() const { return static_cast<uint64_t>(std::llround(clocks)); }
  Outcome finish(Status st) {
    out.status = st;
    out.cycles = out.int_cycles = now();
    return out;
  }
  Outcome fault(FaultKind k, uint64_t addr, bool write) {
    out.fault = {k, addr, write};
    return finish(Status::Faulted);
  }
};

// Probes [ea, ea + len) for `access`; false with the fault filled in when a byte is not.
inline bool probe(GuestMemory& mem, uint64_t ea, uint64_t len, Access access, UnitRun& run) {
  const uint64_t ok = mem.accessible(ea, len, access);
  if (ok >= len) return true;
  run.fault(FaultKind::PageFault, ea + ok, access == Access::Write);
  return false;
}

}  // namespace padlock
