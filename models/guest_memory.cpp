#include "models/unit_interface.hpp"

namespace padlock {

namespace {
constexpr uint64_t kPage = 4096;

template <typename Fn>
bool for_each_chunk(GuestMemory& mem, uint64_t va, uint64_t len, Access access, Fn&& fn) {
  if (mem.accessible(va, len, access) != len) return false;
  uint64_t done = 0;
  while (done < len) {
    const uint64_t addr = va + done;
    uint64_t chunk = kPage - (addr & (kPage - 1));
    if (chunk > len - done) chunk = len - done;
    uint8_t* p = mem.translate(addr, chunk, access);
    if (p == nullptr) return false;
    fn(p, done, chunk);
    done += chunk;
  }
  return true;
}
}  // namespace

bool GuestMemory::read(uint64_t va, void* dst, uint64_t len) {
  if (uint8_t* p = translate(va, len, Access::Read)) {
    std::memcpy(dst, p, len);
    return true;
  }
  auto* out = static_cast<uint8_t*>(dst);
  return for_each_chunk(*this, va, len, Access::Read, [&](uint8_t* p, uint64_t off, uint64_t n) {
    std::memcpy(out + off, p, n);
  });
}

bool GuestMemory::write(uint64_t va, const void* src, uint64_t len) {
  if (uint8_t* p = translate(va, len, Access::Write)) {
    std::memcpy(p, src, len);
    return true;
  }
  const auto* in = static_cast<const uint8_t*>(src);
  return for_each_chunk(*this, va, len, Access::Write,
                        [&](uint8_t* p, uint64_t off, uint64_t n) { std::memcpy(p, in + off, n); });
}

}  // namespace padlock
