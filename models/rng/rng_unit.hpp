// The RNG: MSR 0x110B, four 8-byte accumulation buffers filled against the virtual clock,
// XSTORE and REP XSTORE (guide §1.4, §2.1-§2.3).
#pragma once

#include <cstdint>

#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/state_io.hpp"
#include "models/unit_interface.hpp"

namespace padlock {

class RngUnit {
 public:
  // Bits are reproducible from `seed`; with `host_entropy` they come from the host.
  RngUnit(const CpuModel& cpu, uint64_t seed, bool host_entropy);
  ~RngUnit();
  RngUnit(const RngUnit&) = delete;
  RngUnit& operator=(const RngUnit&) = delete;

  // XSTORE or REP XSTORE (d.id is Xstore or RepXstore). The caller has checked that
  // the RNG exists and is enabled.
  Outcome execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem, const ExecEnv& env);
  // Fills o.input, o.output and o.chain: what the execution from `before` to `after` read
  // and wrote (called by Padlock::execute after execute()).
  static void report_spans(const isa::Decoded& d, const ArchState& before, const ArchState& after,
                           GuestMemory& mem, Outcome& o);

  // MSR 0x110B (§2.2). A write causes a load reset of the RNG hardware.
  uint64_t read_msr(const ExecEnv& env);
  void write_msr(uint64_t value, const ExecEnv& env);
  bool enabled() const;  // MSR 0x110B ENBL (§2.2); CPUID 0xC0000001 EDX[3] copies it

  // The MSR, the accumulation buffers, the noise generator's and the timing jitter's state
  // (Machine.snapshot()): restored, the unit stores the same bytes at the same cycles.
  void save(StateWriter& w) const;
  void load(StateReader& r);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace padlock
