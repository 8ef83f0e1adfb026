// The checker's SourceLookup for the harness (docs/checker.md): functions from the symbols
// of the objects an ObjectLoader placed, file and line from their DWARF line tables through
// binutils' addr2line (check/source_lookup.hpp does the same for a Process). A relocatable
// object is looked up by section and offset, as it was compiled.
#pragma once

#include "emulator/harness/object_loader.hpp"
#include "emulator/observe/check/checker.hpp"

namespace padlock::emu {

class LoaderSourceLookup final : public check::SourceLookup {
 public:
  explicit LoaderSourceLookup(const ObjectLoader& loader) : loader_(loader) {}
  void locate(check::Frame* const* frames, size_t n) override;
  bool is_code(uint64_t pc) override { return function_entry(pc) != 0; }
  uint64_t function_entry(uint64_t pc) override;

 private:
  // The function symbol holding pc and its object, or null.
  const MachineSymbol* function_at(uint64_t pc, const LoadedObject** obj) const;
  const ObjectLoader& loader_;
};

}  // namespace padlock::emu
