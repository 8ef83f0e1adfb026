// `padlock-emu cpus [--verbose] [--x86]`: the CPU models with their units, CPUID signature
// and default clock; --verbose adds every sourced constant with its unit and source and every
// setting, each field after a "# help" line (models/cpu_params.hpp), and a summary of each
// core's x86 costs; --x86 lists every measured x86 instruction form.
#include <string>

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

}  // namespace

void print_cpus(FILE* out, bool verbose, bool x86) {
  std::fprintf(out, "%-14s %-12s %-9s %-7s %6s  %-18s %s\n", "NAME", "ALIASES", "CORE", "F/M/S",
               "MHZ", "UNITS", "NOTES");
  for (const CpuModel* m : all_cpu_models()) {
    char fms[32];
    std::snprintf(fms, sizeof fms, "%u/%u/%u", m->family, m->model, m->stepping);
    std::string notes = m->long_mode ? "64-bit" : "32-bit";
    if (m->ctr_errata) notes += ", CTR errata";
    std::fprintf(out, "%-14s %-12s %-9s %-7s %6.0f  %-18s %s\n", m->name,
                 *m->aliases ? m->aliases : "-", m->core, fms, m->default_mhz.value,
                 units(m->units).c_str(), notes.c_str());
  }
  if (verbose) {
    for (const CpuModel* m : all_cpu_models()) {
      std::fprintf(out, "\n%s: %s\n", m->name, m->description);
      std::fprintf(out, "  brand \"%s\", family %u model %u stepping %u, FCR %s\n", m->brand,
                   m->family, m->model, m->stepping, m->has_fcr ? "present" : "absent");
      for (const NamedParam& p : cpu_listing(*m)) {
        if (p.first) std::fprintf(out, "  # %s\n", p.help);
        if (p.setting)
          std::fprintf(out, "  %-36s %14.6g (setting)\n", p.name.c_str(), p.value);
        else
          std::fprintf(out, "  %-36s %14.6g %-11s %s\n", p.name.c_str(), p.value, p.unit, p.source);
      }
    }
  }
  if (verbose || x86) print_x86_costs(out, x86);
}

}  // namespace padlock::cli
