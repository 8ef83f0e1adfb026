// libFuzzer target: the program loader (emulator/loader/elf_loader.hpp) on any file. A bad
// file must end in LoadError (one line) before anything is mapped, never a crash, and a
// good one must load into a 32- or 64-bit address space as padlock-emu run would load it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "emulator/loader/elf_loader.hpp"

using padlock::emu::AddressSpace;

namespace {

AddressSpace& space(bool guest64) {
  static std::unique_ptr<AddressSpace> s32, s64;
  std::unique_ptr<AddressSpace>& s = guest64 ? s64 : s32;
  if (!s) s = std::make_unique<AddressSpace>(guest64);
  return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace padlock::emu;
  try {
    ElfFile f = ElfFile::parse("fuzz", std::vector<uint8_t>(data, data + size));
    AddressSpace& mem = space(f.is64);
    // Static PIEs go where Process::load_program puts them.
    const uint64_t bias =
        f.type == 3 /* ET_DYN */ ? (f.is64 ? 0x555555554000ull : 0x56555000ull) - f.min_vaddr : 0;
    try {
      const LoadedImage img = load_elf(f, mem, bias, !f.is64, false);
      // What it mapped: from the lowest segment page to the end of the highest (a failed
      // load maps nothing: its checks come first).
      const uint64_t lo = f.min_vaddr + bias;
      if (lo < img.end) mem.unmap(lo, img.end - lo);
    } catch (const LoadError&) {
    }
  } catch (const LoadError&) {
  }
  return 0;
}
