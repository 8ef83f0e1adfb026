// CCS_HASH, SM3 (GMI User Manual Rev 1.0 §1.1): EBX = 0x20 selects SM3; EAX = 0 hashes ECX
// bytes and pads, EAX = -1 hashes ECX 64-byte blocks; ESI the input; EDI the 32-byte state,
// kept as big-endian words (openEuler sm3-zhaoxin-gmi.c stores the IV byte-swapped and
// copies the state out as the digest). Afterwards: EAX = 0 mode leaves EAX = ECX and ECX
// unchanged; EAX = -1 mode leaves EAX unchanged and ECX = 0; ESI advanced; EDI unchanged.
#include <cstring>

#include "models/gmi/gmi_units.hpp"
#include "models/gmi/sm3.hpp"
#include "models/guest_access.hpp"
#include "models/unit_run.hpp"

namespace padlock {

namespace {

constexpr uint64_t kBlock = 64;
constexpr uint64_t kStateBytes = 32;
constexpr uint32_t kSm3Select = 0x20;  // GMI §1.1: EBX = 0x20 enables the SM3 function

void load_state(const uint8_t* p, uint32_t v[8]) {
  for (int i = 0; i < 8; ++i, p += 4)
    v[i] = uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
void store_state(const uint32_t v[8], uint8_t* p) {
  for (int i = 0; i < 8; ++i, p += 4) {
    p[0] = static_cast<uint8_t>(v[i] >> 24);
    p[1] = static_cast<uint8_t>(v[i] >> 16);
    p[2] = static_cast<uint8_t>(v[i] >> 8);
    p[3] = static_cast<uint8_t>(v[i]);
  }
}

}  // namespace

Outcome Sm3Unit::execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem,
                         const ExecEnv& env) {
  const unsigned as = d.addr_size;
  const GmiParams& p = cpu_.gmi;
  UnitRun run;
  // The manual names EAX and EBX: their low 32 bits are read in every mode.
  const uint32_t ebx = static_cast<uint32_t>(s[Gpr::BX]);
  const uint32_t eax = static_cast<uint32_t>(s[Gpr::AX]);
  if (ebx != kSm3Select) {
    env.report(Diag::Sm3BadEbx);
    return Outcome::fault_ud();
  }
  const bool blocks_mode = eax == 0xFFFFFFFFu;
  if (!blocks_mode && eax != 0) {
    env.report(Diag::Sm3BadEax);
    return Outcome::fault_ud();
  }
  run.clocks = p.startup;
  const uint64_t edi = reg_get(s, Gpr::DI, as);
  uint64_t esi = reg_get(s, Gpr::SI, as);
  const uint64_t ecx = reg_get(s, Gpr::CX, as);
  if (!probe(mem, edi, kStateBytes, Access::Read, run) ||
      !probe(mem, edi, kStateBytes, Access::Write, run))
    return run.out;
  uint8_t raw[kStateBytes];
  mem.read(edi, raw, kStateBytes);
  uint32_t v[8];
  load_state(raw, v);
  auto commit = [&] {  // the state at EDI (ESI: the block loop sets it, EAX = 0 below)
    store_state(v, raw);
    mem.write(edi, raw, kStateBytes);
  };

  if (blocks_mode) {
    // ECX counts down block by block: an interrupt or an input fault resumes there.
    return hash_blocks_by_ecx<kBlock>(
        run, mem, s, as, esi, ecx, p.sm3_block_clocks, env,
        [&](const uint8_t* blk) { sm3_blocks(v, blk, 1); }, commit);
  }

  // EAX = 0: the whole message and its padding in one step (not interruptible: a resume
  // point would need the bytes done, which no register holds). The input is probed first.
  uint64_t fault_at = 0;
  const uint64_t whole = ecx / kBlock;
  const uint64_t tail = ecx % kBlock;
  for (uint64_t off = 0; off < ecx; off += 4096) {
    uint8_t chunk[4096];
    const uint64_t n = ecx - off < sizeof chunk ? ecx - off : sizeof chunk;
    if (!read_wrapped(mem, ea_add(esi, off, as), as, chunk, n, &fault_at))
      return run.fault(FaultKind::PageFault, fault_at, false);
  }
  for (uint64_t i = 0; i < whole; ++i) {
    uint8_t blk[kBlock];
    read_wrapped(mem, esi, as, blk, kBlock, &fault_at);
    sm3_blocks(v, blk, 1);
    esi = ea_add(esi, kBlock, as);
  }
  // GB/T 32905-2016 §5.2: 1, zeros, then the 64-bit big-endian bit length.
  uint8_t last[2 * kBlock] = {};
  read_wrapped(mem, esi, as, last, tail, &fault_at);
  esi = ea_add(esi, tail, as);
  last[tail] = 0x80;
  const uint64_t pad_blocks = tail + 1 + 8 <= kBlock ? 1 : 2;
  const uint64_t bits = ecx * 8;
  for (int i = 0; i < 8; ++i)
    last[pad_blocks * kBlock - 1 - i] = static_cast<uint8_t>(bits >> (8 * i));
  sm3_blocks(v, last, pad_blocks);
  commit();
  reg_set(s, Gpr::SI, esi, as);
  reg_set(s, Gpr::AX, ecx, as);
  run.clocks += static_cast<double>(whole + pad_blocks) * p.sm3_block_clocks + p.sm3_padding;
  run.out.bytes = ecx;
  run.out.blocks = static_cast<uint32_t>(whole + pad_blocks);
  return run.finish(Status::Completed);
}

void Sm3Unit::report_spans(const isa::Decoded& d, const ArchState& before, const ArchState&,
                           GuestMemory&, Outcome& o) {
  hash_spans(before, d.addr_size, kStateBytes, o);
}

}  // namespace padlock
