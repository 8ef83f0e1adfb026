// The checker's SourceLookup over the guest's loaded objects (profile::ObjectMap): the
// function from the ELF symbols, the file and line from the object's DWARF line table
// through binutils' addr2line when it is installed (none otherwise). Kept behind
// check::SourceLookup so a libdw-based lookup can replace it.
#pragma once

#include "emulator/observe/check/checker.hpp"
#include "emulator/observe/profile/object_map.hpp"

namespace padlock::emu::check {

class ObjectSourceLookup final : public SourceLookup {
 public:
  explicit ObjectSourceLookup(const profile::ObjectMap& objects) : objects_(objects) {}
  void locate(Frame* const* frames, size_t n) override;
  bool is_code(uint64_t pc) override;
  uint64_t function_entry(uint64_t pc) override;

 private:
  const profile::ObjectMap& objects_;
};

}  // namespace padlock::emu::check
