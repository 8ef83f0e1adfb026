#include "emulator/observe/trace/trace_filter.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace padlock::emu::trace {

namespace {

constexpr isa::Unit kUnits[] = {isa::Unit::Rng, isa::Unit::Ace,  isa::Unit::Phe,
                                isa::Unit::Pmm, isa::Unit::Phe2, isa::Unit::Ccs,
                                isa::Unit::Sm2, isa::Unit::Rsa,  isa::Unit::Rng2};

// Lower case, without spaces, dashes, underscores and a leading "rep".
std::string normalized(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == ' ' || c == '-' || c == '_') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (out.rfind("rep", 0) == 0) out.erase(0, 3);
  return out;
}

uint64_t to_cycles(double v, bool seconds, double mhz) {
  const double c = seconds ? v * mhz * 1e6 : v;
  if (!(c < 1.8e19)) return UINT64_MAX;
  // A time given in decimal (1000.625us) rarely converts to its cycle exactly: a result
  // within rounding error of a whole cycle is that cycle, not the next one.
  const double whole = std::round(c);
  if (std::fabs(c - whole) <= std::max(1e-6, whole * 1e-14)) return static_cast<uint64_t>(whole);
  return static_cast<uint64_t>(std::ceil(c));
}

}  // namespace

TraceFilter::TraceFilter(const RunOptions::TraceSelection& sel, double mhz)
    : insn_mask_(sel.insn_mask),
      syscalls_(sel.syscalls),
      ranges_(sel.ranges),
      functions_(sel.functions),
      from_(to_cycles(sel.from, sel.from_seconds, mhz)),
      to_(sel.to < 0 ? UINT64_MAX : to_cycles(sel.to, sel.to_seconds, mhz)) {}

bool TraceFilter::padlock(isa::InsnId id, uint64_t pc, const std::string& fn,
                          uint64_t cycle) const {
  if ((insn_mask_ >> static_cast<unsigned>(id) & 1) == 0 || !in_window(cycle)) return false;
  if (ranges_.empty() && functions_.empty()) return true;
  for (const auto& [lo, hi] : ranges_) {
    if (pc >= lo && pc < hi) return true;
  }
  return std::find(functions_.begin(), functions_.end(), fn) != functions_.end();
}

bool parse_trace_kinds(const std::string& list, uint32_t& mask, bool& syscalls,
                       std::string& error) {
  mask = 0;
  syscalls = false;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string word = list.substr(start, comma - start);
    start = comma + 1;
    const std::string key = normalized(word);
    bool known = false;
    if (key == "syscall" || key == "syscalls") {
      syscalls = known = true;
    }
    for (isa::Unit u : kUnits) {
      if (key != normalized(isa::unit_name(u))) continue;
      known = true;
      for (size_t i = 0; i < isa::kInsnCount; ++i) {
        if (isa::kInstructions[i].unit == u) mask |= 1u << i;
      }
    }
    for (size_t i = 0; i < isa::kInsnCount; ++i) {
      if (key == normalized(isa::kInstructions[i].guide_name)) {
        mask |= 1u << i;
        known = true;
      }
    }
    if (!known) {
      error = "--trace-insn: unknown kind '" + word + "'; known: rng, ace, phe, pmm, syscall";
      for (size_t i = 0; i < isa::kInsnCount; ++i) {
        const std::string m = isa::kInstructions[i].mnemonic;
        if (i == 0 || m != isa::kInstructions[i - 1].mnemonic) error += ", " + m;
      }
      return false;
    }
  }
  return true;
}

}  // namespace padlock::emu::trace
