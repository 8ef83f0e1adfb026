// Every sourced constant of a CpuModel by dotted name ("ace.ecb_sse_base[0][1]"), so
// Python (and docs) can list each value with its unit and source. Plain settings that
// are not Params (bools, counts, enums) are listed as Settings.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "models/cpu_model.hpp"

namespace padlock {

struct NamedParam {
  std::string name;
  const Param* param;
};

struct NamedSetting {
  std::string name;
  double value;
};

std::vector<NamedParam> cpu_params(const CpuModel& cpu);
std::vector<NamedSetting> cpu_settings(const CpuModel& cpu);

// Byte ranges of the per-unit Params structs that no listed field covers and that are not
// the padding the layout requires: non-empty means a field was added to cpu_model.hpp
// without being listed in cpu_params.cpp (tests/python/test_cpus.py checks it is empty).
// A bool squeezed into existing tail padding can escape it.
std::vector<std::string> cpu_param_coverage_gaps();

}  // namespace padlock
