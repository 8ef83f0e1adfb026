// `padlock-emu cpus [--verbose] [--x86]`: the CPU models with their units, CPUID signature
// and default clock; --verbose adds every sourced constant with its unit and source and every
// setting, each field after a "# help" line (models/cpu_params.hpp), and a summary of each
// core's x86 costs; --x86 lists every measured x86 instruction form.
#include <string>
#include <vector>

#include "emulator/cli/cli.hpp"
#include "models/cpu_model.hpp"
#include "models/cpu_params.hpp"  // the one list of a model's Params by name
#include "models/timing/x86_costs.hpp"
#include "models/timing/x86_measured.hpp"

namespace padlock::cli {

namespace {

std::string units(const Units& u) {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ",";
    s += name;
  };
  add(u.rng, "RNG");
  add(u.ace && !u.ace2, "ACE");
  add(u.ace2, "ACE2");
  add(u.phe, "PHE");
  add(u.pmm, "PMM");
  add(u.phe2, "PHE2");
  add(u.ccs, "CCS");
  add(u.sm2, "SM2");
  add(u.rsa, "RSA");
  add(u.rng2, "RNG2");
  return s;
}

// Leaf 0's vendor string (EBX, EDX, ECX).
std::string vendor(const CpuModel& m) {
  for (const CpuidLeaf& l : m.cpuid) {
    if (l.leaf != 0) continue;
    std::string v;
    for (const uint32_t w : {l.ebx, l.edx, l.ecx})
      for (int i = 0; i < 4; ++i) v += static_cast<char>(w >> (8 * i));
    return v;
  }
  return "";
}

// The model's CPUID leaves with their sources, and how its units are enabled.
void print_identity(FILE* out, const CpuModel& m) {
  std::fprintf(out, "  vendor \"%s\"; units enabled by %s\n", vendor(m).c_str(),
               m.enables == EnableScheme::Zhaoxin
                   ? "MSR 0x1257 (family-7 Zhaoxin; 0x1107 and 0x110B fixed)"
                   : "FCR 0x1107 and MSR 0x110B (§1.3-§1.5)");
  if (*m.sources) std::fprintf(out, "  sources: %s\n", m.sources);
  for (const CpuidLeaf& l : m.cpuid) {
    std::fprintf(out, "  cpuid %08X  %08X %08X %08X %08X  %s\n", l.leaf, l.eax, l.ebx, l.ecx, l.edx,
                 l.source);
  }
  if (m.centaur_edx_unmodelled != 0 || !m.ace2_enable_bit) {
    std::fprintf(out,
                 "  C000_0001 EDX: bits %08X reported with no unit behind them%s "
                 "(docs/zhaoxin.md)\n",
                 m.centaur_edx_unmodelled,
                 m.ace2_enable_bit ? "" : "; EDX[9] (ACE2 enabled) clear");
  }
}

std::string models_of(timing::X86Core core) {
  std::string s;
  for (const CpuModel* m : all_cpu_models()) {
    if (timing::x86_core(m->core) != core) continue;
    if (!s.empty()) s += ", ";
    s += m->name;
  }
  return s;
}

void print_figure(FILE* out, const char* name, const timing::MeasuredFigure& f) {
  if (f.present())
    std::fprintf(out, "  %-36s %14.6g %-10s %s\n", name, f.clocks, "clocks", f.source);
  else
    std::fprintf(out, "  %-36s %14s %-10s %s\n", name, "-", "", "(not in the dumps)");
}

// The x86 cost model of each core (models/timing/x86_measured.hpp), with sources.
void print_x86_costs(FILE* out, bool every_form) {
  std::fprintf(out,
               "\nx86 costs: measured latency L and reciprocal throughput T in clocks from the "
               "InstLat dumps\n(InstLatx64/InstLatx64, CentaurHauls/); an instruction without "
               "a row takes a close form's\nrow or its class below (docs/timing.md, \"x86 "
               "costs\").\n");
  for (size_t i = 0; i < timing::kX86CoreCount; ++i) {
    const auto core = static_cast<timing::X86Core>(i);
    const timing::MeasuredCore& mc = timing::measured_core(core);
    const timing::X86Costs& classes = timing::x86_costs_for_core(mc.core);
    std::fprintf(out, "\n%s (%s): %s, %zu measured forms\n", mc.core, models_of(core).c_str(),
                 timing::in_order(core) ? "in order, one instruction per issue"
                                        : "out of order: max(throughput sum, dependency chain)",
                 mc.rows.size());
    print_figure(out, "load-use latency", mc.load_use);
    print_figure(out, "load throughput", mc.load_throughput);
    print_figure(out, "L1D latency", mc.l1_latency);
    print_figure(out, "L2 latency", mc.l2_latency);
    print_figure(out, "memory latency", mc.memory_latency);
    const timing::RepStringCost start = timing::rep_string_cost(core, "");
    std::fprintf(out, "  %-36s %14.6g %-10s %s\n", "REP string start-up", start.startup, "clocks",
                 start.startup_source);
    for (const timing::RepStringRow& r : mc.rep) {
      char name[64];
      std::snprintf(name, sizeof name, "%s per element", r.key);
      std::fprintf(out, "  %-36s %14.6g %-10s %s (%u B at %g B/clock)\n", name, r.per_element(),
                   "clocks", r.source, r.element_bytes, r.bytes_per_clock);
    }
    for (size_t k = 0; k < timing::kInsnClassCount; ++k) {
      char name[64];
      std::snprintf(name, sizeof name, "class %s",
                    timing::insn_class_name(static_cast<timing::InsnClass>(k)));
      std::fprintf(out, "  %-36s %14.6g %-10s %s\n", name, classes.clocks[k].value, "clocks",
                   classes.clocks[k].source);
    }
    if (!every_form) continue;
    for (const timing::MeasuredRow& r : mc.rows) {
      char lat[16] = "-";
      if (r.latency >= 0) std::snprintf(lat, sizeof lat, "%g", r.latency);
      std::fprintf(out, "  %-36s L %6s T %6g  %s\n", r.key, lat, r.throughput, r.source);
    }
  }
}

// The values of a model that no data is behind, by name: each is a documented choice whose
// reason is its source above.
void print_choices(FILE* out, const CpuModel& m) {
  const std::vector<NamedParam> choices = cpu_choices(m);
  std::fprintf(out,
               "  choices: %zu of %zu values have no data behind them (source \"choice: ...\")%s\n",
               choices.size(), cpu_params(m).size(), choices.empty() ? "" : ":");
  std::string line = "   ";
  for (size_t i = 0; i < choices.size(); ++i) {
    const std::string item = " " + choices[i].name + (i + 1 < choices.size() ? "," : "");
    if (line.size() + item.size() > 100) {
      std::fprintf(out, "%s\n", line.c_str());
      line = "   ";
    }
    line += item;
  }
  if (!choices.empty()) std::fprintf(out, "%s\n", line.c_str());
  if (*m.borrowed) std::fprintf(out, "  choices: measured on another chip: %s\n", m.borrowed);
}

}  // namespace

void print_cpus(FILE* out, bool verbose, bool x86) {
  std::fprintf(out, "%-14s %-12s %-9s %-9s %6s  %-38s %s\n", "NAME", "ALIASES", "CORE", "F/M/S",
               "MHZ", "UNITS", "NOTES");
  for (const CpuModel* m : all_cpu_models()) {
    char fms[32];
    std::snprintf(fms, sizeof fms, "%u/%u/%u", m->family, m->model, m->stepping);
    std::string notes = m->long_mode ? "64-bit" : "32-bit";
    if (m->ctr_errata) notes += ", CTR errata";
    std::fprintf(out, "%-14s %-12s %-9s %-9s %6.0f  %-38s %s\n", m->name,
                 *m->aliases ? m->aliases : "-", m->core, fms, m->default_mhz.value,
                 units(m->units).c_str(), notes.c_str());
  }
  if (verbose) {
    for (const CpuModel* m : all_cpu_models()) {
      std::fprintf(out, "\n%s: %s\n", m->name, m->description);
      std::fprintf(out, "  brand \"%s\", family %u model %u stepping %u, FCR %s\n", m->brand,
                   m->family, m->model, m->stepping, m->has_fcr ? "present" : "absent");
      print_identity(out, *m);
      for (const NamedParam& p : cpu_listing(*m)) {
        if (p.first) std::fprintf(out, "  # %s\n", p.help);
        if (p.setting)
          std::fprintf(out, "  %-36s %14.6g (setting)\n", p.name.c_str(), p.value);
        else
          std::fprintf(out, "  %-36s %14.6g %-11s %s\n", p.name.c_str(), p.value, p.unit, p.source);
      }
      print_choices(out, *m);
    }
  }
  if (verbose || x86) print_x86_costs(out, x86);
}

}  // namespace padlock::cli
