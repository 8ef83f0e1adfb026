// A stepping as a constexpr derivation from its sibling model: the sibling's data with the
// few fields the stepping changes, and CPUID leaf 1 re-signed with the new stepping (§1.1).
// Adding a stepping is adding a small header that calls derive() and a line in registry.cpp.
#pragma once

#include <cstdint>
#include <optional>

#include "models/cpu_model.hpp"
#include "models/cpus/cpuid_common.hpp"

namespace padlock::cpus {

// What a stepping changes. name, aliases ("" for none), description and stepping are
// required; the other fields are inherited when left unset.
struct SteppingChanges {
  const char* name = nullptr;
  const char* aliases = nullptr;
  const char* description = nullptr;
  std::optional<uint32_t> stepping = std::nullopt;
  std::optional<MHz> default_mhz = std::nullopt;
  std::optional<Units> units = std::nullopt;
  std::optional<bool> ctr_errata = std::nullopt;
  std::optional<bool> has_fcr = std::nullopt;
  std::optional<uint32_t> msr_fcr_reset = std::nullopt;
  std::optional<RngParams> rng = std::nullopt;
};

// A missing required field makes derive() fail to evaluate as a constant: a compile error.
constexpr CpuModel derive(const CpuModel& sibling, const SteppingChanges& c) {
  if (c.name == nullptr || c.aliases == nullptr || c.description == nullptr || !c.stepping)
    throw "derive: name, aliases, description and stepping are required";
  CpuModel m = sibling;
  m.name = c.name;
  m.aliases = c.aliases;
  m.description = c.description;
  m.stepping = *c.stepping;
  m.default_mhz = c.default_mhz.value_or(m.default_mhz);
  m.units = c.units.value_or(m.units);
  m.ctr_errata = c.ctr_errata.value_or(m.ctr_errata);
  m.has_fcr = c.has_fcr.value_or(m.has_fcr);
  m.msr_fcr_reset = c.msr_fcr_reset.value_or(m.msr_fcr_reset);
  m.rng = c.rng.value_or(m.rng);
  for (CpuidLeaf& leaf : m.cpuid) {
    if (leaf.leaf == 1) leaf.eax = signature(m.family, m.model, m.stepping);
  }
  return m;
}

}  // namespace padlock::cpus
