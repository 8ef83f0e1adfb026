// What names the process (emulator/linux/process_identity.hpp) as Process fills it when a
// program loads, checked against the program's own ELF header read here with <elf.h>: the
// PID is the host process's, the width is the ELF class, /proc/self/exe names the real
// program, and auxv holds the words the guest's initial stack holds, Linux's entries with the
// header's values (include/uapi/linux/auxvec.h), AT_NULL last.
#include "emulator/linux/process_identity.hpp"

#include <elf.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "emulator/linux/process.hpp"
#include "guest_harness.hpp"
#include "models/cpu_model.hpp"

namespace padlock::emu::test {
namespace {

struct Header {
  bool is64 = false;
  uint16_t type = 0, phentsize = 0, phnum = 0;
  uint64_t entry = 0;
};

Header read_header(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Header h;
  EXPECT_GE(bytes.size(), sizeof(Elf64_Ehdr));
  h.is64 = bytes[EI_CLASS] == ELFCLASS64;
  if (h.is64) {
    Elf64_Ehdr e;
    std::memcpy(&e, bytes.data(), sizeof e);
    h.type = e.e_type, h.entry = e.e_entry, h.phentsize = e.e_phentsize, h.phnum = e.e_phnum;
  } else {
    Elf32_Ehdr e;
    std::memcpy(&e, bytes.data(), sizeof e);
    h.type = e.e_type, h.entry = e.e_entry, h.phentsize = e.e_phentsize, h.phnum = e.e_phnum;
  }
  return h;
}

class ProcessIdentityTest : public ::testing::TestWithParam<Arch> {};

TEST_P(ProcessIdentityTest, NamesTheLoadedProgram) {
  const std::string exe = build_guest("int main(void) { return 0; }\n", GetParam());
  if (exe.empty()) GTEST_SKIP() << "no static " << arch_name(GetParam()) << " toolchain";
  const Header h = read_header(exe);
  ASSERT_EQ(h.type, ET_EXEC);  // -static: no load bias, AT_ENTRY is e_entry

  RunOptions o;
  o.program = exe;
  o.argv = {exe};
  o.cpu = find_cpu_model(default_cpu(GetParam()));
  o.log = stderr;
  const Process p(o);
  const ProcessIdentity& id = p.identity();

  EXPECT_EQ(id.pid, getpid());
  EXPECT_EQ(id.guest64, GetParam() == Arch::X86_64);
  EXPECT_EQ(id.guest64, h.is64);
  char real[PATH_MAX];
  ASSERT_NE(realpath(exe.c_str(), real), nullptr);
  EXPECT_EQ(id.exe_path, real);
  // The test binary is not padlock-emu, and no bin/padlock-emu sits beside it.
  EXPECT_EQ(id.emulator_path, "");

  const size_t word = id.guest64 ? 8 : 4;
  ASSERT_EQ(id.auxv.size() % (2 * word), 0u);
  std::map<uint64_t, uint64_t> aux;
  uint64_t last_type = ~uint64_t{0};
  for (size_t at = 0; at < id.auxv.size(); at += 2 * word) {
    uint64_t type = 0, value = 0;
    std::memcpy(&type, id.auxv.data() + at, word);
    std::memcpy(&value, id.auxv.data() + at + word, word);
    aux[type] = value;
    last_type = type;
  }
  EXPECT_EQ(last_type, uint64_t{AT_NULL});
  EXPECT_EQ(aux[AT_PAGESZ], 4096u);
  EXPECT_EQ(aux[AT_ENTRY], h.entry);
  EXPECT_EQ(aux[AT_PHENT], h.phentsize);
  EXPECT_EQ(aux[AT_PHNUM], h.phnum);
  EXPECT_EQ(aux[AT_UID], getuid());
  EXPECT_EQ(aux.count(AT_RANDOM), 1u);
}

INSTANTIATE_TEST_SUITE_P(Arches, ProcessIdentityTest, ::testing::Values(Arch::I386, Arch::X86_64),
                         [](const auto& info) { return std::string(arch_name(info.param)); });

}  // namespace
}  // namespace padlock::emu::test
