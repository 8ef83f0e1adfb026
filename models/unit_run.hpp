// The bookkeeping the PHE2 and GMI executions share: clocks rounded once, the status and
// the fault, a block done, and a hash's spans.
#pragma once

#include <cmath>

#include "models/guest_access.hpp"
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
  // One block done: its clocks and bytes. True when `more` blocks remain and an interrupt
  // is due by then: each block is an interruptible point (§1.7), and the caller stops
  // Interrupted with its registers where the next block resumes.
  bool block_done(double block_clocks, uint64_t bytes, bool more, const ExecEnv& env) {
    clocks += block_clocks;
    out.bytes += bytes;
    ++out.blocks;
    return more && env.interrupt_due(now());
  }
};

// The ECX-counted block loop of PHE2 and SM3's block mode: each block of `Block` bytes read
// at ESI (wrapping at the address size), compressed, and committed (`commit` writes the
// state at EDI) with ESI and ECX, so that an interrupt (§1.7) or a fault on the input leaves
// registers and state that resume where it stopped.
template <uint64_t Block, typename Compress, typename Commit>
Outcome hash_blocks_by_ecx(UnitRun& run, GuestMemory& mem, ArchState& s, unsigned as, uint64_t& esi,
                           uint64_t ecx, double block_clocks, const ExecEnv& env,
                           Compress&& compress, Commit&& commit) {
  while (ecx != 0) {
    uint8_t blk[Block];
    uint64_t fault_at = 0;
    if (!read_wrapped(mem, esi, as, blk, Block, &fault_at))
      return run.fault(FaultKind::PageFault, fault_at, false);
    compress(blk);
    esi = ea_add(esi, Block, as);
    --ecx;
    commit();
    reg_set(s, Gpr::SI, esi, as);
    reg_set(s, Gpr::CX, ecx, as);
    if (run.block_done(block_clocks, Block, ecx != 0, env)) return run.finish(Status::Interrupted);
  }
  return run.finish(Status::Completed);
}

// report_spans of a hash that runs ECX blocks (PHE2, SM3's block mode): the input read at
// ESI and, once a block was hashed, the `state_bytes` of state written at EDI.
inline void hash_spans(const ArchState& before, unsigned addr_size, uint64_t state_bytes,
                       Outcome& o) {
  o.input = {reg_get(before, Gpr::SI, addr_size), o.bytes};
  if (o.blocks != 0) o.output = {reg_get(before, Gpr::DI, addr_size), state_bytes};
}

// Probes [ea, ea + len) for `access`; false with the fault filled in when a byte is not.
inline bool probe(GuestMemory& mem, uint64_t ea, uint64_t len, Access access, UnitRun& run) {
  const uint64_t ok = mem.accessible(ea, len, access);
  if (ok >= len) return true;
  run.fault(FaultKind::PageFault, ea + ok, access == Access::Write);
  return false;
}

}  // namespace padlock
