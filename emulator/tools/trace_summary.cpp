#include "emulator/tools/trace_summary.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace padlock::emu::trace {

void KindTotals::add(const JsonValue& insn) {
  ++count;
  bytes += insn.u64("bytes");
  cycles += insn.u64("cycles");
  reloads += insn.flag("key_reloaded") ? 1 : 0;
  const std::string status = insn.str("status");
  interrupted += status == "interrupted" ? 1 : 0;
  faulted += status == "faulted" ? 1 : 0;
  restarted += insn.flag("restarted") ? 1 : 0;
}

TraceSummary summarize(const TraceFile& t) {
  TraceSummary s;
  for (const JsonValue& insn : t.insns) {
    const std::string kind = insn.str("insn");
    s.by_kind[kind].add(insn);
    s.by_function[{insn.str("fn"), kind}].add(insn);
    s.total.add(insn);
    if (const JsonValue* d = insn.get("diag"); d != nullptr) {
      for (const JsonValue& name : d->items) ++s.diagnostics[name.text];
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
  const JsonValue& run = t.run;
  const double mhz = std::strtod(run.get("mhz") ? run.get("mhz")->text.c_str() : "0", nullptr);
  std::fprintf(out, "%s (%s) on %s at %g MHz, seed %llu, errata %s\n", run.str("program").c_str(),
               run.str("arch").c_str(), run.str("cpu").c_str(), mhz,
               static_cast<unsigned long long>(run.u64("seed")), run.flag("errata") ? "on" : "off");
  const uint64_t pl = s.total.cycles;
  if (t.end.type != JsonValue::Type::Null) {
    const uint64_t end = t.end.u64("cycle");
    if (const JsonValue* sig = t.end.get("signal"); sig != nullptr) {
      std::fprintf(out, "ended by signal %s", sig->text.c_str());
    } else {
      std::fprintf(out, "exit status %llu",
                   static_cast<unsigned long long>(t.end.u64("exit_code")));
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
