// libFuzzer target, differential: REP XCRYPTECB/CBC/CFB/OFB (models/ace, through
// Padlock::execute) against OpenSSL EVP on the same key, IV and data, every key size and
// direction, with interrupts at fuzzed cycles (each resume continues from the registers
// with EFLAGS[30] cleared, as an interrupt leaves it: §1.7, §1.8).
// Input: byte 0 = model (bit 0: esther / nano), mode (bits 1-2), key size (bits 3-4),
// decrypt (bit 5), interrupt spacing (bits 6-7, x 97 clocks; 0 = none); 32 key bytes,
// 16 IV bytes, then the data (whole blocks).
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/aes.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/flat_memory.hpp"
#include "models/padlock.hpp"

using namespace padlock;

namespace {

constexpr uint64_t kCw = 0x10000, kKey = 0x11000, kIv = 0x12000, kIn = 0x100000, kOut = 0x200000,
                   kMaxData = 4096;

struct Rig {
  Padlock padlock;
  FlatMemory mem;
  explicit Rig(const char* model) : padlock(*find_cpu_model(model)) {
    mem.map(kCw, 0x3000);
    // Slack after the input: Nano's prefetch erratum reads ECB in 128-byte groups, CBC in
    // 64 and CTR in 32 (docs/fidelity/ace.md), and a group that starts at a resumed ESI
    // can reach past the last block, as clients that do not split the tail see.
    mem.map(kIn, kMaxData + 4096);
    mem.map(kOut, kMaxData);
  }
};

// OpenSSL's key schedule as PadLock clients store it for KEYGN = 1 (§3.2): AES_KEY words,
// byte-swapped when the library keeps them host-endian, so that the raw key shows first.
void client_schedule(const uint8_t* key, int bits, bool decrypt, uint8_t out[256]) {
  AES_KEY ks;
  if (decrypt) {
    AES_set_decrypt_key(key, bits, &ks);
  } else {
    AES_set_encrypt_key(key, bits, &ks);
  }
  std::memset(out, 0, 256);
  std::memcpy(out, ks.rd_key, 16 * (ks.rounds + 1));
  if (std::memcmp(out + (decrypt ? 16 * ks.rounds : 0), key, 4) != 0) {
    for (int w = 0; w < 4 * (ks.rounds + 1); ++w) {
      std::swap(out[4 * w], out[4 * w + 3]);
      std::swap(out[4 * w + 1], out[4 * w + 2]);
    }
  }
}

const EVP_CIPHER* cipher(int mode, int bits) {
  static const EVP_CIPHER* (*const table[4][3])() = {
      {EVP_aes_128_ecb, EVP_aes_192_ecb, EVP_aes_256_ecb},
      {EVP_aes_128_cbc, EVP_aes_192_cbc, EVP_aes_256_cbc},
      {EVP_aes_128_cfb128, EVP_aes_192_cfb128, EVP_aes_256_cfb128},
      {EVP_aes_128_ofb, EVP_aes_192_ofb, EVP_aes_256_ofb}};
  return table[mode][(bits - 128) / 64]();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 + 32 + 16) return 0;
  static Rig esther("esther-c5j"), nano("nano");
  Rig& r = (data[0] & 1) ? nano : esther;
  const int mode = (data[0] >> 1) & 3;  // ECB, CBC, CFB, OFB
  const int bits = 128 + 64 * std::min((data[0] >> 3) & 3, 2);
  const bool decrypt = (data[0] & 0x20) != 0;
  const uint64_t spacing = static_cast<uint64_t>(data[0] >> 6) * 97;
  const uint8_t* key = data + 1;
  const uint8_t* iv = data + 33;
  const size_t n = std::min<size_t>((size - 49) / 16, kMaxData / 16);
  const uint8_t* in = data + 49;

  // §3.2: FIPS rounds; hardware key expansion for 128-bit keys, else the client's schedule
  // (the decryption schedule for ECB/CBC decryption only: CFB and OFB use the cipher).
  const uint32_t rounds = bits == 128 ? 10 : bits == 192 ? 12 : 14;
  const uint32_t ksize = bits == 128 ? 0 : bits == 192 ? 1 : 2;
  const bool keygn = bits != 128;
  const uint32_t cw = rounds | (keygn ? 1u << 7 : 0) | (decrypt ? 1u << 9 : 0) | ksize << 10;
  uint8_t cwb[16] = {uint8_t(cw), uint8_t(cw >> 8), 0, 0};
  std::memcpy(r.mem.host(kCw, 16), cwb, 16);
  if (keygn) {
    client_schedule(key, bits, decrypt && mode < 2, r.mem.host(kKey, 256));
  } else {
    std::memcpy(r.mem.host(kKey, 16), key, 16);
  }
  std::memcpy(r.mem.host(kIv, 16), iv, 16);
  if (n != 0) std::memcpy(r.mem.host(kIn, 16 * n), in, 16 * n);

  ArchState s;
  s[Gpr::AX] = kIv;
  s[Gpr::BX] = kKey;
  s[Gpr::DX] = kCw;
  s[Gpr::SI] = kIn;
  s[Gpr::DI] = kOut;
  s[Gpr::CX] = n;
  static const uint8_t kModrm[4] = {0xC8, 0xD0, 0xE0, 0xE8};  // ECB, CBC, CFB, OFB (§3.1)
  const uint8_t bytes[4] = {0xF3, 0x0F, 0xA7, kModrm[mode]};
  const isa::Decoded d = isa::decode(bytes, 4, isa::CpuMode::Protected32);
  ExecEnv env;
  for (int resumes = 0;; ++resumes) {
    if (spacing != 0) env.interrupt_at = env.now + spacing;
    const Outcome o = r.padlock.execute(d, s, r.mem, env);
    env.now += o.cycles + 1;
    if (o.status == Status::Completed) break;
    if (o.status != Status::Interrupted || resumes > 1 << 16) __builtin_trap();
    s.set_eflags30(false);  // the interrupt stored EFLAGS (§1.8)
  }

  uint8_t want[kMaxData + 32];
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EVP_CipherInit_ex(ctx, cipher(mode, bits), nullptr, key, mode == 0 ? nullptr : iv,
                    decrypt ? 0 : 1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  int got = 0;
  EVP_CipherUpdate(ctx, want, &got, in, static_cast<int>(16 * n));
  EVP_CIPHER_CTX_free(ctx);
  if (n != 0 && std::memcmp(r.mem.host(kOut, 16 * n), want, 16 * n) != 0) __builtin_trap();
  if (s[Gpr::CX] != 0 || s[Gpr::SI] != kIn + 16 * n || s[Gpr::DI] != kOut + 16 * n) {
    __builtin_trap();
  }
  return 0;
}
