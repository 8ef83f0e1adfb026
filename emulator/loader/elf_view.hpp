// A read-only, bounds-checked view of one ELF file's bytes (i386 or x86-64, little-endian):
// the ELF header, program headers, section headers, symbol tables, string tables and
// relocations in a form that does not depend on the ELF class. The program loader
// (elf_loader.hpp), the harness's object loader (emulator/harness/object_loader.hpp) and
// the profiler's segment reader (emulator/observe/profile/elf_segments.hpp) read ELF files
// only through it. Every read past the end throws LoadError("<path>: <reason>").
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace padlock::emu {

// A one-line, user-facing reason why a program cannot be run.
class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The whole regular file at `path`. Throws LoadError: "<path>: <strerror>", or
// "<path>: not a regular file".
std::vector<uint8_t> read_file_bytes(const std::string& path);

// One program header (Elf32_Phdr / Elf64_Phdr).
struct ElfSegment {
  uint32_t type = 0, flags = 0;
  uint64_t offset = 0, vaddr = 0, filesz = 0, memsz = 0, align = 0;
};

// One section header (Elf32_Shdr / Elf64_Shdr).
struct ElfSection {
  uint32_t name = 0, type = 0;
  uint64_t flags = 0, addr = 0, offset = 0, size = 0;
  uint32_t link = 0, info = 0;
  uint64_t addralign = 0, entsize = 0;
};

// One symbol table entry (Elf32_Sym / Elf64_Sym); `name` is filled by ElfView::symbol().
struct ElfSymbol {
  std::string name;
  uint32_t name_offset = 0;  // st_name, in the table's string section (sh_link)
  uint64_t value = 0, size = 0;
  uint8_t info = 0;
  uint16_t shndx = 0;
  uint8_t type() const { return info & 0xF; }
  uint8_t bind() const { return info >> 4; }
};

// One SHT_REL or SHT_RELA entry.
struct ElfRelocation {
  uint64_t offset = 0;
  uint32_t sym = 0, type = 0;
  int64_t addend = 0;  // 0 for SHT_REL: the addend is in the relocated word
  bool rela = false;
};

class ElfView {
 public:
  // Checks the identification (magic, class, byte order) and reads the ELF header. The
  // bytes are not copied: they must outlive the view. `path` names the file in errors.
  ElfView(std::string path, const uint8_t* data, size_t size);
  ElfView(std::string path, const std::vector<uint8_t>& data)
      : ElfView(std::move(path), data.data(), data.size()) {}

  [[noreturn]] void fail(const std::string& why) const;

  // [off, off + len) lies inside the file.
  bool contains(uint64_t off, uint64_t len) const { return off <= size_ && len <= size_ - off; }
  // The bytes at [off, off + len); else "truncated ELF file (<what> past the end)".
  const uint8_t* bytes(uint64_t off, uint64_t len, const char* what) const;

  // Program header i < phnum, at phoff + i * phentsize.
  ElfSegment program_header(size_t i) const;
  // Section header i < shnum, and all of them (none when the file has no section table).
  ElfSection section(size_t i) const;
  std::vector<ElfSection> sections() const;
  // The NUL-terminated string at `off` in section `strtab`.
  std::string string_at(uint32_t strtab, uint64_t off) const;
  // The section's name from the section-name table (e_shstrndx; "" without one).
  std::string section_name(const ElfSection& s) const;

  // Entries of a SHT_SYMTAB / SHT_DYNSYM section, entry i without and with its name.
  size_t symbol_count(const ElfSection& symtab) const;
  ElfSymbol symbol_entry(const ElfSection& symtab, size_t i) const;
  ElfSymbol symbol(const ElfSection& symtab, size_t i) const;

  // Every entry of a SHT_REL / SHT_RELA section.
  std::vector<ElfRelocation> relocations(const ElfSection& s) const;

  // The ELF header.
  bool is64 = false;
  uint16_t type = 0, machine = 0;
  uint64_t entry = 0, phoff = 0, shoff = 0;
  uint16_t phnum = 0, phentsize = 0, shnum = 0, shentsize = 0, shstrndx = 0;

 private:
  template <typename T>
  T get(uint64_t off, const char* what) const;

  std::string path_;
  const uint8_t* data_;
  size_t size_;
};

}  // namespace padlock::emu
