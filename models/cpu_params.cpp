#include "models/cpu_params.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace padlock {

namespace {

// One walk per Params struct drives both the lists and the coverage check, so each field
// is named once. The visitor V receives param(name, const Param&, offset, size, align)
// and setting(name, double value, offset, size, align).
template <typename Struct, typename V>
struct FieldWalker {
  const Struct& s;
  V& v;
  const char* prefix;

  template <typename T>
  static size_t offset_of(const Struct& s, const T& member) {
    return reinterpret_cast<const char*>(&member) - reinterpret_cast<const char*>(&s);
  }
  // A Param, or an array (C array or std::array, any depth) of them: "name[i][j]".
  void param(const char* name, const Param& p) { leaf(std::string(prefix) + name, p); }
  template <typename Array>
  void param(const char* name, const Array& a) {
    each(std::string(prefix) + name, a);
  }
  void leaf(const std::string& name, const Param& p) {
    v.param(name, p, offset_of(s, p), sizeof(Param), alignof(Param));
  }
  template <typename Array>
  void each(const std::string& name, const Array& a) {
    size_t i = 0;
    for (const auto& e : a) {
      const std::string n = name + "[" + std::to_string(i++) + "]";
      if constexpr (std::is_same_v<std::decay_t<decltype(e)>, Param>)
        leaf(n, e);
      else
        each(n, e);
    }
  }
  template <typename T>
  void setting(const char* name, const T& x) {
    double value;
    if constexpr (std::is_enum_v<T>)
      value = static_cast<double>(static_cast<std::underlying_type_t<T>>(x));
    else
      value = static_cast<double>(x);
    v.setting(std::string(prefix) + name, value, offset_of(s, x), sizeof(T), alignof(T));
  }
};

#define P(field) w.param(#field, w.s.field)
#define S(field) w.setting(#field, w.s.field)

template <typename V>
void walk(const RngParams& r, V& v) {
  FieldWalker<RngParams, V> w{r, v, "rng."};
  S(variant);
  S(dual_source);
  P(raw_rate_one_source);
  P(raw_rate_both_sources);
  P(raw_rate_scale);
  P(raw_one_bias);
  P(clocks_no_data);
  P(clocks_stored);
  P(rep_single_extra);
}

template <typename V>
void walk(const AceParams& a, V& v) {
  FieldWalker<AceParams, V> w{a, v, "ace."};
  P(ecb_sse_base);
  P(ecb_int_base);
  P(ecx0_clocks_min);
  P(ecx0_clocks_max);
  P(chain_startup);
  P(chain_per_block);
  P(chain_startup_unaligned);
  P(chain_per_block_unaligned);
  P(key_load_hw);
  P(key_load_mem);
  S(ctr_interrupt_granularity);
  S(ctr_interrupt_min_remaining);
  S(chain_interrupt_granularity);
  S(ecb_interrupt_granularity);
  S(prefetch_ecb);
  S(prefetch_cbc);
  S(prefetch_ctr);
}

template <typename V>
void walk(const PheParams& p, V& v) {
  FieldWalker<PheParams, V> w{p, v, "phe."};
  P(sha1_clocks_per_round);
  P(sha256_clocks_per_round);
  P(sha1_block_overhead);
  P(sha256_block_overhead);
  P(startup);
  P(padding);
  S(partial_rax_minus1);
}

template <typename V>
void walk(const PmmParams& p, V& v) {
  FieldWalker<PmmParams, V> w{p, v, "pmm."};
  P(k2);
  P(k1_min);
  P(k1_max);
  P(inner_loop_int_clocks);
  P(inner_loop_pmm_clocks);
  P(cache_line_bytes);
  P(carry_split_clocks);
  P(tail_int_clocks);
  P(backlog_max_clocks);
  P(fill_stall_clocks);
  S(needs_addr_prefix_in_64bit);
}

template <typename V>
void walk(const MemoryParams& m, V& v) {
  FieldWalker<MemoryParams, V> w{m, v, "memory."};
  P(l1d_bytes);
  P(l2_bytes);
  P(line_bytes);
  P(l2_hit_clocks);
  P(mem_bytes_per_clock);
  P(l1d_ways);
  P(l2_ways);
  P(store_buffer_bytes);
  P(store_drain_clocks);
  P(stream_overlap);
  S(l2_exclusive);
}

#undef P
#undef S

template <typename V>
void walk_all(const CpuModel& cpu, V& v) {
  v.param("default_mhz", cpu.default_mhz, 0, 0, 1);
  walk(cpu.rng, v);
  walk(cpu.ace, v);
  walk(cpu.phe, v);
  walk(cpu.pmm, v);
  walk(cpu.memory, v);
}

struct Lister {
  std::vector<NamedParam> params;
  std::vector<NamedSetting> settings;
  void param(std::string name, const Param& p, size_t, size_t, size_t) {
    params.push_back({std::move(name), &p});
  }
  void setting(std::string name, double value, size_t, size_t, size_t) {
    settings.push_back({std::move(name), value});
  }
};

// Records the bytes and alignment of each listed field of one Params struct. An unlisted
// byte range is accepted only where it is exactly the padding the next listed field's
// alignment (or the struct's, at the end) requires; anything else is a field missing
// from the lists above.
template <typename Struct>
struct Coverage {
  struct Field {
    size_t off, size, align;
  };
  std::vector<Field> fields;
  void param(const std::string&, const Param&, size_t off, size_t n, size_t a) {
    fields.push_back({off, n, a});
  }
  void setting(const std::string&, double, size_t off, size_t n, size_t a) {
    fields.push_back({off, n, a});
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
                      " are not listed in models/cpu_params.cpp");
      }
    };
    for (const Field& f : fields) {
      gap(f.off, f.align);
      end = std::max(end, f.off + f.size);
    }
    gap(sizeof(Struct), alignof(Struct));
  }
};

template <typename Struct>
void check(const char* name, const Struct& s, std::vector<std::string>& out) {
  Coverage<Struct> c;
  walk(s, c);
  c.gaps(name, out);
}

}  // namespace

std::vector<NamedParam> cpu_params(const CpuModel& cpu) {
  Lister l;
  walk_all(cpu, l);
  return std::move(l.params);
}

std::vector<NamedSetting> cpu_settings(const CpuModel& cpu) {
  Lister l;
  walk_all(cpu, l);
  return std::move(l.settings);
}

std::vector<std::string> cpu_param_coverage_gaps() {
  std::vector<std::string> out;
  const CpuModel& cpu = *all_cpu_models()[0];
  check("RngParams", cpu.rng, out);
  check("AceParams", cpu.ace, out);
  check("PheParams", cpu.phe, out);
  check("PmmParams", cpu.pmm, out);
  check("MemoryParams", cpu.memory, out);
  return out;
}

}  // namespace padlock
