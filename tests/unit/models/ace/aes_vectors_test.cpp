// Standard vectors through the full instruction path (decode, Padlock or AceUnit, FlatMemory,
// ArchState), once per host AES implementation: FIPS-197 Appendix C and SP 800-38A
// Appendix F (ECB, CBC, CFB128, OFB, CTR), every key size, encryption and decryption.
#include "ace_rig.hpp"

namespace padlock::test {
namespace {

struct Path {
  AceUnit::HostAes aes;
  bool via_padlock;
};

class AesVectors : public ::testing::TestWithParam<Path> {
 protected:
  void SetUp() override {
    rig_ = std::make_unique<AceRig>("esther-c5j-s9", GetParam().via_padlock);
    if (!rig_->set_host_aes(GetParam().aes)) GTEST_SKIP() << "host has no AES-NI";
  }

  // Loads the key the way a client does (§3.2): 128-bit keys as the bare key with
  // hardware expansion, or (keygn_128) the full schedule; 192/256 always the schedule,
  // the inverse-cipher one (FIPS-197 Fig. 15) for ECB/CBC decryption.
  uint32_t prepare_key(const Bytes& key, bool inverse, bool decrypt_bit, bool keygn_128 = false) {
    const unsigned bits = unsigned(key.size() * 8);
    uint32_t cw = cwf::rounds_for(bits) | cwf::ksize(bits) | (decrypt_bit ? cwf::kDecrypt : 0);
    if (bits == 128 && !keygn_128) {
      rig_->set_key(key);
    } else {
      rig_->set_key(client_schedule(key, inverse));
      cw |= cwf::kKeygn;
    }
    rig_->set_cw(cw);
    rig_->pushf_popf();
    return cw;
  }

  std::unique_ptr<AceRig> rig_;
};

// §3.1 ECB, §3.2 extended keys: FIPS-197 Appendix C, encrypt and decrypt, hardware and
// memory key schedules.
TEST_P(AesVectors, Fips197AppendixC_Sec3_1_Sec3_2) {
  for (const VectorRecord& r : read_vectors("aes/fips197.vec")) {
    for (bool keygn : {false, true}) {
      SCOPED_TRACE(r.section + (keygn ? " KEYGN=1" : " KEYGN=0"));
      const Bytes key = r.hex("Key");
      prepare_key(key, false, false, keygn);
      rig_->put(Layout::kIn, r.hex("In"));
      Outcome o = rig_->run("ECB", 1);
      ASSERT_EQ(o.status, Status::Completed);
      EXPECT_EQ(to_hex(rig_->get(Layout::kOut, 16)), r.str("Out"));

      prepare_key(key, true, true, keygn);
      rig_->put(Layout::kIn, r.hex("Out"));
      o = rig_->run("ECB", 1);
      ASSERT_EQ(o.status, Status::Completed);
      EXPECT_EQ(to_hex(rig_->get(Layout::kOut, 16)), r.str("In"));
    }
  }
}

// §3.1 all five modes, §3.2 key layouts: SP 800-38A Appendix F, all key sizes, both
// directions; the IV written back follows the §3.1 table.
TEST_P(AesVectors, Sp800_38a_AllModes_Sec3_1) {
  int checked = 0;
  for (const VectorRecord& r : read_vectors("aes/sp800_38a.vec")) {
    const std::string mode = r.section;
    const Bytes key = r.hex("Key"), pt = r.hex("In"), ct = r.hex("Out");
    const Bytes iv = r.has("IV") ? r.hex("IV") : Bytes(16, 0);
    const uint64_t n = pt.size() / 16;
    for (bool decrypt : {false, true}) {
      SCOPED_TRACE(mode + " " + std::to_string(key.size() * 8) +
                   (decrypt ? " decrypt" : " encrypt"));
      // Clients: OFB and CTR always run with CRYPT = 0; CFB decryption sets CRYPT = 1 but
      // keeps the forward schedule (OpenSSL e_padlock.c).
      const bool crypt = decrypt && mode != "OFB" && mode != "CTR";
      const bool inverse = decrypt && (mode == "ECB" || mode == "CBC");
      prepare_key(key, inverse, crypt);
      rig_->set_iv(iv);
      rig_->put(Layout::kIn, decrypt ? ct : pt);
      const Outcome o = rig_->run(mode, n);
      ASSERT_EQ(o.status, Status::Completed);
      EXPECT_EQ(to_hex(rig_->get(Layout::kOut, pt.size())), to_hex(decrypt ? pt : ct));
      EXPECT_EQ(rig_->s[Gpr::CX], 0u);
      EXPECT_EQ(rig_->s[Gpr::SI], Layout::kIn + 16 * n);
      EXPECT_EQ(rig_->s[Gpr::DI], Layout::kOut + 16 * n);
      EXPECT_EQ(o.blocks, n);
      const Bytes last_ct(ct.end() - 16, ct.end());
      if (mode == "CBC" || mode == "CFB") {
        if (!decrypt) {
          // §3.1: EAX itself changes, to the last ciphertext block; the IV stays.
          EXPECT_EQ(rig_->s[Gpr::AX], Layout::kOut + 16 * (n - 1));
          EXPECT_EQ(to_hex(rig_->get(Layout::kIv, 16)), to_hex(iv));
        } else {
          EXPECT_EQ(rig_->s[Gpr::AX], Layout::kIv);
          EXPECT_EQ(to_hex(rig_->get(Layout::kIv, 16)), to_hex(last_ct));
        }
      }
      if (mode == "OFB") {
        // §3.1: the IV memory holds the last keystream block (= last ct ^ last pt).
        Bytes ks(16);
        for (int i = 0; i < 16; ++i)
          ks[i] = uint8_t(ct[ct.size() - 16 + i] ^ pt[pt.size() - 16 + i]);
        EXPECT_EQ(to_hex(rig_->get(Layout::kIv, 16)), to_hex(ks));
      }
      if (mode == "CTR") {
        // §3.1: bytes 14-15 incremented once per block (no erratum on stepping 9).
        Bytes want = iv;
        const uint16_t c = uint16_t((iv[14] << 8 | iv[15]) + n);
        want[14] = uint8_t(c >> 8);
        want[15] = uint8_t(c);
        EXPECT_EQ(to_hex(rig_->get(Layout::kIv, 16)), to_hex(want));
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 30);
}

INSTANTIATE_TEST_SUITE_P(HostAes, AesVectors,
                         ::testing::Values(Path{AceUnit::HostAes::Portable, false},
                                           Path{AceUnit::HostAes::AesNi, false},
                                           Path{AceUnit::HostAes::Portable, true},
                                           Path{AceUnit::HostAes::AesNi, true}),
                         [](const ::testing::TestParamInfo<Path>& i) {
                           return std::string(host_aes_label(i.param.aes)) +
                                  (i.param.via_padlock ? "_Padlock" : "_AceUnit");
                         });

}  // namespace
}  // namespace padlock::test
