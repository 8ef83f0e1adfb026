// Guest memory as a system call sees it (emulator/linux/vm/user_memory.*): EFAULT, as
// copy_from_user/copy_to_user give it, for pages that are not mapped or lack the access;
// strings across pages; pointer-sized words per ABI.
#include "emulator/linux/vm/user_memory.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace padlock::emu::test {
namespace {

constexpr uint64_t kPage = AddressSpace::kPageSize;
constexpr uint64_t kVa = 0x10000;

TEST(UserMemory, ReadsAndWritesOnlyWhatThePagesAllow) {
  AddressSpace mem(false);
  ASSERT_TRUE(mem.map_anonymous(kVa, kPage, kPageRead | kPageWrite));
  ASSERT_TRUE(mem.map_anonymous(kVa + kPage, kPage, kPageRead));
  UserMemory user(mem, false);
  const uint32_t v = 0xDEADBEEF;
  EXPECT_TRUE(user.put(kVa + 8, v));
  uint32_t back = 0;
  EXPECT_TRUE(user.get(kVa + 8, back));
  EXPECT_EQ(back, v);
  EXPECT_EQ(std::memcmp(mem.host(kVa + 8), "\xEF\xBE\xAD\xDE", 4), 0);  // little-endian
  EXPECT_FALSE(user.put(kVa + kPage, v));                               // read-only
  EXPECT_FALSE(user.put(kVa + kPage - 2, v));                           // half of it read-only
  EXPECT_EQ(mem.host(kVa + kPage - 2)[0], 0);                           // ... and nothing written
  EXPECT_TRUE(user.get(kVa + kPage - 2, back));                         // reading across is fine
  EXPECT_FALSE(user.get(kVa + 2 * kPage - 2, back));  // runs into an unmapped page
  EXPECT_EQ(user.ptr(kVa + 2 * kPage, 1, false), nullptr);
  EXPECT_EQ(user.ptr(kVa, 1, true), mem.host(kVa));
}

TEST(UserMemory, ReadsStringsAcrossPagesUpToTheirLimit) {
  AddressSpace mem(false);
  ASSERT_TRUE(mem.map_anonymous(kVa, 2 * kPage, kPageRead | kPageWrite));
  const uint64_t at = kVa + kPage - 3;
  std::memcpy(mem.host(at), "abcdef", 7);
  UserMemory user(mem, false);
  std::string s;
  EXPECT_TRUE(user.read_cstring(at, s));
  EXPECT_EQ(s, "abcdef");
  EXPECT_TRUE(user.read_cstring(at, s, 7));
  EXPECT_FALSE(user.read_cstring(at, s, 6));  // no NUL within the limit
  // A string that runs off the mapped pages: EFAULT.
  std::memset(mem.host(kVa + kPage), 'x', kPage);
  EXPECT_FALSE(user.read_cstring(kVa + kPage, s, 2 * kPage));
  EXPECT_FALSE(user.read_cstring(kVa + 2 * kPage, s));
}

TEST(UserMemory, WordsArePointerSized) {
  AddressSpace mem(true);
  ASSERT_TRUE(mem.map_anonymous(kVa, kPage, kPageRead | kPageWrite));
  std::memset(mem.host(kVa), 0xFF, 16);
  UserMemory i386(mem, false), x86_64(mem, true);
  EXPECT_TRUE(i386.put_word(kVa, 0x1122334455667788));
  uint64_t raw = 0;
  std::memcpy(&raw, mem.host(kVa), 8);
  EXPECT_EQ(raw, 0xFFFFFFFF55667788u);  // four bytes, the high half dropped
  bool ok = false;
  EXPECT_EQ(i386.get_word(kVa, ok), 0x55667788u);
  EXPECT_TRUE(ok);
  EXPECT_EQ(x86_64.get_word(kVa, ok), 0xFFFFFFFF55667788u);
  EXPECT_TRUE(x86_64.put_word(kVa + 8, 0x1122334455667788));
  std::memcpy(&raw, mem.host(kVa + 8), 8);
  EXPECT_EQ(raw, 0x1122334455667788u);
  EXPECT_EQ(x86_64.get_word(kVa + kPage - 4, ok), 0u);
  EXPECT_FALSE(ok);
  EXPECT_EQ(i386.get_word(kVa + kPage - 4, ok), 0u);
  EXPECT_TRUE(ok);  // four bytes fit
}

}  // namespace
}  // namespace padlock::emu::test
