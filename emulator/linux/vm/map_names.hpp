// The names /proc/self/maps gives the guest's mappings (guest_proc.cpp writes the file).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace padlock::emu {

// What /proc/self/maps names each mapping: the file and its offset, or nothing
// (anonymous). [heap] and [stack] come from the memory layout when the file is made.
class MapNames {
 public:
  struct Name {
    std::string path;  // as the guest sees it (guest_paths.hpp)
    uint64_t offset = 0;
    uint64_t dev = 0, inode = 0;
  };
  // [va, va+len) now maps `n` (at n.offset for va); what it mapped before is forgotten.
  void set(uint64_t va, uint64_t len, const Name& n);
  void clear(uint64_t va, uint64_t len);
  // mremap: the names of [from, from+len) move to `to`.
  void move(uint64_t from, uint64_t len, uint64_t to);
  // The name of the page at `va` with the file offset of that page (nullptr: anonymous),
  // and where that answer stops holding (`*until`).
  const Name* at(uint64_t va, uint64_t* offset, uint64_t* until) const;

 private:
  struct Range {
    uint64_t end;
    Name name;
  };
  std::map<uint64_t, Range> ranges_;  // by start, not overlapping
};

}  // namespace padlock::emu
