// ElfView: the one reader of ELF headers, sections, symbols and relocations, and its
// one-line errors (the CLI's messages; emulator/loader/elf_view.hpp).
#include "emulator/loader/elf_view.hpp"

#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "observe/elf_image.hpp"

namespace padlock::emu {
namespace {

std::vector<uint8_t> image() {
  return profile::test::make_elf32(0x1000, 0x100, profile::test::standard_symbols());
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const LoadError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ElfView, ReadsHeaderSegmentsSectionsAndSymbols) {
  const std::vector<uint8_t> img = image();
  const ElfView v("prog", img);
  EXPECT_FALSE(v.is64);
  EXPECT_EQ(v.type, ET_EXEC);
  EXPECT_EQ(v.machine, EM_386);
  ASSERT_EQ(v.phnum, 1);
  const ElfSegment p = v.program_header(0);
  EXPECT_EQ(p.type, uint32_t{PT_LOAD});
  EXPECT_EQ(p.offset, 0x1000u);
  EXPECT_EQ(p.vaddr, 0x1000u);
  EXPECT_EQ(p.flags, uint32_t{PF_R | PF_X});
  const std::vector<ElfSection> sections = v.sections();
  ASSERT_EQ(sections.size(), 5u);
  EXPECT_EQ(sections[1].addr, 0x1000u);
  EXPECT_EQ(v.section_name(sections[1]), ".text");  // through e_shstrndx
  EXPECT_EQ(v.section_name(sections[4]), ".shstrtab");
  const ElfSection& symtab = sections[2];
  ASSERT_EQ(symtab.type, uint32_t{SHT_SYMTAB});
  ASSERT_EQ(v.symbol_count(symtab), 7u);  // the null symbol and six
  const ElfSymbol main = v.symbol(symtab, 1);
  EXPECT_EQ(main.name, "main");
  EXPECT_EQ(main.value, 0x1000u);
  EXPECT_EQ(main.size, 0x20u);
  EXPECT_EQ(main.type(), STT_FUNC);
  EXPECT_EQ(main.bind(), STB_GLOBAL);
  const ElfSymbol entry = v.symbol_entry(symtab, 6);  // "imported", name not read
  EXPECT_TRUE(entry.name.empty());
  EXPECT_EQ(v.string_at(symtab.link, entry.name_offset), "imported");
  EXPECT_EQ(entry.shndx, SHN_UNDEF);
}

TEST(ElfView, RelocationsToTheLastByteOfTheFile) {
  // A sixth section, SHT_REL with two entries, placed after the section table at the
  // very end of the file.
  std::vector<uint8_t> img = image();
  Elf32_Ehdr eh;
  std::memcpy(&eh, img.data(), sizeof eh);
  const Elf32_Rel rel[2] = {{0x1004, ELF32_R_INFO(1, R_386_32)},
                            {0x1010, ELF32_R_INFO(3, R_386_PC32)}};
  Elf32_Shdr sh{};
  sh.sh_type = SHT_REL;
  sh.sh_offset = static_cast<uint32_t>(img.size() + sizeof sh);
  sh.sh_size = sizeof rel;
  sh.sh_link = 2;
  sh.sh_info = 1;
  ++eh.e_shnum;
  std::memcpy(img.data(), &eh, sizeof eh);
  img.insert(img.end(), reinterpret_cast<const uint8_t*>(&sh),
             reinterpret_cast<const uint8_t*>(&sh) + sizeof sh);
  img.insert(img.end(), reinterpret_cast<const uint8_t*>(rel),
             reinterpret_cast<const uint8_t*>(rel) + sizeof rel);
  const ElfView v("obj", img);
  const std::vector<ElfRelocation> r = v.relocations(v.section(5));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].offset, 0x1004u);
  EXPECT_EQ(r[0].sym, 1u);
  EXPECT_EQ(r[0].type, uint32_t{R_386_32});
  EXPECT_EQ(r[1].sym, 3u);
  EXPECT_EQ(r[1].type, uint32_t{R_386_PC32});
  EXPECT_FALSE(r[1].rela);
  EXPECT_EQ(r[1].addend, 0);
  // One byte short: the last entry lies past the end.
  img.pop_back();
  const ElfView cut("obj", img);
  EXPECT_EQ(error_of([&] { cut.relocations(cut.section(5)); }),
            "obj: truncated ELF file (section past the end)");
}

TEST(ElfView, OneLineErrors) {
  const std::vector<uint8_t> img = image();
  auto view_of = [&](size_t len) { return [&img, len] { ElfView("f", img.data(), len); }; };
  EXPECT_EQ(error_of(view_of(3)), "f: not an ELF file");
  EXPECT_EQ(error_of(view_of(10)), "f: truncated ELF file (no ELF header)");
  EXPECT_EQ(error_of(view_of(30)), "f: truncated ELF file (ELF header cut short)");
  std::vector<uint8_t> odd = img;
  odd[EI_CLASS] = 3;
  EXPECT_EQ(error_of([&] { ElfView("f", odd); }), "f: unsupported ELF class 3");
  odd = img;
  odd[EI_DATA] = ELFDATA2MSB;
  EXPECT_EQ(error_of([&] { ElfView("f", odd); }), "f: not a little-endian ELF file");

  const ElfView header_only("f", img.data(), 0x1000);  // the section table is not there
  EXPECT_EQ(error_of([&] { header_only.sections(); }), "f: truncated ELF file");
  EXPECT_EQ(error_of([&] { header_only.bytes(0xFF0, 0x20, "PT_INTERP"); }),
            "f: truncated ELF file (PT_INTERP past the end)");
  const ElfView v("f", img);
  EXPECT_EQ(error_of([&] { v.string_at(9, 1); }), "f: bad string table index");
  EXPECT_EQ(error_of([&] { v.string_at(3, 1 << 20); }), "f: bad string offset");
}

TEST(ElfView, ReadFileBytes) {
  EXPECT_GT(read_file_bytes("/proc/self/exe").size(), 4u);
  EXPECT_EQ(error_of([] { read_file_bytes("/nonexistent/file"); }),
            "/nonexistent/file: No such file or directory");
  EXPECT_EQ(error_of([] { read_file_bytes("/"); }), "/: Is a directory");
  EXPECT_EQ(error_of([] { read_file_bytes("/dev/null"); }), "/dev/null: not a regular file");
}

}  // namespace
}  // namespace padlock::emu
