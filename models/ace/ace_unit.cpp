// REP XCRYPT* (§3.1-§3.3): checks, the EFLAGS[30] key cache (§1.8), fault and interrupt
// points (§1.7, §6.6), register and IV write-back, clocks. The AES work itself is in
// ace_engine.cpp and the aes_* kernels.
#include "models/ace/ace_unit.hpp"

#include <algorithm>
#include <bit>
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

namespace {

// The hardware registers EFLAGS[30] = 1 refers to (§1.8): the last control word and key
// schedule loaded, whatever memory holds now.
struct KeyRegisters {
  bool loaded = false;
  ControlWord cw;
  ace::RoundKeys enc;
  ace::RoundKeys dec;
  // What enc and dec were last expanded from: a load of the same bytes under a control
  // word with the same round count, KEYGN and INTER gives the same schedules, so it skips
  // the expansion (a host shortcut only: the load is still read and timed as a load).
  bool expanded = false;
  unsigned src_rounds = 0;
  bool src_keygn = false, src_inter = false;
  alignas(16) uint8_t src[256];

  void load(const ControlWord& c, const uint8_t* bytes, unsigned len) {
    if (!expanded || src_rounds != c.rounds() || src_keygn != c.keygn() || src_inter != c.inter() ||
        std::memcmp(src, bytes, len) != 0) {
      ace::load_key_ram(c, bytes, enc, dec);
      std::memcpy(src, bytes, len);
      src_rounds = c.rounds();
      src_keygn = c.keygn();
      src_inter = c.inter();
      expanded = true;
    }
    cw = c;
    loaded = true;
  }
};

// BlockClock::ecb of the last ECB instruction: a loop of one instruction asks for the same
// clocks each time. A host shortcut: the §3.3 formula depends on these inputs and on the
// unit's AceParams, which are fixed.
struct EcbClocks {
  bool valid = false;
  unsigned rounds = 0;
  uint64_t n = 0;
  KeyState ks = KeyState::Loaded;
  BlockClock clk;

  const BlockClock& get(const AceParams& p, unsigned r, uint64_t blocks, KeyState k) {
    if (!valid || rounds != r || n != blocks || ks != k) {
      clk = BlockClock::ecb(p, r, blocks, k);
      rounds = r;
      n = blocks;
      ks = k;
      valid = true;
    }
    return clk;
  }
};

}  // namespace

struct AceUnit::Impl {
  explicit Impl(const CpuModel& c) : cpu(c) {}
  const CpuModel& cpu;
  bool errata = false;
  const ace::Kernels* kernels = ace::kernels_for(ace::Backend::Auto);
  KeyRegisters keys;
  EcbClocks ecb_clocks;
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

// Where an execution stops (§1.7): after k blocks, at an interrupt point, at the first
// faulting access, or at the end.
struct Stop {
  uint64_t k = 0;
  bool interrupted = false;
  bool faulted = false;
  Fault fault;
};

// One REP XCRYPT, step by step in the order the chip takes them (AceUnit::execute). A step
// that raises an exception fills `out` and returns false; the registers and memory then
// show only what the guide says a fault leaves (§1.7).
class XcryptRun {
 public:
  XcryptRun(const CpuModel& cpu, KeyRegisters& keys, EcbClocks& ecb_clocks, const isa::Decoded& d,
            ArchState& s, GuestMemory& mem, const ExecEnv& env, Outcome& out)
      : out(out),
        ecb_clocks_(ecb_clocks),
        p_(cpu.ace),
        ace2_(cpu.units.ace2),
        mode_(mode_of(d.id)),
        asz_(d.addr_size),
        keys_(keys),
        s_(s),
        mem_(mem),
        env_(env),
        eax_(reg_get(s, Gpr::AX, asz_)),
        ecx_(reg_get(s, Gpr::CX, asz_)),
        edx_(reg_get(s, Gpr::DX, asz_)),
        ebx_(reg_get(s, Gpr::BX, asz_)),
        esi_(reg_get(s, Gpr::SI, asz_)),
        edi_(reg_get(s, Gpr::DI, asz_)) {}

  // The caller's result, filled in place (AceUnit::execute returns it without a copy).
  Outcome& out;

  // §1.8, §3.2 EFLAGS[30]: 1 = the control word and keys in the hardware are used as they
  // are, even if memory has changed since. (Never loaded: load, as after RESET.) The
  // control word is read from ES:EDX otherwise; the diagnostics name its undefined uses.
  bool load_control_word() {
    cached_ = s_.eflags30() && keys_.loaded;
    cw_ = keys_.cw;
    if (!cached_) {
      if (edx_ & 15) return gp(edx_);  // §3.2 EDX must be 16-byte aligned
      uint8_t bytes[16];
      if (!readable(edx_, 16)) return false;
      ace::read_wrap(mem_, edx_, bytes, 16, asz_);
      cw_ = ControlWord::from_bytes(bytes);
      out.has_cw = true;  // read, even if it is refused below
      out.cw = cw_;
      if (cw_.ksize() == isa::KeySize::Reserved) {
        env_.report(Diag::KsizeReserved);
        return gp(edx_);
      }
      if (!cw_.keygn() && cw_.ksize() != isa::KeySize::Aes128) {
        env_.report(Diag::HwKeygenNot128);
        return gp(edx_);
      }
    }
    out.has_cw = true;
    out.cw = cw_;
    out.cw_cached = cached_;
    if (cw_.ciphr()) env_.report(Diag::CiphrSet);
    if (cw_.reserved_nonzero) env_.report(Diag::ControlWordReserved);
    if (cw_.inter()) env_.report(Diag::InterMode);
    if (cw_.keygn() && cw_.rounds() == ace::kMaxRounds) env_.report(Diag::AceKeyRam16Rounds);
    if (!ace2_ && cw_.dgest()) env_.report(Diag::DgestOnNehemiah);
    if (!ace2_ && cw_.align()) env_.report(Diag::AlignOnNehemiah);
    if (ace2_ && cw_.dgest() && (mode_ == Mode::Ecb || mode_ == Mode::Ctr || mode_ == Mode::Ofb)) {
      env_.report(Diag::DgestIgnoredMode);
    }
    align_ = ace2_ && cw_.align();                                                // §3.2 ALIGN
    dgest_ = ace2_ && cw_.dgest() && (mode_ == Mode::Cbc || mode_ == Mode::Cfb);  // §3.1
    return true;
  }

  // §3.1: ESI/EDI 16-byte aligned unless ALIGN = 1, which ECB does not honour (§3.2);
  // EAX always aligned in the chaining modes.
  bool check_alignment() {
    if (!align_ || mode_ == Mode::Ecb) {
      if (esi_ & 15) return gp(esi_);
      if (edi_ & 15) return gp(edi_);
    }
    if (mode_ != Mode::Ecb && (eax_ & 15)) return gp(eax_);
    if (align_) {
      // §3.2: with ALIGN = 1 the 128 bytes at ES:EDX (control word + 112 bytes of scratch)
      // are used by the microcode, so they must be there and writable.
      if (edx_ & 15) return gp(edx_);
      if (!readable(edx_, 128) || !writable(edx_, 128)) return false;
    }
    return true;
  }

  // §3.1 EAX: the chaining modes read the IV, and write it back when the mode updates it.
  bool load_iv() {
    job.mode = mode_;
    job.decrypt = cw_.decrypt();
    job.in = esi_;
    job.out = edi_;
    job.out_stride = dgest_ ? 0 : 16;
    job.asz = asz_;
    job.group = input_group(p_, mode_);
    if (mode_ == Mode::Ecb) return true;
    if (!readable(eax_, 16)) return false;
    if (writes_iv_memory(mode_, job.decrypt) && !writable(eax_, 16)) return false;
    ace::read_wrap(mem_, eax_, job.iv, 16, asz_);
    return true;
  }

  // §1.7, §3.3: ACE starts on the first input group before it tests ECX or loads keys,
  // so even ECX = 0 can page fault here.
  bool probe_first_group() { return readable(esi_, group_bytes()); }

  bool nothing_to_do() const { return ecx_ == 0; }
  // §3.3: 10..27 clocks; nothing loaded, EFLAGS[30] unchanged (docs/fidelity/ace.md).
  void ecx_zero() { out.cycles = out.int_cycles = ace::ecx0_clocks(p_, cached_); }

  // §3.1 EBX, §1.8: without EFLAGS[30] the key (or the key schedule, KEYGN = 1) is read
  // from ES:EBX into the key RAM, and EFLAGS[30] is set after loading.
  bool load_key() {
    ks_ = KeyState::Loaded;
    if (!cached_) {
      if (ebx_ & 15) return gp(ebx_);  // §3.1 EBX must be 16-byte aligned
      const unsigned klen = ace::key_load_bytes(cw_);
      alignas(16) uint8_t key[256];
      if (!readable(ebx_, klen)) return false;
      ace::read_wrap(mem_, ebx_, key, klen, asz_);
      keys_.load(cw_, key, klen);
      s_.set_eflags30(true);  // §1.8: set after loading
      out.key_reloaded = true;
      out.key_addr = ebx_;
      ks_ = cw_.keygn() ? KeyState::Memory : KeyState::Hardware;
    }
    // The inverse cipher serves ECB and CBC decryption only: CFB, OFB and CTR run the
    // forward cipher both ways (what OpenSSL's e_padlock.c relies on for CFB decryption).
    const bool inverse = job.decrypt && (mode_ == Mode::Ecb || mode_ == Mode::Cbc);
    job.keys = inverse ? &keys_.dec : &keys_.enc;
    clk_ = mode_ == Mode::Ecb ? ecb_clocks_.get(p_, cw_.rounds(), ecx_, ks_)
                              : BlockClock::chain(p_, chain_mode(mode_), align_, ecx_, ks_,
                                                  cw_.rounds(), stores_iv(), dgest_);
    return true;
  }

  // §1.7: a fault leaves the registers at the last completed store. Loads of input group g
  // come before the stores of its blocks, so whichever access fails first decides. A
  // pending interrupt is taken at the first interrupt point before that (§1.7, §7.1,
  // §6.6): chaining modes after any block, ECB after each pair, CTR after every 2 blocks
  // while at least 3 remain (so 1 < ECX < 5 never stops).
  Stop find_stop() const {
    const uint64_t n = ecx_;
    uint64_t stop = n;
    Fault stop_fault;
    const uint64_t groups = groups_of(n);
    const uint64_t in_len = groups * group_bytes();
    const uint64_t out_len = dgest_ ? 16 : 16 * n;
    // The first group was probed already (probe_first_group): the probe goes on after it.
    const uint64_t first = std::min(in_len, group_bytes());
    const uint64_t in_ok =
        first + ace::probe(mem_, ea_add(esi_, first, asz_), in_len - first, asz_, Access::Read);
    const uint64_t out_ok = ace::probe(mem_, edi_, out_len, asz_, Access::Write);
    const uint64_t k_in = in_ok < in_len ? in_ok / group_bytes() * job.group : kNever;
    const uint64_t k_out = out_ok < out_len ? (dgest_ ? 0 : out_ok / 16) : kNever;
    if (k_in != kNever && k_in <= k_out) {
      stop = k_in;
      stop_fault = {FaultKind::PageFault, ea_add(esi_, in_ok, asz_), false};
    } else if (k_out != kNever) {
      stop = k_out;
      stop_fault = {FaultKind::PageFault, ea_add(edi_, out_ok, asz_), true};
    }

    const InterruptRule r = interrupt_rule();
    const uint64_t k_int = first_interrupt(env_, clk_, n, r.gran, r.min_left, stop);
    Stop st;
    st.interrupted = k_int != kNever;
    st.faulted = !st.interrupted && stop_fault.kind != FaultKind::None;
    st.k = st.interrupted ? k_int : stop;
    st.fault = stop_fault;
    return st;
  }

  // Whether a host stop (ExecEnv::host_stop) may be taken after k blocks: an interrupt
  // point by find_stop's rules.
  bool interruptible_after(uint64_t k) const {
    const InterruptRule r = interrupt_rule();
    return k >= r.gran && k % r.gran == 0 && ecx_ - k >= r.min_left;
  }

  // Registers reflect the k blocks stored (§3.1 ESI, EDI, ECX; EDI stays in digest mode).
  void write_registers(uint64_t k) {
    reg_set(s_, Gpr::CX, ecx_ - k, asz_);
    reg_set(s_, Gpr::SI, ea_add(esi_, 16 * k, asz_), asz_);
    if (!dgest_) reg_set(s_, Gpr::DI, ea_add(edi_, 16 * k, asz_), asz_);
  }

  // Whether update_chain stores the chaining value to memory (§3.1 EAX table), which the
  // timing charges (AceParams::iv_writeback).
  bool stores_iv() const {
    switch (mode_) {
      case Mode::Cbc:
      case Mode::Cfb:
        return job.decrypt || align_;
      case Mode::Ofb:
        return true;
      default:
        return false;
    }
  }

  // §3.1 IV update, so that re-executing continues the chain.
  void update_chain(uint64_t k) {
    if (k == 0) return;
    switch (mode_) {
      case Mode::Ecb:
        break;
      case Mode::Cbc:
      case Mode::Cfb:
        if (job.decrypt) {
          ace::write_wrap(mem_, eax_, job.iv, 16, asz_);  // the last input ciphertext
        } else if (align_) {
          // ALIGN = 1: the chain block is kept in the aligned scratch after the control
          // word and EAX points there, so it stays 16-byte aligned (our choice; OpenSSL
          // reads it back with movdqa).
          ace::write_wrap(mem_, ea_add(edx_, 16, asz_), job.iv, 16, asz_);
          reg_set(s_, Gpr::AX, ea_add(edx_, 16, asz_), asz_);
        } else {
          // EAX itself changes: it points at the last ciphertext block written, "the new
          // IV" (§7.1); the IV memory is left alone (§6.2 Monte Carlo test).
          reg_set(s_, Gpr::AX, dgest_ ? edi_ : ea_add(edi_, 16 * (k - 1), asz_), asz_);
        }
        break;
      case Mode::Ofb:
        ace::write_wrap(mem_, eax_, job.iv, 16, asz_);
        break;  // last keystream block
      case Mode::Ctr:
        break;
    }
  }

  // §3.1: bytes 14-15 count blocks, big-endian, no carry into byte 13 (App. A 12).
  // §6.6 erratum (stepping 8): the write-back at completion, and at an interrupt point,
  // adds one more increment when this execution processed an even number of blocks.
  void write_back_counter(uint16_t ctr0, uint64_t k, bool errata) {
    uint64_t extra = 0;
    if (errata && k % 2 == 0) extra = 1;
    const uint64_t next = uint64_t(ctr0) + k + extra;
    if (next > 0xFFFF) env_.report(Diag::CtrCounterWrap);
    const uint8_t be[2] = {uint8_t(next >> 8), uint8_t(next)};
    ace::write_wrap(mem_, ea_add(eax_, 14, asz_), be, 2, asz_);
  }

  // The Outcome of an execution that got as far as the block loop: at an interrupt point
  // or a fault the clocks up to block k, and EFLAGS[30] cleared (§1.8).
  void finish(const Stop& st) {
    out.blocks =
        static_cast<uint32_t>(std::min<uint64_t>(st.k, std::numeric_limits<uint32_t>::max()));
    out.bytes = 16 * st.k;
    if (st.interrupted) {
      out.status = Status::Interrupted;
      out.cycles = out.int_cycles = clk_.at(st.k);
      s_.set_eflags30(false);
    } else if (st.faulted) {
      out.status = Status::Faulted;
      out.fault = st.fault;
      out.cycles = out.int_cycles = clk_.at(st.k);
      s_.set_eflags30(false);
    } else {
      out.cycles = clk_.sse_total();
      out.int_cycles = clk_.int_total();
    }
  }

  Mode mode() const { return mode_; }
  ace::BlockJob job;

 private:
  uint64_t group_bytes() const { return 16ull * job.group; }
  // Input groups that n blocks span. Every model's group is a power of two: a shift, where
  // a 64-bit division took tens of clocks in each instruction.
  uint64_t groups_of(uint64_t n) const {
    const unsigned g = job.group;
    return (g & (g - 1)) == 0 ? (n + g - 1) >> std::countr_zero(g) : (n + g - 1) / g;
  }

  // Interrupt points (§1.7): multiples of `gran` blocks leaving at least `min_left`.
  struct InterruptRule {
    unsigned gran;
    uint64_t min_left;
  };
  InterruptRule interrupt_rule() const {
    if (mode_ == Mode::Ecb) return {std::max(1u, p_.ecb_interrupt_granularity), 1};
    if (mode_ == Mode::Ctr) {
      return {std::max(1u, p_.ctr_interrupt_granularity),
              std::max<uint64_t>(1, p_.ctr_interrupt_min_remaining)};
    }
    return {std::max(1u, p_.chain_interrupt_granularity), 1};
  }

  // An exception stores EFLAGS, which clears EFLAGS[30] (§1.8); so does the interrupt
  // taken at an interrupt point. The model applies that to the state it hands back.
  bool fault(FaultKind kind, uint64_t addr, bool write) {
    out.status = Status::Faulted;
    out.fault = {kind, addr, write};
    out.cycles = out.int_cycles = p_.ecx0_clocks_min;
    s_.set_eflags30(false);
    return false;
  }
  bool gp(uint64_t addr) { return fault(FaultKind::GeneralProtection, addr, false); }
  // False after a #PF at the first byte of [ea, ea + len) that cannot be accessed.
  bool accessible(uint64_t ea, uint64_t len, Access access) {
    const uint64_t ok = ace::probe(mem_, ea, len, asz_, access);
    return ok >= len || fault(FaultKind::PageFault, ea_add(ea, ok, asz_), access == Access::Write);
  }
  bool readable(uint64_t ea, uint64_t len) { return accessible(ea, len, Access::Read); }
  bool writable(uint64_t ea, uint64_t len) { return accessible(ea, len, Access::Write); }

  EcbClocks& ecb_clocks_;
  const AceParams& p_;
  const bool ace2_;
  const Mode mode_;
  const unsigned asz_;
  KeyRegisters& keys_;
  ArchState& s_;
  GuestMemory& mem_;
  const ExecEnv& env_;
  const uint64_t eax_, ecx_, edx_, ebx_, esi_, edi_;
  bool cached_ = false;
  ControlWord cw_;
  bool align_ = false;
  bool dgest_ = false;
  KeyState ks_ = KeyState::Loaded;
  BlockClock clk_;
};

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

void AceUnit::save(StateWriter& w) const {
  w.pod(impl_->errata);
  w.pod(impl_->keys);
}

void AceUnit::load(StateReader& r) {
  r.pod(impl_->errata);
  r.pod(impl_->keys);
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

// §3.1-§3.3 in the chip's order: control word, alignment, IV, the first input group,
// ECX = 0, key, then the blocks up to the stop point and the write-backs.
Outcome AceUnit::execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem,
                         const ExecEnv& env) {
  Impl& u = *impl_;
  // CTR on a chip without ACE2 never gets here: Padlock::execute raises #UD (§0 note).
  Outcome out = ace::kFreshOutcome;
  XcryptRun x(u.cpu, u.keys, u.ecb_clocks, d, s, mem, env, out);
  if (!x.load_control_word() || !x.check_alignment() || !x.load_iv() || !x.probe_first_group()) {
    return out;
  }
  if (x.nothing_to_do()) {
    x.ecx_zero();
    return out;
  }
  if (!x.load_key()) return out;
  Stop st = x.find_stop();
  const uint16_t ctr0 = uint16_t(x.job.iv[14] << 8 | x.job.iv[15]);
  // In batches when the host may ask for a stop (ExecEnv::host_stop): taken at the first
  // batch end that is an interrupt point, as an interrupt arriving there would be.
  const uint64_t batch = std::max<uint64_t>(64, env.host_batch(16) & ~uint64_t{63});
  for (uint64_t k = 0; k < st.k;) {
    const uint64_t end = st.k - k > batch ? k + batch : st.k;
    ace::run_blocks(*u.kernels, mem, x.job, k, end);
    k = end;
    if (k < st.k && env.host_stop_requested() && x.interruptible_after(k)) {
      st = Stop{k, true, false, Fault{}};
    }
  }
  x.write_registers(st.k);
  x.update_chain(st.k);
  if (x.mode() == Mode::Ctr) x.write_back_counter(ctr0, st.k, u.errata && !st.faulted);
  x.finish(st);
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
