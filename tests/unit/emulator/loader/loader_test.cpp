// The ELF loader and process start-up: one-line errors for programs we cannot run, and
// the initial stack (argv, envp, auxv) of those we can.
#include <elf.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "emulator/loader/elf_loader.hpp"
#include "guest_harness.hpp"

namespace padlock::emu::test {
namespace {

const char* kAuxvProgram = R"SRC(
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
extern char** environ;
int main(int argc, char** argv) {
  printf("argc=%d\n", argc);
  for (int i = 1; i < argc; ++i) printf("argv%d=%s\n", i, argv[i]);
  printf("env=%s\n", getenv("PADLOCK_TEST_VAR") ? getenv("PADLOCK_TEST_VAR") : "(unset)");
  /* glibc replaces getauxval(AT_HWCAP) on x86 with its own bits: walk the auxv. */
  char** e = environ;
  while (*e) ++e;
  for (unsigned long* a = (unsigned long*)(e + 1); a[0] != AT_NULL; a += 2) {
    if (a[0] == AT_HWCAP) printf("hwcap=%lx\n", a[1]);
  }
  printf("pagesz=%lu\n", getauxval(AT_PAGESZ));
  printf("platform=%s\n", (const char*)getauxval(AT_PLATFORM));
  printf("execfn=%s\n", (const char*)getauxval(AT_EXECFN));
  printf("secure=%lu\n", getauxval(AT_SECURE));
  printf("uid=%d\n", getauxval(AT_UID) == getuid());
  const unsigned char* r = (const unsigned char*)getauxval(AT_RANDOM);
  printf("random=");
  for (int i = 0; i < 16; ++i) printf("%02x", r[i]);
  printf("\n");
  printf("sp_aligned=%d\n", (int)(((unsigned long)__builtin_frame_address(0)) % 4 == 0));
  return 3;
}
)SRC";

// A scratch file, removed when the test ends.
struct ScratchFile {
  std::string path;
  ScratchFile(const std::string& name, const std::string& bytes)
      : path("/tmp/padlock-emu-loader-" + std::to_string(getpid()) + "-" + name) {
    std::ofstream f(path, std::ios::binary);
    f << bytes;
  }
  ~ScratchFile() { std::remove(path.c_str()); }
};

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

TEST(Loader, NotAnElfIsAOneLineError) {
  const ScratchFile f("text", "#!/bin/sh\necho hello\n");
  const GuestRun r = run_guest(f.path, {}, "esther");
  ASSERT_TRUE(r.load_error);
  EXPECT_NE(r.error.find("not an ELF file"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos);
}

TEST(Loader, MissingFileNamesTheError) {
  const GuestRun r = run_guest("/nonexistent/padlock/program", {}, "esther");
  ASSERT_TRUE(r.load_error);
  EXPECT_NE(r.error.find("No such file or directory"), std::string::npos) << r.error;
}

TEST(Loader, TruncatedFiles) {
  const std::string exe = build_guest("int main(void){return 0;}", Arch::I386);
  if (exe.empty()) GTEST_SKIP() << "gcc -m32 -static unavailable";
  const std::string image = read_file(exe);
  // Cut inside the ELF header, inside the program headers and inside a segment.
  for (size_t len : {size_t{20}, size_t{60}, image.size() / 2}) {
    const ScratchFile f("trunc" + std::to_string(len), image.substr(0, len));
    EXPECT_THROW(ElfFile::read(f.path), LoadError) << len;
    try {
      ElfFile::read(f.path);
    } catch (const LoadError& e) {
      EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
  }
}

TEST(Loader, WrongMachine) {
  const std::string exe = build_guest("int main(void){return 0;}", Arch::I386);
  if (exe.empty()) GTEST_SKIP() << "gcc -m32 -static unavailable";
  std::string image = read_file(exe);
  image[18] = static_cast<char>(EM_ARM);  // e_machine
  image[19] = 0;
  const ScratchFile f("arm", image);
  try {
    ElfFile::read(f.path);
    FAIL() << "accepted an ARM ELF";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("wrong machine"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ARM"), std::string::npos) << e.what();
  }
}

TEST(Loader, SixtyFourBitProgramNeedsLongMode) {
  const std::string exe = build_guest("int main(void){return 0;}", Arch::X86_64);
  if (exe.empty()) GTEST_SKIP() << "gcc -m64 -static unavailable";
  for (const char* cpu : {"esther", "nehemiah-c5xl", "nehemiah", "esther-c5j-s9"}) {
    const GuestRun r = run_guest(exe, {}, cpu);
    ASSERT_TRUE(r.load_error) << cpu;
    EXPECT_NE(r.error.find("no long mode"), std::string::npos) << r.error;
  }
  const GuestRun ok = run_guest(exe, {}, "nano");
  EXPECT_FALSE(ok.load_error) << ok.error;
  EXPECT_EQ(ok.result.exit_code, 0);
}

// Dynamically linked programs run (tests/unit/emulator/dynamic_test.cpp); one whose
// interpreter cannot be found is a one-line error naming it.
TEST(Loader, MissingInterpreterIsAClearError) {
  const std::string exe = build_guest("int main(void){return 0;}", Arch::X86_64,
                                      "-O1 -Wl,--dynamic-linker=/nonexistent/padlock/ld.so");
  if (exe.empty()) GTEST_SKIP() << "gcc -m64 unavailable";
  const GuestRun r = run_guest(exe, {}, "nano");
  ASSERT_TRUE(r.load_error);
  EXPECT_NE(r.error.find("cannot load its interpreter /nonexistent/padlock/ld.so"),
            std::string::npos)
      << r.error;
  EXPECT_NE(r.error.find("No such file or directory"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos);
}

class StartupTest : public ::testing::TestWithParam<Arch> {};

TEST_P(StartupTest, ArgvEnvpAuxv) {
  const Arch arch = GetParam();
  const std::string exe = build_guest(kAuxvProgram, arch);
  if (exe.empty()) GTEST_SKIP() << "gcc cannot build static " << arch_name(arch);
  const GuestRun r = run_guest(exe, {"one", "two words"}, nullptr, false, 42,
                               {"PADLOCK_TEST_VAR=hello", "OTHER=1"});
  ASSERT_FALSE(r.load_error) << r.error;
  EXPECT_EQ(r.result.exit_code, 3);
  EXPECT_EQ(field(r.out, "argc"), "3");
  EXPECT_EQ(field(r.out, "argv1"), "one");
  EXPECT_EQ(field(r.out, "argv2"), "two words");
  EXPECT_EQ(field(r.out, "env"), "hello");
  EXPECT_EQ(field(r.out, "pagesz"), "4096");
  EXPECT_EQ(field(r.out, "platform"), arch == Arch::I386 ? "i686" : "x86_64");
  EXPECT_EQ(field(r.out, "execfn"), exe);
  EXPECT_EQ(field(r.out, "secure"), "0");
  EXPECT_EQ(field(r.out, "uid"), "1");
  // AT_HWCAP is CPUID leaf 1 EDX of the model.
  const CpuModel* m = find_cpu_model(default_cpu(arch));
  uint32_t edx1 = 0;
  for (const CpuidLeaf& l : m->cpuid) {
    if (l.leaf == 1) edx1 = l.edx;
  }
  char hw[32];
  std::snprintf(hw, sizeof hw, "%x", edx1);
  EXPECT_EQ(field(r.out, "hwcap"), hw);
  // AT_RANDOM is reproducible from --seed and changes with it.
  const GuestRun again = run_guest(exe, {}, nullptr, false, 42);
  const GuestRun other = run_guest(exe, {}, nullptr, false, 43);
  EXPECT_EQ(field(r.out, "random"), field(again.out, "random"));
  EXPECT_NE(field(r.out, "random"), field(other.out, "random"));
}

TEST_P(StartupTest, StaticPie) {
  const Arch arch = GetParam();
  const std::string exe = build_guest(
      "#include <stdio.h>\nint g = 5;\nint main(void){printf(\"pie=%d %d\\n\", g, "
      "(int)(sizeof(void*)));return 0;}",
      arch, "-static-pie -fPIE -O1");
  if (exe.empty()) GTEST_SKIP() << "gcc cannot build static-pie " << arch_name(arch);
  const GuestRun r = run_guest(exe);
  ASSERT_FALSE(r.load_error) << r.error;
  EXPECT_EQ(r.result.exit_code, 0) << r.err;
  EXPECT_EQ(field(r.out, "pie"), arch == Arch::I386 ? "5 4" : "5 8");
}

INSTANTIATE_TEST_SUITE_P(Arches, StartupTest, ::testing::Values(Arch::I386, Arch::X86_64),
                         [](const auto& info) { return std::string(arch_name(info.param)); });

}  // namespace
}  // namespace padlock::emu::test
