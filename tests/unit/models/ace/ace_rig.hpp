// Test rig for ACE: a CPU model, FlatMemory with a fixed layout, ArchState, and helpers
// that run one REP XCRYPT through AceUnit or Padlock, plus OpenSSL references.
#pragma once

#define OPENSSL_SUPPRESS_DEPRECATED
#include <gtest/gtest.h>
#include <openssl/aes.h>
#include <openssl/evp.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/random_bytes.hpp"
#include "common/vector_file.hpp"
#include "isa/decoder.hpp"
#include "models/ace/ace_unit.hpp"
#include "models/cpu_model.hpp"
#include "models/flat_memory.hpp"
#include "models/padlock.hpp"

namespace padlock::test {

using Bytes = std::vector<uint8_t>;

inline Bytes hex(const std::string& s) {
  Bytes out(s.size() / 2);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = uint8_t(std::stoul(s.substr(2 * i, 2), nullptr, 16));
  return out;
}

inline std::string to_hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}
inline std::string to_hex(const Bytes& b) {
  return to_hex(b.data(), b.size());
}

// NIST SP 800-38A Appendix F: the AES-128 key of every example and the CTR initial
// counter block (F.5), also the §6.6 sample's.
inline const Bytes kSp800Key = hex("2b7e151628aed2a6abf7158809cf4f3c");
inline const Bytes kSp800Ctr = hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");

// Control word fields (§3.2).
namespace cwf {
constexpr uint32_t kDgest = 1u << 4, kAlign = 1u << 5, kCiphr = 1u << 6, kKeygn = 1u << 7,
                   kInter = 1u << 8, kDecrypt = 1u << 9;
constexpr uint32_t ksize(unsigned bits) {
  return bits == 128 ? 0 : bits == 192 ? 1u << 10 : 2u << 10;
}
constexpr unsigned rounds_for(unsigned bits) {
  return bits == 128 ? 10 : bits == 192 ? 12 : 14;
}
// The natural control word for a key size: FIPS rounds, hardware keys for 128 bits.
constexpr uint32_t natural(unsigned bits, bool decrypt) {
  return rounds_for(bits) | ksize(bits) | (bits == 128 ? 0 : kKeygn) | (decrypt ? kDecrypt : 0);
}
}  // namespace cwf

inline isa::InsnId xcrypt_id(const std::string& mode) {
  static const std::map<std::string, isa::InsnId> m = {{"ECB", isa::InsnId::XcryptEcb},
                                                       {"CBC", isa::InsnId::XcryptCbc},
                                                       {"CTR", isa::InsnId::XcryptCtr},
                                                       {"CFB", isa::InsnId::XcryptCfb},
                                                       {"OFB", isa::InsnId::XcryptOfb}};
  return m.at(mode);
}

// Decodes the real encoding, so the decoder's view (length, address size) is used.
inline isa::Decoded decode_xcrypt(isa::InsnId id, unsigned addr_size) {
  std::vector<uint8_t> bytes;
  isa::CpuMode cpu_mode = addr_size == 64 ? isa::CpuMode::Long64 : isa::CpuMode::Protected32;
  if (addr_size == 16) bytes.push_back(0x67);
  bytes.insert(bytes.end(), {0xF3, 0x0F, 0xA7, isa::info(id).modrm});
  isa::Decoded d = isa::decode(bytes.data(), bytes.size(), cpu_mode);
  EXPECT_EQ(d.status, isa::DecodeStatus::Ok);
  EXPECT_EQ(d.id, id);
  EXPECT_EQ(d.addr_size, addr_size);
  return d;
}

class RecordingSink final : public DiagnosticSink {
 public:
  void report(Diag d, uint64_t) override { ++counts[d]; }
  int count(Diag d) const {
    auto it = counts.find(d);
    return it == counts.end() ? 0 : it->second;
  }
  std::map<Diag, int> counts;
};

// OpenSSL's key schedule as a PadLock client stores it (engines/e_padlock.c: AES_set_
// {en,de}crypt_key, byte order fixed up when the library keeps host-endian words), padded
// to the 256 bytes the hardware reads (§3.2).
inline Bytes client_schedule(const Bytes& key, bool decrypt) {
  AES_KEY ks;
  const int bits = int(key.size() * 8);
  if (decrypt)
    AES_set_decrypt_key(key.data(), bits, &ks);
  else
    AES_set_encrypt_key(key.data(), bits, &ks);
  Bytes out(256, 0);
  std::memcpy(out.data(), ks.rd_key, 16 * (ks.rounds + 1));
  // The schedule must hold the raw key at its end (decrypt) or start (encrypt).
  const uint8_t* probe = out.data() + (decrypt ? 16 * ks.rounds : 0);
  if (std::memcmp(probe, key.data(), 4) != 0) {
    for (int w = 0; w < 4 * (ks.rounds + 1); ++w)
      std::swap(out[4 * w], out[4 * w + 3]), std::swap(out[4 * w + 1], out[4 * w + 2]);
  }
  return out;
}

// OpenSSL EVP one-shot (the independent reference). mode: "ECB", "CBC", "CFB", "OFB",
// "CTR" (CTR with a full 128-bit counter: callers keep bytes 14-15 from carrying).
inline Bytes evp(const std::string& mode, const Bytes& key, const Bytes& iv, const Bytes& in,
                 bool enc) {
  const EVP_CIPHER* c = nullptr;
  const size_t kb = key.size() * 8;
  if (mode == "ECB")
    c = kb == 128 ? EVP_aes_128_ecb() : kb == 192 ? EVP_aes_192_ecb() : EVP_aes_256_ecb();
  if (mode == "CBC")
    c = kb == 128 ? EVP_aes_128_cbc() : kb == 192 ? EVP_aes_192_cbc() : EVP_aes_256_cbc();
  if (mode == "CFB")
    c = kb == 128 ? EVP_aes_128_cfb128() : kb == 192 ? EVP_aes_192_cfb128() : EVP_aes_256_cfb128();
  if (mode == "OFB")
    c = kb == 128 ? EVP_aes_128_ofb() : kb == 192 ? EVP_aes_192_ofb() : EVP_aes_256_ofb();
  if (mode == "CTR")
    c = kb == 128 ? EVP_aes_128_ctr() : kb == 192 ? EVP_aes_192_ctr() : EVP_aes_256_ctr();
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EVP_CipherInit_ex(ctx, c, nullptr, key.data(), iv.empty() ? nullptr : iv.data(), enc ? 1 : 0);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  Bytes out(in.size() + 32);
  int n1 = 0, n2 = 0;
  EVP_CipherUpdate(ctx, out.data(), &n1, in.data(), int(in.size()));
  EVP_CipherFinal_ex(ctx, out.data() + n1, &n2);
  EVP_CIPHER_CTX_free(ctx);
  out.resize(size_t(n1 + n2));
  return out;
}

// ACE CTR reference: ECB encryption of counter blocks whose bytes 14-15 count mod 2^16
// with no carry (§3.1, App. A 12), XORed with the input.
inline Bytes ace_ctr_reference(const Bytes& key, const Bytes& ctr0, const Bytes& in) {
  Bytes blocks(in.size());
  uint16_t c = uint16_t(ctr0[14] << 8 | ctr0[15]);
  for (size_t i = 0; i < in.size() / 16; ++i, ++c) {
    std::memcpy(&blocks[16 * i], ctr0.data(), 14);
    blocks[16 * i + 14] = uint8_t(c >> 8);
    blocks[16 * i + 15] = uint8_t(c);
  }
  Bytes ks = evp("ECB", key, {}, blocks, true);
  for (size_t i = 0; i < in.size(); ++i) ks[i] ^= in[i];
  return ks;
}

// Guest layout (all 16-byte aligned, each in its own pages).
struct Layout {
  static constexpr uint64_t kCw = 0x10000;   // 128 bytes: control word + ALIGN scratch
  static constexpr uint64_t kKey = 0x11000;  // 256 bytes
  static constexpr uint64_t kIv = 0x12000;
  static constexpr uint64_t kIn = 0x100000;
  static constexpr uint64_t kOut = 0x200000;
  static constexpr uint64_t kData = 0x40000;  // 256 KB per data region
};

// One CPU, its memory and registers. run() executes one REP XCRYPT.
class AceRig {
 public:
  explicit AceRig(const char* cpu_name = "esther", bool via_padlock = false)
      : cpu_(*find_cpu_model(cpu_name)), padlock_(cpu_), ace_(cpu_), via_padlock_(via_padlock) {
    mem.map(Layout::kCw, 0x3000, FlatMemory::kRW);
    mem.map(Layout::kIn, Layout::kData, FlatMemory::kRW);
    mem.map(Layout::kOut, Layout::kData, FlatMemory::kRW);
    env.diag = &diag;
    s.eflags = 0x2;
  }

  const CpuModel& cpu() const { return cpu_; }
  AceUnit& unit() { return via_padlock_ ? padlock_.ace() : ace_; }
  bool set_host_aes(AceUnit::HostAes h) {
    return padlock_.ace().set_host_aes(h) && ace_.set_host_aes(h);
  }

  void put(uint64_t va, const Bytes& b) { std::memcpy(mem.host(va, b.size()), b.data(), b.size()); }
  Bytes get(uint64_t va, size_t n) {
    Bytes b(n);
    std::memcpy(b.data(), mem.host(va, n), n);
    return b;
  }
  void set_cw(uint32_t raw) {
    Bytes b(16, 0);
    for (int i = 0; i < 4; ++i) b[i] = uint8_t(raw >> (8 * i));
    put(Layout::kCw, b);
  }
  void set_key(const Bytes& k) { put(Layout::kKey, k); }
  void set_iv(const Bytes& iv) { put(Layout::kIv, iv); }

  // Registers for a standard call: EAX = IV, EBX = key, EDX = control word, ESI = input,
  // EDI = output, ECX = blocks.
  void load_regs(uint64_t blocks, uint64_t in = Layout::kIn, uint64_t out = Layout::kOut) {
    s[Gpr::AX] = Layout::kIv;
    s[Gpr::BX] = Layout::kKey;
    s[Gpr::DX] = Layout::kCw;
    s[Gpr::SI] = in;
    s[Gpr::DI] = out;
    s[Gpr::CX] = blocks;
  }
  void pushf_popf() { s.set_eflags30(false); }  // §1.8: the recommended key reload

  Outcome exec(isa::InsnId id, unsigned addr_size = 32) {
    const isa::Decoded d = decode_xcrypt(id, addr_size);
    return via_padlock_ ? padlock_.execute(d, s, mem, env) : ace_.execute(d, s, mem, env);
  }
  Outcome run(const std::string& mode, uint64_t blocks, unsigned addr_size = 32) {
    load_regs(blocks);
    return exec(xcrypt_id(mode), addr_size);
  }

  FlatMemory mem;
  ArchState s;
  ExecEnv env;
  RecordingSink diag;

 private:
  const CpuModel& cpu_;
  Padlock padlock_;
  AceUnit ace_;
  bool via_padlock_;
};

inline const char* host_aes_label(AceUnit::HostAes h) {
  return h == AceUnit::HostAes::Portable ? "Portable"
         : h == AceUnit::HostAes::AesNi  ? "AesNi"
                                         : "Auto";
}

}  // namespace padlock::test
