// libFuzzer target, differential: CCS_ENCRYPT (SM4, models/gmi) in ECB, CBC, CFB, OFB and
// CTR, both directions, against OpenSSL 3's SM4, with interrupts at fuzzed cycles; the IV
// the unit leaves at EDX must continue the same stream (OpenSSL over both halves).
// Input: byte 0 = mode (bits 0..2, mod 5), decrypt (bit 3), interrupt spacing (bits 4..7,
// x 64 clocks; 0 = none); then the 16-byte key, the 16-byte IV, and the data (whole blocks).
// CTR keeps its IV's low 16 bits below the wrap (the 16-bit counter has no carry; the unit
// test covers the wrap).
#include <openssl/evp.h>

#include <cstring>
#include <vector>

#include "fuzz/zx_rig.hpp"

using namespace padlock;

namespace {

const EVP_CIPHER* cipher(unsigned mode) {
  static const EVP_CIPHER* const kCiphers[5] = {EVP_sm4_ecb(), EVP_sm4_cbc(), EVP_sm4_cfb128(),
                                                EVP_sm4_ofb(), EVP_sm4_ctr()};
  return kCiphers[mode];
}

std::vector<uint8_t> reference(unsigned mode, bool decrypt, const uint8_t* key, const uint8_t* iv,
                               const uint8_t* in, size_t len) {
  EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
  EVP_CipherInit_ex(c, cipher(mode), nullptr, key, mode == 0 ? nullptr : iv, decrypt ? 0 : 1);
  EVP_CIPHER_CTX_set_padding(c, 0);
  std::vector<uint8_t> out(len + 16);
  int n = 0, m = 0;
  EVP_CipherUpdate(c, out.data(), &n, in, static_cast<int>(len));
  EVP_CipherFinal_ex(c, out.data() + n, &m);
  EVP_CIPHER_CTX_free(c);
  out.resize(static_cast<size_t>(n + m));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 33 || size - 33 > fuzz::ZxRig::kMax) return 0;
  static fuzz::ZxRig r;
  const unsigned mode = (data[0] & 7) % 5;
  const bool decrypt = (data[0] & 8) != 0;
  const uint64_t spacing = static_cast<uint64_t>(data[0] >> 4) * 64;
  const uint8_t* key = data + 1;
  uint8_t iv[16];
  std::memcpy(iv, data + 17, 16);
  const size_t blocks = (size - 33) / 16;
  const uint8_t* in = data + 33;
  if (mode == 4 && (unsigned{iv[14]} << 8 | iv[15]) + blocks + 1 > 0xFFFF) iv[14] = 0;
  if (blocks > 0x7FFF) return 0;
  std::memcpy(r.mem.host(fuzz::ZxRig::kState, 16), key, 16);
  std::memcpy(r.mem.host(fuzz::ZxRig::kState + 16, 16), iv, 16);
  if (blocks != 0) std::memcpy(r.mem.host(fuzz::ZxRig::kInput, blocks * 16), in, blocks * 16);
  ArchState s;
  s[Gpr::AX] = 0x20u | (0x40u << mode) | (decrypt ? 1u : 0u);
  s[Gpr::BX] = fuzz::ZxRig::kState;
  s[Gpr::DX] = fuzz::ZxRig::kState + 16;
  s[Gpr::CX] = blocks;
  s[Gpr::SI] = fuzz::ZxRig::kInput;
  s[Gpr::DI] = fuzz::ZxRig::kOutput;
  r.run({0xF3, 0x0F, 0xA7, 0xF0}, s, spacing);
  // One more block from the IV the unit left: the stream continues.
  const uint8_t extra[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  std::memcpy(r.mem.host(fuzz::ZxRig::kInput + blocks * 16, 16), extra, 16);
  ArchState s2;
  s2[Gpr::AX] = s[Gpr::AX];
  s2[Gpr::BX] = fuzz::ZxRig::kState;
  s2[Gpr::DX] = fuzz::ZxRig::kState + 16;
  s2[Gpr::CX] = 1;
  s2[Gpr::SI] = fuzz::ZxRig::kInput + blocks * 16;
  s2[Gpr::DI] = fuzz::ZxRig::kOutput + blocks * 16;
  r.run({0xF3, 0x0F, 0xA7, 0xF0}, s2, 0);
  std::vector<uint8_t> all(in, in + blocks * 16);
  all.insert(all.end(), extra, extra + 16);
  const std::vector<uint8_t> want = reference(mode, decrypt, key, iv, all.data(), all.size());
  if (std::memcmp(r.mem.host(fuzz::ZxRig::kOutput, all.size()), want.data(), all.size()) != 0)
    __builtin_trap();
  if (s[Gpr::CX] != 0 || s[Gpr::SI] != fuzz::ZxRig::kInput + blocks * 16) __builtin_trap();
  return 0;
}
