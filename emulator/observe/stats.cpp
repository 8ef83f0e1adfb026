#include "emulator/observe/stats.hpp"

namespace padlock::emu {

void Stats::print(FILE* out, double mhz) const {
  std::fprintf(out, "padlock-emu: stats: PadLock instructions\n");
  std::fprintf(out, "padlock-emu: stats:   %-14s %10s %14s %14s %8s %8s\n", "instruction", "count",
               "bytes", "cycles", "faults", "reloads");
  uint64_t total = 0;
  for (size_t i = 0; i < isa::kInsnCount; ++i) {
    const InsnStats& s = insn[i];
    if (s.count == 0) continue;
    total += s.count;
    std::fprintf(
        out, "padlock-emu: stats:   %-14s %10llu %14llu %14llu %8llu %8llu\n",
        isa::kInstructions[i].guide_name, static_cast<unsigned long long>(s.count),
        static_cast<unsigned long long>(s.bytes), static_cast<unsigned long long>(s.cycles),
        static_cast<unsigned long long>(s.faults), static_cast<unsigned long long>(s.key_reloads));
  }
  if (total == 0) std::fprintf(out, "padlock-emu: stats:   (none executed)\n");
  std::fprintf(out, "padlock-emu: stats: PadLock cycles %llu (%.3f ms at %.0f MHz)\n",
               static_cast<unsigned long long>(padlock_cycles),
               mhz > 0 ? padlock_cycles / (mhz * 1e3) : 0.0, mhz);
  uint64_t diags = 0;
  for (size_t i = 0; i < static_cast<size_t>(Diag::Count); ++i) diags += diag[i];
  std::fprintf(out, "padlock-emu: stats: diagnostics %llu\n",
               static_cast<unsigned long long>(diags));
  for (size_t i = 0; i < static_cast<size_t>(Diag::Count); ++i) {
    if (diag[i] == 0) continue;
    std::fprintf(out, "padlock-emu: stats:   %-24s %10llu\n", diag_info(static_cast<Diag>(i)).name,
                 static_cast<unsigned long long>(diag[i]));
  }
  std::fprintf(out,
               "padlock-emu: stats: system calls %llu, signals delivered %llu, "
               "EFLAGS[30] clears %llu\n",
               static_cast<unsigned long long>(syscalls),
               static_cast<unsigned long long>(signals_delivered),
               static_cast<unsigned long long>(eflags30_clears));
  if (threads_created > 0) {
    std::fprintf(out, "padlock-emu: stats: threads created %llu, thread switches %llu\n",
                 static_cast<unsigned long long>(threads_created),
                 static_cast<unsigned long long>(thread_switches));
  }
  std::fprintf(out, "padlock-emu: stats: blocks decoded %llu, instructions counted %llu\n",
               static_cast<unsigned long long>(blocks_decoded),
               static_cast<unsigned long long>(guest_insns));
}

void Stats::print_timing(FILE* out, double mhz, uint64_t total, uint64_t idle,
                         uint64_t irq_cycles) const {
  const double all = total > 0 ? static_cast<double>(total) : 1.0;
  std::fprintf(out, "padlock-emu: stats: timing (virtual clock at %.0f MHz)\n", mhz);
  // The rows partition the clock: each PadLock kind by how far it moved the clock (its
  // cycles less what integer code overlapped, §3.3), then the rest; what no row claims
  // (waits for ACE before SSE or PadLock code, §3.3) is the last row, so the shares add
  // up to 100 %.
  uint64_t padlock = 0;
  for (size_t i = 0; i < isa::kInsnCount; ++i) {
    const InsnStats& s = insn[i];
    if (s.count == 0) continue;
    padlock += s.clock;
    std::fprintf(out, "padlock-emu: stats:   time of %s: %llu cycles (%.2f%%)\n",
                 isa::kInstructions[i].guide_name, static_cast<unsigned long long>(s.clock),
                 100.0 * s.clock / all);
  }
  const uint64_t claimed = padlock + x86_cycles + cache_cycles + irq_cycles + idle;
  const struct {
    const char* name;
    uint64_t v;
  } rows[] = {{"PadLock (all)", padlock},
              {"x86 blocks", x86_cycles},
              {"cache/memory", cache_cycles},
              {"interrupts", irq_cycles},
              {"sleeping", idle},
              {"waiting for ACE", total > claimed ? total - claimed : 0}};
  for (const auto& r : rows) {
    std::fprintf(out, "padlock-emu: stats:   time of %s: %llu cycles (%.2f%%)\n", r.name,
                 static_cast<unsigned long long>(r.v), 100.0 * r.v / all);
  }
  std::fprintf(out, "padlock-emu: stats:   total: %llu cycles\n",
               static_cast<unsigned long long>(total));
  std::fprintf(out, "padlock-emu: stats: modelled time %.6f s at %.0f MHz (%llu interrupts)\n",
               mhz > 0 ? total / (mhz * 1e6) : 0.0, mhz,
               static_cast<unsigned long long>(interrupts));
}

void DiagnosticPrinter::report(Diag d, uint64_t pc) {
  ++stats_.diag[static_cast<size_t>(d)];
  const DiagInfo& info = diag_info(d);
  // An output field the guide leaves undefined (DiagKind::UndefinedResult) is not a fault
  // of the program: it is counted for --stats but not printed on every run.
  if (info.kind == DiagKind::UndefinedResult) return;
  if (!shown_.emplace(static_cast<int>(d), pc).second) return;
  std::fprintf(out_, "padlock-emu: diagnostic: %s at 0x%llx: %s\n", info.name,
               static_cast<unsigned long long>(pc), info.choice);
}

}  // namespace padlock::emu
