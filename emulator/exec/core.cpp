#include "emulator/exec/core.hpp"

#include <algorithm>
#include <new>
#include <type_traits>

namespace padlock::emu {

static_assert(static_cast<unsigned>(Diag::Count) <= 64, "Outcome::diags holds one bit per Diag");

PadlockCore::PadlockCore(Padlock& units, VirtualTime& clock, Stats& stats, DiagnosticSink* diag,
                         const PadlockTiming& timing)
    : units_(units), clock_(clock), stats_(stats), diag_(diag), timing_(timing) {
  if (timing_.memory) cache_ = std::make_unique<timing::CacheModel>(units.model().memory);
}

PadlockCore::~PadlockCore() = default;

void PadlockCore::report(Diag d, uint64_t pc) {
  diags_ |= uint64_t{1} << static_cast<unsigned>(d);
  if (diag_ != nullptr) diag_->report(d, pc);
}

namespace {

// The model's clocks assume everything in L1 and no store-buffer stalls (§3.3); the data
// stream's cost from the cache model is added to both the SSE-visible and the
// integer-visible clocks (the integer pipeline "slips and stalls into step with ACE").
// File-local so that execute() can inline it: a member of a -fPIC library may be
// interposed, and GCC inlines none.
uint64_t charge_stream(timing::CacheModel* cache, isa::InsnId id, Stats& stats, Outcome& o) {
  if (cache == nullptr || o.bytes == 0) return 0;
  timing::MemCost mc;
  if (isa::is_xcrypt(id) || id == isa::InsnId::CcsEncrypt) {
    // Every block is stored, at EDI (DGEST: over and over at the same EDI).
    mc = cache->stream(o.input.addr, o.bytes, o.output.addr, o.bytes);
  } else if (id == isa::InsnId::Xsha1 || id == isa::InsnId::Xsha256 || id == isa::InsnId::Xsha384 ||
             id == isa::InsnId::Xsha512 || id == isa::InsnId::CcsHash) {
    mc = cache->stream(o.input.addr, o.bytes, 0, 0);
  } else {
    return 0;
  }
  const double total = cache->combine(static_cast<double>(o.cycles), mc);
  const uint64_t extra =
      total > static_cast<double>(o.cycles) ? static_cast<uint64_t>(total - o.cycles + 0.5) : 0;
  o.cycles += extra;
  o.int_cycles += extra;
  stats.cache_cycles += extra;
  return extra;
}

}  // namespace

// Flattened: the charge and what it calls join this frame (one call less per instruction).
[[gnu::flatten]] const PadlockRecord& PadlockCore::execute(const isa::Decoded& decoded,
                                                           ArchState& s, GuestMemory& mem,
                                                           uint64_t pc, uint64_t interrupt_at) {
  // The row this chip runs (F2 0F A6 C0: SM2 or REPNE MONTMUL), for stats and traces too.
  isa::Decoded scratch;
  const isa::Decoded& d = units_.resolved(decoded, scratch);
  PadlockRecord& r = rec_;
  // §3.3 overlap: a PadLock instruction waits until ACE (and the SSE unit) is free.
  if (timing_.overlap) clock_.wait_for_sse();
  r.pc = pc;
  r.decoded = d;
  r.before = s;
  r.start = clock_.now();
  diags_ = 0;

  ExecEnv env;
  env.now = r.start;
  env.interrupt_at = interrupt_at;
  env.mhz = clock_.mhz();
  env.pc = pc;
  env.diag = this;
  env.host_stop = host_stop_;
  // Built in the record itself (a prvalue initializes it, no 144-byte copy); Outcome is
  // trivially destructible, so the old one needs no destructor call.
  static_assert(std::is_trivially_destructible_v<Outcome>);
  Outcome& o =
      *::new (static_cast<void*>(&r.outcome)) Outcome(units_.execute(d, s, mem, env, r.before));
  o.diags = diags_;
  const uint64_t stall = charge_stream(cache_.get(), d.id, stats_, o);
  if (timing_.overlap) {
    clock_.set_sse_ready(std::max(clock_.sse_ready(), r.start + o.cycles));
    clock_.advance(o.int_cycles);
  } else {
    clock_.advance(o.cycles);
  }
  // §1.7, §1.8: taking the interrupt or the exception stores EFLAGS, clearing bit 30.
  if (o.status != Status::Completed) s.set_eflags30(false);
  if (d.id != isa::InsnId::Count) {
    stats_.record(d.id, o);
    stats_.insn[static_cast<size_t>(d.id)].clock += clock_.now() - r.start - stall;
  }
  r.after = s;
  r.end = clock_.now();
  if (listener_ != nullptr && d.id != isa::InsnId::Count) listener_->on_padlock(r, mem);
  return r;
}

}  // namespace padlock::emu
