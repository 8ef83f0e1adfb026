// Test rig for REP XSHA: a Padlock on FlatMemory, the instruction decoded from its bytes,
// and OpenSSL libcrypto as the independent reference (final digests and the chaining state
// after whole blocks).
#pragma once

#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/counting_sink.hpp"
#include "common/random_bytes.hpp"
#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/flat_memory.hpp"
#include "models/padlock.hpp"

namespace padlock::test {

inline constexpr uint32_t kSha1Init[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476,
                                          0xC3D2E1F0};
inline constexpr uint32_t kSha256Init[8] = {0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
                                            0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19};

// OpenSSL's chaining state after the whole blocks of `data` (no padding).
inline std::vector<uint32_t> openssl_state_after_blocks(bool sha256, const uint8_t* data,
                                                        size_t blocks) {
  if (sha256) {
    SHA256_CTX c;
    SHA256_Init(&c);
    for (size_t i = 0; i < blocks; ++i) SHA256_Transform(&c, data + 64 * i);
    return std::vector<uint32_t>(c.h, c.h + 8);
  }
  SHA_CTX c;
  SHA1_Init(&c);
  for (size_t i = 0; i < blocks; ++i) SHA1_Transform(&c, data + 64 * i);
  return {c.h0, c.h1, c.h2, c.h3, c.h4};
}

inline std::vector<uint8_t> openssl_digest(bool sha256, const uint8_t* data, size_t len) {
  std::vector<uint8_t> out(sha256 ? 32 : 20);
  if (sha256) {
    SHA256(data, len, out.data());
  } else {
    SHA1(data, len, out.data());
  }
  return out;
}

class XshaRig {
 public:
  static constexpr uint64_t kHashVa = 0x10000;  // 128-byte hash area (§4.1)
  static constexpr uint64_t kInputVa = 0x400000;

  explicit XshaRig(const char* model = "esther-c5j", uint64_t input_capacity = 1 << 20)
      : cpu_(*find_cpu_model(model)), padlock_(cpu_) {
    mem.map(kHashVa, 4096);
    mem.map(kInputVa, input_capacity + 4096);
    env.diag = &diag;
  }

  const CpuModel& cpu() const { return cpu_; }
  Padlock& padlock() { return padlock_; }

  // Writes the FIPS 180-2 initial constants at EDI (§4.1 table, little-endian words).
  void init_state(bool sha256, uint64_t va = kHashVa) {
    if (sha256) {
      std::memcpy(mem.host(va, 32), kSha256Init, 32);
    } else {
      std::memcpy(mem.host(va, 20), kSha1Init, 20);
    }
  }
  void put_input(const uint8_t* data, size_t len, uint64_t va = kInputVa) {
    if (len != 0) std::memcpy(mem.host(va, len), data, len);
  }
  std::vector<uint32_t> state(bool sha256, uint64_t va = kHashVa) {
    std::vector<uint32_t> w(sha256 ? 8 : 5);
    std::memcpy(w.data(), mem.host(va, w.size() * 4), w.size() * 4);
    return w;
  }
  // §4.1: the stored words BSWAPped give the FIPS 180-2 digest.
  std::vector<uint8_t> digest(bool sha256, uint64_t va = kHashVa) {
    std::vector<uint8_t> out;
    for (uint32_t w : state(sha256, va)) {
      for (int i = 3; i >= 0; --i) out.push_back(static_cast<uint8_t>(w >> (8 * i)));
    }
    return out;
  }

  // Sets EAX/ECX/ESI/EDI for a fresh hash of `len` bytes at kInputVa.
  void setup_regs(uint64_t len, uint64_t esi = kInputVa, uint64_t edi = kHashVa) {
    s.gpr[static_cast<int>(Gpr::AX)] = 0;
    s.gpr[static_cast<int>(Gpr::CX)] = len;
    s.gpr[static_cast<int>(Gpr::SI)] = esi;
    s.gpr[static_cast<int>(Gpr::DI)] = edi;
  }

  // A hash of `len` bytes of `data` from the start (§4.1): the input at ESI = kInputVa, the
  // initial constants at EDI = `edi`, EAX = 0, ECX = len.
  void start(bool sha256, const uint8_t* data, size_t len, uint64_t edi = kHashVa) {
    put_input(data, len);
    init_state(sha256, edi);
    setup_regs(len, kInputVa, edi);
  }
  // The block form Nano clients use (PheParams.partial_rax_minus1): `blocks` 64-byte
  // blocks of `data` at kInputVa, ECX = blocks, EAX/RAX = `ax` (all ones at the address
  // size selects the form).
  void start_blocks(bool sha256, const uint8_t* data, size_t blocks, uint64_t ax = 0xFFFFFFFFu) {
    start(sha256, data, 64 * blocks);
    s.gpr[static_cast<int>(Gpr::CX)] = blocks;
    s.gpr[static_cast<int>(Gpr::AX)] = ax;
  }

  // Decodes the instruction bytes (F3 0F A6 C8/D0 with optional prefixes) and executes it
  // through Padlock (enable checks, then PheUnit).
  Outcome exec(bool sha256, isa::CpuMode mode = isa::CpuMode::Protected32,
               std::vector<uint8_t> prefixes = {}) {
    std::vector<uint8_t> bytes = prefixes;
    for (uint8_t b : {uint8_t{0xF3}, uint8_t{0x0F}, uint8_t{0xA6}, uint8_t(sha256 ? 0xD0 : 0xC8)}) {
      bytes.push_back(b);
    }
    last_decoded = isa::decode(bytes.data(), bytes.size(), mode);
    const Outcome o = padlock_.execute(last_decoded, s, mem, env);
    env.now += o.cycles;
    return o;
  }

  FlatMemory mem;
  ArchState s;
  ExecEnv env;
  CountingSink diag;
  isa::Decoded last_decoded;

 private:
  const CpuModel& cpu_;
  Padlock padlock_;
};

inline std::vector<uint8_t> from_hex(const std::string& h) {
  std::vector<uint8_t> out(h.size() / 2);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<uint8_t>(std::stoul(h.substr(2 * i, 2), nullptr, 16));
  return out;
}

inline uint64_t reg(const ArchState& s, Gpr r) {
  return s[r];
}

// Tests run for SHA-1 (false) and SHA-256 (true), named "Sha1" and "Sha256" by
// INSTANTIATE_TEST_SUITE_P(..., ::testing::Bool(), sha_name).
class ShaTest : public ::testing::TestWithParam<bool> {
 protected:
  bool sha256() const { return GetParam(); }
};
inline std::string sha_name(const ::testing::TestParamInfo<bool>& i) {
  return i.param ? "Sha256" : "Sha1";
}

}  // namespace padlock::test
