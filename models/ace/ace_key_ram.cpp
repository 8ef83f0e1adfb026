#include "models/ace/ace_key_ram.hpp"

#include <cstring>

namespace padlock::ace {

void load_key_ram(const isa::ControlWord& cw, const uint8_t* bytes, RoundKeys& enc,
                  RoundKeys& dec) {
  const unsigned rounds = cw.rounds();
  if (!cw.keygn()) {
    expand_key128(bytes, rounds, enc);
    enc.full_last = cw.inter();
    inverse_schedule(enc, dec);
    return;
  }
  enc = RoundKeys{};
  enc.rounds = rounds;
  enc.full_last = cw.inter();
  for (unsigned i = 0; i <= rounds; ++i)
    std::memcpy(enc.k[i], bytes + 16 * (i % kKeyRamEntries), 16);
  dec = enc;
}

}  // namespace padlock::ace
