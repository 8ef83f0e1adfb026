#include "emulator/observe/profile/function_symbols.hpp"

#include <elf.h>

#include <algorithm>

namespace padlock::emu::profile {

namespace {

int binding_rank(uint8_t bind) {
  return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}
size_t leading_underscores(const std::string& s) {
  size_t n = 0;
  while (n < s.size() && s[n] == '_') ++n;
  return n;
}

// Which of two names for one address to keep (see the header).
bool better(const SymbolCandidate& a, const SymbolCandidate& b) {
  const int ra = binding_rank(a.bind), rb = binding_rank(b.bind);
  if (ra != rb) return ra < rb;
  const size_t ua = leading_underscores(a.sym.name), ub = leading_underscores(b.sym.name);
  if (ua != ub) return ua < ub;
  if (a.sym.name.size() != b.sym.name.size()) return a.sym.name.size() < b.sym.name.size();
  return a.sym.name < b.sym.name;
}

}  // namespace

std::vector<FunctionSymbol> function_table(std::vector<SymbolCandidate> cands) {
  std::sort(cands.begin(), cands.end(), [](const SymbolCandidate& a, const SymbolCandidate& b) {
    if (a.sym.addr != b.sym.addr) return a.sym.addr < b.sym.addr;
    return better(a, b);
  });
  std::vector<FunctionSymbol> out;
  std::vector<uint64_t> ends;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (i > 0 && cands[i].sym.addr == cands[i - 1].sym.addr) {
      // An alias: keep the preferred name, and the largest size any alias gives.
      FunctionSymbol& kept = out.back();
      kept.size = std::max(kept.size, cands[i].sym.size);
      continue;
    }
    out.push_back(std::move(cands[i].sym));
    ends.push_back(cands[i].section_end);
  }
  // No size (assembly without .size): up to the next symbol, within its section.
  for (size_t i = 0; i < out.size(); ++i) {
    FunctionSymbol& f = out[i];
    if (f.size != 0) continue;
    uint64_t end = ends[i];
    if (i + 1 < out.size()) end = std::min(end, out[i + 1].addr);
    if (end != UINT64_MAX && end > f.addr) f.size = end - f.addr;
  }
  return out;
}

}  // namespace padlock::emu::profile
