// Guest memory as the kernel sees it from a system call: an address the guest passed is
// good only if its pages are mapped with the access asked for; otherwise the call fails
// with EFAULT, as Linux's copy_from_user/copy_to_user make it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "emulator/memory/address_space.hpp"

namespace padlock::emu {

class UserMemory {
 public:
  UserMemory() = default;
  // `wide`: pointers and longs are 8 bytes (x86-64), else 4 (i386).
  UserMemory(AddressSpace& mem, bool wide) : mem_(&mem), wide_(wide) {}

  // nullptr / false means -EFAULT.
  uint8_t* ptr(uint64_t va, uint64_t len, bool write);
  bool read(uint64_t va, void* dst, uint64_t len);
  bool write(uint64_t va, const void* src, uint64_t len);
  // A NUL-terminated string of at most `max` bytes (false also when it is longer).
  bool read_cstring(uint64_t va, std::string& out, size_t max = 4096);
  template <typename T>
  bool get(uint64_t va, T& v) {
    return read(va, &v, sizeof v);
  }
  template <typename T>
  bool put(uint64_t va, const T& v) {
    return write(va, &v, sizeof v);
  }
  uint64_t get_word(uint64_t va, bool& ok);  // pointer-sized for this ABI
  bool put_word(uint64_t va, uint64_t v);

 private:
  AddressSpace* mem_ = nullptr;
  bool wide_ = false;
};

}  // namespace padlock::emu
