// The initial process stack as Linux builds it (fs/binfmt_elf.c create_elf_tables):
// argc, argv[], NULL, envp[], NULL, auxv pairs ending in AT_NULL, and above them the
// strings, the platform name and the 16 AT_RANDOM bytes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "emulator/memory/address_space.hpp"

namespace padlock::emu {

struct StackImage {
  std::vector<std::string> argv;
  std::vector<std::string> envp;
  std::string execfn;                // AT_EXECFN
  std::string platform;              // AT_PLATFORM: "i686" or "x86_64"
  std::array<uint8_t, 16> random{};  // AT_RANDOM bytes
  // Every other auxv entry (AT_PHDR ... AT_CLKTCK); AT_EXECFN, AT_PLATFORM, AT_RANDOM
  // and AT_NULL are added by the builder.
  std::vector<std::pair<uint64_t, uint64_t>> auxv;
};

struct StackLayout {
  uint64_t sp = 0;    // points at argc
  uint64_t argv = 0;  // address of argv[0] pointer
  uint64_t envp = 0;
  uint64_t auxv = 0;
  uint64_t random = 0;  // address of the AT_RANDOM bytes
  uint64_t execfn = 0;
};

// Writes the image below `top` (which must be mapped writable down far enough).
// Throws LoadError if it does not fit in `limit` bytes.
StackLayout build_initial_stack(AddressSpace& mem, uint64_t top, uint64_t limit, bool guest64,
                                const StackImage& image);

}  // namespace padlock::emu
