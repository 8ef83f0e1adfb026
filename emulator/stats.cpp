#include "emulator/stats.hpp"

namespace padlock::emu {

void Stats::record(isa::InsnId id, const Outcome& o) {
  InsnStats& s = insn[static_cast<size_t>(id)];
  ++s.count;
  s.bytes += o.bytes;
  s.cycles += o.cycles;
  if (o.status == Status::Faulted) ++s.faults;
  if (o.status == Status::Interrupted) ++s.interrupted;
  if (o.key_reloaded) ++s.key_reloads;
  padlock_cycles += o.cycles;
}

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
  std::fprintf(out, "padlock-emu: stats: blocks decoded %llu, instructions counted %llu\n",
               static_cast<unsigned long long>(blocks_decoded),
               static_cast<unsigned long long>(guest_insns));
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
