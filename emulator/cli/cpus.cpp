// `padlock-emu cpus [--verbose]`: the CPU models with their units, CPUID signature and
// default clock; --verbose adds every sourced constant with its unit and source.
#include <string>

#include "models/cpu_params.hpp"  // the one list of a model's Params by name
#include "emulator/cli/cli.hpp"
#include "models/cpu_model.hpp"

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
  return s;
}

}  // namespace

void print_cpus(FILE* out, bool verbose) {
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
  if (!verbose) return;
  for (const CpuModel* m : all_cpu_models()) {
    std::fprintf(out, "\n%s: %s\n", m->name, m->description);
    std::fprintf(out, "  brand \"%s\", family %u model %u stepping %u, FCR %s\n", m->brand,
                 m->family, m->model, m->stepping, m->has_fcr ? "present" : "absent");
    for (const NamedParam& p : cpu_params(*m)) {
      std::fprintf(out, "  %-36s %14.6g %-10s %s\n", p.name.c_str(), p.param->value, p.param->unit,
                   p.param->source);
    }
    for (const NamedSetting& s : cpu_settings(*m)) {
      std::fprintf(out, "  %-36s %14.6g %-10s %s\n", s.name.c_str(), s.value, "(setting)", "");
    }
  }
}

}  // namespace padlock::cli
