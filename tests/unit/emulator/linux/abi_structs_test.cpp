// The stat structures' times as each ABI lays them out (Linux arch/x86/include/uapi/asm/stat.h):
// x86-64's struct stat is the host's own (this test runs on x86-64 Linux), and the i386
// struct stat64 and old struct stat have st_atime, st_mtime and st_ctime with their
// nanoseconds as 32-bit words at 64..84 and 32..52.
#include "emulator/linux/abi_structs.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace padlock::emu {
namespace {

struct stat sample() {
  struct stat st {};
  st.st_atim = {1700000001, 111};
  st.st_mtim = {1700000002, 222};
  st.st_ctim = {1700000003, 333};
  st.st_size = 4096;
  return st;
}

uint32_t word32(const std::vector<uint8_t>& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

#if defined(__x86_64__)
TEST(AbiStructs, StatX86_64IsTheHostsLayout) {
  const struct stat st = sample();
  std::vector<uint8_t> out(kStatSizeX86_64);
  encode_stat_x86_64(out.data(), st);
  struct stat back {};
  static_assert(sizeof back == kStatSizeX86_64);
  std::memcpy(&back, out.data(), sizeof back);
  EXPECT_EQ(back.st_atim.tv_sec, 1700000001);
  EXPECT_EQ(back.st_atim.tv_nsec, 111);
  EXPECT_EQ(back.st_mtim.tv_sec, 1700000002);
  EXPECT_EQ(back.st_mtim.tv_nsec, 222);
  EXPECT_EQ(back.st_ctim.tv_sec, 1700000003);
  EXPECT_EQ(back.st_ctim.tv_nsec, 333);
  EXPECT_EQ(back.st_size, 4096);
}
#endif

TEST(AbiStructs, I386StatTimes) {
  const struct stat st = sample();
  std::vector<uint8_t> s64(kStat64SizeI386), s(kStatSizeI386);
  encode_stat64_i386(s64.data(), st);
  ASSERT_TRUE(encode_stat_i386(s.data(), st));
  const uint32_t want[6] = {1700000001, 111, 1700000002, 222, 1700000003, 333};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(word32(s64, 64 + 4 * i), want[i]) << "stat64 word " << i;
    EXPECT_EQ(word32(s, 32 + 4 * i), want[i]) << "stat word " << i;
  }
}

}  // namespace
}  // namespace padlock::emu
