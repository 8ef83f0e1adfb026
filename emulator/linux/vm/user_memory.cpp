#include "emulator/linux/vm/user_memory.hpp"

#include <algorithm>
#include <cstring>

namespace padlock::emu {

uint8_t* UserMemory::ptr(uint64_t va, uint64_t len, bool write) {
  return mem_->translate(va, len, write ? Access::Write : Access::Read);
}

bool UserMemory::read(uint64_t va, void* dst, uint64_t len) {
  const uint8_t* p = ptr(va, len, false);
  if (p == nullptr) return false;
  std::memcpy(dst, p, len);
  return true;
}

bool UserMemory::write(uint64_t va, const void* src, uint64_t len) {
  uint8_t* p = ptr(va, len, true);
  if (p == nullptr) return false;
  std::memcpy(p, src, len);
  return true;
}

bool UserMemory::read_cstring(uint64_t va, std::string& out, size_t max) {
  constexpr uint64_t kPage = AddressSpace::kPageSize;
  out.clear();
  while (out.size() < max) {
    const uint64_t chunk = kPage - (va & (kPage - 1));
    const uint8_t* p = ptr(va, 1, false);
    if (p == nullptr) return false;
    const uint64_t n = std::min<uint64_t>(chunk, max - out.size());
    const void* nul = std::memchr(p, 0, n);
    if (nul != nullptr) {
      out.append(reinterpret_cast<const char*>(p), static_cast<const uint8_t*>(nul) - p);
      return true;
    }
    out.append(reinterpret_cast<const char*>(p), n);
    va += n;
  }
  return false;
}

uint64_t UserMemory::get_word(uint64_t va, bool& ok) {
  if (wide_) {
    uint64_t v = 0;
    ok = get(va, v);
    return v;
  }
  uint32_t v = 0;
  ok = get(va, v);
  return v;
}

bool UserMemory::put_word(uint64_t va, uint64_t v) {
  if (wide_) return put(va, v);
  return put(va, static_cast<uint32_t>(v));
}

}  // namespace padlock::emu
