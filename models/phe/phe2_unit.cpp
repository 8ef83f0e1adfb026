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
  const uint64_t ecx = reg_get(s, Gpr::CX, as);
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
  // ECX counts down and ESI advances block by block (unit_run.hpp).
  return hash_blocks_by_ecx<kBlock>(
      run, mem, s, as, esi, ecx, per_block, env,
      [&](const uint8_t* blk) { sha512_blocks(state, blk, 1); },
      [&] { mem.write(edi, state, kStateBytes); });
}

void Phe2Unit::report_spans(const isa::Decoded& d, const ArchState& before, const ArchState&,
                            GuestMemory&, Outcome& o) {
  hash_spans(before, d.addr_size, kStateBytes, o);
}

}  // namespace padlock
