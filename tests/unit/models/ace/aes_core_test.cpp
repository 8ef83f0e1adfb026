// The AES core under ACE (§3.2): hardware key expansion for any round count, the inverse
// schedule layout real clients store, and both host implementations against OpenSSL.
#include "models/ace/aes_core.hpp"

#include <random>

#include "ace_rig.hpp"

namespace padlock::test {
namespace {

using ace::RoundKeys;

const ace::Kernels* backend(AceUnit::HostAes h) {
  return ace::kernels_for(h == AceUnit::HostAes::Portable ? ace::Backend::Portable
                                                          : ace::Backend::AesNi);
}

// OpenSSL's AES_KEY in the byte order of our RoundKeys (see client_schedule).
void to_openssl(const RoundKeys& rk, AES_KEY& ks) {
  std::memset(&ks, 0, sizeof ks);
  AES_KEY probe;
  const uint8_t k0[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  AES_set_encrypt_key(k0, 128, &probe);
  const bool swapped = std::memcmp(probe.rd_key, k0, 4) != 0;
  std::memcpy(ks.rd_key, rk.k, 16 * (rk.rounds + 1));
  if (swapped) {
    for (unsigned w = 0; w < 4 * (rk.rounds + 1); ++w)
      ks.rd_key[w] = __builtin_bswap32(ks.rd_key[w]);
  }
  ks.rounds = int(rk.rounds);
}

// A second, test-local statement of the FIPS-197 §5.2 recurrence for Nk = 4, used to check
// the extension past 10 rounds: w[i] = w[i-4] ^ (i % 4 ? w[i-1] : SubWord(RotWord(w[i-1])) ^ Rcon).
uint8_t sbox(uint8_t x) {
  // FIPS-197 Fig. 7, transcribed independently of models/ace/aes_tables.hpp.
  static const uint8_t s[256] = {
      0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5, 0x30, 0x01, 0x67, 0x2b, 0xfe, 0xd7, 0xab,
      0x76, 0xca, 0x82, 0xc9, 0x7d, 0xfa, 0x59, 0x47, 0xf0, 0xad, 0xd4, 0xa2, 0xaf, 0x9c, 0xa4,
      0x72, 0xc0, 0xb7, 0xfd, 0x93, 0x26, 0x36, 0x3f, 0xf7, 0xcc, 0x34, 0xa5, 0xe5, 0xf1, 0x71,
      0xd8, 0x31, 0x15, 0x04, 0xc7, 0x23, 0xc3, 0x18, 0x96, 0x05, 0x9a, 0x07, 0x12, 0x80, 0xe2,
      0xeb, 0x27, 0xb2, 0x75, 0x09, 0x83, 0x2c, 0x1a, 0x1b, 0x6e, 0x5a, 0xa0, 0x52, 0x3b, 0xd6,
      0xb3, 0x29, 0xe3, 0x2f, 0x84, 0x53, 0xd1, 0x00, 0xed, 0x20, 0xfc, 0xb1, 0x5b, 0x6a, 0xcb,
      0xbe, 0x39, 0x4a, 0x4c, 0x58, 0xcf, 0xd0, 0xef, 0xaa, 0xfb, 0x43, 0x4d, 0x33, 0x85, 0x45,
      0xf9, 0x02, 0x7f, 0x50, 0x3c, 0x9f, 0xa8, 0x51, 0xa3, 0x40, 0x8f, 0x92, 0x9d, 0x38, 0xf5,
      0xbc, 0xb6, 0xda, 0x21, 0x10, 0xff, 0xf3, 0xd2, 0xcd, 0x0c, 0x13, 0xec, 0x5f, 0x97, 0x44,
      0x17, 0xc4, 0xa7, 0x7e, 0x3d, 0x64, 0x5d, 0x19, 0x73, 0x60, 0x81, 0x4f, 0xdc, 0x22, 0x2a,
      0x90, 0x88, 0x46, 0xee, 0xb8, 0x14, 0xde, 0x5e, 0x0b, 0xdb, 0xe0, 0x32, 0x3a, 0x0a, 0x49,
      0x06, 0x24, 0x5c, 0xc2, 0xd3, 0xac, 0x62, 0x91, 0x95, 0xe4, 0x79, 0xe7, 0xc8, 0x37, 0x6d,
      0x8d, 0xd5, 0x4e, 0xa9, 0x6c, 0x56, 0xf4, 0xea, 0x65, 0x7a, 0xae, 0x08, 0xba, 0x78, 0x25,
      0x2e, 0x1c, 0xa6, 0xb4, 0xc6, 0xe8, 0xdd, 0x74, 0x1f, 0x4b, 0xbd, 0x8b, 0x8a, 0x70, 0x3e,
      0xb5, 0x66, 0x48, 0x03, 0xf6, 0x0e, 0x61, 0x35, 0x57, 0xb9, 0x86, 0xc1, 0x1d, 0x9e, 0xe1,
      0xf8, 0x98, 0x11, 0x69, 0xd9, 0x8e, 0x94, 0x9b, 0x1e, 0x87, 0xe9, 0xce, 0x55, 0x28, 0xdf,
      0x8c, 0xa1, 0x89, 0x0d, 0xbf, 0xe6, 0x42, 0x68, 0x41, 0x99, 0x2d, 0x0f, 0xb0, 0x54, 0xbb,
      0x16};
  return s[x];
}

// §3.2 hardware keys: FIPS-197 Appendix A.1 / C.1 values for the 10-round schedule.
TEST(AesCore, ExpandKey128MatchesFips197AppendixA1_Sec3_2) {
  const VectorRecord setup = read_vectors("aes/fips197_rounds.vec").front();
  const Bytes key = setup.hex("Key");
  RoundKeys rk;
  ace::expand_key128(key.data(), 10, rk);
  EXPECT_EQ(to_hex(rk.k[1], 16), setup.str("K1"));
  EXPECT_EQ(to_hex(rk.k[10], 16), read_vectors("aes/fips197.vec").front().str("KeyLast"));
  // And byte for byte what OpenSSL expands.
  AES_KEY ks;
  AES_set_encrypt_key(key.data(), 128, &ks);
  RoundKeys mine;
  ace::expand_key128(key.data(), 10, mine);
  AES_KEY ours;
  to_openssl(mine, ours);
  EXPECT_EQ(0, std::memcmp(ours.rd_key, ks.rd_key, 16 * 11));
}

// §3.2: "for all round counts that can be specified": rcon keeps doubling past 0x36.
TEST(AesCore, ExpandKey128ExtendsFipsRecurrenceTo16Rounds_Sec3_2) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    uint8_t key[16];
    for (auto& b : key) b = uint8_t(rng());
    RoundKeys r16, r10;
    ace::expand_key128(key, 16, r16);
    ace::expand_key128(key, 10, r10);
    EXPECT_EQ(0, std::memcmp(r16.k, r10.k, 16 * 11)) << "longer schedules extend the FIPS one";
    uint8_t w[68][4];
    std::memcpy(w, key, 16);
    const uint8_t rcon[17] = {0,    0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80,
                              0x1b, 0x36, 0x6c, 0xd8, 0xab, 0x4d, 0x9a, 0x2f};
    for (int i = 4; i < 68; ++i) {
      uint8_t t[4] = {w[i - 1][0], w[i - 1][1], w[i - 1][2], w[i - 1][3]};
      if (i % 4 == 0) {
        const uint8_t t0 = t[0];
        t[0] = uint8_t(sbox(t[1]) ^ rcon[i / 4]);
        t[1] = sbox(t[2]);
        t[2] = sbox(t[3]);
        t[3] = sbox(t0);
      }
      for (int b = 0; b < 4; ++b) w[i][b] = uint8_t(w[i - 4][b] ^ t[b]);
    }
    EXPECT_EQ(0, std::memcmp(r16.k, w, sizeof w));
  }
}

// §3.2 decryption keys: the equivalent-inverse-cipher dw[] of FIPS-197 Fig. 15 is exactly
// what OpenSSL's AES_set_decrypt_key (used by e_padlock.c) and Linux key_dec store.
TEST(AesCore, InverseScheduleIsOpenSslDecryptKeyLayout_Sec3_2) {
  for (unsigned bits : {128u, 192u, 256u}) {
    std::mt19937 rng(bits);
    Bytes key(bits / 8);
    for (auto& b : key) b = uint8_t(rng());
    const Bytes enc = client_schedule(key, false);
    const Bytes dec = client_schedule(key, true);
    RoundKeys e;
    e.rounds = cwf::rounds_for(bits);
    std::memcpy(e.k, enc.data(), 16 * (e.rounds + 1));
    RoundKeys d;
    ace::inverse_schedule(e, d);
    EXPECT_EQ(to_hex(Bytes(dec.begin(), dec.begin() + 16 * (e.rounds + 1))),
              to_hex(reinterpret_cast<const uint8_t*>(d.k), 16 * (e.rounds + 1)))
        << bits;
    // Linux key_dec: dw[0] = last encryption key, dw[Nr] = the cipher key.
    EXPECT_EQ(0, std::memcmp(dec.data(), enc.data() + 16 * e.rounds, 16));
    EXPECT_EQ(0, std::memcmp(dec.data() + 16 * e.rounds, key.data(), 16));
  }
}

class AesKernels : public ::testing::TestWithParam<AceUnit::HostAes> {
 protected:
  void SetUp() override {
    k_ = backend(GetParam());
    if (k_ == nullptr) GTEST_SKIP() << "host has no AES-NI";
  }
  const ace::Kernels* k_ = nullptr;
};

// §3.2 ROUND: any round count 1..14 against OpenSSL's table AES with the same round keys
// (AES_encrypt/AES_decrypt honour AES_KEY.rounds), forward and inverse.
TEST_P(AesKernels, AnyRoundCountMatchesOpenSsl_Sec3_2) {
  std::mt19937 rng(11);
  for (unsigned r = 1; r <= 14; ++r) {
    uint8_t key[16];
    for (auto& b : key) b = uint8_t(rng());
    RoundKeys enc, dec;
    ace::expand_key128(key, r, enc);
    ace::inverse_schedule(enc, dec);
    AES_KEY oe, od;
    to_openssl(enc, oe);
    to_openssl(dec, od);
    uint8_t in[16 * 5], out[16 * 5], want[16];
    for (auto& b : in) b = uint8_t(rng());
    k_->ecb_enc(enc, in, out, 5);
    for (int i = 0; i < 5; ++i) {
      AES_encrypt(in + 16 * i, want, &oe);
      EXPECT_EQ(to_hex(out + 16 * i, 16), to_hex(want, 16)) << "rounds " << r;
    }
    k_->ecb_dec(dec, in, out, 5);
    for (int i = 0; i < 5; ++i) {
      AES_decrypt(in + 16 * i, want, &od);
      EXPECT_EQ(to_hex(out + 16 * i, 16), to_hex(want, 16)) << "rounds " << r;
    }
  }
}

// 15 and 16 rounds (ROUND = 15, 0) have no outside reference: the two host
// implementations must agree, and decryption must invert encryption.
TEST_P(AesKernels, FifteenAndSixteenRoundsInvert_Sec3_2) {
  const ace::Kernels& portable = ace::portable_kernels();
  std::mt19937 rng(3);
  for (unsigned r : {15u, 16u}) {
    uint8_t key[16], in[16 * 9], out[16 * 9], ref[16 * 9], back[16 * 9];
    for (auto& b : key) b = uint8_t(rng());
    for (auto& b : in) b = uint8_t(rng());
    RoundKeys enc, dec;
    ace::expand_key128(key, r, enc);
    ace::inverse_schedule(enc, dec);
    k_->ecb_enc(enc, in, out, 9);
    portable.ecb_enc(enc, in, ref, 9);
    EXPECT_EQ(to_hex(out, sizeof out), to_hex(ref, sizeof ref));
    k_->ecb_dec(dec, out, back, 9);
    EXPECT_EQ(to_hex(back, sizeof back), to_hex(in, sizeof in));
  }
}

// §3.2 INTER (our layout): ROUND = r full rounds give FIPS-197 C.1 round[r+1].start, and
// with the Fig. 15 schedule, round[r+1].istart.
TEST_P(AesKernels, IntermediateRoundsAreFips197AppendixC1_Sec3_2) {
  const auto vecs = read_vectors("aes/fips197_rounds.vec");
  const Bytes key = vecs.front().hex("Key");
  const Bytes pt = vecs.front().hex("In");
  const Bytes ct = vecs.front().hex("Out");
  RoundKeys full_enc, full_dec;
  ace::expand_key128(key.data(), 10, full_enc);
  ace::inverse_schedule(full_enc, full_dec);
  int checked = 0;
  for (const VectorRecord& v : vecs) {
    if (v.section == "setup") continue;
    const unsigned round = unsigned(v.num("Round"));
    if (round < 2) continue;  // round[1] is before any full round
    RoundKeys rk = v.section == "cipher" ? full_enc : full_dec;
    rk.rounds = round - 1;
    rk.full_last = true;
    uint8_t out[16];
    if (v.section == "cipher")
      k_->ecb_enc(rk, pt.data(), out, 1);
    else
      k_->ecb_dec(rk, ct.data(), out, 1);
    EXPECT_EQ(to_hex(out, 16), v.str("State")) << v.section << " round " << round;
    ++checked;
  }
  EXPECT_EQ(checked, 18);
}

// The modes of §3.1 over OpenSSL's single-block AES_encrypt / AES_decrypt, one block at a
// time: a reference that shares no code with either kernel set. The output of block i goes
// to out + i * stride (stride 0: every block to the same 16 bytes); `iv` is left as the
// kernels leave it (the chaining value, or the next counter).
struct OpensslModes {
  AES_KEY e, d;
  explicit OpensslModes(const uint8_t key[16]) {
    AES_set_encrypt_key(key, 128, &e);
    AES_set_decrypt_key(key, 128, &d);
  }
  static void xor16(const uint8_t* a, const uint8_t* b, uint8_t* out) {
    for (int i = 0; i < 16; ++i) out[i] = a[i] ^ b[i];
  }
  // m: 0 ECB enc, 1 ECB dec, 2 CBC enc, 3 CBC dec, 4 CFB enc, 5 CFB dec, 6 OFB, 7 CTR.
  void run(int m, uint8_t iv[16], const Bytes& in, uint8_t* out, size_t n, size_t stride) const {
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* x = in.data() + 16 * i;
      uint8_t* y = out + stride * i;
      uint8_t t[16], c[16];
      switch (m) {
        case 0:
          AES_encrypt(x, y, &e);
          break;
        case 1:
          AES_decrypt(x, y, &d);
          break;
        case 2:
          xor16(x, iv, t);
          AES_encrypt(t, iv, &e);
          std::memcpy(y, iv, 16);
          break;
        case 3:
          std::memcpy(c, x, 16);
          AES_decrypt(c, t, &d);
          xor16(t, iv, y);
          std::memcpy(iv, c, 16);
          break;
        case 4:
          AES_encrypt(iv, t, &e);
          xor16(t, x, iv);
          std::memcpy(y, iv, 16);
          break;
        case 5:
          std::memcpy(c, x, 16);
          AES_encrypt(iv, t, &e);
          xor16(t, c, y);
          std::memcpy(iv, c, 16);
          break;
        case 6:
          AES_encrypt(iv, iv, &e);
          xor16(x, iv, y);
          break;
        case 7: {
          AES_encrypt(iv, t, &e);
          xor16(x, t, y);
          const uint16_t next = static_cast<uint16_t>(((iv[14] << 8) | iv[15]) + 1);
          iv[14] = uint8_t(next >> 8), iv[15] = uint8_t(next);  // no carry into byte 13
          break;
        }
      }
    }
  }
};

// Every mode kernel (portable and AES-NI) against OpenSSL's block cipher: 0..40 blocks
// (eight-wide bodies and tails), in place and apart, digest stride 0.
TEST_P(AesKernels, ModeKernelsAgreeWithOpenssl_Sec3_1) {
  std::mt19937 rng(5);
  for (size_t n = 0; n <= 40; n += (n < 18 ? 1 : 7)) {
    for (bool in_place : {false, true}) {
      for (unsigned stride : {16u, 0u}) {
        uint8_t key[16];
        for (auto& b : key) b = uint8_t(rng());
        RoundKeys enc, dec;
        ace::expand_key128(key, 10, enc);
        ace::inverse_schedule(enc, dec);
        const OpensslModes ref(key);
        Bytes in(16 * n + 16), iv(16);
        for (auto& b : in) b = uint8_t(rng());
        for (auto& b : iv) b = uint8_t(rng());
        iv[14] = 0xFF;  // exercise the 16-bit counter wrap in CTR
        for (int m = 0; m < 8; ++m) {
          Bytes a = in, ao(in.size()), want(in.size());
          Bytes ivA = iv, ivB = iv;
          uint8_t* outA = in_place ? a.data() : ao.data();
          const size_t s = (m >= 2 && m <= 5) ? stride : 16;
          // The reference reads `in` (a copy), so in place or not it writes `want` alike.
          if (in_place) want = in;
          ref.run(m, ivB.data(), in, want.data(), n, s);
          switch (m) {
            case 0:
              k_->ecb_enc(enc, a.data(), outA, n);
              break;
            case 1:
              k_->ecb_dec(dec, a.data(), outA, n);
              break;
            case 2:
              k_->cbc_enc(enc, ivA.data(), a.data(), outA, n, s);
              break;
            case 3:
              k_->cbc_dec(dec, ivA.data(), a.data(), outA, n, s);
              break;
            case 4:
              k_->cfb_enc(enc, ivA.data(), a.data(), outA, n, s);
              break;
            case 5:
              k_->cfb_dec(enc, ivA.data(), a.data(), outA, n, s);
              break;
            case 6:
              k_->ofb(enc, ivA.data(), a.data(), outA, n);
              break;
            case 7:
              k_->ctr(enc, ivA.data(), a.data(), outA, n);
              break;
          }
          SCOPED_TRACE("mode " + std::to_string(m) + " n " + std::to_string(n));
          EXPECT_EQ(to_hex(in_place ? a : ao), to_hex(want));
          EXPECT_EQ(to_hex(ivA), to_hex(ivB));
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(HostAes, AesKernels,
                         ::testing::Values(AceUnit::HostAes::Portable, AceUnit::HostAes::AesNi),
                         [](const ::testing::TestParamInfo<AceUnit::HostAes>& i) {
                           return std::string(host_aes_label(i.param));
                         });

}  // namespace
}  // namespace padlock::test
