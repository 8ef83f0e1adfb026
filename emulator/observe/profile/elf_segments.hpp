// The PT_LOAD segments of one ELF file (executable, interpreter or shared object), read
// from its ELF and program headers when the guest maps it, and which file that was. The
// function symbols come later, through libdwfl (debug_info.hpp); nothing here touches
// guest memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace padlock::emu::profile {

struct LoadSegment {
  uint64_t offset = 0, vaddr = 0, memsz = 0;  // PT_LOAD: file offset, link-time address
  bool exec = false;
};

struct ElfSegments {
  bool ok = false;  // the file was an ELF we could read
  bool is64 = false;
  std::vector<LoadSegment> segments;
};

// Which file a path named when it was read: a file replaced on disk (a new inode) or
// rewritten in place (size or modification time) compares unequal. All zero: unreadable.
struct FileIdentity {
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileIdentity& o) const {
    return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns;
  }
  bool operator!=(const FileIdentity& o) const { return !(*this == o); }
};
FileIdentity file_identity(const std::string& path);

// The PT_LOAD segments of `path`, from its ELF and program headers without reading the
// rest of the file, and the identity of the file read: what ObjectMap records when an
// object is mapped. ok = false when it is not a readable ELF file.
ElfSegments read_elf_segments(const std::string& path, FileIdentity* identity);

}  // namespace padlock::emu::profile
