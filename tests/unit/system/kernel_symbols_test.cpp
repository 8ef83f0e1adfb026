// System mode's names of kernel module code (emulator/system/kernel_symbols.hpp): a module
// built here as a relocatable object with gcc, as Kbuild leaves a .ko, placed at the section
// addresses a console log reports (docs/system.md, "Kernel symbols").
#include "emulator/system/kernel_symbols.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

using padlock::emu::KernelLocation;
using padlock::emu::KernelSymbols;

// A module of three functions: first at .text offset 0 (st_value 0), second after it, and
// one in .text.unlikely; -ffunction-sections is off, so .text holds the first two.
constexpr const char* kModule = R"(
__attribute__((noinline)) int first(int x) { return x * 3 + 1; }
__attribute__((noinline)) int second(int x) { return first(x) ^ 0x55; }
__attribute__((noinline, cold)) int rare(int x) { return second(x) - 7; }
)";

class KernelSymbolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/kernel-symbols-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    std::ofstream(dir_ + "/mod.c") << kModule;
    ko_ = dir_ + "/my-mod.ko";
    const std::string cc = "gcc -m32 -O2 -fno-pic -fno-asynchronous-unwind-tables -c -o '" + ko_ +
                           "' '" + dir_ + "/mod.c'";
    ASSERT_EQ(std::system(cc.c_str()), 0) << cc;
  }
  void TearDown() override {
    const std::string rm = "rm -rf '" + dir_ + "'";
    (void)std::system(rm.c_str());
  }
  // A console log: noise, a line cut by a kernel message, and the module's sections.
  std::string console(const std::string& lines) {
    const std::string path = dir_ + "/console.log";
    std::ofstream(path) << "[    1.234] random: crng init done\r\n" << lines << "PADLOCK-DONE\r\n";
    return path;
  }
  // A symbol's section offset, from binutils' nm (independent of the reader under test).
  uint64_t nm_value(const std::string& name) {
    const std::string cmd = "nm '" + ko_ + "' | awk '$3 == \"" + name + "\" {print $1}'";
    FILE* p = popen(cmd.c_str(), "r");
    char buf[64] = {};
    const bool got = p != nullptr && std::fgets(buf, sizeof buf, p) != nullptr;
    if (p != nullptr) pclose(p);
    EXPECT_TRUE(got) << name;
    return std::strtoull(buf, nullptr, 16);
  }

  std::string dir_, ko_;
};

TEST_F(KernelSymbolsTest, NamesFunctionsAtTheReportedSectionAddresses) {
  KernelSymbols syms;
  const std::string log = console(
      "PADLOCK-MODULE my-mod loaded\r\n"
      "PADLOCK-SECTION my_mod .text 0xf8a3c000\r\n"
      "PADLOCK-SECTION my_mod .text.unlikely 0xf8a3b000\r\n"
      "PADLOCK-SECTION other_mod .text 0xf8b00000\r\n");
  EXPECT_EQ(syms.add_modules_from_console(log, {ko_, dir_ + "/missing.ko"}), 1u);
  ASSERT_EQ(syms.objects().size(), 1u);
  EXPECT_EQ(syms.objects()[0], "my_mod");  // '-' in the file name is '_' to the kernel

  KernelLocation at;
  ASSERT_EQ(nm_value("first"), 0u);  // st_value 0: a function at its section's start
  ASSERT_TRUE(syms.resolve(0xf8a3c000, at));
  EXPECT_EQ(at.function, "first");
  EXPECT_EQ(at.object, "my_mod");
  EXPECT_EQ(at.offset, 0u);
  const uint64_t second = 0xf8a3c000 + nm_value("second");
  ASSERT_TRUE(syms.resolve(second + 3, at));
  EXPECT_EQ(at.function, "second");
  EXPECT_EQ(at.offset, 3u);
  ASSERT_TRUE(syms.resolve(0xf8a3b000 + nm_value("rare") + 1, at));
  EXPECT_EQ(at.function, "rare");
  EXPECT_TRUE(syms.is_code(second));
  EXPECT_EQ(syms.function_entry(second + 3), second);

  // Below the sections, in another module's (no .ko given), and far past the functions.
  EXPECT_FALSE(syms.resolve(0xf8a3a000, at));
  EXPECT_FALSE(syms.resolve(0xf8b00010, at));
  EXPECT_FALSE(syms.resolve(0xf8a3c000 + 0x10000, at));
  EXPECT_FALSE(syms.is_code(0xf8b00010));
}

TEST_F(KernelSymbolsTest, FramesGetFunctionOffsetAndModule) {
  KernelSymbols syms;
  const std::string log = console("PADLOCK-SECTION my_mod .text 0xc0100000\r\n");
  ASSERT_EQ(syms.add_modules_from_console(log, {ko_}), 1u);
  padlock::emu::check::Frame inside, outside;
  inside.pc = 0xc0100000 + nm_value("second") + 5;
  outside.pc = 0x08049000;
  padlock::emu::check::Frame* frames[] = {&inside, &outside};
  syms.locate(frames, 2);
  EXPECT_EQ(inside.function, "second");
  EXPECT_EQ(inside.module, "my_mod");
  EXPECT_EQ(inside.offset, 5u);
  EXPECT_TRUE(outside.function.empty());
  EXPECT_TRUE(outside.module.empty());
}

TEST_F(KernelSymbolsTest, AModuleLoadedAgainIsNamedAtBothAddresses) {
  KernelSymbols syms;
  // The init's second load of a module whose self-tests failed (PADLOCK-UNTESTED).
  const std::string log = console(
      "PADLOCK-SECTION my_mod .text 0xc0100000\r\n"
      "PADLOCK-SECTION my_mod .text.unlikely 0xc0101000\r\n"
      "PADLOCK-UNTESTED my-mod loaded\r\n"
      "PADLOCK-SECTION my_mod .text 0xc0200000\r\n"
      "PADLOCK-SECTION my_mod .text.unlikely 0xc0201000\r\n");
  EXPECT_EQ(syms.add_modules_from_console(log, {ko_}), 2u);
  KernelLocation at;
  for (const uint64_t text : {0xc0100000ull, 0xc0200000ull}) {
    ASSERT_TRUE(syms.resolve(text + nm_value("second") + 2, at)) << std::hex << text;
    EXPECT_EQ(at.function, "second");
    EXPECT_EQ(at.offset, 2u);
    ASSERT_TRUE(syms.resolve(text + 0x1000 + nm_value("rare"), at)) << std::hex << text;
    EXPECT_EQ(at.function, "rare");
  }
}

TEST_F(KernelSymbolsTest, NoSectionLinesNoModule) {
  KernelSymbols syms;
  // A malformed address and a module without its .ko add nothing.
  const std::string log = console(
      "PADLOCK-SECTION my_mod .text 0xzz\r\n"
      "PADLOCK-SECTION my_mod\r\n");
  EXPECT_EQ(syms.add_modules_from_console(log, {ko_}), 0u);
  EXPECT_TRUE(syms.empty());
  EXPECT_FALSE(syms.add_module("x", dir_ + "/mod.c", {{".text", 0x1000}}));  // not ELF
}

}  // namespace
