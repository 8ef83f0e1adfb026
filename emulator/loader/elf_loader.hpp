// ELF executables for i386 and x86-64: validation with one-line errors, and loading of
// PT_LOAD segments into the guest address space at a chosen bias. The interpreter path
// (PT_INTERP) is recorded so dynamic loading can reuse load_elf() for ld.so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/loader/elf_view.hpp"
#include "emulator/memory/address_space.hpp"

namespace padlock::emu {

struct ElfFile {
  std::string path;
  std::vector<uint8_t> data;
  bool is64 = false;
  uint16_t type = 0;     // ET_EXEC or ET_DYN
  uint16_t machine = 0;  // EM_386 or EM_X86_64
  uint64_t entry = 0;
  uint64_t phoff = 0;
  uint16_t phnum = 0, phentsize = 0;
  std::string interp;                     // PT_INTERP, empty for static programs
  bool has_gnu_stack = false;             // PT_GNU_STACK present
  bool exec_stack = false;                // its PF_X
  uint64_t min_vaddr = 0, max_vaddr = 0;  // page-aligned span of PT_LOAD segments
  uint64_t max_align = 0;

  // Reads and validates `path`; throws LoadError.
  static ElfFile read(const std::string& path);
  // Validates an in-memory image (`path` names it in messages).
  static ElfFile parse(std::string path, std::vector<uint8_t> data);
};

struct LoadedImage {
  uint64_t bias = 0;
  uint64_t entry = 0;
  uint64_t phdr = 0;  // AT_PHDR: address of the program headers in guest memory
  uint16_t phnum = 0, phent = 0;
  uint64_t end = 0;  // end of the highest segment (page-aligned): the start of brk
};

// Maps every PT_LOAD segment of `elf` at `bias` (0 for ET_EXEC). Pages are made
// executable when the segment has PF_X, or PF_R with `read_implies_exec`. Throws
// LoadError, before anything is mapped, when a segment lies outside the window or (with
// `must_be_free`, for the interpreter) overlaps a page that is already mapped.
LoadedImage load_elf(const ElfFile& elf, AddressSpace& mem, uint64_t bias, bool read_implies_exec,
                     bool must_be_free = false);

const char* elf_machine_name(uint16_t machine);

// Linux's load_elf_phdrs (fs/binfmt_elf.c): execve fails with ENOEXEC unless e_phentsize
// is the size of an Elf32_Phdr / Elf64_Phdr and the table holds 1 to 65,536 bytes (the
// host's 6.18 kernel; older ones also capped it at ELF_MIN_ALIGN, a page). Null when the
// table is acceptable, otherwise why not.
const char* program_header_table_error(bool is64, uint16_t phentsize, uint16_t phnum);

}  // namespace padlock::emu
