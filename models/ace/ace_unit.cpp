// REP XCRYPT* (§3.1-§3.3): checks, the EFLAGS[30] key cache (§1.8), fault and interrupt
// points (§1.7, §6.6), register and IV write-back, clocks. The AES work itself is in
// ace_engine.cpp and the aes_* kernels.
#include "models/ace/ace_unit.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "models/ace/ace_engine.hpp"
#include "models/ace/ace_key_ram.hpp"
#include "models/ace/ace_memory.hpp"
#include "models/ace/ace_timing.hpp"
#include "models/ace/aes_core.hpp"

namespace padlock {

using ace::BlockClock;
using ace::KeyState;
using ace::Mode;
using isa::ControlWord;

struct AceUnit::Impl {
  explicit Impl(const CpuModel& c) : cpu(c) {}
  const CpuModel& cpu;
  bool errata = false;
  const ace::Kernels* kernels = ace::kernels_for(ace::Backend::Auto);
  // The hardware registers EFLAGS[30] = 1 refers to (§1.8): the last control word and
  // key schedule loaded, whatever memory holds now.
  bool loaded = false;
  ControlWord cw;
  ace::RoundKeys enc;
  ace::RoundKeys dec;
};

namespace {

constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

Mode mode_of(isa::InsnId id) {
  switch (id) {
    case isa::InsnId::XcryptCbc:
      return Mode::Cbc;
    case isa::InsnId::XcryptCtr:
      return Mode::Ctr;
    case isa::InsnId::XcryptCfb:
      return Mode::Cfb;
    case isa::InsnId::XcryptOfb:
      return Mode::Ofb;
    default:
      return Mode::Ecb;
  }
}

ace::ChainMode chain_mode(Mode m) {
  switch (m) {
    case Mode::Cfb:
      return ace::ChainMode::Cfb;
    case Mode::Ofb:
      return ace::ChainMode::Ofb;
    case Mode::Ctr:
      return ace::ChainMode::Ctr;
    default:
      return ace::ChainMode::Cbc;
  }
}

// §3.1 table "What changes": OFB, CTR and CBC/CFB decryption update the IV in memory.
bool writes_iv_memory(Mode m, bool decrypt) {
  return m == Mode::Ofb || m == Mode::Ctr || ((m == Mode::Cbc || m == Mode::Cfb) && decrypt);
}

// Input load granularity in blocks: ECB always works on pairs (§3.1, §3.3); CPUs with
// the prefetch erratum read further (OpenSSL e_padlock-x86*.pl, Linux padlock-aes.c).
unsigned input_group(const AceParams& p, Mode m) {
  switch (m) {
    case Mode::Ecb:
      return std::max(2u, p.prefetch_ecb / 16);
    case Mode::Cbc:
      return std::max(1u, p.prefetch_cbc / 16);
    case Mode::Ctr:
      return std::max(1u, p.prefetch_ctr / 16);
    default:
      return 1;
  }
}

// The first interrupt point (k blocks done) at which a pending interrupt is taken, or
// kNever. Points are multiples of `gran`, need k >= 1 (progress, §1.7) and leave at least
// `min_left` blocks (1 for "before the end"; CTR leaves >= 3, §6.6). `limit` caps k.
uint64_t first_interrupt(const ExecEnv& env, const BlockClock& clk, uint64_t n, unsigned gran,
                         uint64_t min_left, uint64_t limit) {
  if (env.interrupt_at == kNever || n <= min_left) return kNever;
  uint64_t kmax = std::min(n - min_left, limit);
  kmax -= kmax % gran;
  if (kmax < gran || !env.interrupt_due(clk.at(kmax))) return kNever;
  uint64_t lo = 1, hi = kmax / gran;  // smallest m with interrupt_due(at(m * gran))
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (env.interrupt_due(clk.at(mid * gran)))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo * gran;
}

}  // namespace

AceUnit::AceUnit(const CpuModel& cpu) : impl_(new Impl(cpu)) {
  impl_->errata = cpu.ctr_errata;
}
AceUnit::~AceUnit() {
  delete impl_;
}
void AceUnit::set_ctr_errata(bool on) {
  impl_->errata = on;
}
bool AceUnit::ctr_errata() const {
  return impl_->errata;
}

bool AceUnit::set_host_aes(HostAes which) {
  const ace::Backend b = which == HostAes::Portable ? ace::Backend::Portable
                         : which == HostAes::AesNi  ? ace::Backend::AesNi
                                                    : ace::Backend::Auto;
  const ace::Kernels* k = ace::kernels_for(b);
  if (k == nullptr) return false;
  impl_->kernels = k;
  return true;
}

const char* AceUnit::host_aes_name() const {
  return impl_->kernels->name;
}

Outcome AceUnit::execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem,
                         const ExecEnv& env) {
  Impl& u = *impl_;
  const CpuModel& cpu = u.cpu;
  const AceParams& p = cpu.ace;
  const bool ace2 = cpu.units.ace2;
  const Mode mode = mode_of(d.id);
  const unsigned asz = d.addr_size;
  // CTR on a chip without ACE2 never gets here: Padlock::execute raises #UD (§0 note).

  Outcome out;
  // An exception stores EFLAGS, which clears EFLAGS[30] (§1.8); so does the interrupt
  // taken at an interrupt point. The model applies that to the state it hands back.
  auto fault = [&](FaultKind kind, uint64_t addr, bool write, uint64_t clocks) {
    out.status = Status::Faulted;
    out.fault = {kind, addr, write};
    out.cycles = out.int_cycles = clocks;
    s.set_eflags30(false);
    return out;
  };
  const uint64_t early = p.ecx0_clocks_min;
  auto gp = [&](uint64_t addr) { return fault(FaultKind::GeneralProtection, addr, false, early); };
  auto pf = [&](uint64_t ea, uint64_t ok, bool write) {
    return fault(FaultKind::PageFault, ea_add(ea, ok, asz), write, early);
  };

  const uint64_t eax = reg_get(s, Gpr::AX, asz);
  const uint64_t ecx = reg_get(s, Gpr::CX, asz);
  const uint64_t edx = reg_get(s, Gpr::DX, asz);
  const uint64_t ebx = reg_get(s, Gpr::BX, asz);
  const uint64_t esi = reg_get(s, Gpr::SI, asz);
  const uint64_t edi = reg_get(s, Gpr::DI, asz);

  // §1.8, §3.2 EFLAGS[30]: 1 = the control word and keys in the hardware are used as they
  // are, even if memory has changed since. (Never loaded: load, as after RESET.)
  const bool cached = s.eflags30() && u.loaded;
  ControlWord cw = u.cw;
  if (!cached) {
    if (edx & 15) return gp(edx);  // §3.2 EDX must be 16-byte aligned
    uint8_t bytes[16];
    if (const uint64_t ok = ace::probe(mem, edx, 16, asz, Access::Read); ok < 16)
      return pf(edx, ok, false);
    ace::read_wrap(mem, edx, bytes, 16, asz);
    cw = ControlWord::from_bytes(bytes);
    out.has_cw = true;  // read, even if it is refused below
    out.cw = cw;
    if (cw.ksize() == isa::KeySize::Reserved) {
      env.report(Diag::KsizeReserved);
      return gp(edx);
    }
    if (!cw.keygn() && cw.ksize() != isa::KeySize::Aes128) {
      env.report(Diag::HwKeygenNot128);
      return gp(edx);
    }
  }
  out.has_cw = true;
  out.cw = cw;
  out.cw_cached = cached;
  if (cw.ciphr()) env.report(Diag::CiphrSet);
  if (cw.reserved_nonzero) env.report(Diag::ControlWordReserved);
  if (cw.inter()) env.report(Diag::InterMode);
  if (cw.keygn() && cw.rounds() == ace::kMaxRounds) env.report(Diag::AceKeyRam16Rounds);
  if (!ace2 && cw.dgest()) env.report(Diag::DgestOnNehemiah);
  if (!ace2 && cw.align()) env.report(Diag::AlignOnNehemiah);
  if (ace2 && cw.dgest() && (mode == Mode::Ecb || mode == Mode::Ctr || mode == Mode::Ofb)) {
    env.report(Diag::DgestIgnoredMode);
  }
  const bool align = ace2 && cw.align();                                              // §3.2 ALIGN
  const bool dgest = ace2 && cw.dgest() && (mode == Mode::Cbc || mode == Mode::Cfb);  // §3.1
  const bool decrypt = cw.decrypt();

  // §3.1: ESI/EDI 16-byte aligned unless ALIGN = 1, which ECB does not honour (§3.2);
  // EAX always aligned in the chaining modes.
  if (!align || mode == Mode::Ecb) {
    if (esi & 15) return gp(esi);
    if (edi & 15) return gp(edi);
  }
  if (mode != Mode::Ecb && (eax & 15)) return gp(eax);
  if (align) {
    // §3.2: with ALIGN = 1 the 128 bytes at ES:EDX (control word + 112 bytes of scratch)
    // are used by the microcode, so they must be there and writable.
    if (edx & 15) return gp(edx);
    if (const uint64_t ok = ace::probe(mem, edx, 128, asz, Access::Read); ok < 128)
      return pf(edx, ok, false);
    if (const uint64_t ok = ace::probe(mem, edx, 128, asz, Access::Write); ok < 128)
      return pf(edx, ok, true);
  }

  ace::BlockJob job;
  job.mode = mode;
  job.decrypt = decrypt;
  job.in = esi;
  job.out = edi;
  job.out_stride = dgest ? 0 : 16;
  job.asz = asz;
  job.group = input_group(p, mode);
  if (mode != Mode::Ecb) {
    if (const uint64_t ok = ace::probe(mem, eax, 16, asz, Access::Read); ok < 16)
      return pf(eax, ok, false);
    if (writes_iv_memory(mode, decrypt)) {
      if (const uint64_t ok = ace::probe(mem, eax, 16, asz, Access::Write); ok < 16)
        return pf(eax, ok, true);
    }
    ace::read_wrap(mem, eax, job.iv, 16, asz);
  }

  // §1.7, §3.3: ACE starts on the first input group before it tests ECX or loads keys,
  // so even ECX = 0 can page fault here.
  const uint64_t group_bytes = 16ull * job.group;
  if (const uint64_t ok = ace::probe(mem, esi, group_bytes, asz, Access::Read); ok < group_bytes) {
    return pf(esi, ok, false);
  }
  if (ecx == 0) {
    // §3.3: 10..27 clocks; nothing loaded, EFLAGS[30] unchanged (docs/fidelity/ace.md).
    out.cycles = out.int_cycles = ace::ecx0_clocks(p, cached);
    return out;
  }

  KeyState ks = KeyState::Loaded;
  if (!cached) {
    if (ebx & 15) return gp(ebx);  // §3.1 EBX must be 16-byte aligned
    const unsigned klen = ace::key_load_bytes(cw);
    alignas(16) uint8_t key[256];
    if (const uint64_t ok = ace::probe(mem, ebx, klen, asz, Access::Read); ok < klen)
      return pf(ebx, ok, false);
    ace::read_wrap(mem, ebx, key, klen, asz);
    ace::load_key_ram(cw, key, u.enc, u.dec);
    u.cw = cw;
    u.loaded = true;
    s.set_eflags30(true);  // §1.8: set after loading
    out.key_reloaded = true;
    out.key_addr = ebx;
    ks = cw.keygn() ? KeyState::Memory : KeyState::Hardware;
  }
  // The inverse cipher serves ECB and CBC decryption only: CFB, OFB and CTR run the
  // forward cipher both ways (what OpenSSL's e_padlock.c relies on for CFB decryption).
  const bool inverse = decrypt && (mode == Mode::Ecb || mode == Mode::Cbc);
  job.keys = inverse ? &u.dec : &u.enc;

  const uint64_t n = ecx;
  const BlockClock clk = mode == Mode::Ecb ? BlockClock::ecb(p, cw.rounds(), n, ks)
                                           : BlockClock::chain(p, chain_mode(mode), align, n, ks,
                                                               cw.rounds());

  // §1.7: a fault leaves the registers at the last completed store. Loads of input group g
  // come before the stores of its blocks, so whichever access fails first decides.
  uint64_t stop = n;
  Fault stop_fault;
  {
    const uint64_t groups = (n + job.group - 1) / job.group;
    const uint64_t in_len = groups * group_bytes;
    const uint64_t out_len = dgest ? 16 : 16 * n;
    const uint64_t in_ok = ace::probe(mem, esi, in_len, asz, Access::Read);
    const uint64_t out_ok = ace::probe(mem, edi, out_len, asz, Access::Write);
    const uint64_t k_in = in_ok < in_len ? in_ok / group_bytes * job.group : kNever;
    const uint64_t k_out = out_ok < out_len ? (dgest ? 0 : out_ok / 16) : kNever;
    if (k_in != kNever && k_in <= k_out) {
      stop = k_in;
      stop_fault = {FaultKind::PageFault, ea_add(esi, in_ok, asz), false};
    } else if (k_out != kNever) {
      stop = k_out;
      stop_fault = {FaultKind::PageFault, ea_add(edi, out_ok, asz), true};
    }
  }

  // Interrupt points (§1.7, §7.1, §6.6): chaining modes after any block, ECB after each
  // pair, CTR after every 2 blocks while at least 3 remain (so 1 < ECX < 5 never stops).
  unsigned gran = p.chain_interrupt_granularity;
  uint64_t min_left = 1;
  if (mode == Mode::Ecb) gran = p.ecb_interrupt_granularity;
  if (mode == Mode::Ctr) {
    gran = p.ctr_interrupt_granularity;
    min_left = std::max<uint64_t>(1, p.ctr_interrupt_min_remaining);
  }
  const uint64_t k_int = first_interrupt(env, clk, n, std::max(1u, gran), min_left, stop);
  const bool interrupted = k_int != kNever;
  const bool faulted = !interrupted && stop_fault.kind != FaultKind::None;
  const uint64_t k = interrupted ? k_int : stop;

  const uint16_t ctr0 = uint16_t(job.iv[14] << 8 | job.iv[15]);
  ace::run_blocks(*u.kernels, mem, job, 0, k);

  // Registers reflect the k blocks stored (§3.1 ESI, EDI, ECX; EDI stays in digest mode).
  reg_set(s, Gpr::CX, ecx - k, asz);
  reg_set(s, Gpr::SI, ea_add(esi, 16 * k, asz), asz);
  if (!dgest) reg_set(s, Gpr::DI, ea_add(edi, 16 * k, asz), asz);

  // §3.1 IV update, so that re-executing continues the chain.
  if (k > 0) {
    switch (mode) {
      case Mode::Ecb:
        break;
      case Mode::Cbc:
      case Mode::Cfb:
        if (decrypt) {
          ace::write_wrap(mem, eax, job.iv, 16, asz);  // the last input ciphertext
        } else if (align) {
          // ALIGN = 1: the chain block is kept in the aligned scratch after the control
          // word and EAX points there, so it stays 16-byte aligned (our choice; OpenSSL
          // reads it back with movdqa).
          ace::write_wrap(mem, ea_add(edx, 16, asz), job.iv, 16, asz);
          reg_set(s, Gpr::AX, ea_add(edx, 16, asz), asz);
        } else {
          // EAX itself changes: it points at the last ciphertext block written, "the new
          // IV" (§7.1); the IV memory is left alone (§6.2 Monte Carlo test).
          reg_set(s, Gpr::AX, dgest ? edi : ea_add(edi, 16 * (k - 1), asz), asz);
        }
        break;
      case Mode::Ofb:
        ace::write_wrap(mem, eax, job.iv, 16, asz);
        break;  // last keystream block
      case Mode::Ctr:
        break;
    }
  }
  if (mode == Mode::Ctr) {
    // §3.1: bytes 14-15 count blocks, big-endian, no carry into byte 13 (App. A 12).
    // §6.6 erratum (stepping 8): the write-back at completion, and at an interrupt point,
    // adds one more increment when this execution processed an even number of blocks.
    uint64_t extra = 0;
    if (u.errata && !faulted && k % 2 == 0) extra = 1;
    const uint64_t next = uint64_t(ctr0) + k + extra;
    if (next > 0xFFFF) env.report(Diag::CtrCounterWrap);
    const uint8_t be[2] = {uint8_t(next >> 8), uint8_t(next)};
    ace::write_wrap(mem, ea_add(eax, 14, asz), be, 2, asz);
  }

  out.blocks = static_cast<uint32_t>(std::min<uint64_t>(k, std::numeric_limits<uint32_t>::max()));
  out.bytes = 16 * k;
  if (interrupted) {
    out.status = Status::Interrupted;
    out.cycles = out.int_cycles = clk.at(k);
    s.set_eflags30(false);
  } else if (faulted) {
    out.status = Status::Faulted;
    out.fault = stop_fault;
    out.cycles = out.int_cycles = clk.at(k);
    s.set_eflags30(false);
  } else {
    out.cycles = clk.sse_total();
    out.int_cycles = clk.int_total();
  }
  return out;
}

// §3.1: ESI and EDI advance by 16 per block stored (EDI stays put in digest mode, where the
// 16-byte MAC at EDI is the result); the chaining modes leave the next IV or counter at EAX.
void AceUnit::report_spans(const isa::Decoded& d, const ArchState& before, const ArchState& after,
                           GuestMemory&, Outcome& o) {
  const unsigned asz = d.addr_size;
  const uint64_t edi = reg_get(before, Gpr::DI, asz);
  o.input = {reg_get(before, Gpr::SI, asz), o.bytes};
  uint64_t out_len = reg_get(after, Gpr::DI, asz) - edi;
  out_len = asz == 64 ? out_len : out_len & ((uint64_t{1} << asz) - 1);
  if (out_len == 0 && o.bytes != 0) out_len = 16;  // DGEST
  o.output = {edi, out_len};
  if (mode_of(d.id) != Mode::Ecb) o.chain = {reg_get(after, Gpr::AX, asz), 16};
}

}  // namespace padlock
