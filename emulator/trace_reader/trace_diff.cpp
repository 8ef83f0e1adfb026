#include "emulator/trace_reader/trace_diff.hpp"

#include <algorithm>

namespace padlock::emu::trace {

namespace {

constexpr const char* kAbsent = "(absent)";

bool ignored(const std::string& path, const std::vector<std::string>& ignore) {
  return std::any_of(ignore.begin(), ignore.end(), [&](const std::string& p) {
    return path == p ||
           (path.size() > p.size() && path.compare(0, p.size(), p) == 0 && path[p.size()] == '.');
  });
}

// A value as diff prints it: compact JSON; bytes that are not UTF-8 as U+FFFD.
std::string text(const Record& v) {
  return v.dump(-1, ' ', false, Record::error_handler_t::replace);
}

void compare(const std::string& path, const Record* a, const Record* b,
             const std::vector<std::string>& ignore, std::vector<FieldDiff>& out) {
  if (!path.empty() && ignored(path, ignore)) return;
  if (a != nullptr && b != nullptr && a->is_object() && b->is_object()) {
    auto child = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };
    for (const auto& [key, va] : a->items()) compare(child(key), &va, member(*b, key), ignore, out);
    for (const auto& [key, vb] : b->items()) {
      if (member(*a, key) == nullptr) compare(child(key), nullptr, &vb, ignore, out);
    }
    return;
  }
  if (a != nullptr && b != nullptr && *a == *b) return;
  out.push_back({path, a != nullptr ? text(*a) : kAbsent, b != nullptr ? text(*b) : kAbsent});
}

std::vector<std::string> with(std::vector<std::string> v, std::initializer_list<const char*> more) {
  for (const char* m : more) v.emplace_back(m);
  return v;
}

void print_fields(FILE* out, const char* indent, const std::vector<FieldDiff>& f) {
  for (const FieldDiff& d : f) {
    std::fprintf(out, "%s%s: %s | %s\n", indent, d.path.c_str(), d.a.c_str(), d.b.c_str());
  }
}

std::string where(const Record& insn) {
  std::string s = str(insn, "insn") + " at " + str(insn, "pc");
  const std::string fn = str(insn, "fn");
  if (!fn.empty()) s += " in " + fn;
  s += ", cycle " + std::to_string(u64(insn, "cycle"));
  return s;
}

}  // namespace

TraceDiff diff_traces(const TraceFile& a, const TraceFile& b,
                      const std::vector<std::string>& ignore) {
  TraceDiff d;
  compare("", &a.run, &b.run, with(ignore, {"type"}), d.run);
  d.count_a = a.insns.size();
  d.count_b = b.insns.size();
  const std::vector<std::string> insn_ignore = with(ignore, {"type", "seq", "cpu"});
  const size_t common = std::min(d.count_a, d.count_b);
  for (size_t i = 0; i < common; ++i) {
    std::vector<FieldDiff> f;
    compare("", &a.insns[i], &b.insns[i], insn_ignore, f);
    if (f.empty()) continue;
    ++d.differing;
    if (!d.insn_differs) {
      d.insn_differs = true;
      d.index = i;
      d.fields = std::move(f);
    }
  }
  const Record* ea = a.end.is_null() ? nullptr : &a.end;
  const Record* eb = b.end.is_null() ? nullptr : &b.end;
  if (ea != nullptr || eb != nullptr) compare("", ea, eb, with(ignore, {"type"}), d.end);
  for (FieldDiff& f : d.end) {
    if (f.path.empty()) f.path = "(record)";
  }
  return d;
}

void print_diff(FILE* out, const TraceFile& a, const TraceFile& b, const TraceDiff& d) {
  std::fprintf(out, "A: %s\nB: %s\n", a.path.c_str(), b.path.c_str());
  if (d.same()) {
    std::fprintf(out, "same: %zu PadLock instructions, identical results and cycles\n", d.count_a);
    return;
  }
  if (!d.run.empty()) {
    std::fprintf(out, "the runs differ:\n");
    print_fields(out, "  run.", d.run);
  }
  if (d.insn_differs) {
    const Record& ia = a.insns[d.index];
    std::fprintf(out, "first divergence: instruction #%zu, %s\n", d.index, where(ia).c_str());
    const Record& ib = b.insns[d.index];
    if (where(ib) != where(ia)) std::fprintf(out, "  (in B: %s)\n", where(ib).c_str());
    print_fields(out, "  ", d.fields);
    std::fprintf(out, "instructions differing: %zu of %zu compared\n", d.differing,
                 std::min(d.count_a, d.count_b));
  } else if (d.count_a != d.count_b) {
    const size_t common = std::min(d.count_a, d.count_b);
    std::fprintf(out, "the first %zu instructions agree; then ", common);
    const TraceFile& longer = d.count_a > d.count_b ? a : b;
    std::fprintf(out, "only %s has instruction #%zu, %s\n", d.count_a > d.count_b ? "A" : "B",
                 common, where(longer.insns[common]).c_str());
  }
  if (d.count_a != d.count_b) {
    std::fprintf(out, "instruction count: %zu | %zu\n", d.count_a, d.count_b);
  }
  if (!d.end.empty()) {
    std::fprintf(out, "at exit:\n");
    print_fields(out, "  end.", d.end);
  }
}

}  // namespace padlock::emu::trace
