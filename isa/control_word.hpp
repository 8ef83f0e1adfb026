// The ACE control word (guide §3.2 "Control word fields"): 128 bits, only 11:0 defined.
#pragma once

#include <cstdint>

namespace padlock::isa {

enum class KeySize : uint8_t { Aes128 = 0, Aes192 = 1, Aes256 = 2, Reserved = 3 };

struct ControlWord {
  uint32_t raw = 0;               // bits 31:0 of the 128-bit word; bits 127:12 are RES
  bool reserved_nonzero = false;  // any of bits 127:12 set (RES, §3.2)

  // ROUND, CW[3:0]: 0 encrypts with 16 rounds.
  unsigned rounds() const {
    unsigned r = raw & 0xF;
    return r == 0 ? 16 : r;
  }
  bool dgest() const { return raw >> 4 & 1; }    // CW[4]  digest (MAC) mode, CBC/CFB
  bool align() const { return raw >> 5 & 1; }    // CW[5]  unaligned-data microcode (ACE2)
  bool ciphr() const { return raw >> 6 & 1; }    // CW[6]  1 = undefined
  bool keygn() const { return raw >> 7 & 1; }    // CW[7]  1 = keys from memory
  bool inter() const { return raw >> 8 & 1; }    // CW[8]  intermediate results
  bool decrypt() const { return raw >> 9 & 1; }  // CW[9]  CRYPT: 1 = decrypt
  KeySize ksize() const { return static_cast<KeySize>(raw >> 10 & 3); }  // CW[11:10]

  static ControlWord from_bytes(const uint8_t bytes[16]) {
    ControlWord cw;
    cw.raw = uint32_t(bytes[0]) | uint32_t(bytes[1]) << 8 | uint32_t(bytes[2]) << 16 |
             uint32_t(bytes[3]) << 24;
    bool res = (cw.raw & ~0xFFFu) != 0;
    for (int i = 4; i < 16; ++i) res |= bytes[i] != 0;
    cw.reserved_nonzero = res;
    return cw;
  }
};

}  // namespace padlock::isa
