// ObjectMap: the function of a guest address across loaded objects.
#include "emulator/observe/profile/object_map.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "observe/elf_image.hpp"

namespace padlock::emu::profile {
namespace {

ElfSymbols standard() {
  const std::vector<uint8_t> img = test::make_elf32(0x1000, 0x100, test::standard_symbols());
  return parse_elf_symbols(img.data(), img.size());
}

TEST(ObjectMap, FunctionsUnknownGroupsAndAnonymous) {
  ObjectMap m;
  const uint32_t obj = m.add(standard(), "/opt/bin/prog", 0x40000);
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

TEST(ObjectMap, SameFileAtSameBiasIsOneObject) {
  const std::string path = write_temp(test::make_elf32(0x1000, 0x100, test::standard_symbols()));
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
  const std::string path = write_temp(test::make_elf32(0x1000, 0x100, test::standard_symbols()));
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

}  // namespace
}  // namespace padlock::emu::profile
