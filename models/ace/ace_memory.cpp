#include "models/ace/ace_memory.hpp"

#include <algorithm>

namespace padlock::ace {

namespace {

// Calls f(addr, offset, piece) for each piece of [ea, ea+len) up to a wrap of the address
// space; f returns the bytes of its piece it handled, and a short answer ends the walk.
// Returns the bytes handled.
template <typename F>
uint64_t for_each_piece(uint64_t ea, uint64_t len, unsigned asz, F&& f) {
  uint64_t done = 0;
  while (done < len) {
    const uint64_t addr = ea_add(ea, done, asz);
    const uint64_t seg = std::min(len - done, bytes_to_wrap(addr, asz));
    const uint64_t ok = f(addr, done, seg);
    done += ok;
    if (ok < seg) break;
  }
  return done;
}

}  // namespace

uint64_t probe_wrapping(GuestMemory& mem, uint64_t ea, uint64_t len, unsigned asz, Access access) {
  return for_each_piece(ea, len, asz, [&](uint64_t addr, uint64_t, uint64_t seg) {
    return mem.accessible(addr, seg, access);
  });
}

void read_wrap(GuestMemory& mem, uint64_t ea, void* dst, uint64_t len, unsigned asz) {
  auto* out = static_cast<uint8_t*>(dst);
  for_each_piece(ea, len, asz, [&](uint64_t addr, uint64_t done, uint64_t seg) {
    mem.read(addr, out + done, seg);
    return seg;
  });
}

void write_wrap(GuestMemory& mem, uint64_t ea, const void* src, uint64_t len, unsigned asz) {
  const auto* in = static_cast<const uint8_t*>(src);
  for_each_piece(ea, len, asz, [&](uint64_t addr, uint64_t done, uint64_t seg) {
    mem.write(addr, in + done, seg);
    return seg;
  });
}

}  // namespace padlock::ace
