// libFuzzer target, differential: REP XSHA512 / XSHA384 (models/phe/phe2_unit, through
// Padlock::execute) against OpenSSL's SHA512 / SHA384 on the same message, padded by the
// target as padlock_sha512_blocks' callers do, with interrupts at fuzzed cycles.
// Input: byte 0 selects the hash (bit 0: SHA-384) and the interrupt spacing (bits 1..7,
// x 64 clocks; 0 = none); the rest is the message.
#include <openssl/evp.h>

#include <cstring>
#include <vector>

#include "fuzz/zx_rig.hpp"
#include "models/phe/sha512.hpp"

using namespace padlock;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size - 1 > fuzz::ZxRig::kMax - 256) return 0;
  static fuzz::ZxRig r;
  const bool sha384 = (data[0] & 1) != 0;
  const uint64_t spacing = static_cast<uint64_t>(data[0] >> 1) * 64;
  const uint8_t* msg = data + 1;
  const size_t len = size - 1;
  std::vector<uint8_t> p(msg, msg + len);
  p.push_back(0x80);
  while (p.size() % 128 != 112) p.push_back(0);
  for (int i = 0; i < 8; ++i) p.push_back(0);
  for (int i = 7; i >= 0; --i) p.push_back(static_cast<uint8_t>(uint64_t{len} * 8 >> (8 * i)));
  std::memcpy(r.mem.host(fuzz::ZxRig::kInput, p.size()), p.data(), p.size());
  std::memcpy(r.mem.host(fuzz::ZxRig::kState, 64), sha384 ? kSha384Iv : kSha512Iv, 64);
  ArchState s;
  s[Gpr::CX] = p.size() / 128;
  s[Gpr::SI] = fuzz::ZxRig::kInput;
  s[Gpr::DI] = fuzz::ZxRig::kState;
  r.run({0xF3, 0x0F, 0xA6, uint8_t(sha384 ? 0xD8 : 0xE0)}, s, spacing);
  uint8_t want[64];
  unsigned n = 0;
  EVP_Digest(msg, len, want, &n, sha384 ? EVP_sha384() : EVP_sha512(), nullptr);
  const uint8_t* h = r.mem.host(fuzz::ZxRig::kState, 64);
  // The state words are little-endian; the digest is their big-endian bytes.
  for (unsigned i = 0; i < n; ++i)
    if (h[(i / 8) * 8 + 7 - i % 8] != want[i]) __builtin_trap();
  if (s[Gpr::CX] != 0 || s[Gpr::SI] != fuzz::ZxRig::kInput + p.size()) __builtin_trap();
  return 0;
}
