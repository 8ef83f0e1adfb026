// CCS_ENCRYPT, SM4 (GMI User Manual Rev 1.0 §1.2): EAX the control word (bit 0: 1 decrypts;
// bits 5:1 = 10000b select SM4; bits 10:6 one of ECB, CBC, CFB, OFB, CTR; bit 11 MAC, CBC
// and CFB only), EBX the raw 16-byte key, EDX the IV, ESI/EDI input/output, ECX the number
// of 16-byte blocks. Afterwards EAX, EBX unchanged, ECX = 0, ESI/EDI advanced. The IV at EDX
// holds the chaining value after each block (openEuler sm4-zhaoxin-gmi.c chains CBC across
// calls through it and expects the CTR counter's low 16 bits there after a wrap).
#include <cstring>

#include "models/gmi/gmi_units.hpp"
#include "models/gmi/sm4.hpp"
#include "models/guest_access.hpp"
#include "models/unit_run.hpp"

namespace padlock {

namespace {

constexpr uint64_t kBlock = 16;

enum class Sm4Mode : uint8_t { Ecb, Cbc, Cfb, Ofb, Ctr };

struct Sm4Control {
  bool valid = false;
  bool decrypt = false;
  bool mac = false;
  bool reserved = false;
  Sm4Mode mode = Sm4Mode::Ecb;

  static Sm4Control from(uint32_t eax) {
    Sm4Control c;
    c.decrypt = (eax & 1) != 0;
    c.mac = (eax >> 11 & 1) != 0;
    c.reserved = (eax >> 12) != 0;
    const uint32_t func = eax >> 1 & 0x1F;
    const uint32_t modes = eax >> 6 & 0x1F;
    // Exactly one mode bit (a power of two) and the SM4 function code.
    c.valid = func == 0x10 && modes != 0 && (modes & (modes - 1)) == 0;
    if (c.valid) c.mode = static_cast<Sm4Mode>(__builtin_ctz(modes));
    return c;
  }
};

void xor16(uint8_t* dst, const uint8_t* a, const uint8_t* b) {
  for (uint64_t i = 0; i < kBlock; ++i) dst[i] = a[i] ^ b[i];
}

}  // namespace

Outcome Sm4Unit::execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem,
                         const ExecEnv& env) {
  const unsigned as = d.addr_size;
  const GmiParams& p = cpu_.gmi;
  const Sm4Control cw = Sm4Control::from(static_cast<uint32_t>(s[Gpr::AX]));
  if (!cw.valid) {
    env.report(Diag::Sm4BadControlWord);
    return Outcome::fault_ud();
  }
  if (cw.mode != Sm4Mode::Ecb && cw.mode != Sm4Mode::Cbc && !p.sm4_chain_modes) {
    env.report(Diag::Sm4ModeAbsent);
    return Outcome::fault_ud();
  }
  if (cw.reserved) env.report(Diag::Sm4ControlReserved);
  const bool chain_mac = cw.mode == Sm4Mode::Cbc || cw.mode == Sm4Mode::Cfb;
  if (cw.mac && !chain_mac) env.report(Diag::Sm4MacMode);
  const bool mac = cw.mac && chain_mac;

  UnitRun run;
  run.clocks = p.startup;
  uint64_t ecx = reg_get(s, Gpr::CX, as);
  if (ecx == 0) return run.finish(Status::Completed);

  // The key and the IV are loaded before the first block (nothing changes on a fault).
  const uint64_t ebx = reg_get(s, Gpr::BX, as);
  const uint64_t edx = reg_get(s, Gpr::DX, as);
  uint8_t key[16];
  uint64_t fault_at = 0;
  if (!read_wrapped(mem, ebx, as, key, sizeof key, &fault_at))
    return run.fault(FaultKind::PageFault, fault_at, false);
  const bool uses_iv = cw.mode != Sm4Mode::Ecb;
  uint8_t iv[kBlock] = {};
  if (uses_iv) {
    if (!read_wrapped(mem, edx, as, iv, kBlock, &fault_at))
      return run.fault(FaultKind::PageFault, fault_at, false);
    if (!probe(mem, edx, kBlock, Access::Write, run)) return run.out;
  }
  const Sm4RoundKeys keys = sm4_expand_key(key);
  run.clocks += p.sm4_key_clocks;

  uint64_t esi = reg_get(s, Gpr::SI, as);
  uint64_t edi = reg_get(s, Gpr::DI, as);
  while (ecx != 0) {
    uint8_t in[kBlock], out[kBlock], ks[kBlock];
    if (!read_wrapped(mem, esi, as, in, kBlock, &fault_at))
      return run.fault(FaultKind::PageFault, fault_at, false);
    switch (cw.mode) {
      case Sm4Mode::Ecb:
        sm4_crypt_block(keys, cw.decrypt, in, out);
        break;
      case Sm4Mode::Cbc:
        if (cw.decrypt) {
          sm4_crypt_block(keys, true, in, ks);
          xor16(out, ks, iv);
          std::memcpy(iv, in, kBlock);
        } else {
          xor16(ks, in, iv);
          sm4_crypt_block(keys, false, ks, out);
          std::memcpy(iv, out, kBlock);
        }
        break;
      case Sm4Mode::Cfb:
        sm4_crypt_block(keys, false, iv, ks);
        xor16(out, in, ks);
        std::memcpy(iv, cw.decrypt ? in : out, kBlock);
        break;
      case Sm4Mode::Ofb:
        sm4_crypt_block(keys, false, iv, ks);
        xor16(out, in, ks);
        std::memcpy(iv, ks, kBlock);
        break;
      case Sm4Mode::Ctr: {
        sm4_crypt_block(keys, false, iv, ks);
        xor16(out, in, ks);
        // The counter is the IV's low 16 bits, big-endian; no carry into byte 13.
        const unsigned ctr = (unsigned{iv[14]} << 8 | iv[15]) + 1;
        if (ctr == 0x10000) env.report(Diag::Sm4CtrWrap);
        iv[14] = static_cast<uint8_t>(ctr >> 8);
        iv[15] = static_cast<uint8_t>(ctr);
        break;
      }
    }
    // MAC: every block goes to the same 16 bytes at EDI, which end as the MAC (as ACE's
    // DGEST, guide §3.2); EDI does not advance.
    if (!write_wrapped(mem, edi, as, out, kBlock, &fault_at))
      return run.fault(FaultKind::PageFault, fault_at, true);
    if (uses_iv) mem.write(edx, iv, kBlock);
    esi = ea_add(esi, kBlock, as);
    if (!mac) edi = ea_add(edi, kBlock, as);
    --ecx;
    reg_set(s, Gpr::SI, esi, as);
    reg_set(s, Gpr::DI, edi, as);
    reg_set(s, Gpr::CX, ecx, as);
    if (run.block_done(p.sm4_block_clocks, kBlock, ecx != 0, env))
      return run.finish(Status::Interrupted);
  }
  return run.finish(Status::Completed);
}

void Sm4Unit::report_spans(const isa::Decoded& d, const ArchState& before, const ArchState& after,
                           GuestMemory&, Outcome& o) {
  const unsigned as = d.addr_size;
  o.input = {reg_get(before, Gpr::SI, as), o.bytes};
  const uint64_t edi0 = reg_get(before, Gpr::DI, as);
  const bool mac_out = reg_get(after, Gpr::DI, as) == edi0 && o.blocks != 0;
  o.output = {edi0, mac_out ? kBlock : o.bytes};
  const bool ecb = Sm4Control::from(static_cast<uint32_t>(before[Gpr::AX])).mode == Sm4Mode::Ecb;
  if (o.blocks != 0 && !ecb) o.chain = {reg_get(before, Gpr::DX, as), kBlock};
}

}  // namespace padlock
