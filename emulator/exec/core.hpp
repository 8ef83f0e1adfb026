// The PadLock execution core: the one place that runs a decoded PadLock instruction, for
// every entry point (the CLI's Process, the function harness Machine and the direct model
// API). It owns the ExecEnv, the EFLAGS[30] outcome (§1.8), the memory-side charge from the
// cache model, the §3.3 overlap of ACE with integer code, the statistics, the diagnostics
// of the instruction and the record the observers read. The entry points keep what differs
// between them: where registers live, how a fault stops the guest and how interrupts arrive.
// No Unicorn here (docs/architecture.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "emulator/observe/padlock_record.hpp"
#include "emulator/observe/stats.hpp"
#include "emulator/time/virtual_time.hpp"
#include "models/padlock.hpp"
#include "models/timing/cache_model.hpp"

namespace padlock::emu {

// How an entry point charges PadLock time (docs/timing.md).
struct PadlockTiming {
  // Memory-side stalls from the cache model (§3.3: the clock tables assume everything in
  // L1 and no store-buffer stalls). Off: the units' clocks as the guide gives them.
  bool memory = true;
  // §3.3 overlap: a PadLock instruction waits until ACE is free, integer code continues
  // after int_cycles and ACE stays busy until cycles. Off: the clock advances by cycles.
  bool overlap = true;
};

class PadlockCore final : private DiagnosticSink {
 public:
  // `clock` is the entry point's clock; `stats` and `diag` (the entry point's diagnostics
  // printer or collector; may be null) outlive the core.
  PadlockCore(Padlock& units, VirtualTime& clock, Stats& stats, DiagnosticSink* diag,
              const PadlockTiming& timing);
  ~PadlockCore() override;

  // Executes `d` (decoded at `pc`) on `s` and `mem`. A REP instruction stops at its next
  // interrupt point at or after `interrupt_at` (§1.7). On return `s` holds the registers
  // and EFLAGS[30] the guest sees next: an interrupted or faulting instruction stores
  // EFLAGS, which clears bit 30 (§1.8). The record is valid until the next call.
  const PadlockRecord& execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem, uint64_t pc,
                               uint64_t interrupt_at);

  // Observers (trace, profile, checker); null: none.
  void set_listener(PadlockListener* l) { listener_ = l; }
  // A flag the host side sets to stop a long REP at its next interrupt point
  // (ExecEnv::host_stop); null: none.
  void set_host_stop(const std::atomic<bool>* flag) { host_stop_ = flag; }
  const PadlockTiming& timing() const { return timing_; }
  // The data caches PadLock streams go through (null with timing.memory off); --cache-x86
  // sends ordinary loads and stores through the same model.
  timing::CacheModel* cache() { return cache_.get(); }

 private:
  void report(Diag d, uint64_t pc) override;

  Padlock& units_;
  VirtualTime& clock_;
  Stats& stats_;
  DiagnosticSink* diag_;
  PadlockTiming timing_;
  std::unique_ptr<timing::CacheModel> cache_;
  PadlockListener* listener_ = nullptr;
  const std::atomic<bool>* host_stop_ = nullptr;
  PadlockRecord rec_;
  uint64_t diags_ = 0;  // Diag bits raised by the instruction in flight
};

}  // namespace padlock::emu
