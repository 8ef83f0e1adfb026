// The program of the syscall-level fuzz targets: a static i386 ELF file (one PT_LOAD that
// calls exit(0)) in a memory file, named by its /proc/self/fd path. The process is built
// from it and never run.
#pragma once

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/unit/emulator/observe/elf_image.hpp"

namespace padlock::fuzz {

inline std::string exit_program() {
  static const std::string path = [] {
    constexpr uint32_t kText = 0x08049000;  // make_elf32 puts .text at file offset 0x1000
    std::vector<uint8_t> f = emu::profile::test::make_elf32(kText, 0x100, {});
    const uint8_t code[] = {0xB8, 1, 0, 0, 0, 0x31, 0xDB, 0xCD, 0x80};  // exit(0)
    std::memcpy(f.data() + 0x1000, code, sizeof code);
    const uint32_t entry = kText;
    std::memcpy(f.data() + offsetof(Elf32_Ehdr, e_entry), &entry, 4);
    const int fd = memfd_create("fuzz-program", 0);
    if (fd < 0 || write(fd, f.data(), f.size()) != static_cast<ssize_t>(f.size())) abort();
    return "/proc/self/fd/" + std::to_string(fd);
  }();
  return path;
}

}  // namespace padlock::fuzz
