// The system-call layer, exercised through static glibc the way real programs use it,
// for both ABIs (i386 int 0x80, x86-64 syscall): files, memory, identity, time, limits,
// and -ENOSYS for what is not implemented.
#include <gtest/gtest.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <string>

#include "guest_harness.hpp"

namespace padlock::emu::test {
namespace {

const char* kProgram = R"SRC(
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static void files(const char* dir) {
  char path[512], path2[512];
  snprintf(path, sizeof path, "%s/a.txt", dir);
  snprintf(path2, sizeof path2, "%s/b.txt", dir);
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0640);
  printf("open=%d\n", fd >= 3);
  struct iovec iov[2] = {{"hello ", 6}, {"world\n", 6}};
  printf("writev=%zd\n", writev(fd, iov, 2));
  printf("lseek=%ld\n", (long)lseek(fd, 0, SEEK_CUR));
  char buf[64] = {0};
  printf("pread=%zd %.5s\n", pread(fd, buf, 5, 6), buf);
  lseek(fd, 0, SEEK_SET);
  char b1[6] = {0}, b2[7] = {0};
  struct iovec riov[2] = {{b1, 5}, {b2, 6}};
  printf("readv=%zd %s|%s\n", readv(fd, riov, 2), b1, b2);
  struct stat st;
  fstat(fd, &st);
  printf("fstat=%lld %o\n", (long long)st.st_size, st.st_mode & 0777);
  close(fd);
  printf("stat=%d lstat=%d\n", stat(path, &st) == 0 && st.st_size == 12,
         lstat(path, &st) == 0 && S_ISREG(st.st_mode));
  printf("access=%d %d\n", access(path, R_OK), access("/nonexistent/x", F_OK) == -1 && errno == ENOENT);
  printf("rename=%d\n", rename(path, path2));
  snprintf(path, sizeof path, "%s/sub", dir);
  printf("mkdir=%d\n", mkdir(path, 0755));
  DIR* d = opendir(dir);
  int n = 0, saw_b = 0, saw_sub = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL; ++n) {
    if (!strcmp(e->d_name, "b.txt")) saw_b = e->d_type == DT_REG;
    if (!strcmp(e->d_name, "sub")) saw_sub = e->d_type == DT_DIR;
  }
  rewinddir(d);
  readdir(d);
  long pos = telldir(d);
  char third[256];
  snprintf(third, sizeof third, "%s", readdir(d)->d_name);
  while (readdir(d) != NULL) {}
  seekdir(d, pos);
  struct dirent* again = readdir(d);
  printf("seekdir=%d\n", again != NULL && strcmp(again->d_name, third) == 0);
  closedir(d);
  printf("readdir=%d %d %d\n", n, saw_b, saw_sub);
  printf("rmdir=%d unlink=%d\n", rmdir(path), unlink(path2));
  printf("gone=%d\n", open(path2, O_RDONLY) == -1 && errno == ENOENT);
  char cwd[512];
  printf("chdir=%d\n", chdir(dir));
  printf("getcwd=%d\n", getcwd(cwd, sizeof cwd) != NULL && strcmp(cwd, dir) == 0);
  int p[2];
  printf("pipe=%d\n", pipe(p));
  write(p[1], "xyz", 3);
  char pb[4] = {0};
  printf("piperead=%zd %s\n", read(p[0], pb, 3), pb);
  int dfd = dup(p[0]);
  printf("dup=%d dup2=%d\n", dfd > p[1], dup2(p[0], 50));
  printf("fcntl=%d\n", fcntl(50, F_GETFD) == 0 && fcntl(50, F_SETFD, FD_CLOEXEC) == 0 &&
                       fcntl(50, F_GETFD) == FD_CLOEXEC);
  char exe[512];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[len > 0 ? len : 0] = 0;
  printf("exe=%s\n", exe);
}

static sigjmp_buf fault_jmp;
static void on_segv(int sig) { (void)sig; siglongjmp(fault_jmp, 1); }
static int faults(volatile char* p) {
  struct sigaction sa = {0}, old;
  sa.sa_handler = on_segv;
  sigaction(SIGSEGV, &sa, &old);
  int r = 1;
  if (sigsetjmp(fault_jmp, 1) == 0) { (void)p[0]; r = 0; }
  sigaction(SIGSEGV, &old, NULL);
  return r;
}

static void memory(void) {
  char* a = mmap(0, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  a[0] = 1; a[3 * 4096 - 1] = 2;
  printf("mmap=%d\n", a != MAP_FAILED && a[4096] == 0);
  char* b = mremap(a, 3 * 4096, 64 * 4096, MREMAP_MAYMOVE);
  printf("mremap=%d\n", b != MAP_FAILED && b[0] == 1 && b[3 * 4096 - 1] == 2 && b[60 * 4096] == 0);
  printf("mprotect=%d\n", mprotect(b, 4096, PROT_READ));
  printf("munmap=%d\n", munmap(b, 64 * 4096));
  void* brk0 = sbrk(0);
  printf("brk=%d\n", sbrk(100000) == brk0 && (char*)sbrk(0) == (char*)brk0 + 100000);
  memset(brk0, 0x55, 100000);
  /* Lowered, the break's whole pages are gone (ENOMEM, SIGSEGV) and its own page keeps its
     bytes; raised again, the pages read as zeros, twice (the second time over pages the
     emulator kept for the regrowth: AddressSpacePolicy::brk). */
  char* first = (char*)(((uintptr_t)brk0 + 4095) & ~(uintptr_t)4095);
  int zeros = 1, gone = 1;
  for (int round = 0; round < 2; ++round) {
    sbrk(-100000);
    gone &= mprotect(first + 4096, 4096, PROT_READ) == -1 && errno == ENOMEM && faults(first + 4096);
    char* again = sbrk(100000);
    zeros &= again == brk0 && (first == brk0 || first[-1] == 0x55);
    for (char* c = first; c < (char*)brk0 + 100000; ++c) zeros &= *c == 0;
    memset(first, 0x66, (char*)brk0 + 100000 - first);
  }
  printf("brk_lowered=%d brk_regrown=%d\n", gone, zeros);
  char* big = malloc(50 << 20);
  memset(big, 1, 50 << 20);
  printf("malloc=%d\n", big != NULL && big[(50 << 20) - 1] == 1);
  free(big);
  printf("enomem=%d\n", mmap((void*)0x10000, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != MAP_FAILED);
  /* A private file mapping sees the file's bytes. */
  int fd = open("/proc/self/exe", O_RDONLY);
  unsigned char* m = mmap(0, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  printf("filemap=%d\n", m != MAP_FAILED && m[0] == 0x7f && m[1] == 'E' && m[2] == 'L');
  close(fd);
}

static void identity(void) {
  struct utsname u;
  uname(&u);
  printf("machine=%s sysname=%s\n", u.machine, u.sysname);
  printf("pid=%d tid=%d\n", getpid() == (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid) == getpid());
  printf("ppid=%d\n", getppid() > 0);
  printf("ids=%d\n", getuid() == geteuid() && getgid() == getegid());
  struct rlimit rl;
  printf("rlimit=%d\n", getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur == 8u << 20);
  printf("setrlimit=%d\n", setrlimit(RLIMIT_AS, &(struct rlimit){1u << 30, RLIM_INFINITY}) == 0 &&
                           getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur == 1u << 30);
  struct sysinfo si;
  printf("sysinfo=%d\n", sysinfo(&si) == 0 && si.totalram > 0 && si.mem_unit > 0);
  unsigned char r1[16], r2[16];
  printf("getrandom=%zd\n", getrandom(r1, 16, 0));
  getrandom(r2, 16, 0);
  printf("random_differs=%d\n", memcmp(r1, r2, 16) != 0);
  printf("random0=%02x%02x%02x%02x\n", r1[0], r1[1], r1[2], r1[3]);
  cpu_set_t set;
  CPU_ZERO(&set);
  printf("getaffinity=%d %d\n", sched_getaffinity(0, sizeof set, &set), CPU_COUNT(&set));
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  int pin0 = sched_setaffinity(0, sizeof set, &set);
  CPU_ZERO(&set);
  CPU_SET(1, &set);
  int pin1 = sched_setaffinity(0, sizeof set, &set);
  printf("setaffinity=%d %d %d\n", pin0, pin1, errno == EINVAL);
  unsigned cpu = 9, node = 9;
  long got = syscall(SYS_getcpu, &cpu, &node, 0);
  printf("getcpu=%ld %u %u\n", got, cpu, node);
}

static void times_(void) {
  struct timespec t0, t1, res;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  struct timespec req = {0, 20 * 1000 * 1000};
  printf("nanosleep=%d\n", nanosleep(&req, NULL));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
  printf("slept=%d\n", ms >= 19 && ms < 2000);
  printf("getres=%d\n", clock_getres(CLOCK_MONOTONIC, &res) == 0 && res.tv_nsec > 0);
  struct timeval tv;
  gettimeofday(&tv, NULL);
  printf("gettimeofday=%d\n", tv.tv_sec > 1600000000 && tv.tv_sec - time(NULL) <= 1);
  struct tms t;
  printf("times=%d\n", times(&t) != (clock_t)-1);
  struct rusage ru;
  printf("getrusage=%d\n", getrusage(RUSAGE_SELF, &ru) == 0 && ru.ru_maxrss > 0);
}

static void enosys(void) {
  long r = syscall(499);
  printf("unknown=%ld %d\n", r, errno);
  syscall(499);
  errno = 0;
  r = syscall(SYS_io_setup, 1, NULL);
  printf("io_setup=%ld %d\n", r, errno);
  syscall(SYS_io_setup, 1, NULL);
}

/* futex(2) in a process of one thread: FUTEX_WAIT on a word that no longer holds the
   expected value fails with EAGAIN at once, one that does waits until its timeout
   (ETIMEDOUT); FUTEX_WAKE with no waiter wakes 0; FUTEX_CMP_REQUEUE with a changed word
   fails with EAGAIN; FUTEX_WAIT_BITSET with an empty bitset is EINVAL. The host's kernel
   prints the same lines for both ABIs. */
static void futexes(void) {
  uint32_t word = 1, other = 0;
  struct timespec ms = {0, 1000 * 1000};
  errno = 0;
  long r = syscall(SYS_futex, &word, FUTEX_WAIT, 2, &ms, NULL, 0);
  printf("wait_changed=%ld %d\n", r, errno == EAGAIN);
  errno = 0;
  r = syscall(SYS_futex, &word, FUTEX_WAIT, 1, &ms, NULL, 0);
  printf("wait_timeout=%ld %d\n", r, errno == ETIMEDOUT);
  printf("wake_none=%ld\n", syscall(SYS_futex, &word, FUTEX_WAKE, 5, NULL, NULL, 0));
  errno = 0;
  r = syscall(SYS_futex, &word, FUTEX_CMP_REQUEUE, 1, (void*)1, &other, 2);
  printf("cmp_requeue_changed=%ld %d\n", r, errno == EAGAIN);
  printf("cmp_requeue_none=%ld\n",
         syscall(SYS_futex, &word, FUTEX_CMP_REQUEUE, 1, (void*)1, &other, 1));
  errno = 0;
  r = syscall(SYS_futex, &word, FUTEX_WAIT_BITSET, 1, NULL, NULL, 0);
  printf("wait_no_bits=%ld %d\n", r, errno == EINVAL);
}

/* The other entry points: SYSENTER (i386 ABI, 6th argument at [EBP]) and, from 64-bit
   code, INT 0x80 (the i386 ABI). Both must reach the same system calls. */
static void entries(void) {
  long pid = 0;
#if defined(__x86_64__)
  __asm__ volatile("int $0x80" : "=a"(pid) : "a"(20L) : "memory");  /* i386 getpid */
  printf("int80_64=%d\n", pid == getpid());
#else
  __asm__ volatile("push %%ebp\n\tmov %%esp, %%ebp\n\tsysenter\n\tpop %%ebp"
                   : "=a"(pid) : "a"(20) : "memory", "ecx", "edx");
  printf("sysenter=%d\n", pid == getpid());
#endif
}

/* statfs and fstatfs (statfs64/fstatfs64 on i386 glibc) of the same file system agree with
   what the host says, passed as arguments. */
static void filesystems(const char* dir, const char* bsize, const char* blocks) {
  struct statfs a, b;
  int fd = open(dir, O_RDONLY | O_DIRECTORY);
  printf("statfs=%d %d\n", statfs(dir, &a), fstatfs(fd, &b));
  printf("same=%d\n", a.f_type == b.f_type && a.f_blocks == b.f_blocks && a.f_bsize == b.f_bsize);
  printf("bsize=%d blocks=%d\n", (long long)a.f_bsize == atoll(bsize),
         (unsigned long long)a.f_blocks == strtoull(blocks, NULL, 10));
  close(fd);
}

int main(int argc, char** argv) {
  if (!strcmp(argv[1], "files")) files(argv[2]);
  else if (!strcmp(argv[1], "statfs")) filesystems(argv[2], argv[3], argv[4]);
  else if (!strcmp(argv[1], "entries")) entries();
  else if (!strcmp(argv[1], "memory")) memory();
  else if (!strcmp(argv[1], "identity")) identity();
  else if (!strcmp(argv[1], "time")) times_();
  else if (!strcmp(argv[1], "enosys")) enosys();
  else if (!strcmp(argv[1], "futex")) futexes();
  return 0;
}
)SRC";

class SyscallTest : public ::testing::TestWithParam<Arch> {
 protected:
  GuestRun run(std::vector<std::string> args, bool strace = false, uint64_t seed = 0) {
    const std::string exe = build_guest(kProgram, GetParam(), "-static -O1");
    if (exe.empty()) {
      GuestRun r;
      r.load_error = true;
      r.error = "skip";
      return r;
    }
    return run_guest(exe, args, nullptr, strace, seed);
  }
};

#define RUN_OR_SKIP(r, ...)                            \
  const GuestRun r = run(__VA_ARGS__);                 \
  if (r.load_error && r.error == "skip") GTEST_SKIP(); \
  ASSERT_FALSE(r.load_error) << r.error;               \
  ASSERT_FALSE(r.result.signaled) << r.err

TEST_P(SyscallTest, Files) {
  char tmpl[] = "/tmp/padlock-emu-files-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  RUN_OR_SKIP(r, {"files", dir});
  EXPECT_EQ(field(r.out, "open"), "1");
  EXPECT_EQ(field(r.out, "writev"), "12");
  EXPECT_EQ(field(r.out, "lseek"), "12");
  EXPECT_EQ(field(r.out, "pread"), "5 world");
  EXPECT_EQ(field(r.out, "readv"), "11 hello| world");
  EXPECT_EQ(field(r.out, "fstat"), "12 640");
  EXPECT_EQ(field(r.out, "stat"), "1 lstat=1");
  EXPECT_EQ(field(r.out, "access"), "0 1");
  EXPECT_EQ(field(r.out, "rename"), "0");
  EXPECT_EQ(field(r.out, "mkdir"), "0");
  EXPECT_EQ(field(r.out, "readdir"), "4 1 1");  // ., .., b.txt, sub
  EXPECT_EQ(field(r.out, "seekdir"), "1");      // i386: 32-bit directory cookies round-trip
  EXPECT_EQ(field(r.out, "rmdir"), "0 unlink=0");
  EXPECT_EQ(field(r.out, "gone"), "1");
  EXPECT_EQ(field(r.out, "chdir"), "0");
  EXPECT_EQ(field(r.out, "getcwd"), "1");
  EXPECT_EQ(field(r.out, "pipe"), "0");
  EXPECT_EQ(field(r.out, "piperead"), "3 xyz");
  EXPECT_EQ(field(r.out, "dup"), "1 dup2=50");
  EXPECT_EQ(field(r.out, "fcntl"), "1");
  // readlink("/proc/self/exe") names the guest program, not the emulator.
  char real[4096];
  const std::string exe = build_guest(kProgram, GetParam(), "-static -O1");
  ASSERT_NE(realpath(exe.c_str(), real), nullptr);
  EXPECT_EQ(field(r.out, "exe"), real);
  rmdir(dir.c_str());
}

TEST_P(SyscallTest, Memory) {
  RUN_OR_SKIP(r, {"memory"});
  EXPECT_EQ(field(r.out, "mmap"), "1");
  EXPECT_EQ(field(r.out, "mremap"), "1");
  EXPECT_EQ(field(r.out, "mprotect"), "0");
  EXPECT_EQ(field(r.out, "munmap"), "0");
  EXPECT_EQ(field(r.out, "brk"), "1");
  EXPECT_EQ(field(r.out, "brk_lowered"), "1 brk_regrown=1");
  EXPECT_EQ(field(r.out, "malloc"), "1");
  EXPECT_EQ(field(r.out, "enomem"), "1");
  EXPECT_EQ(field(r.out, "filemap"), "1");
}

TEST_P(SyscallTest, Identity) {
  RUN_OR_SKIP(r, {"identity"}, false, 7);
  EXPECT_EQ(field(r.out, "machine"),
            std::string(GetParam() == Arch::I386 ? "i686" : "x86_64") + " sysname=Linux");
  EXPECT_EQ(field(r.out, "pid"), "1 tid=1");
  EXPECT_EQ(field(r.out, "ppid"), "1");
  EXPECT_EQ(field(r.out, "ids"), "1");
  EXPECT_EQ(field(r.out, "rlimit"), "1");
  EXPECT_EQ(field(r.out, "setrlimit"), "1");
  EXPECT_EQ(field(r.out, "sysinfo"), "1");
  EXPECT_EQ(field(r.out, "getrandom"), "16");
  EXPECT_EQ(field(r.out, "random_differs"), "1");
  // One CPU (CPU 0): the mask has one bit, pinning to CPU 0 works, to CPU 1 is EINVAL.
  EXPECT_EQ(field(r.out, "setaffinity"), "0 -1 1");
  EXPECT_EQ(field(r.out, "getcpu"), "0 0 0");
  // getrandom is reproducible from --seed.
  RUN_OR_SKIP(again, {"identity"}, false, 7);
  RUN_OR_SKIP(other, {"identity"}, false, 8);
  EXPECT_EQ(field(r.out, "random0"), field(again.out, "random0"));
  EXPECT_NE(field(r.out, "random0"), field(other.out, "random0"));
  // The stream is splitmix64 from 7 XOR "getradom" (0x6765747261646F6D), computed
  // independently (Python, from the algorithm's definition): 0x37a0d9b325d6273e,
  // 0x9ea3d7683562061e, ... The C library's malloc took the first word (its tcache key,
  // getrandom(4 or 8 bytes, GRND_NONBLOCK) under --strace); each call starts at a new word.
  EXPECT_EQ(field(r.out, "random0"), "1e066235");
}

TEST_P(SyscallTest, Time) {
  RUN_OR_SKIP(r, {"time"});
  EXPECT_EQ(field(r.out, "nanosleep"), "0");
  EXPECT_EQ(field(r.out, "slept"), "1");
  EXPECT_EQ(field(r.out, "getres"), "1");
  EXPECT_EQ(field(r.out, "gettimeofday"), "1");
  EXPECT_EQ(field(r.out, "times"), "1");
  EXPECT_EQ(field(r.out, "getrusage"), "1");
}

TEST_P(SyscallTest, FutexWaitChecksTheWordAndTimesOut) {
  RUN_OR_SKIP(r, {"futex"});
  EXPECT_EQ(field(r.out, "wait_changed"), "-1 1");
  EXPECT_EQ(field(r.out, "wait_timeout"), "-1 1");
  EXPECT_EQ(field(r.out, "wake_none"), "0");
  EXPECT_EQ(field(r.out, "cmp_requeue_changed"), "-1 1");
  EXPECT_EQ(field(r.out, "cmp_requeue_none"), "0");
  EXPECT_EQ(field(r.out, "wait_no_bits"), "-1 1");
}

TEST_P(SyscallTest, Statfs) {
  struct statfs host {};
  ASSERT_EQ(statfs("/tmp", &host), 0);
  RUN_OR_SKIP(r, {"statfs", "/tmp", std::to_string(host.f_bsize), std::to_string(host.f_blocks)});
  EXPECT_EQ(field(r.out, "statfs"), "0 0");
  EXPECT_EQ(field(r.out, "same"), "1");
  EXPECT_EQ(field(r.out, "bsize"), "1 blocks=1");
  EXPECT_EQ(r.err.find("unsupported"), std::string::npos) << r.err;
}

TEST_P(SyscallTest, OtherEntryPoints) {
  RUN_OR_SKIP(r, {"entries"});
  if (GetParam() == Arch::I386) {
    EXPECT_EQ(field(r.out, "sysenter"), "1");
  } else {
    EXPECT_EQ(field(r.out, "int80_64"), "1");
  }
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_P(SyscallTest, UnimplementedIsEnosysAndLogged) {
  RUN_OR_SKIP(r, {"enosys"}, true);
  EXPECT_EQ(field(r.out, "unknown"), "-1 38");  // ENOSYS
  EXPECT_EQ(field(r.out, "io_setup"), "-1 38");
  EXPECT_NE(r.err.find("syscall_499("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("= -1 ENOSYS (Function not implemented)"), std::string::npos);
  EXPECT_NE(r.err.find("io_setup() = -1 ENOSYS (Function not implemented) [unimplemented]"),
            std::string::npos)
      << r.err;
}

// No silent failures: without --strace, the first call of each unimplemented number is
// reported by name, once.
TEST_P(SyscallTest, UnimplementedIsReportedOnceWithoutStrace) {
  RUN_OR_SKIP(r, {"enosys"});
  const bool i386 = GetParam() == Arch::I386;
  const std::string io_setup = std::string("padlock-emu: unsupported system call io_setup (") +
                               (i386 ? "245" : "206") + ") \u2192 ENOSYS\n";
  EXPECT_EQ(count(r.err, io_setup), 1u) << r.err;
  EXPECT_EQ(count(r.err, "padlock-emu: unsupported system call syscall_499 (499) \u2192 ENOSYS\n"),
            1u)
      << r.err;
  EXPECT_EQ(count(r.err, "unsupported system call"), 2u) << r.err;
}

TEST_P(SyscallTest, StraceLinesHaveArgumentsAndResults) {
  RUN_OR_SKIP(r, {"identity"}, true);
  EXPECT_NE(r.err.find(" uname(0x"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(") = 0\n"), std::string::npos);
  EXPECT_NE(r.err.find(" exit_group(0) = ?"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" brk(0) = 0x"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Arches, SyscallTest, ::testing::Values(Arch::I386, Arch::X86_64),
                         [](const auto& info) { return std::string(arch_name(info.param)); });

}  // namespace
}  // namespace padlock::emu::test
