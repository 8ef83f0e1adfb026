// A tiny ELF32 image built in memory for the symbol-reader tests: one executable PT_LOAD,
// a .text section, a .symtab, its .strtab and the section names, with the symbols the test
// asks for.
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace padlock::emu::profile::test {

struct TestSymbol {
  std::string name;
  uint32_t value, size;
  unsigned char type, bind;
  uint16_t shndx;  // 1 = .text, SHN_UNDEF, SHN_ABS
};

// .text at link address `text_addr` (file offset 0x1000), `text_size` bytes.
inline std::vector<uint8_t> make_elf32(uint32_t text_addr, uint32_t text_size,
                                       const std::vector<TestSymbol>& syms) {
  std::string strtab(1, '\0');
  std::vector<Elf32_Sym> table(1);  // index 0: the null symbol
  for (const TestSymbol& s : syms) {
    Elf32_Sym e{};
    e.st_name = static_cast<uint32_t>(strtab.size());
    strtab += s.name;
    strtab += '\0';
    e.st_value = s.value;
    e.st_size = s.size;
    e.st_info = ELF32_ST_INFO(s.bind, s.type);
    e.st_shndx = s.shndx;
    table.push_back(e);
  }
  const uint32_t text_off = 0x1000;
  const uint32_t symtab_off = text_off + text_size;
  const uint32_t strtab_off = symtab_off + static_cast<uint32_t>(table.size() * sizeof(Elf32_Sym));
  // Section names, as every linker writes them (libdwfl reads them).
  static const char kShstrtab[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
  const uint32_t shstrtab_off = strtab_off + static_cast<uint32_t>(strtab.size());
  const uint32_t shoff = (shstrtab_off + sizeof kShstrtab + 3) & ~3u;
  std::vector<uint8_t> img(shoff + 5 * sizeof(Elf32_Shdr));

  Elf32_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS32;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_EXEC;
  eh.e_machine = EM_386;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = sizeof(Elf32_Ehdr);
  eh.e_shoff = shoff;
  eh.e_ehsize = sizeof(Elf32_Ehdr);
  eh.e_phentsize = sizeof(Elf32_Phdr);
  eh.e_phnum = 1;
  eh.e_shentsize = sizeof(Elf32_Shdr);
  eh.e_shnum = 5;
  eh.e_shstrndx = 4;
  std::memcpy(img.data(), &eh, sizeof eh);

  Elf32_Phdr ph{};
  ph.p_type = PT_LOAD;
  ph.p_offset = text_off;
  ph.p_vaddr = ph.p_paddr = text_addr;
  ph.p_filesz = ph.p_memsz = text_size;
  ph.p_flags = PF_R | PF_X;
  ph.p_align = 0x1000;
  std::memcpy(img.data() + eh.e_phoff, &ph, sizeof ph);

  std::memcpy(img.data() + symtab_off, table.data(), table.size() * sizeof(Elf32_Sym));
  std::memcpy(img.data() + strtab_off, strtab.data(), strtab.size());
  std::memcpy(img.data() + shstrtab_off, kShstrtab, sizeof kShstrtab);

  Elf32_Shdr sh[5]{};
  sh[1].sh_name = 1;
  sh[1].sh_type = SHT_PROGBITS;
  sh[1].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
  sh[1].sh_addr = text_addr;
  sh[1].sh_offset = text_off;
  sh[1].sh_size = text_size;
  sh[2].sh_name = 7;
  sh[2].sh_type = SHT_SYMTAB;
  sh[2].sh_offset = symtab_off;
  sh[2].sh_size = static_cast<uint32_t>(table.size() * sizeof(Elf32_Sym));
  sh[2].sh_link = 3;
  sh[2].sh_entsize = sizeof(Elf32_Sym);
  sh[3].sh_name = 15;
  sh[3].sh_type = SHT_STRTAB;
  sh[3].sh_offset = strtab_off;
  sh[3].sh_size = static_cast<uint32_t>(strtab.size());
  sh[4].sh_name = 23;
  sh[4].sh_type = SHT_STRTAB;
  sh[4].sh_offset = shstrtab_off;
  sh[4].sh_size = sizeof kShstrtab;
  std::memcpy(img.data() + shoff, sh, sizeof sh);
  return img;
}

// main [0x1000, 0x1020) with a local alias; a gap; asm_fn at 0x1040 without a size (up to
// last_fn at 0x1080); last_fn without a size (up to the end of .text, 0x1100); an object
// and an undefined function that must be ignored.
inline std::vector<TestSymbol> standard_symbols() {
  return {
      {"main", 0x1000, 0x20, STT_FUNC, STB_GLOBAL, 1},
      {"__main_alias", 0x1000, 0x10, STT_FUNC, STB_LOCAL, 1},
      {"asm_fn", 0x1040, 0, STT_FUNC, STB_GLOBAL, 1},
      {"last_fn", 0x1080, 0, STT_FUNC, STB_WEAK, 1},
      {"a_table", 0x10a0, 8, STT_OBJECT, STB_GLOBAL, 1},
      {"imported", 0, 0, STT_FUNC, STB_GLOBAL, SHN_UNDEF},
  };
}

}  // namespace padlock::emu::profile::test
