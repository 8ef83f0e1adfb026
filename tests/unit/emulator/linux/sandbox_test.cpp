// --sandbox DIR (docs/reliability.md, "Sandbox"): the class the file system calls open
// through, checked directly on a scratch tree (the integration tests check it from guests).
// Paths under DIR open; "..", symbolic links that leave DIR, /proc magic links and paths
// outside DIR fail with EACCES; the few harmless devices open.
#include "emulator/linux/sandbox.hpp"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace padlock::emu::test {
namespace {

// /tmp/…/box (the sandbox, with a file and a sub-directory), /tmp/…/outside and
// /tmp/…/box2 (a sibling whose name starts with the sandbox's), removed at the end.
struct Tree {
  std::string top, box;
  Tree() {
    char tmpl[] = "/tmp/padlock-emu-sandbox-XXXXXX";
    top = mkdtemp(tmpl);
    box = top + "/box";
    mkdir(box.c_str(), 0755);
    mkdir((box + "/sub").c_str(), 0755);
    mkdir((top + "/box2").c_str(), 0755);
    put(box + "/inside", "in");
    put(top + "/outside", "out");
    put(top + "/box2/f", "sibling");
    (void)!symlink((top + "/outside").c_str(), (box + "/abs-link").c_str());
    (void)!symlink("../outside", (box + "/climb-link").c_str());
    (void)!symlink("sub", (box + "/sub-link").c_str());
  }
  ~Tree() { std::system(("rm -rf '" + top + "'").c_str()); }
  static void put(const std::string& path, const char* text) {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text, f);
    std::fclose(f);
  }
};

// What open() gave: the file's first bytes, or the error as -errno.
std::string read_or_error(int fd) {
  if (fd < 0) return "errno " + std::to_string(-fd);
  char buf[32] = {};
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  return n < 0 ? "read failed" : std::string(buf, static_cast<size_t>(n));
}

const std::string kDenied = "errno " + std::to_string(EACCES);

TEST(Sandbox, OpensInsideAndRefusesEverythingThatLeaves) {
  Tree t;
  Sandbox s(t.box, "", false);
  ASSERT_TRUE(s.active());
  EXPECT_FALSE(s.net());
  EXPECT_EQ(read_or_error(s.open(AT_FDCWD, t.box + "/inside", O_RDONLY)), "in");
  EXPECT_EQ(read_or_error(s.open(AT_FDCWD, t.box + "/sub/../inside", O_RDONLY)), "in");
  // The same file outside the sandbox opens on the host: the refusals are the sandbox's.
  EXPECT_EQ(read_or_error(::open((t.top + "/outside").c_str(), O_RDONLY)), "out");
  EXPECT_EQ(read_or_error(s.open(AT_FDCWD, t.top + "/outside", O_RDONLY)), kDenied);
  EXPECT_EQ(read_or_error(s.open(AT_FDCWD, t.box + "/../outside", O_RDONLY)), kDenied);
  EXPECT_EQ(read_or_error(s.open(AT_FDCWD, t.box + "/abs-link", O_RDONLY)), kDenied);
  EXPECT_EQ(read_or_error(s.open(AT_FDCWD, t.box + "/climb-link", O_RDONLY)), kDenied);
  EXPECT_EQ(read_or_error(s.open(AT_FDCWD, t.top + "/box2/f", O_RDONLY)), kDenied);
  EXPECT_EQ(read_or_error(s.open(AT_FDCWD, "/etc/passwd", O_RDONLY)), kDenied);
  // A /proc magic link leads anywhere: refused even under an allowed prefix.
  EXPECT_LT(s.open(AT_FDCWD, "/proc/self/root/etc/passwd", O_RDONLY), 0);
}

TEST(Sandbox, RelativePathsResolveFromTheDirectoryDescriptor) {
  Tree t;
  Sandbox s(t.box, "", false);
  const int sub = ::open((t.box + "/sub").c_str(), O_PATH | O_DIRECTORY);
  ASSERT_GE(sub, 0);
  EXPECT_EQ(read_or_error(s.open(sub, "../inside", O_RDONLY)), "in");
  EXPECT_EQ(read_or_error(s.open(sub, "../../outside", O_RDONLY)), kDenied);
  close(sub);
  EXPECT_EQ(read_or_error(s.open(AT_FDCWD, "", O_RDONLY)), "errno " + std::to_string(ENOENT));
}

TEST(Sandbox, HarmlessDevicesOpenButCannotBeCreated) {
  Tree t;
  Sandbox s(t.box, "", false);
  EXPECT_EQ(read_or_error(s.open(AT_FDCWD, "/dev/null", O_RDONLY)), "");
  const int z = s.open(AT_FDCWD, "/dev/zero", O_RDONLY);
  ASSERT_GE(z, 0);
  char b[4] = {1, 1, 1, 1};
  EXPECT_EQ(read(z, b, 4), 4);
  EXPECT_EQ(b[0] | b[1] | b[2] | b[3], 0);
  close(z);
  EXPECT_EQ(read_or_error(s.open(AT_FDCWD, "/dev/sda", O_RDONLY)), kDenied);
}

TEST(Sandbox, ParentGivesTheDirectoryInsideAndRefusesDotDot) {
  Tree t;
  Sandbox s(t.box, "", false);
  int dir = -1;
  std::string leaf;
  ASSERT_EQ(s.parent(AT_FDCWD, t.box + "/sub/new", &dir, leaf), 0);
  EXPECT_EQ(leaf, "new");
  struct stat a {
  }, b{};
  fstat(dir, &a);
  stat((t.box + "/sub").c_str(), &b);
  EXPECT_EQ(a.st_ino, b.st_ino);
  close(dir);
  EXPECT_EQ(s.parent(AT_FDCWD, t.box + "/sub/..", &dir, leaf), -EACCES);
  EXPECT_EQ(s.parent(AT_FDCWD, t.top + "/new", &dir, leaf), -EACCES);
  EXPECT_EQ(s.parent(AT_FDCWD, t.box + "/../new", &dir, leaf), -EACCES);
}

TEST(Sandbox, ContainsIsByWholeComponents) {
  Tree t;
  Sandbox s(t.box, "", false);
  EXPECT_TRUE(s.contains(t.box));
  EXPECT_TRUE(s.contains(t.box + "/sub"));
  EXPECT_FALSE(s.contains(t.top + "/box2"));
  EXPECT_FALSE(s.contains(t.top));
  EXPECT_FALSE(Sandbox().active());
}

}  // namespace
}  // namespace padlock::emu::test
