// PHE2: REP XSHA384/512 as OpenSSL's and GnuTLS's padlock_sha512_blocks (e_padlock-x86*.pl)
// and Zhaoxin's SHA384/SHA512 kernel patch call it: ESI the message, ECX the number of
// 128-byte blocks, EDI the state H0..H7 as little-endian 64-bit words. No padding: software
// pads and byte-swaps the digest. The choices for what no caller shows are in
// docs/fidelity/phe2.md.
#include "models/phe/phe2_unit.hpp"

#include "models/guest_access.hpp"
#include "models/phe/sha512.hpp"
#include "models/unit_run.hpp"

namespace padlock {

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the state at EDI is copied as host words (little-endian 64-bit words)");

constexpr uint64_t kBlock = 128;
constexpr uint64_t kStateBytes = 64;
constexpr uint64_t kStateAlign = 16;  // both callers keep the state 16-byte aligned

}  // namespace

Phe2Unit::Phe2Unit(const CpuModel& cpu) : cpu_(cpu) {}

Outcome Phe2Unit::execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem,
                          const ExecEnv& env) {
  const unsigned as = d.addr_size;
  // EAX: no caller sets it; it is not read and stays as it was.
  env.report(Diag::Phe2EaxIgnored);
  // SHA-384 is SHA-512's compression with another IV and a truncated digest, both the
  // software's: XSHA384 runs the same compression on the state at EDI.
  if (d.id == isa::InsnId::Xsha384) env.report(Diag::Xsha384State);

  UnitRun run;
  run.clocks = cpu_.phe2.startup;

  const uint64_t edi = reg_get(s, Gpr::DI, as);
  uint64_t ecx = reg_get(s, Gpr::CX, as);
  if (ecx == 0) {
    // As Zhaoxin reports for XSHA1/XSHA256 with ECX = 0: nothing happens.
    env.report(Diag::Phe2EcxZero);
    return run.finish(Status::Completed);
  }
  if (edi % kStateAlign != 0) return run.fault(FaultKind::GeneralProtection, edi, false);
  if (!probe(mem, edi, kStateBytes, Access::Read, run) ||
      !probe(mem, edi, kStateBytes, Access::Write, run))
    return run.out;

  uint64_t state[8];
  mem.read(edi, state, kStateBytes);
  uint64_t esi = reg_get(s, Gpr::SI, as);
  const double per_block = cpu_.phe2.sha512_block_clocks;
  // ECX counts down and ESI advances block by block, so an interrupt (§1.7) or a fault on
  // the input leaves registers and state that resume where it stopped.
  while (ecx != 0) {
    uint8_t blk[kBlock];
    uint64_t fault_at = 0;
    if (!read_wrapped(mem, esi, as, blk, kBlock, &fault_at))
      return run.fault(FaultKind::PageFault, fault_at, false);
    sha512_blocks(state, blk, 1);
    esi = ea_add(esi, kBlock, as);
    --ecx;
    run.clocks += per_block;
    mem.write(edi, state, kStateBytes);
    reg_set(s, Gpr::SI, esi, as);
    reg_set(s, Gpr::CX, ecx, as);
    run.out.bytes += kBlock;
    ++run.out.blocks;
    if (ecx != 0 && env.interrupt_due(run.now())) return run.finish(Status::Interrupted);
  }
  return run.finish(Status::Completed);
}

void Phe2Unit::report_spans(const isa::Decoded& d, const ArchState& before, const ArchState&,
                            GuestMemory&, Outcome& o) {
  const unsigned as = d.addr_size;
  o.input = {reg_get(before, Gpr::SI, as), o.bytes};
  if (o.blocks != 0) o.output = {reg_get(before, Gpr::DI, as), kStateBytes};
}

}  // namespace padlock
