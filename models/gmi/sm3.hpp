// SM3 compression (GB/T 32905-2016 §5.3), for CCS_HASH (GMI User Manual §1.1). Padding is
// the unit's (EAX = 0) or the software's (EAX = -1).
#pragma once

#include <cstddef>
#include <cstdint>

namespace padlock {

// GB/T 32905-2016 §4.1: the initial value IV.
inline constexpr uint32_t kSm3Iv[8] = {0x7380166f, 0x4914b2b9, 0x172442d7, 0xda8a0600,
                                       0xa96f30bc, 0x163138aa, 0xe38dee4d, 0xb0fb0e4e};

// Compresses `blocks` 64-byte big-endian blocks into `v` (V0..V7 as integers).
void sm3_blocks(uint32_t v[8], const uint8_t* data, size_t blocks);

}  // namespace padlock
