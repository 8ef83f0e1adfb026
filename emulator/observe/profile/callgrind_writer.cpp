// Profiler::write: the callgrind format ("Callgrind Format Specification", valgrind
// docs/cl-format), version 1, positions "instr": every cost line starts with a guest
// address; "instr line" when some object has debug information (DebugInfo): then the
// source line follows (0 where unknown). Functions are grouped by object (ob=); without
// line information the source file is "???", as callgrind itself writes for code without
// debug info.
#include <algorithm>
#include <cinttypes>
#include <map>

#include "emulator/observe/profile/profiler.hpp"

namespace padlock::emu::profile {

namespace {

// `line` < 0: positions "instr" only.
void put_costs(FILE* out, uint64_t pos, int line, const Costs& c) {
  size_t n = kEventCount;
  // Trailing zeros may be left out; not with lines, where callgrind_annotate's source
  // annotation (--inclusive=yes) sums the events of each line and needs them all.
  while (line < 0 && n > 1 && c[n - 1] == 0) --n;
  std::fprintf(out, "0x%" PRIx64, pos);
  if (line >= 0) std::fprintf(out, " %d", line);
  for (size_t k = 0; k < n; ++k) std::fprintf(out, " %" PRIu64, c[k]);
  std::fputc('\n', out);
}

bool any(const Costs& c) {
  return std::any_of(c.begin(), c.end(), [](uint64_t v) { return v != 0; });
}

}  // namespace

void Profiler::write(FILE* out, const std::string& cmd, const std::string& creator) const {
  // Self costs per function and position (blocks and PadLock instructions), and the call
  // edges leaving each function; std::map keeps the file's order deterministic, the order
  // of objects and addresses (ObjectMap::order), not that of the lookups.
  const auto by_order = [this](uint32_t a, uint32_t b) {
    return objects_.order(a) < objects_.order(b);
  };
  std::map<uint32_t, std::map<uint64_t, Costs>, decltype(by_order)> self(by_order);
  auto add = [&](uint32_t fn, uint64_t pos, const Costs& c) {
    if (!any(c)) return;
    Costs& dst = self[fn][pos];
    for (size_t k = 0; k < kEventCount; ++k) dst[k] += c[k];
  };
  for (const BlockCost& b : blocks_) add(b.fn, b.addr, b.costs);
  for (const auto& [pc, p] : padlock_) add(p.fn, pc, p.costs);
  std::map<uint32_t, std::vector<const Edge*>> calls;
  for (const Edge& e : edges_) {
    if (e.calls == 0) continue;
    calls[e.caller_fn].push_back(&e);
    self[e.caller_fn];  // a caller with no self cost still needs its fn= block
  }
  for (auto& [fn, list] : calls) {
    std::sort(list.begin(), list.end(), [](const Edge* a, const Edge* b) {
      return a->call_site != b->call_site ? a->call_site < b->call_site
                                          : a->callee_entry < b->callee_entry;
    });
  }

  Costs total = totals();
  std::fprintf(out, "# callgrind format\nversion: 1\ncreator: %s\n", creator.c_str());
  const bool lines = objects_.any_debug_info();
  auto line_of = [&](uint64_t addr) { return lines ? objects_.locate(addr).line : -1; };
  std::fprintf(out, "cmd: %s\npart: 1\npositions: instr%s\n", cmd.c_str(), lines ? " line" : "");
  for (const EventInfo& e : kEvents) std::fprintf(out, "event: %s : %s\n", e.name, e.description);
  std::fputs("events:", out);
  for (const EventInfo& e : kEvents) std::fprintf(out, " %s", e.name);
  std::fputc('\n', out);
  std::fputs("summary:", out);
  for (uint64_t v : total) std::fprintf(out, " %" PRIu64, v);
  std::fputs("\n\n", out);

  auto object_of = [&](uint32_t fn) -> std::string {
    const uint32_t o = objects_.function(fn).object;
    return o == ObjectMap::kNoObject ? std::string("(anonymous)") : objects_.objects()[o].path;
  };
  std::string current_ob;
  for (const auto& [fn, positions] : self) {
    const std::string ob = object_of(fn);
    if (ob != current_ob) {
      std::fprintf(out, "ob=%s\n", ob.c_str());
      current_ob = ob;
    }
    // fl=: the source file of the function's entry, from debug information ("???" without).
    const std::string file = objects_.source_file(fn);
    std::fprintf(out, "fl=%s\nfn=%s\n", file.empty() ? "???" : file.c_str(),
                 objects_.function(fn).name.c_str());
    // fi=: a position whose line lies in another file (inlined code from a header).
    std::string at_file = file;
    for (const auto& [pos, c] : positions) {
      if (!lines) {
        put_costs(out, pos, -1, c);
        continue;
      }
      const SourceLocation loc = objects_.locate(pos);
      if (!loc.file.empty() && loc.file != at_file) {
        std::fprintf(out, "fi=%s\n", loc.file.c_str());
        at_file = loc.file;
      }
      put_costs(out, pos, loc.line, c);
    }
    auto it = calls.find(fn);
    if (it == calls.end()) {
      std::fputc('\n', out);
      continue;
    }
    for (const Edge* e : it->second) {
      const std::string cob = object_of(e->callee_fn);
      if (cob != ob) std::fprintf(out, "cob=%s\n", cob.c_str());
      // cfi=: the callee's file, else readers take the caller's (fl=) for it.
      const std::string cfile = objects_.source_file(e->callee_fn);
      std::fprintf(out, "cfi=%s\n", cfile.empty() ? "???" : cfile.c_str());
      std::fprintf(out, "cfn=%s\ncalls=%" PRIu64 " 0x%" PRIx64,
                   objects_.function(e->callee_fn).name.c_str(), e->calls, e->callee_entry);
      if (lines) std::fprintf(out, " %d", line_of(e->callee_entry));
      std::fputc('\n', out);
      if (lines) {
        const SourceLocation site = objects_.locate(e->call_site);
        if (!site.file.empty() && site.file != at_file) {
          std::fprintf(out, "fi=%s\n", site.file.c_str());
          at_file = site.file;
        }
      }
      put_costs(out, e->call_site, line_of(e->call_site), e->inclusive);
    }
    std::fputc('\n', out);
  }
  std::fputs("totals:", out);
  for (uint64_t v : total) std::fprintf(out, " %" PRIu64, v);
  std::fputc('\n', out);
}

}  // namespace padlock::emu::profile
