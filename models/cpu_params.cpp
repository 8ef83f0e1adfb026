#include "models/cpu_params.hpp"

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

namespace padlock {

namespace {

// Calls v.param(name, member, help) or v.setting(name, member, help) for each field of a
// Params struct, from the struct's one field list (models/cpu_model.hpp).
#define PADLOCK_VISIT_PARAM(Type, name, help) v.param(#name, s.name, help);
#define PADLOCK_VISIT_SETTING(Type, name, init, help) v.setting(#name, s.name, help);
template <typename V>
void fields(const RngParams& s, V&& v) {
  PADLOCK_RNG_FIELDS(PADLOCK_VISIT_PARAM, PADLOCK_VISIT_SETTING)
}
template <typename V>
void fields(const AceParams& s, V&& v) {
  PADLOCK_ACE_FIELDS(PADLOCK_VISIT_PARAM, PADLOCK_VISIT_SETTING)
}
template <typename V>
void fields(const PheParams& s, V&& v) {
  PADLOCK_PHE_FIELDS(PADLOCK_VISIT_PARAM, PADLOCK_VISIT_SETTING)
}
template <typename V>
void fields(const PmmParams& s, V&& v) {
  PADLOCK_PMM_FIELDS(PADLOCK_VISIT_PARAM, PADLOCK_VISIT_SETTING)
}
template <typename V>
void fields(const Phe2Params& s, V&& v) {
  PADLOCK_PHE2_FIELDS(PADLOCK_VISIT_PARAM, PADLOCK_VISIT_SETTING)
}
template <typename V>
void fields(const GmiParams& s, V&& v) {
  PADLOCK_GMI_FIELDS(PADLOCK_VISIT_PARAM, PADLOCK_VISIT_SETTING)
}
template <typename V>
void fields(const MemoryParams& s, V&& v) {
  PADLOCK_MEMORY_FIELDS(PADLOCK_VISIT_PARAM, PADLOCK_VISIT_SETTING)
}
#undef PADLOCK_VISIT_PARAM
#undef PADLOCK_VISIT_SETTING

// The blocks of a CpuModel with their dotted prefixes and struct names.
template <typename V>
void blocks(const CpuModel& cpu, V&& v) {
  v("rng.", "RngParams", cpu.rng);
  v("ace.", "AceParams", cpu.ace);
  v("phe.", "PheParams", cpu.phe);
  v("pmm.", "PmmParams", cpu.pmm);
  v("memory.", "MemoryParams", cpu.memory);
  v("phe2.", "Phe2Params", cpu.phe2);
  v("gmi.", "GmiParams", cpu.gmi);
}

constexpr const char* kDefaultMhzHelp = "core clock when --mhz is not given";

struct Lister {
  std::vector<NamedParam> out;
  std::string prefix;

  template <typename T>
  void param(const char* name, const T& member, const char* help) {
    element(prefix + name, member, help, true);
  }
  template <typename T>
  void setting(const char* name, const T& x, const char* help) {
    double value;
    if constexpr (std::is_enum_v<T>)
      value = static_cast<double>(static_cast<std::underlying_type_t<T>>(x));
    else
      value = static_cast<double>(x);
    out.push_back({prefix + name, value, "", "", help, true, true});
  }

  // A sourced value, or an array (any depth) of them: "name[i][j]".
  template <typename Unit>
  void element(const std::string& name, const Sourced<Unit>& p, const char* help, bool first) {
    out.push_back({name, p.value, Unit::kText, p.source, help, false, first});
  }
  template <typename T, size_t N>
  void element(const std::string& name, const std::array<T, N>& a, const char* help, bool first) {
    for (size_t i = 0; i < N; ++i)
      element(name + "[" + std::to_string(i) + "]", a[i], help, first && i == 0);
  }
};

// Records the bytes and alignment of each listed field of one Params struct. An unlisted
// byte range is accepted only where it is exactly the padding the next listed field's
// alignment (or the struct's, at the end) requires; anything else is a field declared
// outside the struct's field list.
template <typename Struct>
struct Coverage {
  struct Field {
    size_t off, size, align;
  };
  const Struct& s;
  std::vector<Field> fields;

  template <typename T>
  void param(const char*, const T& member, const char*) {
    const size_t off = reinterpret_cast<const char*>(&member) - reinterpret_cast<const char*>(&s);
    fields.push_back({off, sizeof(T), alignof(T)});
  }
  template <typename T>
  void setting(const char* name, const T& member, const char* help) {
    param(name, member, help);
  }
  static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }
  void gaps(const char* name, std::vector<std::string>& out) {
    std::sort(fields.begin(), fields.end(),
              [](const Field& a, const Field& b) { return a.off < b.off; });
    size_t end = 0;
    auto gap = [&](size_t next, size_t align) {
      if (next > end && round_up(end, align) != next) {
        out.push_back(std::string(name) + ": bytes " + std::to_string(end) + ".." +
                      std::to_string(next) + " of " + std::to_string(sizeof(Struct)) +
                      " are not in its field list in models/cpu_model.hpp");
      }
    };
    for (const Field& f : fields) {
      gap(f.off, f.align);
      end = std::max(end, f.off + f.size);
    }
    gap(sizeof(Struct), alignof(Struct));
  }
};

std::vector<NamedParam> only(std::vector<NamedParam> all, bool settings) {
  std::erase_if(all, [&](const NamedParam& p) { return p.setting != settings; });
  return all;
}

}  // namespace

NamedParam default_mhz_param(const CpuModel& cpu) {
  return {"default_mhz",
          cpu.default_mhz.value,
          MHz::unit,
          cpu.default_mhz.source,
          kDefaultMhzHelp,
          false,
          true};
}

std::vector<NamedParam> cpu_listing(const CpuModel& cpu) {
  Lister l;
  l.out.push_back(default_mhz_param(cpu));
  blocks(cpu, [&](const char* prefix, const char*, const auto& block) {
    l.prefix = prefix;
    fields(block, l);
  });
  return std::move(l.out);
}

std::vector<NamedParam> cpu_params(const CpuModel& cpu) {
  return only(cpu_listing(cpu), false);
}

std::vector<NamedParam> cpu_settings(const CpuModel& cpu) {
  return only(cpu_listing(cpu), true);
}

std::vector<NamedParam> cpu_choices(const CpuModel& cpu) {
  std::vector<NamedParam> out;
  const bool gmi = cpu.units.ccs || cpu.units.sm2;
  for (NamedParam& p : cpu_params(cpu)) {
    const std::string_view name = p.name;
    // Blocks of units the chip lacks are never used (models/cpu_model.hpp).
    if ((name.starts_with("phe2.") && !cpu.units.phe2) || (name.starts_with("gmi.") && !gmi))
      continue;
    if (std::string_view(p.source).starts_with(kChoicePrefix)) out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> cpu_param_coverage_gaps() {
  std::vector<std::string> out;
  blocks(*all_cpu_models()[0], [&](const char*, const char* name, const auto& block) {
    Coverage<std::decay_t<decltype(block)>> c{block, {}};
    fields(block, c);
    c.gaps(name, out);
  });
  return out;
}

}  // namespace padlock
