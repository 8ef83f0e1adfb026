// libFuzzer target, differential: CCS_HASH (SM3, models/gmi) in both modes against OpenSSL
// 3's SM3 on the same message. EAX = 0: the unit pads; EAX = -1: the target pads and hands
// whole blocks, with interrupts at fuzzed cycles.
// Input: byte 0 selects the mode (bit 0: blocks) and the interrupt spacing (bits 1..7,
// x 64 clocks; 0 = none); the rest is the message.
#include <openssl/evp.h>

#include <cstring>
#include <vector>

#include "fuzz/zx_rig.hpp"
#include "models/gmi/sm3.hpp"

using namespace padlock;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size - 1 > fuzz::ZxRig::kMax - 128) return 0;
  static fuzz::ZxRig r;
  const bool blocks = (data[0] & 1) != 0;
  const uint64_t spacing = static_cast<uint64_t>(data[0] >> 1) * 64;
  const uint8_t* msg = data + 1;
  const size_t len = size - 1;
  std::vector<uint8_t> p(msg, msg + len);
  if (blocks) {
    p.push_back(0x80);
    while (p.size() % 64 != 56) p.push_back(0);
    for (int i = 7; i >= 0; --i) p.push_back(static_cast<uint8_t>(uint64_t{len} * 8 >> (8 * i)));
  }
  if (!p.empty()) std::memcpy(r.mem.host(fuzz::ZxRig::kInput, p.size()), p.data(), p.size());
  uint8_t* st = r.mem.host(fuzz::ZxRig::kState, 32);
  for (int i = 0; i < 8; ++i)
    for (int b = 0; b < 4; ++b) st[4 * i + b] = static_cast<uint8_t>(kSm3Iv[i] >> (24 - 8 * b));
  ArchState s;
  s[Gpr::AX] = blocks ? 0xFFFFFFFFu : 0;
  s[Gpr::BX] = 0x20;
  s[Gpr::CX] = blocks ? p.size() / 64 : len;
  s[Gpr::SI] = fuzz::ZxRig::kInput;
  s[Gpr::DI] = fuzz::ZxRig::kState;
  r.run({0xF3, 0x0F, 0xA6, 0xE8}, s, blocks ? spacing : 0);
  uint8_t want[32];
  unsigned n = 0;
  EVP_Digest(msg, len, want, &n, EVP_sm3(), nullptr);
  if (std::memcmp(r.mem.host(fuzz::ZxRig::kState, 32), want, 32) != 0) __builtin_trap();
  if (s[Gpr::SI] != fuzz::ZxRig::kInput + p.size()) __builtin_trap();
  if (s[Gpr::CX] != (blocks ? 0 : len) || s[Gpr::AX] != (blocks ? 0xFFFFFFFFu : len))
    __builtin_trap();
  return 0;
}
