// The function table the profiler and the trace name guest code with, made from the
// symbols libdwfl reads (debug_info.hpp): which name an address keeps, and how far a
// symbol without a size reaches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace padlock::emu::profile {

struct FunctionSymbol {
  uint64_t addr = 0;  // link-time address (add the load bias for the guest address)
  uint64_t size = 0;  // 0: extends to the next symbol (hand-written assembly often has none)
  std::string name;
};

// One STT_FUNC or STT_GNU_IFUNC symbol defined in a section.
struct SymbolCandidate {
  FunctionSymbol sym;
  uint8_t bind = 0;      // STB_GLOBAL, STB_WEAK, STB_LOCAL
  uint64_t section_end;  // a symbol without a size ends with its section at the latest
};

// Sorted by address, one name per address. Aliases (several names at one address) keep
// one name, chosen deterministically: a global name before a weak one before a local one,
// then the one with fewer leading underscores, then the shorter, then the
// lexicographically smaller; the largest size any alias gives. A symbol without a size
// reaches the next symbol, within its section.
std::vector<FunctionSymbol> function_table(std::vector<SymbolCandidate> candidates);

}  // namespace padlock::emu::profile
