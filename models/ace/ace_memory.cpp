#include "models/ace/ace_memory.hpp"

#include <algorithm>

namespace padlock::ace {

uint64_t probe_wrapping(GuestMemory& mem, uint64_t ea, uint64_t len, unsigned asz, Access access) {
  uint64_t done = 0;
  while (done < len) {
    const uint64_t addr = ea_add(ea, done, asz);
    const uint64_t seg = std::min(len - done, bytes_to_wrap(addr, asz));
    const uint64_t ok = mem.accessible(addr, seg, access);
    done += ok;
    if (ok < seg) break;
  }
  return done;
}

void read_wrap(GuestMemory& mem, uint64_t ea, void* dst, uint64_t len, unsigned asz) {
  auto* out = static_cast<uint8_t*>(dst);
  uint64_t done = 0;
  while (done < len) {
    const uint64_t addr = ea_add(ea, done, asz);
    const uint64_t seg = std::min(len - done, bytes_to_wrap(addr, asz));
    mem.read(addr, out + done, seg);
    done += seg;
  }
}

void write_wrap(GuestMemory& mem, uint64_t ea, const void* src, uint64_t len, unsigned asz) {
  const auto* in = static_cast<const uint8_t*>(src);
  uint64_t done = 0;
  while (done < len) {
    const uint64_t addr = ea_add(ea, done, asz);
    const uint64_t seg = std::min(len - done, bytes_to_wrap(addr, asz));
    mem.write(addr, in + done, seg);
    done += seg;
  }
}

}  // namespace padlock::ace
