#include "emulator/loader/initial_stack.hpp"

#include <elf.h>

#include <cstring>

#include "emulator/loader/elf_loader.hpp"

namespace padlock::emu {

StackLayout build_initial_stack(AddressSpace& mem, uint64_t top, uint64_t limit, bool guest64,
                                const StackImage& image) {
  const uint64_t word = guest64 ? 8 : 4;
  const uint64_t bottom = top - limit;
  uint64_t sp = top;
  auto fits = [&](uint64_t n) {
    if (sp - bottom < n) throw LoadError("argument list and environment too large for the stack");
  };
  auto push_bytes = [&](const void* p, uint64_t n) {
    fits(n);
    sp -= n;
    std::memcpy(mem.host(sp), p, n);
    return sp;
  };
  auto push_string = [&](const std::string& s) { return push_bytes(s.c_str(), s.size() + 1); };

  StackLayout out;
  // Strings at the top, as Linux does: the file name, then the environment and the
  // arguments (so argv[0] is lowest), then the platform and the random bytes.
  sp -= word;  // a zero word at the very top
  out.execfn = push_string(image.execfn);
  std::vector<uint64_t> env_ptrs(image.envp.size()), arg_ptrs(image.argv.size());
  for (size_t i = image.envp.size(); i-- > 0;) env_ptrs[i] = push_string(image.envp[i]);
  for (size_t i = image.argv.size(); i-- > 0;) arg_ptrs[i] = push_string(image.argv[i]);
  const uint64_t platform = push_string(image.platform);
  sp &= ~uint64_t{15};
  out.random = push_bytes(image.random.data(), image.random.size());

  std::vector<uint64_t> words;
  words.push_back(image.argv.size());
  for (uint64_t p : arg_ptrs) words.push_back(p);
  words.push_back(0);
  for (uint64_t p : env_ptrs) words.push_back(p);
  words.push_back(0);
  const size_t auxv_index = words.size();
  for (const auto& [k, v] : image.auxv) {
    words.push_back(k);
    words.push_back(v);
  }
  words.push_back(AT_RANDOM);
  words.push_back(out.random);
  words.push_back(AT_EXECFN);
  words.push_back(out.execfn);
  words.push_back(AT_PLATFORM);
  words.push_back(platform);
  words.push_back(AT_NULL);
  words.push_back(0);

  // argc must land 16-byte aligned (the x86-64 psABI; Linux does the same for i386).
  const uint64_t bytes = words.size() * word;
  fits(bytes + 16);
  sp = (sp - bytes) & ~uint64_t{15};
  for (size_t i = 0; i < words.size(); ++i) {
    if (guest64) {
      std::memcpy(mem.host(sp + i * 8), &words[i], 8);
    } else {
      const uint32_t v = static_cast<uint32_t>(words[i]);
      std::memcpy(mem.host(sp + i * 4), &v, 4);
    }
  }
  out.sp = sp;
  out.argv = sp + word;
  out.envp = out.argv + (image.argv.size() + 1) * word;
  out.auxv = sp + auxv_index * word;
  return out;
}

}  // namespace padlock::emu
