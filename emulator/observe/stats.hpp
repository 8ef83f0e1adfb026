// Counters for --stats, and the diagnostics sink that shows each undefined case the
// models meet (once per name and PC) and counts them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <set>
#include <utility>

#include "isa/instruction_table.hpp"
#include "models/diagnostics.hpp"
#include "models/unit_interface.hpp"

namespace padlock::emu {

struct InsnStats {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t cycles = 0;
  uint64_t faults = 0;
  uint64_t key_reloads = 0;
  uint64_t interrupted = 0;
  // How far these instructions moved the virtual clock, without their cache/memory stalls
  // (counted in Stats::cache_cycles): `cycles`, or fewer where integer code overlaps the
  // unit (§3.3). The timing lines of --stats partition the clock with it.
  uint64_t clock = 0;
};

struct Stats {
  InsnStats insn[isa::kInsnCount];
  uint64_t diag[static_cast<size_t>(Diag::Count)] = {};
  uint64_t syscalls = 0;
  uint64_t signals_delivered = 0;
  uint64_t blocks_decoded = 0;
  uint64_t guest_insns = 0;  // counted while the block hook is installed
  uint64_t padlock_cycles = 0;
  uint64_t eflags30_clears = 0;  // times EFLAGS[30] went from 1 to 0
  // Timing (docs/timing.md): cycles charged to ordinary x86 blocks, to cache/memory stalls
  // (PadLock streams and --cache-x86), and interrupts taken (--irq-hz).
  uint64_t x86_cycles = 0;
  uint64_t cache_cycles = 0;
  uint64_t interrupts = 0;
  // Guest threads (emulator/linux/threads/scheduler.hpp): made by clone, and switches between them.
  uint64_t threads_created = 0;
  uint64_t thread_switches = 0;

  void record(isa::InsnId id, const Outcome& o) {
    InsnStats& s = insn[static_cast<size_t>(id)];
    ++s.count;
    s.bytes += o.bytes;
    s.cycles += o.cycles;
    if (o.status == Status::Faulted) ++s.faults;
    if (o.status == Status::Interrupted) ++s.interrupted;
    if (o.key_reloaded) ++s.key_reloads;
    padlock_cycles += o.cycles;
  }
  void print(FILE* out, double mhz) const;
  // The timing lines of --stats: cycles per PadLock kind and their share of all cycles, and
  // the modelled wall time at `mhz` (total = the virtual clock at exit).
  void print_timing(FILE* out, double mhz, uint64_t total, uint64_t idle,
                    uint64_t irq_cycles) const;
};

class DiagnosticPrinter final : public DiagnosticSink {
 public:
  DiagnosticPrinter(Stats& stats, FILE* out) : stats_(stats), out_(out) {}
  void report(Diag d, uint64_t pc) override;

 private:
  Stats& stats_;
  FILE* out_;
  std::set<std::pair<int, uint64_t>> shown_;
};

}  // namespace padlock::emu
