// The checker's SourceLookup over the guest's loaded objects (profile::ObjectMap): the
// function from the ELF symbols, the file and line from the object's DWARF (its own or a
// separate debug file) in process through libdw (profile::DebugInfo), or through binutils'
// addr2line when the map found no debug information (none if it is not installed).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "emulator/observe/check/checker.hpp"
#include "emulator/observe/profile/object_map.hpp"

namespace padlock::emu::check {

// Fills file and line of each frame from the object at `path` (ELF with DWARF lines) for
// the link-time address paired with it; `section` non-empty: addresses are offsets in that
// section (relocatable objects). One addr2line run; frames it cannot place stay as they are.
void addr2line(const std::string& path, const std::string& section,
               const std::vector<std::pair<Frame*, uint64_t>>& at);

class ObjectSourceLookup final : public SourceLookup {
 public:
  explicit ObjectSourceLookup(const profile::ObjectMap& objects) : objects_(objects) {}
  void locate(Frame* const* frames, size_t n) override;
  bool is_code(uint64_t pc) override;
  uint64_t function_entry(uint64_t pc) override;
  uint32_t object_at(uint64_t pc) override { return objects_.object_at(pc); }

 private:
  const profile::ObjectMap& objects_;
};

}  // namespace padlock::emu::check
