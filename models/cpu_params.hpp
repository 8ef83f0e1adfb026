// Every sourced constant and setting of a CpuModel by dotted name ("ace.ecb_sse_base[0][1]"),
// in the order of the field lists of models/cpu_model.hpp, each with its unit (from its
// type), value, source and the field's help text: the listing behind `padlock-emu cpus
// --verbose` and the Python module's CpuModel.params and .settings.
#pragma once

#include <string>
#include <vector>

#include "models/cpu_model.hpp"

namespace padlock {

struct NamedParam {
  std::string name;    // "ace.ecb_sse_base[0][1]"
  double value;        // a setting's bool, count or enum as a number
  const char* unit;    // the unit's text; "" for a setting
  const char* source;  // the guide section or data source; "" for a setting
  const char* help;    // what the field means (shared by the elements of an array)
  bool setting;        // a plain setting (flag, count, enum), not a sourced value
  bool first;          // the first element of its field (listings print the help there)
};

// default_mhz, then every field of the rng, ace, phe, pmm and memory blocks.
std::vector<NamedParam> cpu_listing(const CpuModel& cpu);
// The sourced values of cpu_listing, and its settings.
std::vector<NamedParam> cpu_params(const CpuModel& cpu);
std::vector<NamedParam> cpu_settings(const CpuModel& cpu);
NamedParam default_mhz_param(const CpuModel& cpu);
// The sourced values no data is behind: their source starts with kChoicePrefix, the mark of a
// documented choice (docs/timing.md, docs/zhaoxin.md); PHE2's and GMI's only on a chip with
// those units.
inline constexpr const char* kChoicePrefix = "choice";
std::vector<NamedParam> cpu_choices(const CpuModel& cpu);

// Byte ranges of the per-unit Params structs that no listed field covers and that are not
// the padding the layout requires: non-empty means a field was declared in cpu_model.hpp
// outside its PADLOCK_*_FIELDS list (tests/python/test_cpus.py checks it is empty).
std::vector<std::string> cpu_param_coverage_gaps();

}  // namespace padlock
