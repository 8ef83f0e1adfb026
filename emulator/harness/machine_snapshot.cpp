// Machine::snapshot and Machine::restore: the whole state a call can observe or change, as
// bytes (the Python Machine's snapshot(), restore() and pickling, docs/python.md).
#include <cstring>

#include "emulator/harness/machine.hpp"
#include "models/state_io.hpp"

namespace padlock::emu {

namespace {

constexpr uint32_t kMachineTag = 0x4D43484E;  // "MCHN"
constexpr uint32_t kMemoryTag = 0x4D454D31;   // "MEM1"
constexpr uint32_t kEndTag = 0x454E4431;      // "END1"
constexpr uint64_t kPage = AddressSpace::kPageSize;
constexpr uint8_t kZeroPage = 0, kDataPage = 1;

bool all_zero(const uint8_t* p) {
  static const uint8_t zero[kPage] = {};
  return std::memcmp(p, zero, kPage) == 0;
}

// Mapped memory as runs of pages with equal flags; a page of zeros is one tag byte.
void save_memory(const AddressSpace& mem, StateWriter& w) {
  w.pod(kMemoryTag);
  uint64_t va = 0, end = 0;
  uint8_t flags = 0;
  while ((va = mem.next_run(va, &end, &flags)) < mem.size()) {
    w.pod(va);
    w.pod(end - va);
    w.pod(flags);
    for (uint64_t p = va; p < end; p += kPage) {
      const uint8_t* host = mem.host(p);
      if (all_zero(host)) {
        w.pod(kZeroPage);
      } else {
        w.pod(kDataPage);
        w.bytes(host, kPage);
      }
    }
    va = end;
  }
  w.pod(mem.size());  // the end marker: no run starts there
}

// apply false: only checks that the runs fit this machine and the stream is complete.
void load_memory(AddressSpace& mem, StateReader& r, bool apply) {
  r.expect(kMemoryTag);
  if (apply) {  // everything mapped now goes; the saved runs come back as fresh pages
    uint64_t va = 0, end = 0;
    uint8_t flags = 0;
    while ((va = mem.next_run(va, &end, &flags)) < mem.size()) {
      mem.unmap(va, end - va);
      va = end;
    }
  }
  for (;;) {
    const auto start = r.pod<uint64_t>();
    if (start == mem.size()) break;
    const auto len = r.pod<uint64_t>();
    const auto f = r.pod<uint8_t>();
    if (((start | len) & (kPage - 1)) != 0 || !mem.in_window(start, len)) {
      throw StateError("snapshot: a memory run outside this machine's address space");
    }
    if (apply && !mem.map_anonymous(start, len, f & (kPageRead | kPageWrite | kPageExec))) {
      throw MachineError("restore: cannot map " + std::to_string(len) + " bytes");
    }
    for (uint64_t p = start; p < start + len; p += kPage) {
      const auto tag = r.pod<uint8_t>();
      if (tag == kZeroPage) continue;
      if (tag != kDataPage) throw StateError("snapshot: corrupt page tag");
      const uint8_t* src = r.take(kPage);
      if (apply) std::memcpy(mem.host(p), src, kPage);
    }
  }
}

}  // namespace

std::vector<uint8_t> Machine::snapshot() const {
  if (depth_ != 0)
    throw MachineError("snapshot: not while a call is running (from a stub or hook)");
  if (checker_) {
    throw MachineError(
        "snapshot: the checker's findings are not part of a snapshot "
        "(create the Machine without check=True)");
  }
  std::vector<uint8_t> out;
  out.reserve(size_t{1} << 16);  // the registers and units; memory grows it
  StateWriter w(out);
  w.pod(kMachineTag);
  w.pod(guest64_);
  w.pod(mhz_);
  w.pod(core_->timing());
  CpuContext ctx;
  cpu_->save(ctx);
  w.pod(ctx);
  w.pod(eflags30_);
  w.pod(interrupt_at);
  w.pod(interrupts_taken);
  w.pod(memory_->arena_next());
  w.pod(padlock_count_);
  w.pod(stub_calls_);
  w.pod(stats_);
  w.pod(*vt_);
  padlock_->save(w);
  w.pod(core_->cache() != nullptr);
  if (const timing::CacheModel* c = core_->cache()) c->save(w);
  w.pod<uint64_t>(stubs_.size());
  for (const StubSlot& s : stubs_) {
    w.str(s.name);
    w.pod(s.address);
  }
  save_memory(*mem_, w);
  w.pod(kEndTag);
  return out;
}

// Two passes over the stream: the first loads into scratch units and checks everything, so
// a stream that does not fit leaves the machine as it was; the second applies it.
void Machine::restore(const uint8_t* data, size_t size) {
  if (depth_ != 0) throw MachineError("restore: not while a call is running (from a stub or hook)");
  if (checker_) throw MachineError("restore: not on a Machine with the checker (check=True)");
  {
    StateReader r(data, size);
    Stats stats;
    VirtualTime vt{VirtualTimeConfig{}};
    Padlock units(padlock_->model());
    std::unique_ptr<timing::CacheModel> cache;
    if (core_->cache() != nullptr)
      cache = std::make_unique<timing::CacheModel>(padlock_->model().memory);
    std::vector<StubSlot> stubs;
    read_state(r, nullptr, stats, vt, units, cache.get(), stubs);
  }
  StateReader r(data, size);
  std::vector<StubSlot> stubs;
  read_state(r, mem_.get(), stats_, *vt_, *padlock_, core_->cache(), stubs);
  stubs_ = std::move(stubs);
  stub_by_name_.clear();
  stub_by_address_.clear();
  for (size_t i = 0; i < stubs_.size(); ++i) {
    stub_by_name_[stubs_[i].name] = i;
    stub_by_address_[stubs_[i].address] = i;
  }
  take_diagnostics();  // those of calls before the restore
  // Code translated from the memory that was replaced is stale.
  blocks_->invalidate(0, mem_->size());
  set_exits();  // also drops every translation
  uc_ctl_flush_tlb(cpu_->uc());
}

// Reads a stream snapshot() wrote. mem null: the first pass (memory checked, registers and
// the machine's own fields left alone).
void Machine::read_state(StateReader& r, AddressSpace* mem, Stats& stats, VirtualTime& vt,
                         Padlock& units, timing::CacheModel* cache, std::vector<StubSlot>& stubs) {
  r.expect(kMachineTag);
  const bool guest64 = r.pod<bool>();
  const double mhz = r.pod<double>();
  const auto timing = r.pod<PadlockTiming>();
  if (guest64 != guest64_ || mhz != mhz_ || timing.memory != core_->timing().memory ||
      timing.overlap != core_->timing().overlap) {
    throw StateError("snapshot: saved by a Machine with other bits, mhz or timing");
  }
  const auto ctx = r.pod<CpuContext>();
  const auto eflags30 = r.pod<bool>();
  const auto interrupt = r.pod<uint64_t>(), taken = r.pod<uint64_t>();
  const auto arena = r.pod<uint64_t>(), count = r.pod<uint64_t>(), calls = r.pod<uint64_t>();
  r.pod(stats);
  r.pod(vt);
  units.load(r);
  if (r.pod<bool>() != (cache != nullptr)) throw StateError("snapshot: saved with another timing");
  if (cache != nullptr) cache->load(r);
  const auto nstubs = r.pod<uint64_t>();
  if (nstubs > kStubSpan / kStubSize) throw StateError("snapshot: corrupt stub table");
  for (uint64_t i = 0; i < nstubs; ++i) {
    StubSlot s;
    s.name = r.str();
    r.pod(s.address);
    stubs.push_back(std::move(s));
  }
  load_memory(mem != nullptr ? *mem : *mem_, r, mem != nullptr);
  r.expect(kEndTag);
  if (r.left() != 0) throw StateError("snapshot: trailing bytes");
  if (mem == nullptr) return;
  cpu_->load(ctx);  // after memory: i386 selectors are checked against the GDT
  eflags30_ = eflags30;
  interrupt_at = interrupt;
  interrupts_taken = taken;
  memory_->set_arena_next(arena);
  padlock_count_ = count;
  stub_calls_ = calls;
}

}  // namespace padlock::emu
