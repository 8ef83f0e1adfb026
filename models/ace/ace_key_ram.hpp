// ACE's key RAM (§3.2 "Extended keys"): what a REP XCRYPT with EFLAGS[30] = 0 loads.
#pragma once

#include <cstdint>

#include "isa/control_word.hpp"
#include "models/ace/aes_core.hpp"

namespace padlock::ace {

// Bytes at ES:[EBX] the load reads: the 128-bit key (KEYGN = 0) or sixteen 128-bit
// values whatever the key size (KEYGN = 1, §3.2).
inline unsigned key_load_bytes(const isa::ControlWord& cw) {
  return cw.keygn() ? 256 : 16;
}

// Fills the forward and inverse schedules for the control word's round count.
// KEYGN = 0: FIPS-197 expansion of the 128-bit key, any round count, and its equivalent
// inverse. KEYGN = 1: the sixteen values as stored; the forward cipher reads them as
// w[] (FIPS-197 Fig. 11 order), the inverse cipher as dw[] (Fig. 15 order), which is what
// OpenSSL (AES_set_decrypt_key) and Linux (key_dec) store. A 16-round cipher needs a
// seventeenth value: the key RAM index wraps to entry 0 (Diag::AceKeyRam16Rounds).
void load_key_ram(const isa::ControlWord& cw, const uint8_t* bytes, RoundKeys& enc, RoundKeys& dec);

}  // namespace padlock::ace
