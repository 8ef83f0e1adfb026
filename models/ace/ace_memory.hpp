// Guest memory access for ACE at the instruction's address size (§3.1 "REP prefix": 67h
// selects SI/ESI/RSI and friends). Effective addresses wrap at 2^16 or 2^32; a range that
// wraps is split there. ES is flat, so linear = effective address.
#pragma once

#include <cstdint>

#include "models/unit_interface.hpp"

namespace padlock::ace {

// Bytes from ea up to the wrap of the address space (saturating at 2^64 - 1).
inline uint64_t bytes_to_wrap(uint64_t ea, unsigned asz) {
  if (asz == 64) return ea == 0 ? ~0ull : ~ea + 1;
  return (1ull << asz) - ea;
}

// probe() across the wrap of the address space.
uint64_t probe_wrapping(GuestMemory& mem, uint64_t ea, uint64_t len, unsigned asz, Access access);

// How many bytes of [ea, ea+len) (wrapping at the address size) are accessible; the first
// faulting byte is at ea_add(ea, result) when result < len. A range that does not wrap
// (nearly every one) is one question to the memory.
inline uint64_t probe(GuestMemory& mem, uint64_t ea, uint64_t len, unsigned asz, Access access) {
  if (len == 0) return 0;
  if (len <= bytes_to_wrap(ea, asz)) return mem.accessible(ea, len, access);
  return probe_wrapping(mem, ea, len, asz, access);
}
// Copies that wrap at the address size. The range must have been probed.
void read_wrap(GuestMemory& mem, uint64_t ea, void* dst, uint64_t len, unsigned asz);
void write_wrap(GuestMemory& mem, uint64_t ea, const void* src, uint64_t len, unsigned asz);

}  // namespace padlock::ace
