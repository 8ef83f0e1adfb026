// The C ABI of system mode (padlock_system.h) over the one execution core
// (emulator/exec/core.hpp): QEMU's TCG helper hands it the instruction bytes, the
// registers and a page-at-a-time view of guest memory (docs/system.md).
#include "emulator/system/padlock_system.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "emulator/exec/core.hpp"
#include "emulator/observe/stats.hpp"
#include "emulator/system/system_observers.hpp"
#include "emulator/time/virtual_time.hpp"
#include "isa/decoder.hpp"
#include "isa/msr.hpp"
#include "models/cpu_model.hpp"
#include "models/padlock.hpp"

using namespace padlock;

namespace {

emu::VirtualTimeConfig clock_at(double mhz, uint64_t seed) {
  emu::VirtualTimeConfig c;
  c.mhz = mhz;
  c.irq_hz = 0;  // QEMU delivers the interrupts; the core only learns that one is pending
  c.seed = seed;
  return c;
}

// QEMU's softmmu as GuestMemory: every probe goes through QEMU's TLB and never faults, so a
// fault is the unit's Outcome and QEMU raises it afterwards, precisely (§1.7).
class SoftmmuMemory final : public GuestMemory {
 public:
  explicit SoftmmuMemory(const padlock_sys_mem& m) : m_(m) {}

  uint8_t* translate(uint64_t va, uint64_t len, Access access) override {
    if (len == 0 || page_of(va) != page_of(va + len - 1)) return nullptr;
    return m_.page(m_.opaque, va, access == Access::Write);
  }

  uint64_t accessible(uint64_t va, uint64_t len, Access access) override {
    uint64_t done = 0;
    while (done < len) {
      const uint64_t at = va + done;
      if (m_.page(m_.opaque, at, access == Access::Write) == nullptr) return done;
      done += m_.page_size - (at & (m_.page_size - 1));
    }
    return len;
  }

 private:
  uint64_t page_of(uint64_t va) const { return va & ~(m_.page_size - 1); }
  const padlock_sys_mem& m_;
};

// What the status of an Outcome means to QEMU.
int status_of(const Outcome& o) {
  static constexpr int kFault[] = {PADLOCK_SYS_DONE, PADLOCK_SYS_UD, PADLOCK_SYS_GP,
                                   PADLOCK_SYS_PF};
  if (o.status == Status::Interrupted) return PADLOCK_SYS_INTERRUPTED;
  if (o.status == Status::Completed) return PADLOCK_SYS_DONE;
  const auto k = static_cast<size_t>(o.fault.kind);
  return k < std::size(kFault) ? kFault[k] : PADLOCK_SYS_UD;
}

// What lasts as long as the QEMU process, which ends through exit() without destroying its
// CPUs: every virtual CPU's handle (--stats prints their tables) and the observers of
// --trace and --check, made at the first PadLock instruction, when the code's mode is
// known. at_exit() finishes both.
struct Session {
  std::mutex lock;
  std::vector<padlock_sys*> live;
  bool stats = false;
  emu::SystemObserverOptions observe;
  std::unique_ptr<emu::SystemObservers> observers;
  bool exit_registered = false;
};
Session& session() {
  static Session s;
  return s;
}
void at_exit();

}  // namespace

struct padlock_sys {
  padlock_sys(const CpuModel& cpu, uint64_t seed)
      : seed(seed),
        units(cpu, config_with(seed)),
        clock(clock_at(cpu.default_mhz.value, seed)),
        printer(stats, stderr),
        core(units, clock, stats, &printer, timing()) {}

  static PadlockConfig config_with(uint64_t seed) {
    PadlockConfig c;
    c.seed = seed;
    return c;
  }
  // System mode charges the units' own clocks: QEMU times everything else (docs/system.md).
  static emu::PadlockTiming timing() {
    emu::PadlockTiming t;
    t.memory = false;
    t.overlap = false;
    return t;
  }
  // The model's clock is QEMU's virtual clock in cycles plus every PadLock cycle: each
  // PadLock instruction advances it by its own cycles (the core), QEMU's clock by what it
  // charges for one instruction, and the guest's TSC reads the sum (docs/system.md).
  void catch_up(uint64_t now_ns) {
    const auto at = static_cast<uint64_t>(static_cast<double>(now_ns) * clock.mhz() / 1000.0);
    if (at > qemu_cycles) {
      clock.advance(at - qemu_cycles);
      qemu_cycles = at;
    }
  }
  ExecEnv env(uint64_t now_ns) {
    catch_up(now_ns);
    ExecEnv e;
    e.now = clock.now();
    e.mhz = clock.mhz();
    return e;
  }

  uint64_t seed;
  Padlock units;
  emu::VirtualTime clock;
  uint64_t qemu_cycles = 0;  // QEMU's virtual clock in cycles, as far as the clock has it
  emu::Stats stats;
  emu::DiagnosticPrinter printer;
  emu::PadlockCore core;
  bool observing = false;  // the core reports to the session's observers
};

namespace {

// The observers, made once for the whole process (the lock is the session's).
emu::SystemObservers* observers_for(padlock_sys* p, bool guest64) {
  Session& s = session();
  if (!s.observers) {
    try {
      s.observers = std::make_unique<emu::SystemObservers>(s.observe, p->units.model(),
                                                           p->clock.mhz(), p->seed, guest64);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "padlock-emu: %s\n", e.what());
      std::exit(1);
    }
  }
  return s.observers.get();
}

void at_exit() {
  Session& s = session();
  std::lock_guard<std::mutex> hold(s.lock);
  uint64_t now = 0;
  for (padlock_sys* p : s.live) now = std::max(now, p->clock.now());
  if (s.observe.any() && !s.live.empty()) {
    observers_for(s.live.front(), s.live.front()->units.model().long_mode)->finish(now);
  }
  if (!s.stats) return;
  for (padlock_sys* p : s.live) {
    std::fprintf(stderr, "padlock-emu: %s\n", p->units.model().name);
    p->stats.print(stderr, p->clock.mhz());
  }
}

}  // namespace

extern "C" {

int padlock_sys_abi_version(void) {
  return PADLOCK_SYS_ABI_VERSION;
}

int padlock_sys_model_count(void) {
  return static_cast<int>(all_cpu_models().size());
}

const char* padlock_sys_model_name(int index) {
  const auto models = all_cpu_models();
  if (index < 0 || static_cast<size_t>(index) >= models.size()) return nullptr;
  return models[index]->name;
}

padlock_sys* padlock_sys_create(const char* cpu, uint64_t seed) {
  const CpuModel* m = cpu != nullptr ? find_cpu_model(cpu) : nullptr;
  if (m == nullptr) return nullptr;
  auto* p = new padlock_sys(*m, seed);
  Session& s = session();  // made before the handler is registered: it outlives it
  std::lock_guard<std::mutex> hold(s.lock);
  if (!s.exit_registered) {
    s.exit_registered = true;
    const char* stats = std::getenv("PADLOCK_SYSTEM_STATS");
    s.stats = stats != nullptr && *stats != '\0';
    s.observe = emu::SystemObserverOptions::from_env();
    std::atexit(at_exit);
  }
  s.live.push_back(p);
  return p;
}

void padlock_sys_destroy(padlock_sys* p) {
  Session& s = session();
  {
    std::lock_guard<std::mutex> hold(s.lock);
    s.live.erase(std::remove(s.live.begin(), s.live.end(), p), s.live.end());
  }
  delete p;
}

int padlock_sys_cpuid(padlock_sys* p, uint32_t leaf, uint32_t subleaf, uint32_t out[4]) {
  const bool brand = leaf >= 0x80000002 && leaf <= 0x80000004;
  bool known = brand;
  for (const CpuidLeaf& l : p->units.model().cpuid) known = known || l.leaf == leaf;
  if (!known) return 0;
  const CpuidResult r = p->units.cpuid(leaf, subleaf);
  out[0] = r.eax;
  out[1] = r.ebx;
  out[2] = r.ecx;
  out[3] = r.edx;
  return 1;
}

const char* padlock_sys_brand(padlock_sys* p) {
  return p->units.model().brand;
}

int padlock_sys_long_mode(padlock_sys* p) {
  return p->units.model().long_mode ? 1 : 0;
}

int padlock_sys_rdmsr(padlock_sys* p, uint32_t msr, uint64_t* value, uint64_t now_ns) {
  if (!isa::is_padlock_msr(msr)) return -1;
  return p->units.rdmsr(msr, *value, p->env(now_ns)) ? 1 : 0;
}

int padlock_sys_wrmsr(padlock_sys* p, uint32_t msr, uint64_t value, uint64_t now_ns) {
  if (!isa::is_padlock_msr(msr)) return -1;
  return p->units.wrmsr(msr, value, p->env(now_ns)) ? 1 : 0;
}

void padlock_sys_execute(padlock_sys* p, const uint8_t* insn, unsigned avail,
                         padlock_sys_regs* regs, const padlock_sys_mem* mem, int interrupt_pending,
                         padlock_sys_result* result) {
  const isa::Decoded d =
      isa::decode(insn, avail, regs->long_mode ? isa::CpuMode::Long64 : isa::CpuMode::Protected32);
  *result = {};
  result->length = d.length;
  if (d.status == isa::DecodeStatus::NotPadlock) {
    result->status = PADLOCK_SYS_UD;
    return;
  }
  ArchState s;
  for (int i = 0; i < 8; ++i) s.gpr[i] = regs->gpr[i];
  s.eflags = regs->eflags;
  s.cr4_osfxsr = regs->cr4_osfxsr != 0;
  SoftmmuMemory m(*mem);
  p->catch_up(regs->now_ns);
  if (p->observing != session().observe.any()) {  // --trace, --check: once per CPU
    std::lock_guard<std::mutex> hold(session().lock);
    p->core.set_listener(observers_for(p, regs->long_mode != 0));
    p->observing = true;
  }
  // A pending interrupt is due now: the instruction stops at its next interrupt point.
  const uint64_t interrupt_at =
      interrupt_pending ? p->clock.now() : std::numeric_limits<uint64_t>::max();
  const emu::PadlockRecord& r = p->core.execute(d, s, m, regs->pc, interrupt_at);
  for (int i = 0; i < 8; ++i) regs->gpr[i] = s.gpr[i];
  regs->eflags = s.eflags;
  result->status = status_of(r.outcome);
  if (r.outcome.fault.kind == FaultKind::NotModelled) {
    // No public semantics (docs/fidelity/gmi.md): said once per instruction, then #UD.
    std::fprintf(stderr,
                 "padlock-emu: %s at 0x%llx is not modelled: its semantics are not "
                 "public; the guest gets #UD\n",
                 r.decoded.info().guide_name, static_cast<unsigned long long>(r.pc));
  }
  result->fault_address = r.outcome.fault.address;
  result->fault_write = r.outcome.fault.write ? 1 : 0;
  result->cycles = r.outcome.cycles;
}

uint64_t padlock_sys_cycles(padlock_sys* p) {
  return p->clock.now();
}

uint64_t padlock_sys_tsc(padlock_sys* p, uint64_t now_ns) {
  p->catch_up(now_ns);
  return p->clock.now();
}

}  // extern "C"
