// Function symbols from ELF files: which names are kept, and how far a symbol reaches.
#include "emulator/observe/profile/elf_symbols.hpp"

#include <gtest/gtest.h>

#include "observe/elf_image.hpp"

namespace padlock::emu::profile {
namespace {

TEST(ElfSymbols, KeepsFunctionsSortedWithOneNamePerAddress) {
  const std::vector<uint8_t> img = test::make_elf32(0x1000, 0x100, test::standard_symbols());
  const ElfSymbols s = parse_elf_symbols(img.data(), img.size());
  ASSERT_TRUE(s.ok);
  EXPECT_FALSE(s.is64);
  ASSERT_EQ(s.functions.size(), 3u);
  // The global name wins over the local alias; the larger size is kept.
  EXPECT_EQ(s.functions[0].name, "main");
  EXPECT_EQ(s.functions[0].addr, 0x1000u);
  EXPECT_EQ(s.functions[0].size, 0x20u);
  // No size: up to the next symbol ...
  EXPECT_EQ(s.functions[1].name, "asm_fn");
  EXPECT_EQ(s.functions[1].size, 0x40u);
  // ... and the last one up to the end of its section.
  EXPECT_EQ(s.functions[2].name, "last_fn");
  EXPECT_EQ(s.functions[2].size, 0x80u);
  ASSERT_EQ(s.segments.size(), 1u);
  EXPECT_TRUE(s.segments[0].exec);
  EXPECT_EQ(s.segments[0].offset, 0x1000u);
  EXPECT_EQ(s.segments[0].vaddr, 0x1000u);
}

TEST(ElfSymbols, AliasRuleIsDeterministic) {
  // Same binding: fewer leading underscores, then shorter, then lexicographic.
  std::vector<test::TestSymbol> syms = {
      {"__memcpy_sse2", 0x1000, 0x10, STT_FUNC, STB_GLOBAL, 1},
      {"memcpy_b", 0x1000, 0x10, STT_FUNC, STB_GLOBAL, 1},
      {"memcpy_a", 0x1000, 0x10, STT_FUNC, STB_GLOBAL, 1},
  };
  const std::vector<uint8_t> img = test::make_elf32(0x1000, 0x100, syms);
  const ElfSymbols s = parse_elf_symbols(img.data(), img.size());
  ASSERT_EQ(s.functions.size(), 1u);
  EXPECT_EQ(s.functions[0].name, "memcpy_a");
}

TEST(ElfSymbols, NotAnElf) {
  const uint8_t junk[64] = {'#', '!', '/', 'b'};
  EXPECT_FALSE(parse_elf_symbols(junk, sizeof junk).ok);
  EXPECT_FALSE(read_elf_symbols("/nonexistent/file").ok);
  // Truncated: the header is there, the section table is not.
  const std::vector<uint8_t> img = test::make_elf32(0x1000, 0x100, test::standard_symbols());
  const ElfSymbols s = parse_elf_symbols(img.data(), 0x1000);
  EXPECT_TRUE(s.functions.empty());
}

[[gnu::noinline]] int a_function_of_this_test(int x) {
  return x * 3 + 1;
}
int (*volatile g_keep)(int) = a_function_of_this_test;  // keeps the symbol and its body

TEST(ElfSymbols, ReadsThisTestBinary) {
  // The test executable (linked by the host toolchain) names its own functions.
  const ElfSymbols s = read_elf_symbols("/proc/self/exe");
  ASSERT_TRUE(s.ok);
  const FunctionSymbol* mine = nullptr;
  for (const FunctionSymbol& f : s.functions) {
    if (f.name.find("a_function_of_this_test") != std::string::npos) mine = &f;
  }
  ASSERT_NE(mine, nullptr);
  EXPECT_GT(mine->size, 0u);
  // Every function lies in an executable PT_LOAD.
  bool inside = false;
  for (const LoadSegment& seg : s.segments) {
    inside |= seg.exec && mine->addr >= seg.vaddr && mine->addr < seg.vaddr + seg.memsz;
  }
  EXPECT_TRUE(inside);
  EXPECT_EQ(g_keep(2), 7);
}

}  // namespace
}  // namespace padlock::emu::profile
