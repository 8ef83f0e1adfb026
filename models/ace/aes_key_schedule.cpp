// FIPS-197 key expansion for hardware-generated keys (§3.2) and the equivalent inverse
// cipher schedule (FIPS-197 §5.3.5, Fig. 15).
#include <cstring>

#include "models/ace/aes_core.hpp"
#include "models/ace/aes_tables.hpp"

namespace padlock::ace {

void expand_key128(const uint8_t key[16], unsigned rounds, RoundKeys& enc) {
  // w[] as bytes: word i is w[4i..4i+3]. Nk = 4, so every fourth word takes
  // SubWord(RotWord()) ^ Rcon; Rcon simply keeps doubling in GF(2^8) past round 10.
  uint8_t w[4 * (kMaxRounds + 1)][4];
  std::memcpy(w, key, 16);
  uint8_t rcon = 0x01;
  const unsigned words = 4 * (rounds + 1);
  for (unsigned i = 4; i < words; ++i) {
    uint8_t t[4] = {w[i - 1][0], w[i - 1][1], w[i - 1][2], w[i - 1][3]};
    if (i % 4 == 0) {
      const uint8_t t0 = t[0];
      t[0] = uint8_t(tables::kSbox.fwd[t[1]] ^ rcon);
      t[1] = tables::kSbox.fwd[t[2]];
      t[2] = tables::kSbox.fwd[t[3]];
      t[3] = tables::kSbox.fwd[t0];
      rcon = tables::xtime(rcon);
    }
    for (int b = 0; b < 4; ++b) w[i][b] = uint8_t(w[i - 4][b] ^ t[b]);
  }
  enc = RoundKeys{};
  std::memcpy(enc.k, w, 16 * (rounds + 1));
  enc.rounds = rounds;
}

void inv_mix_columns(const uint8_t in[16], uint8_t out[16]) {
  using tables::gmul;
  uint8_t tmp[16];
  for (int c = 0; c < 4; ++c) {
    const uint8_t* a = in + 4 * c;
    tmp[4 * c + 0] = uint8_t(gmul(a[0], 14) ^ gmul(a[1], 11) ^ gmul(a[2], 13) ^ gmul(a[3], 9));
    tmp[4 * c + 1] = uint8_t(gmul(a[0], 9) ^ gmul(a[1], 14) ^ gmul(a[2], 11) ^ gmul(a[3], 13));
    tmp[4 * c + 2] = uint8_t(gmul(a[0], 13) ^ gmul(a[1], 9) ^ gmul(a[2], 14) ^ gmul(a[3], 11));
    tmp[4 * c + 3] = uint8_t(gmul(a[0], 11) ^ gmul(a[1], 13) ^ gmul(a[2], 9) ^ gmul(a[3], 14));
  }
  std::memcpy(out, tmp, 16);
}

void inverse_schedule(const RoundKeys& enc, RoundKeys& dec) {
  const unsigned r = enc.rounds;
  RoundKeys d;
  d.rounds = r;
  d.full_last = enc.full_last;
  std::memcpy(d.k[0], enc.k[r], 16);
  for (unsigned i = 1; i < r; ++i) inv_mix_columns(enc.k[r - i], d.k[i]);
  std::memcpy(d.k[r], enc.k[0], 16);
  dec = d;
}

}  // namespace padlock::ace
