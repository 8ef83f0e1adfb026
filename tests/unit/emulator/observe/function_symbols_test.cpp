// Function symbols of ELF files, as libdwfl reads them (DebugInfo::functions): which names
// are kept, and how far a symbol reaches; and the segments read when a file is mapped.
#include "emulator/observe/profile/function_symbols.hpp"

#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <cstdio>

#include "emulator/observe/profile/debug_info.hpp"
#include "emulator/observe/profile/elf_segments.hpp"
#include "observe/elf_image.hpp"

namespace padlock::emu::profile {
namespace {

// A temporary file holding `img`, removed with the object.
struct TempElf {
  std::string path;
  explicit TempElf(const std::vector<uint8_t>& img, size_t size = SIZE_MAX) {
    char name[] = "/tmp/padlock-symbols-XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0) return;
    const size_t n = std::min(size, img.size());
    if (write(fd, img.data(), n) == static_cast<ssize_t>(n)) path = name;
    close(fd);
  }
  ~TempElf() { std::remove(path.c_str()); }
};

TEST(FunctionSymbols, KeepsFunctionsSortedWithOneNamePerAddress) {
  const TempElf f(test::make_elf32(0x1000, 0x100, test::standard_symbols()));
  ASSERT_FALSE(f.path.empty());
  const DebugInfo info(f.path, "");
  const std::vector<FunctionSymbol>& s = info.functions();
  ASSERT_EQ(s.size(), 3u);  // no object, no undefined symbol
  // The global name wins over the local alias; the larger size is kept.
  EXPECT_EQ(s[0].name, "main");
  EXPECT_EQ(s[0].addr, 0x1000u);
  EXPECT_EQ(s[0].size, 0x20u);
  // No size: up to the next symbol ...
  EXPECT_EQ(s[1].name, "asm_fn");
  EXPECT_EQ(s[1].size, 0x40u);
  // ... and the last one up to the end of its section.
  EXPECT_EQ(s[2].name, "last_fn");
  EXPECT_EQ(s[2].size, 0x80u);
  EXPECT_EQ(info.debug_file(), "");  // no DWARF, no debug file
}

TEST(FunctionSymbols, AliasRuleIsDeterministic) {
  // Same binding: fewer leading underscores, then shorter, then lexicographic.
  std::vector<test::TestSymbol> syms = {
      {"__memcpy_sse2", 0x1000, 0x10, STT_FUNC, STB_GLOBAL, 1},
      {"memcpy_b", 0x1000, 0x10, STT_FUNC, STB_GLOBAL, 1},
      {"memcpy_a", 0x1000, 0x10, STT_FUNC, STB_GLOBAL, 1},
  };
  const TempElf f(test::make_elf32(0x1000, 0x100, syms));
  const DebugInfo info(f.path, "");
  ASSERT_EQ(info.functions().size(), 1u);
  EXPECT_EQ(info.functions()[0].name, "memcpy_a");
}

TEST(FunctionSymbols, TableRanksBindingBeforeName) {
  // A weak name beats a local one even when the local one is shorter; a global beats both.
  std::vector<FunctionSymbol> t = function_table({
      {{0x2000, 0, "b_local"}, STB_LOCAL, 0x2100},
      {{0x2000, 0, "weak_name"}, STB_WEAK, 0x2100},
      {{0x3000, 4, "zz"}, STB_LOCAL, UINT64_MAX},
      {{0x3000, 8, "a_global"}, STB_GLOBAL, UINT64_MAX},
  });
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].name, "weak_name");
  EXPECT_EQ(t[0].size, 0x100u);  // to the end of its section, before the next symbol
  EXPECT_EQ(t[1].name, "a_global");
  EXPECT_EQ(t[1].size, 8u);
}

TEST(FunctionSymbols, NotAnElf) {
  const uint8_t junk[64] = {'#', '!', '/', 'b'};
  const TempElf j(std::vector<uint8_t>(junk, junk + sizeof junk));
  EXPECT_TRUE(DebugInfo(j.path, "").functions().empty());
  EXPECT_TRUE(DebugInfo("/nonexistent/file", "").functions().empty());
  FileIdentity id;
  EXPECT_FALSE(read_elf_segments(j.path, &id).ok);
  EXPECT_FALSE(read_elf_segments("/nonexistent/file", &id).ok);
  EXPECT_EQ(id, FileIdentity{});
  // Truncated: the header is there, the section table is not.
  const TempElf t(test::make_elf32(0x1000, 0x100, test::standard_symbols()), 0x1000);
  EXPECT_TRUE(DebugInfo(t.path, "").functions().empty());
}

TEST(ElfSegments, LoadSegmentsAndIdentity) {
  const TempElf f(test::make_elf32(0x1000, 0x100, test::standard_symbols()));
  FileIdentity id;
  const ElfSegments s = read_elf_segments(f.path, &id);
  ASSERT_TRUE(s.ok);
  EXPECT_FALSE(s.is64);
  ASSERT_EQ(s.segments.size(), 1u);
  EXPECT_TRUE(s.segments[0].exec);
  EXPECT_EQ(s.segments[0].offset, 0x1000u);
  EXPECT_EQ(s.segments[0].vaddr, 0x1000u);
  EXPECT_EQ(s.segments[0].memsz, 0x100u);
  EXPECT_EQ(id, file_identity(f.path));
  EXPECT_NE(id.ino, 0u);
}

[[gnu::noinline]] int a_function_of_this_test(int x) {
  return x * 3 + 1;
}
int (*volatile g_keep)(int) = a_function_of_this_test;  // keeps the symbol and its body

TEST(FunctionSymbols, ReadsThisTestBinary) {
  // The test executable (a PIE linked by the host toolchain) names its own functions at
  // link-time addresses, inside an executable PT_LOAD.
  const DebugInfo info("/proc/self/exe", "");
  const FunctionSymbol* mine = nullptr;
  for (const FunctionSymbol& f : info.functions()) {
    if (f.name.find("a_function_of_this_test") != std::string::npos) mine = &f;
  }
  ASSERT_NE(mine, nullptr);
  EXPECT_GT(mine->size, 0u);
  FileIdentity id;
  const ElfSegments s = read_elf_segments("/proc/self/exe", &id);
  bool inside = false;
  for (const LoadSegment& seg : s.segments) {
    inside |= seg.exec && mine->addr >= seg.vaddr && mine->addr < seg.vaddr + seg.memsz;
  }
  EXPECT_TRUE(inside);
  // The link-time address plus this program's load bias (the dynamic linker's, the first
  // object dl_iterate_phdr reports) is the function itself.
  uint64_t bias = 1;
  dl_iterate_phdr(
      [](dl_phdr_info* i, size_t, void* out) {
        *static_cast<uint64_t*>(out) = i->dlpi_addr;
        return 1;
      },
      &bias);
  EXPECT_EQ(mine->addr + bias, reinterpret_cast<uint64_t>(&a_function_of_this_test));
  EXPECT_EQ(g_keep(2), 7);
}

}  // namespace
}  // namespace padlock::emu::profile
