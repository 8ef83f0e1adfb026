// The two SHA backends behind PHE (§4.1): host SHA extensions and the portable fallback,
// each against OpenSSL libcrypto on random multi-block data from arbitrary states.
#include "models/phe/sha_backend.hpp"

#include <gtest/gtest.h>

#include "tests/unit/models/phe/phe_rig.hpp"

namespace padlock::test {
namespace {

void check_backend(const ShaBackend& be) {
  const std::vector<uint8_t> data = random_bytes(64 * 50, 42);
  for (size_t blocks : {1, 2, 3, 17, 50}) {
    SCOPED_TRACE(blocks);
    uint32_t s1[5];
    std::memcpy(s1, kSha1Init, sizeof s1);
    be.sha1(s1, data.data(), blocks);
    EXPECT_EQ(std::vector<uint32_t>(s1, s1 + 5),
              openssl_state_after_blocks(false, data.data(), blocks));
    uint32_t s2[8];
    std::memcpy(s2, kSha256Init, sizeof s2);
    be.sha256(s2, data.data(), blocks);
    EXPECT_EQ(std::vector<uint32_t>(s2, s2 + 8),
              openssl_state_after_blocks(true, data.data(), blocks));
  }
  // Calls that split the blocks give the same state (the chaining value carries over).
  uint32_t a[8], b[8];
  std::memcpy(a, kSha256Init, sizeof a);
  std::memcpy(b, kSha256Init, sizeof b);
  be.sha256(a, data.data(), 50);
  be.sha256(b, data.data(), 20);
  be.sha256(b, data.data() + 64 * 20, 30);
  EXPECT_EQ(0, std::memcmp(a, b, sizeof a));
}

TEST(ShaBackend, PortableMatchesOpenssl_Sec4_1) {
  check_backend(portable_sha_backend());
}

TEST(ShaBackend, HostShaExtensionsMatchOpenssl_Sec4_1) {
  const ShaBackend* host = host_sha_backend();
  if (host == nullptr) GTEST_SKIP() << "host has no SHA extensions";
  check_backend(*host);
}

TEST(ShaBackend, SelectionFollowsOverride) {
  select_sha_backend(&portable_sha_backend());
  EXPECT_EQ(&active_sha_backend(), &portable_sha_backend());
  select_sha_backend(nullptr);
  if (host_sha_backend() != nullptr) {
    EXPECT_EQ(&active_sha_backend(), host_sha_backend());
  } else {
    EXPECT_EQ(&active_sha_backend(), &portable_sha_backend());
  }
}

}  // namespace
}  // namespace padlock::test
