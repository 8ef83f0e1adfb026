#include "emulator/trace_reader/trace_summary.hpp"

#include <algorithm>
#include <vector>

namespace padlock::emu::trace {

void KindTotals::add(const Record& insn) {
  ++count;
  bytes += u64(insn, "bytes");
  cycles += u64(insn, "cycles");
  reloads += flag(insn, "key_reloaded") ? 1 : 0;
  const std::string status = str(insn, "status");
  interrupted += status == "interrupted" ? 1 : 0;
  faulted += status == "faulted" ? 1 : 0;
  restarted += flag(insn, "restarted") ? 1 : 0;
}

TraceSummary summarize(const TraceFile& t) {
  TraceSummary s;
  for (const Record& insn : t.insns) {
    const std::string kind = str(insn, "insn");
    s.by_kind[kind].add(insn);
    s.by_function[{str(insn, "fn"), kind}].add(insn);
    s.total.add(insn);
    if (const Record* d = member(insn, "diag"); d != nullptr && d->is_array()) {
      for (const Record& name : *d) {
        if (name.is_string()) ++s.diagnostics[name.get<std::string>()];
      }
    }
  }
  return s;
}

namespace {

double share(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

void row(FILE* out, const std::string& label, const KindTotals& k, uint64_t all_cycles) {
  std::fprintf(
      out, "%-16s %8llu %12llu %14llu %6.1f%% %8llu %8llu %8llu %8llu\n", label.c_str(),
      static_cast<unsigned long long>(k.count), static_cast<unsigned long long>(k.bytes),
      static_cast<unsigned long long>(k.cycles), share(k.cycles, all_cycles),
      static_cast<unsigned long long>(k.reloads), static_cast<unsigned long long>(k.interrupted),
      static_cast<unsigned long long>(k.faulted), static_cast<unsigned long long>(k.restarted));
}

}  // namespace

void print_summary(FILE* out, const TraceFile& t, const TraceSummary& s) {
  const Record& run = t.run;
  const Record* mhz_member = member(run, "mhz");
  const double mhz =
      mhz_member != nullptr && mhz_member->is_number() ? mhz_member->get<double>() : 0.0;
  std::fprintf(out, "%s (%s) on %s at %g MHz, seed %llu, errata %s\n", str(run, "program").c_str(),
               str(run, "arch").c_str(), str(run, "cpu").c_str(), mhz,
               static_cast<unsigned long long>(u64(run, "seed")),
               flag(run, "errata") ? "on" : "off");
  const uint64_t pl = s.total.cycles;
  if (!t.end.is_null()) {
    const uint64_t end = u64(t.end, "cycle");
    if (const Record* sig = member(t.end, "signal"); sig != nullptr) {
      const std::string name = sig->is_string() ? sig->get<std::string>() : sig->dump();
      std::fprintf(out, "ended by signal %s", name.c_str());
    } else {
      std::fprintf(out, "exit status %llu",
                   static_cast<unsigned long long>(u64(t.end, "exit_code")));
    }
    std::fprintf(out, " at cycle %llu (%.3f us modelled); PadLock %.1f%% of it\n",
                 static_cast<unsigned long long>(end), mhz > 0 ? end / mhz : 0.0, share(pl, end));
  } else {
    std::fprintf(out, "(no end record: the run did not finish)\n");
  }
  std::fprintf(out, "PadLock cycles %llu (%.3f us modelled at %g MHz)\n\n",
               static_cast<unsigned long long>(pl), mhz > 0 ? pl / mhz : 0.0, mhz);

  const char* header = "%-16s %8s %12s %14s %7s %8s %8s %8s %8s\n";
  std::fprintf(out, header, "instruction", "count", "bytes", "cycles", "share", "reloads",
               "interr.", "faulted", "restart");
  for (const auto& [kind, k] : s.by_kind) row(out, kind, k, pl);
  row(out, "total", s.total, pl);

  std::fprintf(out, "\n%-32s %-16s %8s %12s %14s %7s\n", "function", "instruction", "count",
               "bytes", "cycles", "share");
  // Functions by cycles, largest first; ties by name.
  std::vector<std::pair<const std::pair<std::string, std::string>*, const KindTotals*>> fns;
  for (const auto& [key, k] : s.by_function) fns.push_back({&key, &k});
  std::stable_sort(fns.begin(), fns.end(), [](const auto& a, const auto& b) {
    return a.second->cycles > b.second->cycles;
  });
  for (const auto& [key, k] : fns) {
    const std::string fn = key->first.empty() ? "???" : key->first;
    std::fprintf(out, "%-32s %-16s %8llu %12llu %14llu %6.1f%%\n", fn.c_str(), key->second.c_str(),
                 static_cast<unsigned long long>(k->count),
                 static_cast<unsigned long long>(k->bytes),
                 static_cast<unsigned long long>(k->cycles), share(k->cycles, pl));
  }
  if (!s.diagnostics.empty()) {
    std::fprintf(out, "\ndiagnostics\n");
    for (const auto& [name, n] : s.diagnostics) {
      std::fprintf(out, "  %-28s %8llu\n", name.c_str(), static_cast<unsigned long long>(n));
    }
  }
}

}  // namespace padlock::emu::trace
