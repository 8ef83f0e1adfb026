// Dynamically linked programs: PT_INTERP (ld.so) loading, the auxv the loader needs,
// file-backed mmap, dlopen, -L/--sysroot path lookups (qemu-user's rules), /proc/self/exe,
// and the clear refusal of threads.
#include <elf.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "emulator/linux/guest_paths.hpp"
#include "guest_harness.hpp"

namespace padlock::emu::test {
namespace {

// A scratch directory tree, removed when the test ends.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    char tmpl[] = "/tmp/padlock-emu-sysroot-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~ScratchDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string put(const std::string& rel, const std::string& bytes) const {
    const std::string full = path + rel;
    std::system(("mkdir -p \"$(dirname '" + full + "')\"").c_str());
    std::ofstream(full, std::ios::binary) << bytes;
    chmod(full.c_str(), 0755);  // programs and ld.so need execute permission (execve)
    return full;
  }
};

// --- GuestPaths: qemu-user's -L rules ---------------------------------------------------

TEST(GuestPaths, HostRootLeavesPathsAlone) {
  const GuestPaths p;
  EXPECT_EQ(p.resolve("/etc/passwd"), "/etc/passwd");
  EXPECT_EQ(p.resolve("relative/name"), "relative/name");
  EXPECT_EQ(p.guest_view("/usr/bin/openssl"), "/usr/bin/openssl");
}

TEST(GuestPaths, SysrootFileWinsHostFileIsTheFallback) {
  const ScratchDir d;
  d.put("/etc/padlock-probe.txt", "inside");
  const GuestPaths p(d.path + "/");  // a trailing slash is dropped
  EXPECT_EQ(p.sysroot(), d.path);
  EXPECT_EQ(p.resolve("/etc/padlock-probe.txt"), d.path + "/etc/padlock-probe.txt");
  EXPECT_TRUE(p.in_sysroot("/etc/padlock-probe.txt"));
  // Not in the sysroot: the host's file.
  EXPECT_EQ(p.resolve("/etc/padlock-not-there"), "/etc/padlock-not-there");
  // Relative paths are never mapped (they are relative to the host working directory).
  EXPECT_EQ(p.resolve("etc/padlock-probe.txt"), "etc/padlock-probe.txt");
  // A directory counts like a file.
  EXPECT_EQ(p.resolve("/etc"), d.path + "/etc");
  // The guest's view of a sysroot file drops the prefix; other host paths stay.
  EXPECT_EQ(p.guest_view(d.path + "/usr/bin/openssl"), "/usr/bin/openssl");
  EXPECT_EQ(p.guest_view(d.path + "x/y"), d.path + "x/y");
  EXPECT_EQ(p.guest_view("/tmp/prog"), "/tmp/prog");
}

TEST(GuestPaths, DanglingLinkInSysrootFallsBackToHost) {
  const ScratchDir d;
  std::system(("mkdir -p '" + d.path + "/etc'").c_str());
  ASSERT_EQ(symlink("/nonexistent/target", (d.path + "/etc/dangling").c_str()), 0);
  const GuestPaths p(d.path);
  EXPECT_EQ(p.resolve("/etc/dangling"), "/etc/dangling");
}

// --- dynamically linked guests ----------------------------------------------------------

const char* kDynamicProgram = R"SRC(
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
extern char _start[];
static void* thread_main(void* a) { return a; }
static int first_phdr(struct dl_phdr_info* info, size_t size, void* out) {
  (void)size;
  *(const void**)out = info->dlpi_phdr;  /* the program comes first */
  return 1;
}
static int find_ld(struct dl_phdr_info* info, size_t size, void* out) {
  (void)size;
  if (strstr(info->dlpi_name, "ld-linux")) *(unsigned long*)out = info->dlpi_addr;
  return 0;
}
int main(int argc, char** argv) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  buf[n < 0 ? 0 : n] = 0;
  printf("exe=%s\n", buf);
  unsigned long base = getauxval(AT_BASE);
  printf("at_base=%s\n", base != 0 && base % 4096 == 0 ? "page" : "bad");
  printf("at_entry=%d\n", getauxval(AT_ENTRY) == (unsigned long)_start);
  const void* phdr = 0;
  dl_iterate_phdr(first_phdr, &phdr);
  printf("at_phdr=%d\n", getauxval(AT_PHDR) == (unsigned long)phdr);
  /* The loader itself is the object at AT_BASE. */
  unsigned long ld = 0;
  dl_iterate_phdr(find_ld, &ld);
  printf("ld_at_base=%d\n", ld == base);
  void* h = dlopen("libm.so.6", RTLD_NOW);
  double (*c)(double) = h ? (double (*)(double))dlsym(h, "cos") : 0;
  printf("dlopen=%s\n", h ? "ok" : dlerror());
  printf("cos0=%.3f\n", c ? c(0.0) : -1.0);
  /* File-backed MAP_PRIVATE mapping, a MAP_FIXED one over its second page, mprotect. */
  int fd = open(argc > 1 ? argv[1] : "/nonexistent", O_RDONLY);
  char* m = fd >= 0 ? mmap(0, 8192, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  printf("map=%s\n", m != MAP_FAILED ? "ok" : strerror(errno));
  if (m != MAP_FAILED) {
    printf("map0=%.5s\n", m);
    printf("map1=%.5s\n", m + 4096);
    char* f = mmap(m + 4096, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0);
    printf("fixed=%d\n", f == m + 4096);
    printf("map1_after=%.5s\n", m + 4096);
    f[0] = 'X';  /* private: the file does not change */
    printf("mprotect=%d\n", mprotect(m, 4096, PROT_READ | PROT_WRITE) == 0);
    m[1] = 'Y';
    printf("copy=%.5s\n", m);
  }
  pthread_t t;
  void* ret = 0;
  int r = pthread_create(&t, 0, thread_main, (void*)42);
  printf("pthread_create=%s\n", r == 0 ? "ok" : r == EAGAIN ? "EAGAIN" : strerror(r));
  if (r == 0) pthread_join(t, &ret);
  printf("joined=%ld\n", (long)ret);
  return 7;
}
)SRC";

class DynamicTest : public ::testing::TestWithParam<Arch> {};

TEST_P(DynamicTest, LoaderAuxvDlopenMmapThreads) {
  const Arch arch = GetParam();
  const std::string exe = build_guest(kDynamicProgram, arch, "-O1 -ldl -lpthread");
  if (exe.empty()) GTEST_SKIP() << "gcc cannot build " << arch_name(arch) << " programs";
  const ScratchDir d;
  const std::string data = d.put("/data.bin", std::string(4096, 'a') + std::string(4096, 'b'));
  const GuestRun r = run_guest(exe, {data}, nullptr, /*strace=*/true);
  ASSERT_FALSE(r.load_error) << r.error;
  EXPECT_EQ(r.result.exit_code, 7) << r.err;
  EXPECT_EQ(field(r.out, "exe"), exe);  // /proc/self/exe is the guest program
  EXPECT_EQ(field(r.out, "at_base"), "page");
  EXPECT_EQ(field(r.out, "at_entry"), "1");
  EXPECT_EQ(field(r.out, "at_phdr"), "1");
  EXPECT_EQ(field(r.out, "ld_at_base"), "1");
  EXPECT_EQ(field(r.out, "dlopen"), "ok");
  EXPECT_EQ(field(r.out, "cos0"), "1.000");
  EXPECT_EQ(field(r.out, "map"), "ok");
  EXPECT_EQ(field(r.out, "map0"), "aaaaa");
  EXPECT_EQ(field(r.out, "map1"), "bbbbb");
  EXPECT_EQ(field(r.out, "fixed"), "1");
  EXPECT_EQ(field(r.out, "map1_after"), "aaaaa");  // file offset 0 now at the second page
  EXPECT_EQ(field(r.out, "mprotect"), "1");
  EXPECT_EQ(field(r.out, "copy"), "aYaaa");
  std::ifstream f(data, std::ios::binary);
  std::string back((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(back, std::string(4096, 'a') + std::string(4096, 'b'));  // MAP_PRIVATE
  // A thread of the dynamic C library (its TLS from ld.so) runs and is joined
  // (emulator/linux/threads/scheduler.hpp).
  EXPECT_EQ(field(r.out, "pthread_create"), "ok") << r.err;
  EXPECT_EQ(field(r.out, "joined"), "42") << r.err;
}

// PT_INTERP is looked up in the sysroot: a program whose interpreter exists only there.
TEST_P(DynamicTest, InterpreterFromTheSysroot) {
  const Arch arch = GetParam();
  const char* host_ld = arch == Arch::I386 ? "/lib/ld-linux.so.2" : "/lib64/ld-linux-x86-64.so.2";
  if (access(host_ld, R_OK) != 0) GTEST_SKIP() << host_ld << " not installed";
  const std::string exe =
      build_guest("#include <stdio.h>\nint main(void){puts(\"from the sysroot\");return 0;}", arch,
                  "-O1 -Wl,--dynamic-linker=/padlock-test/ld.so");
  if (exe.empty()) GTEST_SKIP() << "gcc cannot build " << arch_name(arch) << " programs";
  // Without the sysroot: a one-line error naming the interpreter.
  const GuestRun missing = run_guest(exe, {});
  ASSERT_TRUE(missing.load_error);
  EXPECT_NE(missing.error.find("cannot load its interpreter /padlock-test/ld.so"),
            std::string::npos)
      << missing.error;
  const ScratchDir d;
  std::ifstream in(host_ld, std::ios::binary);
  d.put("/padlock-test/ld.so", std::string((std::istreambuf_iterator<char>(in)), {}));
  const GuestRun r = run_guest(exe, {}, nullptr, false, 0, {}, d.path);
  ASSERT_FALSE(r.load_error) << r.error;
  EXPECT_EQ(r.result.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "from the sysroot\n");
}

// open, stat, access and readlink see the sysroot's file first, the host's otherwise;
// files are created on the host.
TEST_P(DynamicTest, SysrootLookups) {
  const Arch arch = GetParam();
  const std::string exe = build_guest(R"SRC(
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
static void show(const char* tag, const char* path) {
  char buf[64] = {0};
  int fd = open(path, O_RDONLY);
  if (fd < 0) { printf("%s=missing\n", tag); return; }
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  printf("%s=%.*s\n", tag, (int)(n < 0 ? 0 : n), buf);
}
int main(int argc, char** argv) {
  show("both", argv[1]);       /* in the sysroot and on the host */
  show("host_only", argv[2]);  /* only on the host */
  struct stat st;
  printf("stat_size=%ld\n", stat(argv[1], &st) == 0 ? (long)st.st_size : -1L);
  printf("access=%d\n", access(argv[1], R_OK));
  char link[256] = {0};
  ssize_t n = readlink(argv[3], link, sizeof link - 1);
  printf("readlink=%s\n", n > 0 ? link : "none");
  return 0;
}
)SRC",
                                      arch, "-static -O1");
  if (exe.empty()) GTEST_SKIP() << "gcc cannot build static " << arch_name(arch) << " programs";
  const ScratchDir host, root;
  const std::string both = host.put("/both.txt", "host copy");
  root.put(both, "sysroot copy!");  // the same absolute path inside the sysroot
  const std::string host_only = host.put("/host-only.txt", "only on the host");
  const std::string link = host.path + "/link";
  std::system(("mkdir -p \"$(dirname '" + root.path + link + "')\"").c_str());
  // (A link counts when its target exists: qemu-user tests with access(F_OK).)
  ASSERT_EQ(symlink("both.txt", (root.path + link).c_str()), 0);
  const GuestRun r = run_guest(exe, {both, host_only, link}, nullptr, false, 0, {}, root.path);
  ASSERT_FALSE(r.load_error) << r.error;
  EXPECT_EQ(field(r.out, "both"), "sysroot copy!");
  EXPECT_EQ(field(r.out, "host_only"), "only on the host");
  EXPECT_EQ(field(r.out, "stat_size"), "13");
  EXPECT_EQ(field(r.out, "access"), "0");
  EXPECT_EQ(field(r.out, "readlink"), "both.txt");
  // The same program without -L sees the host's files only.
  const GuestRun h = run_guest(exe, {both, host_only, link});
  EXPECT_EQ(field(h.out, "both"), "host copy");
  EXPECT_EQ(field(h.out, "stat_size"), "9");
  EXPECT_EQ(field(h.out, "readlink"), "none");
}

INSTANTIATE_TEST_SUITE_P(Arches, DynamicTest, ::testing::Values(Arch::I386, Arch::X86_64),
                         [](const auto& info) { return std::string(arch_name(info.param)); });

}  // namespace
}  // namespace padlock::emu::test
