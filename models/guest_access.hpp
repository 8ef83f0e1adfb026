// Guest memory at an effective address that wraps at the address size (§3.1 "REP prefix":
// 67h selects SI/ESI): the helpers the units share to read their input and write their
// output block by block.
#pragma once

#include <algorithm>
#include <cstdint>

#include "models/unit_interface.hpp"

namespace padlock {

inline uint64_t size_mask(unsigned addr_size) {
  return addr_size == 64 ? ~uint64_t{0} : (uint64_t{1} << addr_size) - 1;
}

// Copies `len` bytes between guest effective address `ea` and `buf`, wrapping at the address
// size. Returns false with the first inaccessible linear address in *fault_at, having
// copied nothing of the piece that faulted.
inline bool copy_wrapped(GuestMemory& mem, uint64_t ea, unsigned as, uint8_t* buf, uint64_t len,
                         Access access, uint64_t* fault_at) {
  while (len != 0) {
    const uint64_t piece = as == 64 ? len : std::min(len, size_mask(as) - ea + 1);
    const uint64_t ok = mem.accessible(ea, piece, access);
    if (ok < piece) {
      *fault_at = ea + ok;
      return false;
    }
    if (access == Access::Read)
      mem.read(ea, buf, piece);
    else
      mem.write(ea, buf, piece);
    buf += piece;
    len -= piece;
    ea = ea_add(ea, piece, as);
  }
  return true;
}

inline bool read_wrapped(GuestMemory& mem, uint64_t ea, unsigned as, uint8_t* dst, uint64_t len,
                         uint64_t* fault_at) {
  return copy_wrapped(mem, ea, as, dst, len, Access::Read, fault_at);
}

// Probes the whole range for writing first, so a fault leaves memory unchanged.
inline bool write_wrapped(GuestMemory& mem, uint64_t ea, unsigned as, const uint8_t* src,
                          uint64_t len, uint64_t* fault_at) {
  uint64_t probe = ea;
  for (uint64_t left = len; left != 0;) {
    const uint64_t piece = as == 64 ? left : std::min(left, size_mask(as) - probe + 1);
    const uint64_t ok = mem.accessible(probe, piece, Access::Write);
    if (ok < piece) {
      *fault_at = probe + ok;
      return false;
    }
    left -= piece;
    probe = ea_add(probe, piece, as);
  }
  return copy_wrapped(mem, ea, as, const_cast<uint8_t*>(src), len, Access::Write, fault_at);
}

}  // namespace padlock
