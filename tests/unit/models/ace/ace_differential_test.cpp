// Differential test against OpenSSL libcrypto (§3.1, §3.2): random modes, key sizes,
// directions, lengths, alignments and interrupt times, through both host AES paths.
#include <random>

#include "ace_rig.hpp"

namespace padlock::test {
namespace {

class AceDifferential : public ::testing::TestWithParam<AceUnit::HostAes> {};

TEST_P(AceDifferential, RandomCallsMatchOpenSsl_Sec3_1_Sec3_2) {
  std::mt19937 rng(2024);
  const char* modes[] = {"ECB", "CBC", "CFB", "OFB", "CTR"};
  int runs = 0;
  for (int t = 0; t < 400; ++t) {
    AceRig r(t % 3 == 0 ? "nano" : "esther-c5j-s9");
    if (!r.set_host_aes(GetParam())) GTEST_SKIP() << "host has no AES-NI";
    const std::string mode = modes[rng() % 5];
    const unsigned bits = 128 + 64 * (rng() % 3);
    const bool decrypt = rng() % 2;
    const uint64_t n = 1 + rng() % (rng() % 4 == 0 ? 1500 : 40);
    const bool unaligned = mode != "ECB" && rng() % 3 == 0;
    const bool interrupts = rng() % 3 == 0;
    SCOPED_TRACE(mode + " " + std::to_string(bits) + (decrypt ? " dec" : " enc") + " n=" +
                 std::to_string(n) + (unaligned ? " unaligned" : "") + (interrupts ? " irq" : ""));
    Bytes key(bits / 8), iv(16), text(16 * n);
    for (auto& b : key) b = uint8_t(rng());
    for (auto& b : iv) b = uint8_t(rng());
    for (auto& b : text) b = uint8_t(rng());
    if (mode == "CTR") iv[14] = uint8_t(rng() % 0x80);  // keep the full 128-bit counter in 16 bits
    const bool crypt = decrypt && mode != "OFB" && mode != "CTR";
    const bool inverse = decrypt && (mode == "ECB" || mode == "CBC");
    uint32_t cw = cwf::rounds_for(bits) | cwf::ksize(bits) | (crypt ? cwf::kDecrypt : 0) |
                  (unaligned ? cwf::kAlign : 0);
    if (bits == 128 && rng() % 2) {
      r.set_key(key);
    } else {
      r.set_key(client_schedule(key, inverse));
      cw |= cwf::kKeygn;
    }
    r.set_cw(cw);
    r.set_iv(iv);
    const uint64_t in = Layout::kIn + (unaligned ? rng() % 16 : 0);
    const uint64_t out = Layout::kOut + (unaligned ? rng() % 16 : 0);
    r.put(in, text);
    r.load_regs(n, in, out);
    r.env.now = 0;
    Outcome o;
    int execs = 0;
    do {
      r.env.interrupt_at = interrupts ? r.env.now + rng() % 4000 : ~0ull;
      o = r.exec(xcrypt_id(mode));
      r.env.now += o.cycles;
      ++execs;
    } while (o.status == Status::Interrupted && execs < 100000);
    ASSERT_EQ(o.status, Status::Completed);
    const Bytes want = evp(mode, key, iv, text, !decrypt);
    ASSERT_EQ(to_hex(r.get(out, text.size())), to_hex(want));
    ++runs;
  }
  EXPECT_EQ(runs, 400);
}

INSTANTIATE_TEST_SUITE_P(HostAes, AceDifferential,
                         ::testing::Values(AceUnit::HostAes::Portable, AceUnit::HostAes::AesNi),
                         [](const ::testing::TestParamInfo<AceUnit::HostAes>& i) {
                           return std::string(host_aes_label(i.param));
                         });

}  // namespace
}  // namespace padlock::test
