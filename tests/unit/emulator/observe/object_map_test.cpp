// ObjectMap: the function of a guest address across loaded objects.
#include "emulator/observe/profile/object_map.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "observe/elf_image.hpp"

namespace padlock::emu::profile {
namespace {

// standard_symbols() as the symbol reader keeps them (function_symbols_test.cpp).
std::vector<FunctionSymbol> standard() {
  return {{0x1000, 0x20, "main"}, {0x1040, 0x40, "asm_fn"}, {0x1080, 0x80, "last_fn"}};
}
const std::vector<LoadSegment> kText = {{0x1000, 0x1000, 0x100, true}};

TEST(ObjectMap, FunctionsUnknownGroupsAndAnonymous) {
  ObjectMap m;
  const uint32_t obj = m.add(kText, standard(), "/opt/bin/prog", 0x40000);
  EXPECT_EQ(m.function(m.function_at(0x41000)).name, "main");
  EXPECT_EQ(m.function(m.function_at(0x4101f)).name, "main");
  EXPECT_EQ(m.function(m.function_at(0x41020)).name, "??? (prog)");  // the gap after main
  EXPECT_EQ(m.function(m.function_at(0x4107f)).name, "asm_fn");
  EXPECT_EQ(m.function(m.function_at(0x410ff)).name, "last_fn");
  EXPECT_EQ(m.function(m.function_at(0x41000)).entry, 0x41000u);
  EXPECT_EQ(m.function(m.function_at(0x41000)).object, obj);
  EXPECT_EQ(m.function_at(0x90000), ObjectMap::kAnonymousFn);
  EXPECT_EQ(m.function(ObjectMap::kAnonymousFn).name, "??? (anonymous)");
}

std::string write_temp(const std::vector<uint8_t>& img) {
  char path[] = "/tmp/padlock-objmap-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "";
  const bool ok = write(fd, img.data(), img.size()) == static_cast<ssize_t>(img.size());
  close(fd);
  return ok ? path : "";
}

// A file holding standard_symbols() with .text at file offset 0x1000, link address 0x1000.
std::string standard_file() {
  return write_temp(test::make_elf32(0x1000, 0x100, test::standard_symbols()));
}

TEST(ObjectMap, SameFileAtSameBiasIsOneObject) {
  const std::string path = standard_file();
  ASSERT_FALSE(path.empty());
  ObjectMap m;
  const uint32_t a = m.add(path, path, 0x40000);
  EXPECT_EQ(m.add(path, path, 0x40000), a);
  EXPECT_NE(m.add(path, path, 0x80000), a);  // mapped twice: two objects
  EXPECT_EQ(m.objects().size(), 2u);
  EXPECT_EQ(m.function(m.function_at(0x81000)).name, "main");
  std::remove(path.c_str());
}

TEST(ObjectMap, SharedObjectFromItsMapping) {
  // ld.so maps the segment at file offset 0x1000 (link address 0x1000) at 0x7000_1000:
  // the bias is 0x7000_0000.
  const std::string path = standard_file();
  ASSERT_FALSE(path.empty());
  ObjectMap m;
  m.file_mapped(path, path, 0x70000000, 0);  // not a PT_LOAD offset: ignored
  EXPECT_EQ(m.objects().size(), 0u);
  m.file_mapped(path, path, 0x70001000, 0x1000);
  ASSERT_EQ(m.objects().size(), 1u);
  EXPECT_EQ(m.objects()[0].bias, 0x70000000u);
  EXPECT_EQ(m.function(m.function_at(0x70001004)).name, "main");
  m.file_mapped(path, path, 0x70001000, 0x1000);  // again: known
  EXPECT_EQ(m.objects().size(), 1u);
  // dlclose: the whole span unmapped.
  const uint64_t gen = m.generation();
  m.unmapped(0x70000000, 0x10000);
  EXPECT_NE(m.generation(), gen);
  EXPECT_EQ(m.function_at(0x70001004), ObjectMap::kAnonymousFn);
  // A file that is not an ELF adds nothing.
  m.file_mapped("/proc/self/status", "/proc/self/status", 0x1000, 0);
  EXPECT_EQ(m.objects().size(), 1u);
  std::remove(path.c_str());
}

// Symbols are read on the first lookup in an object: ids follow the lookups, the reports'
// order (ObjectMap::order) follows the objects and addresses.
TEST(ObjectMap, SymbolsReadOnFirstLookup) {
  const std::string a = standard_file();
  const std::string b = standard_file();
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  ObjectMap m;
  m.file_mapped(a, a, 0x40001000, 0x1000);
  m.file_mapped(b, b, 0x50001000, 0x1000);
  ASSERT_EQ(m.objects().size(), 2u);
  EXPECT_FALSE(m.objects()[0].symbols_read);
  EXPECT_FALSE(m.objects()[1].symbols_read);
  EXPECT_EQ(m.function_count(), 3u);  // "??? (anonymous)" and one "???" group per object
  const uint32_t in_b = m.function_at(0x50001000);
  EXPECT_EQ(m.function(in_b).name, "main");
  EXPECT_FALSE(m.objects()[0].symbols_read);
  EXPECT_TRUE(m.objects()[1].symbols_read);
  const uint32_t in_a = m.function_at(0x40001040);
  EXPECT_EQ(m.function(in_a).name, "asm_fn");
  EXPECT_GT(in_a, in_b);
  EXPECT_LT(m.order(in_a), m.order(in_b));
  EXPECT_LT(m.order(ObjectMap::kAnonymousFn), m.order(m.objects()[0].unknown_fn));
  EXPECT_LT(m.order(m.objects()[0].unknown_fn), m.order(m.function_at(0x40001000)));
  EXPECT_LT(m.order(m.function_at(0x40001000)), m.order(in_a));
  std::remove(a.c_str());
  std::remove(b.c_str());
}

// A library closed before anything looked in it: the current map no longer has it, but
// the object noted while it was mapped is still read (the checker's frames, docs/checker.md).
TEST(ObjectMap, UnmappedBeforeLookup) {
  const std::string path = standard_file();
  ASSERT_FALSE(path.empty());
  ObjectMap m;
  m.file_mapped(path, path, 0x70001000, 0x1000);
  const uint32_t o = m.object_at(0x70001004);
  ASSERT_EQ(o, 0u);
  m.unmapped(0x70000000, 0x10000);
  EXPECT_FALSE(m.objects()[o].symbols_read);
  EXPECT_EQ(m.object_at(0x70001004), ObjectMap::kNoObject);
  EXPECT_EQ(m.function_at(0x70001004), ObjectMap::kAnonymousFn);
  EXPECT_EQ(m.function(m.function_in(o, 0x70001004)).name, "main");
  EXPECT_EQ(m.function(m.function_in(o, 0x70001004)).entry, 0x70001000u);
  std::remove(path.c_str());
}

// The file replaced on disk (a package upgrade renames a new file over it) or rewritten
// before the first lookup: nothing is read from it, every address is "??? (object)".
TEST(ObjectMap, FileChangedBeforeLookup) {
  const auto img = test::make_elf32(0x1000, 0x100, test::standard_symbols());
  const std::string path = write_temp(img);
  const std::string other = write_temp(img);
  ASSERT_FALSE(path.empty());
  ASSERT_FALSE(other.empty());
  ObjectMap m;
  m.file_mapped(path, path, 0x70001000, 0x1000);
  m.file_mapped(other, other, 0x60001000, 0x1000);
  ASSERT_EQ(m.objects().size(), 2u);
  ASSERT_EQ(std::rename(other.c_str(), path.c_str()), 0);  // a new inode at the old path
  EXPECT_TRUE(m.file_changed(0));
  EXPECT_EQ(m.function(m.function_at(0x70001004)).name, "??? (" + base_name(path) + ")");
  EXPECT_EQ(m.debug_info(0), nullptr);
  const SourceLocation loc = m.locate(0x70001004);
  EXPECT_EQ(loc.object, path);
  EXPECT_EQ(loc.offset, 0x1004u);  // from the bias
  EXPECT_EQ(loc.line, 0);
  // The second object's path names no file any more (it was renamed away).
  EXPECT_TRUE(m.file_changed(1));
  EXPECT_EQ(m.function(m.function_at(0x60001004)).name, "??? (" + base_name(other) + ")");
  std::remove(path.c_str());
}

TEST(ObjectMap, FileRewrittenInPlaceBeforeLookup) {
  const std::string path = standard_file();
  ASSERT_FALSE(path.empty());
  ObjectMap m;
  m.file_mapped(path, path, 0x70001000, 0x1000);
  std::vector<test::TestSymbol> renamed = test::standard_symbols();
  renamed[0].name = "other_main";
  {
    const auto img = test::make_elf32(0x1000, 0x100, renamed);
    FILE* f = std::fopen(path.c_str(), "ab");  // same inode, longer
    ASSERT_NE(f, nullptr);
    std::fwrite(img.data(), 1, img.size(), f);
    std::fclose(f);
  }
  EXPECT_TRUE(m.file_changed(0));
  EXPECT_EQ(m.function(m.function_at(0x70001004)).name, "??? (" + base_name(path) + ")");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace padlock::emu::profile
