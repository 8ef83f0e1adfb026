// The list of CPU models. Adding a model or a stepping: add its header and one line here.
#include <algorithm>
#include <string>
#include <string_view>

#include "models/cpu_model.hpp"
#include "models/cpus/esther_c5j.hpp"
#include "models/cpus/esther_c5j_s9.hpp"
#include "models/cpus/kh_40000.hpp"
#include "models/cpus/kx_5000.hpp"
#include "models/cpus/kx_6000.hpp"
#include "models/cpus/kx_7000.hpp"
#include "models/cpus/nano.hpp"
#include "models/cpus/nano_3000.hpp"
#include "models/cpus/nehemiah_c5p.hpp"
#include "models/cpus/nehemiah_c5xl.hpp"
#include "models/cpus/zx_c.hpp"

namespace padlock {

namespace {
constexpr const CpuModel* kModels[] = {&cpus::kNehemiahC5XL, &cpus::kNehemiahC5P, &cpus::kEstherC5J,
                                       &cpus::kEstherC5JS9,  &cpus::kNano,        &cpus::kNano3000,
                                       &cpus::kZxC,          &cpus::kKx5000,      &cpus::kKx6000,
                                       &cpus::kKh40000,      &cpus::kKx7000};

bool alias_matches(const char* aliases, std::string_view name) {
  std::string_view rest(aliases);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    if (rest.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}
}  // namespace

std::span<const CpuModel* const> all_cpu_models() {
  return kModels;
}

const CpuModel* find_cpu_model(std::string_view name) {
  for (const CpuModel* m : kModels) {
    if (name == m->name || alias_matches(m->aliases, name)) return m;
  }
  return nullptr;
}

std::string cpu_model_names(std::string* alias_list) {
  std::string s, aliases;
  for (const CpuModel* m : kModels) {
    if (!s.empty()) s += ", ";
    s += m->name;
    const std::string list = m->aliases != nullptr ? m->aliases : "";
    for (size_t start = 0; start < list.size();) {
      const size_t comma = std::min(list.find(',', start), list.size());
      if (!aliases.empty()) aliases += ", ";
      aliases += list.substr(start, comma - start) + " = " + m->name;
      start = comma + 1;
    }
  }
  if (alias_list != nullptr) *alias_list = aliases;
  return s;
}

std::string unknown_cpu_model_message(std::string_view name, const char* where) {
  std::string aliases;
  const std::string names = cpu_model_names(&aliases);
  return "unknown CPU model '" + std::string(name) + "'" + where + "; known: " + names +
         (aliases.empty() ? "" : " (aliases: " + aliases + ")");
}

}  // namespace padlock
