// Function symbols of one ELF file (executable, interpreter or shared object), read from
// its section headers: .symtab when present, else .dynsym. The profiler and the trace
// name guest code with them; nothing here touches guest memory.
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

struct LoadSegment {
  uint64_t offset = 0, vaddr = 0, memsz = 0;  // PT_LOAD: file offset, link-time address
  bool exec = false;
};

struct ElfSymbols {
  bool ok = false;  // the file was an ELF we could read
  bool is64 = false;
  bool full_symtab = false;  // from .symtab; false: only .dynsym (a stripped file) or none
  std::vector<FunctionSymbol> functions;  // sorted by address; one name per address
  std::vector<LoadSegment> segments;
};

// Reads `path`; ok = false (and no symbols) when it is not a readable ELF file. Aliases
// (several names at one address) keep one name, chosen deterministically: a global name
// before a weak one before a local one, then the one with fewer leading underscores, then
// the shorter, then the lexicographically smaller.
ElfSymbols read_elf_symbols(const std::string& path);

// The same from bytes in memory (tests).
ElfSymbols parse_elf_symbols(const uint8_t* data, size_t size);

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

// Only the PT_LOAD segments of `path` (ok, is64 and segments; no functions), from its ELF
// and program headers without reading the rest of the file, and the identity of the file
// read: what ObjectMap records when an object is mapped.
ElfSymbols read_elf_segments(const std::string& path, FileIdentity* identity);

}  // namespace padlock::emu::profile
