// SM2 (F2 0F A6 C0) as openEuler's sm2-zhaoxin-gmi.c calls it: EDX = 8 verifies; EAX the
// 32-byte digest e, EBX the public key (0x04 || X || Y, 65 bytes, as the driver's
// set_pub_key keeps it), EDI the signature, ESI an 8 KB scratch area; ECX = 1 when the
// signature verifies. The signature's layout (r || s, 32-byte big-endian each), the scratch
// area's use and the registers left unchanged are our choices (docs/fidelity/gmi.md).
#include "models/gmi/gmi_units.hpp"
#include "models/guest_access.hpp"
#include "models/unit_run.hpp"

namespace padlock {

namespace {

constexpr uint32_t kSm2Verify = 8;       // openEuler SM2_CWORD_VERIFY
constexpr uint64_t kScratch = 4 * 2048;  // openEuler SCRATCH_SIZE

}  // namespace

Outcome Sm2Unit::execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem,
                         const ExecEnv& env) {
  const unsigned as = d.addr_size;
  UnitRun run;
  if (static_cast<uint32_t>(s[Gpr::DX]) != kSm2Verify) {
    // Other operations exist (Zhaoxin's 2023 patch names verify only) but are not public.
    env.report(Diag::Sm2BadEdx);
    return run.fault(FaultKind::NotModelled, 0, false);
  }
  uint8_t e[32], pub[65], sig[64];
  uint64_t fault_at = 0;
  if (!read_wrapped(mem, reg_get(s, Gpr::AX, as), as, e, sizeof e, &fault_at) ||
      !read_wrapped(mem, reg_get(s, Gpr::BX, as), as, pub, sizeof pub, &fault_at) ||
      !read_wrapped(mem, reg_get(s, Gpr::DI, as), as, sig, sizeof sig, &fault_at))
    return run.fault(FaultKind::PageFault, fault_at, false);
  // The scratch area must be there (the driver allocates it); the model does not use it.
  if (!probe(mem, reg_get(s, Gpr::SI, as), kScratch, Access::Write, run)) return run.out;
  s[Gpr::CX] = sm2_verify(e, pub, sig) ? 1 : 0;
  run.clocks = cpu_.gmi.sm2_verify_clocks;
  run.out.bytes = sizeof sig;
  run.out.blocks = 1;
  return run.finish(Status::Completed);
}

void Sm2Unit::report_spans(const isa::Decoded& d, const ArchState& before, const ArchState&,
                           GuestMemory&, Outcome& o) {
  if (o.blocks != 0) o.input = {reg_get(before, Gpr::DI, d.addr_size), 64};
}

}  // namespace padlock
