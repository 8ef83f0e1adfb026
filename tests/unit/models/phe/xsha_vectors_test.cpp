// §4.1 REP XSHA1 / REP XSHA256 against the FIPS 180-2 vectors (tests/vectors/sha/), through
// the full instruction path (decode, Padlock enable checks, PheUnit on FlatMemory), on both
// SHA backends, uninterrupted and interrupted-and-restarted (§1.7, §4.1 "safe across
// interrupts").
#include <gtest/gtest.h>

#include <tuple>

#include "common/vector_file.hpp"
#include "models/phe/sha_backend.hpp"
#include "tests/unit/models/phe/phe_rig.hpp"

namespace padlock::test {
namespace {

struct Vector {
  std::string name;
  std::vector<uint8_t> input;
  std::vector<uint8_t> digest;
};

std::vector<Vector> load(bool sha256) {
  std::vector<Vector> out;
  for (const VectorRecord& r : read_vectors(sha256 ? "sha/sha256.vec" : "sha/sha1.vec")) {
    Vector v;
    v.name = r.str("Name");
    const std::vector<uint8_t> unit = r.hex("In");
    const uint64_t repeat = r.num("Repeat");  // the million 'a' is built here, not stored
    for (uint64_t i = 0; i < repeat; ++i) v.input.insert(v.input.end(), unit.begin(), unit.end());
    v.digest = r.hex("Out");
    out.push_back(std::move(v));
  }
  return out;
}

// (sha256, backend name)
class XshaVectorTest : public ::testing::TestWithParam<std::tuple<bool, std::string>> {
 protected:
  void SetUp() override {
    const std::string& backend = std::get<1>(GetParam());
    if (backend == "host") {
      if (host_sha_backend() == nullptr) GTEST_SKIP() << "host has no SHA extensions";
      select_sha_backend(host_sha_backend());
    } else {
      select_sha_backend(&portable_sha_backend());
    }
  }
  void TearDown() override { select_sha_backend(nullptr); }
  bool sha256() const { return std::get<0>(GetParam()); }
};

// §4.1: digest, EAX == ECX, ECX and EDI unchanged, ESI += ECX; §1.8: EFLAGS[30] cleared.
TEST_P(XshaVectorTest, Fips180_2VectorsUninterrupted_Sec4_1) {
  for (const Vector& v : load(sha256())) {
    SCOPED_TRACE(v.name);
    XshaRig rig("esther-c5j", 2 << 20);
    rig.start(sha256(), v.input.data(), v.input.size());
    rig.s.set_eflags30(true);
    const Outcome o = rig.exec(sha256());
    ASSERT_EQ(o.status, Status::Completed);
    EXPECT_EQ(rig.digest(sha256()), v.digest);
    EXPECT_EQ(rig.digest(sha256()), openssl_digest(sha256(), v.input.data(), v.input.size()));
    EXPECT_EQ(reg(rig.s, Gpr::AX), v.input.size());
    EXPECT_EQ(reg(rig.s, Gpr::CX), v.input.size());
    EXPECT_EQ(reg(rig.s, Gpr::SI), XshaRig::kInputVa + v.input.size());
    EXPECT_EQ(reg(rig.s, Gpr::DI), XshaRig::kHashVa);
    EXPECT_FALSE(rig.s.eflags30());
    EXPECT_EQ(o.bytes, v.input.size());
  }
}

// §1.7/§4.1: interrupted after whole blocks, the registers and the hash at EDI are the
// state after EAX bytes (checked against OpenSSL's chaining value), and re-executing the
// same instruction finishes the hash.
TEST_P(XshaVectorTest, Fips180_2VectorsInterruptedAndRestarted_Sec1_7_Sec4_1) {
  for (const Vector& v : load(sha256())) {
    SCOPED_TRACE(v.name);
    XshaRig rig("esther-c5j", 2 << 20);
    rig.start(sha256(), v.input.data(), v.input.size());
    SHA_CTX c1;
    SHA256_CTX c256;
    SHA1_Init(&c1);
    SHA256_Init(&c256);
    uint64_t hashed = 0;
    int interrupts = 0;
    for (int guard = 0; guard < 100000; ++guard) {
      rig.env.interrupt_at = rig.env.now + 3000 + 997 * (guard % 7);
      const Outcome o = rig.exec(sha256());
      if (o.status == Status::Completed) break;
      ASSERT_EQ(o.status, Status::Interrupted);
      ++interrupts;
      const uint64_t eax = reg(rig.s, Gpr::AX);
      ASSERT_EQ(eax % 64, 0u);
      ASSERT_GT(eax, hashed);  // progress in every execution
      ASSERT_LT(eax, v.input.size());
      EXPECT_EQ(reg(rig.s, Gpr::SI), XshaRig::kInputVa + eax);
      EXPECT_EQ(reg(rig.s, Gpr::CX), v.input.size());
      EXPECT_EQ(reg(rig.s, Gpr::DI), XshaRig::kHashVa);
      for (; hashed < eax; hashed += 64) {
        if (sha256()) {
          SHA256_Transform(&c256, v.input.data() + hashed);
        } else {
          SHA1_Transform(&c1, v.input.data() + hashed);
        }
      }
      const std::vector<uint32_t> want =
          sha256() ? std::vector<uint32_t>(c256.h, c256.h + 8)
                   : std::vector<uint32_t>{c1.h0, c1.h1, c1.h2, c1.h3, c1.h4};
      ASSERT_EQ(rig.state(sha256()), want) << "after " << eax << " bytes";
    }
    EXPECT_EQ(rig.digest(sha256()), v.digest);
    EXPECT_EQ(reg(rig.s, Gpr::AX), v.input.size());
    EXPECT_EQ(reg(rig.s, Gpr::SI), XshaRig::kInputVa + v.input.size());
    if (v.input.size() > 64 * 200) EXPECT_GT(interrupts, 10);
  }
}

INSTANTIATE_TEST_SUITE_P(ShaAndBackend, XshaVectorTest,
                         ::testing::Combine(::testing::Bool(),
                                            ::testing::Values(std::string("host"),
                                                              std::string("portable"))),
                         [](const ::testing::TestParamInfo<XshaVectorTest::ParamType>& info) {
                           return std::string(std::get<0>(info.param) ? "Sha256" : "Sha1") + "_" +
                                  std::get<1>(info.param);
                         });

}  // namespace
}  // namespace padlock::test
