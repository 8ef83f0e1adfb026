// The process's descriptors (emulator/linux/files/guest_files.*) on their own: a duplicate
// shares its file's timerfd and signalfd mask (dup(2): "the two file descriptors refer to
// the same open file description"), close and a dup onto a descriptor forget what was known
// of it, and the emulator's own descriptors are told apart.
#include "emulator/linux/files/guest_files.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace padlock::emu {
namespace {

class GuestFilesTest : public ::testing::Test {
 protected:
  GuestPaths paths;
  Sandbox sandbox;
  GuestFiles files{paths, sandbox};
};

TEST_F(GuestFilesTest, ADuplicateSharesTheTimerfdAndTheSignalfdMask) {
  files.timerfds[3] = std::make_shared<VirtualTimerfd>();
  files.signalfd_mask[4] = std::make_shared<uint64_t>(1);
  files.fd_names[3] = "/proc/self/mem";
  files.duplicated(3, 7);
  files.duplicated(4, 8);
  ASSERT_EQ(files.timerfds.count(7), 1u);
  EXPECT_EQ(files.timerfds[7], files.timerfds[3]);  // one file: arming one arms the other
  ASSERT_EQ(files.signalfd_mask.count(8), 1u);
  *files.signalfd_mask[4] = 0x100;
  EXPECT_EQ(*files.signalfd_mask[8], 0x100u);
  EXPECT_EQ(files.fd_names[7], "/proc/self/mem");
  EXPECT_EQ(files.fd_names.count(8), 0u);
}

// dup2 onto an open descriptor closes it first: what was known of it is gone.
TEST_F(GuestFilesTest, ADupOntoADescriptorForgetsItsOldFile) {
  files.timerfds[5] = std::make_shared<VirtualTimerfd>();
  files.self_mem[5] = 0x1000;
  files.dir_cookies[5] = {1, 2};
  files.fd_dirs.insert(5);
  files.duplicated(3, 5);
  EXPECT_EQ(files.timerfds.count(5), 0u);
  EXPECT_EQ(files.self_mem.count(5), 0u);
  EXPECT_EQ(files.dir_cookies.count(5), 0u);
  EXPECT_EQ(files.fd_dirs.count(5), 0u);
  files.fd_dirs.insert(6);
  files.duplicated(6, 6);  // dup2(fd, fd) changes nothing
  EXPECT_EQ(files.fd_dirs.count(6), 1u);
}

TEST_F(GuestFilesTest, CloseForgetsEverythingKnownOfTheDescriptor) {
  files.timerfds[3] = std::make_shared<VirtualTimerfd>();
  files.timerfds[4] = files.timerfds[3];
  files.fd_names[3] = "x";
  files.closed(3);
  EXPECT_EQ(files.timerfds.count(3), 0u);
  EXPECT_EQ(files.fd_names.count(3), 0u);
  EXPECT_EQ(files.timerfds.count(4), 1u);  // the duplicate stays open
}

TEST_F(GuestFilesTest, TheEmulatorsOwnDescriptorsAreNotTheGuests) {
  files.host_fds = {9, 10};
  EXPECT_TRUE(files.emulator_fd(9));
  EXPECT_FALSE(files.emulator_fd(3));
  EXPECT_FALSE(files.sandbox().active());
}

}  // namespace
}  // namespace padlock::emu
