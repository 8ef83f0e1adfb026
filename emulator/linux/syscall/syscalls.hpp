// The Linux system-call layer: one table per ABI maps numbers to a name, a handler and
// an argument format for --strace. Handlers return the Linux result (-errno on error).
// Every number has Linux's name (i386/ and x86_64/syscall_names.inc); one with no handler
// returns -ENOSYS and is reported once per process, with or without --strace
// (Process::report_unsupported).
#pragma once

#include <poll.h>
#include <sys/uio.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "emulator/linux/files/guest_files.hpp"
#include "emulator/linux/threads/futex_words.hpp"
#include "emulator/linux/threads/scheduler.hpp"
#include "emulator/linux/vm/address_space_policy.hpp"
#include "emulator/linux/vm/user_memory.hpp"

namespace padlock::emu {

class Process;
struct SyscallAbi;
struct ChildWait;  // emulator/linux/threads/guest_thread.hpp

struct SyscallContext {
  Process& p;
  UserMemory& user;        // the guest's memory, as copy_from_user/copy_to_user see it
  AddressSpacePolicy& vm;  // mmap, brk, mremap, the layout
  Scheduler& sched;        // the guest threads: clone, waits, exit, tgkill
  FutexWords& futexes;     // futex(2) and robust lists
  GuestFiles& files;       // descriptors, sockets, the sysroot and the sandbox
  const SyscallAbi& abi;
  uint64_t nr;
  uint64_t a[6];
  bool no_result = false;    // the handler set every register (sigreturn): leave EAX alone
  bool interrupted = false;  // returned -EINTR because a signal arrived (SA_RESTART)
  // The calling thread waits (Scheduler::block): its result is written when it wakes.
  bool blocks = false;
  // The call's timeout has passed in a host wait in the scheduler (threads/scheduler.hpp) that
  // began at virtual cycle `waited_since`: it is made again without waiting.
  bool waited_out = false;
  uint64_t waited_since = 0;
};

using SyscallHandler = int64_t (*)(SyscallContext&);

// Argument formats for --strace, one letter per argument:
//   d signed, u unsigned, x hex, p pointer, s C string, f fd (signed), o octal,
//   O open flags, S signal number, P protection, M mmap flags.
// The result is 'd' (decimal) or 'x' (hex, for addresses).
struct SyscallEntry {
  const char* name = nullptr;
  SyscallHandler fn = nullptr;
  const char* args = "";
  char ret = 'd';
};

inline constexpr size_t kMaxSyscall = 512;

struct SyscallAbi {
  const char* name;  // "i386" or "x86-64"
  bool wide;         // 64-bit C types (long and pointers are 8 bytes)
  const std::array<SyscallEntry, kMaxSyscall>& table;
};

extern const SyscallAbi kAbiI386;
extern const SyscallAbi kAbiX86_64;

struct NumberedSyscall {
  int nr;
  SyscallEntry entry;
};

struct SyscallName {
  int nr;
  const char* name;
};

// The ABI's table: every number named (`names`, the generated list), the implemented ones
// with their handlers (`l`).
template <size_t N, size_t M>
constexpr std::array<SyscallEntry, kMaxSyscall> make_syscall_table(const NumberedSyscall (&l)[N],
                                                                   const SyscallName (&names)[M]) {
  std::array<SyscallEntry, kMaxSyscall> t{};
  for (const SyscallName& n : names) {
    if (static_cast<size_t>(n.nr) < kMaxSyscall) t[static_cast<size_t>(n.nr)].name = n.name;
  }
  for (const NumberedSyscall& s : l) t[static_cast<size_t>(s.nr)] = s.entry;
  return t;
}

// Does the call name one of the emulator's own descriptors in a descriptor argument (the
// table's 'f')? Process::dispatch_syscall then answers EBADF without calling the handler
// (docs/reliability.md, "The emulator's descriptors are not the guest's").
bool names_emulator_fd(const GuestFiles& f, const SyscallEntry& e, const uint64_t (&a)[6]);

// Handlers, grouped by file. Most serve both ABIs and look at ctx.abi.wide.
#define PADLOCK_SYSCALL(name) int64_t name(SyscallContext& c)
// syscall/memory.cpp
PADLOCK_SYSCALL(sys_brk);
PADLOCK_SYSCALL(sys_mmap);      // x86-64 mmap: byte offset
PADLOCK_SYSCALL(sys_mmap2);     // i386 mmap2: offset in pages
PADLOCK_SYSCALL(sys_old_mmap);  // i386 mmap: pointer to six arguments
PADLOCK_SYSCALL(sys_munmap);
PADLOCK_SYSCALL(sys_mprotect);
PADLOCK_SYSCALL(sys_mremap);
PADLOCK_SYSCALL(sys_madvise);
PADLOCK_SYSCALL(sys_msync);
PADLOCK_SYSCALL(sys_mlock);
// syscall/process_vm.cpp
PADLOCK_SYSCALL(sys_process_vm_readv);
PADLOCK_SYSCALL(sys_process_vm_writev);
// syscall/file.cpp
PADLOCK_SYSCALL(sys_read);
PADLOCK_SYSCALL(sys_write);
PADLOCK_SYSCALL(sys_readv);
PADLOCK_SYSCALL(sys_writev);
PADLOCK_SYSCALL(sys_pread64);
PADLOCK_SYSCALL(sys_pwrite64);
PADLOCK_SYSCALL(sys_pread64_i386);  // 64-bit offset in two registers
PADLOCK_SYSCALL(sys_pwrite64_i386);
PADLOCK_SYSCALL(sys_open);
PADLOCK_SYSCALL(sys_openat);
PADLOCK_SYSCALL(sys_creat);
PADLOCK_SYSCALL(sys_close);
PADLOCK_SYSCALL(sys_lseek);
PADLOCK_SYSCALL(sys_llseek);
PADLOCK_SYSCALL(sys_access);
PADLOCK_SYSCALL(sys_faccessat);
PADLOCK_SYSCALL(sys_faccessat2);
PADLOCK_SYSCALL(sys_readlink);
PADLOCK_SYSCALL(sys_readlinkat);
PADLOCK_SYSCALL(sys_getcwd);
PADLOCK_SYSCALL(sys_chdir);
PADLOCK_SYSCALL(sys_fchdir);
PADLOCK_SYSCALL(sys_getdents);
PADLOCK_SYSCALL(sys_getdents64);
PADLOCK_SYSCALL(sys_unlink);
PADLOCK_SYSCALL(sys_unlinkat);
PADLOCK_SYSCALL(sys_rename);
PADLOCK_SYSCALL(sys_renameat);
PADLOCK_SYSCALL(sys_renameat2);
PADLOCK_SYSCALL(sys_mkdir);
PADLOCK_SYSCALL(sys_mkdirat);
PADLOCK_SYSCALL(sys_rmdir);
PADLOCK_SYSCALL(sys_fcntl);
PADLOCK_SYSCALL(sys_fcntl64);
PADLOCK_SYSCALL(sys_dup);
PADLOCK_SYSCALL(sys_dup2);
PADLOCK_SYSCALL(sys_dup3);
PADLOCK_SYSCALL(sys_pipe);
PADLOCK_SYSCALL(sys_pipe2);
PADLOCK_SYSCALL(sys_ioctl);
PADLOCK_SYSCALL(sys_umask);
PADLOCK_SYSCALL(sys_fsync);
PADLOCK_SYSCALL(sys_fadvise64);
PADLOCK_SYSCALL(sys_fadvise64_i386);     // offset in two registers, 32-bit length
PADLOCK_SYSCALL(sys_fadvise64_64_i386);  // offset and length in two registers each
PADLOCK_SYSCALL(sys_ftruncate);
PADLOCK_SYSCALL(sys_ftruncate64_i386);
PADLOCK_SYSCALL(sys_chmod);
PADLOCK_SYSCALL(sys_fchmod);
PADLOCK_SYSCALL(sys_symlink);
PADLOCK_SYSCALL(sys_link);
PADLOCK_SYSCALL(sys_poll);
// syscall/stat.cpp
PADLOCK_SYSCALL(sys_stat);  // x86-64 struct stat / i386 old struct stat
PADLOCK_SYSCALL(sys_lstat);
PADLOCK_SYSCALL(sys_fstat);
PADLOCK_SYSCALL(sys_newfstatat);  // x86-64
PADLOCK_SYSCALL(sys_stat64);      // i386 struct stat64
PADLOCK_SYSCALL(sys_lstat64);
PADLOCK_SYSCALL(sys_fstat64);
PADLOCK_SYSCALL(sys_fstatat64);
PADLOCK_SYSCALL(sys_statx);
PADLOCK_SYSCALL(sys_statfs);  // x86-64 struct statfs / i386 32-bit struct statfs
PADLOCK_SYSCALL(sys_fstatfs);
PADLOCK_SYSCALL(sys_statfs64);  // i386 struct statfs64, with its size argument
PADLOCK_SYSCALL(sys_fstatfs64);
// syscall/time.cpp
PADLOCK_SYSCALL(sys_clock_gettime);    // native timespec of the ABI
PADLOCK_SYSCALL(sys_clock_gettime64);  // i386 time64: 64-bit timespec
PADLOCK_SYSCALL(sys_clock_getres);
PADLOCK_SYSCALL(sys_clock_getres64);
PADLOCK_SYSCALL(sys_gettimeofday);
PADLOCK_SYSCALL(sys_time);
PADLOCK_SYSCALL(sys_times);
PADLOCK_SYSCALL(sys_getrusage);
PADLOCK_SYSCALL(sys_nanosleep);
PADLOCK_SYSCALL(sys_clock_nanosleep);
PADLOCK_SYSCALL(sys_clock_nanosleep64);
// syscall/task.cpp
PADLOCK_SYSCALL(sys_exit);
PADLOCK_SYSCALL(sys_exit_group);
PADLOCK_SYSCALL(sys_getpid);
PADLOCK_SYSCALL(sys_getppid);
PADLOCK_SYSCALL(sys_gettid);
PADLOCK_SYSCALL(sys_getuid);
PADLOCK_SYSCALL(sys_geteuid);
PADLOCK_SYSCALL(sys_getgid);
PADLOCK_SYSCALL(sys_getegid);
PADLOCK_SYSCALL(sys_getpgrp);
PADLOCK_SYSCALL(sys_getpgid);
PADLOCK_SYSCALL(sys_getsid);
PADLOCK_SYSCALL(sys_uname);
PADLOCK_SYSCALL(sys_sysinfo);
PADLOCK_SYSCALL(sys_getrlimit);   // i386 old getrlimit clamps; x86-64 native
PADLOCK_SYSCALL(sys_ugetrlimit);  // i386
PADLOCK_SYSCALL(sys_setrlimit);
PADLOCK_SYSCALL(sys_prlimit64);
PADLOCK_SYSCALL(sys_getrandom);
PADLOCK_SYSCALL(sys_set_tid_address);
PADLOCK_SYSCALL(sys_set_robust_list);
PADLOCK_SYSCALL(sys_get_robust_list);
PADLOCK_SYSCALL(sys_futex);
PADLOCK_SYSCALL(sys_futex_time64);
PADLOCK_SYSCALL(sys_rseq);
PADLOCK_SYSCALL(sys_sched_yield);
PADLOCK_SYSCALL(sys_sched_getaffinity);
PADLOCK_SYSCALL(sys_sched_setaffinity);
PADLOCK_SYSCALL(sys_getcpu);
PADLOCK_SYSCALL(sys_set_thread_area);
PADLOCK_SYSCALL(sys_get_thread_area);
PADLOCK_SYSCALL(sys_arch_prctl);
PADLOCK_SYSCALL(sys_prctl);
PADLOCK_SYSCALL(sys_personality);
// syscall/signal.cpp
PADLOCK_SYSCALL(sys_rt_sigaction);
PADLOCK_SYSCALL(sys_rt_sigprocmask);
PADLOCK_SYSCALL(sys_sigprocmask);  // i386 old sigprocmask (32-bit set)
PADLOCK_SYSCALL(sys_rt_sigpending);
PADLOCK_SYSCALL(sys_rt_sigsuspend);
PADLOCK_SYSCALL(sys_sigaltstack);
PADLOCK_SYSCALL(sys_kill);
PADLOCK_SYSCALL(sys_tgkill);
PADLOCK_SYSCALL(sys_tkill);
PADLOCK_SYSCALL(sys_rt_sigreturn);
PADLOCK_SYSCALL(sys_sigreturn);
PADLOCK_SYSCALL(sys_pause);
PADLOCK_SYSCALL(sys_rt_sigtimedwait);
PADLOCK_SYSCALL(sys_rt_sigtimedwait_time64);
// syscall/clone.cpp
PADLOCK_SYSCALL(sys_clone);
PADLOCK_SYSCALL(sys_clone3);
PADLOCK_SYSCALL(sys_fork);
PADLOCK_SYSCALL(sys_vfork);
// syscall/socket.cpp
PADLOCK_SYSCALL(sys_socket);
PADLOCK_SYSCALL(sys_socketpair);
PADLOCK_SYSCALL(sys_bind);
PADLOCK_SYSCALL(sys_connect);
PADLOCK_SYSCALL(sys_listen);
PADLOCK_SYSCALL(sys_accept);
PADLOCK_SYSCALL(sys_accept4);
PADLOCK_SYSCALL(sys_getsockname);
PADLOCK_SYSCALL(sys_getpeername);
PADLOCK_SYSCALL(sys_sendto);
PADLOCK_SYSCALL(sys_recvfrom);
PADLOCK_SYSCALL(sys_sendmsg);
PADLOCK_SYSCALL(sys_recvmsg);
PADLOCK_SYSCALL(sys_sendmmsg);
PADLOCK_SYSCALL(sys_recvmmsg);
PADLOCK_SYSCALL(sys_recvmmsg_time64);  // i386 time64
PADLOCK_SYSCALL(sys_shutdown);
PADLOCK_SYSCALL(sys_setsockopt);
PADLOCK_SYSCALL(sys_getsockopt);
PADLOCK_SYSCALL(sys_socketcall);  // i386
// syscall/poll_wait.cpp
PADLOCK_SYSCALL(sys_select);  // x86-64 select, i386 _newselect
PADLOCK_SYSCALL(sys_pselect6);
PADLOCK_SYSCALL(sys_pselect6_time64);
PADLOCK_SYSCALL(sys_ppoll);
PADLOCK_SYSCALL(sys_ppoll_time64);
PADLOCK_SYSCALL(sys_epoll_create);
PADLOCK_SYSCALL(sys_epoll_create1);
PADLOCK_SYSCALL(sys_epoll_ctl);
PADLOCK_SYSCALL(sys_epoll_wait);
PADLOCK_SYSCALL(sys_epoll_pwait);
PADLOCK_SYSCALL(sys_eventfd);
PADLOCK_SYSCALL(sys_eventfd2);
PADLOCK_SYSCALL(sys_signalfd);
PADLOCK_SYSCALL(sys_signalfd4);
PADLOCK_SYSCALL(sys_timerfd_create);
PADLOCK_SYSCALL(sys_timerfd_settime);
PADLOCK_SYSCALL(sys_timerfd_settime64);  // i386 time64
PADLOCK_SYSCALL(sys_timerfd_gettime);
PADLOCK_SYSCALL(sys_timerfd_gettime64);
// syscall/exec.cpp
PADLOCK_SYSCALL(sys_execve);
// syscall/wait.cpp
PADLOCK_SYSCALL(sys_wait4);
PADLOCK_SYSCALL(sys_waitpid);  // i386
PADLOCK_SYSCALL(sys_waitid);
PADLOCK_SYSCALL(sys_setpgid);
PADLOCK_SYSCALL(sys_setsid);
// syscall/itimer.cpp: timers on the virtual clock (docs/timing.md; host timers with --timing off)
PADLOCK_SYSCALL(sys_alarm);
PADLOCK_SYSCALL(sys_setitimer);
PADLOCK_SYSCALL(sys_getitimer);
PADLOCK_SYSCALL(sys_timer_create);
PADLOCK_SYSCALL(sys_timer_settime);
PADLOCK_SYSCALL(sys_timer_settime64);
PADLOCK_SYSCALL(sys_timer_gettime);
PADLOCK_SYSCALL(sys_timer_gettime64);
PADLOCK_SYSCALL(sys_timer_getoverrun);
PADLOCK_SYSCALL(sys_timer_delete);
#undef PADLOCK_SYSCALL

// A guest iovec array as read (syscall/file.cpp, as Linux's iovec_from_user): 0, -EINVAL
// (more than IOV_MAX, or a length negative as the ABI's ssize_t) or -EFAULT (unreadable).
struct GuestIovec {
  uint64_t base;
  uint64_t len;
};
int64_t read_guest_iovecs(SyscallContext& c, uint64_t va, uint64_t count,
                          std::vector<GuestIovec>& out);

// The same as host iovecs, each buffer accessible: 0, -EINVAL or -EFAULT.
int64_t gather_iov(SyscallContext& c, uint64_t va, uint64_t count, bool write,
                   std::vector<iovec>& out);

// i386 TLS (syscall/task.cpp): the struct user_desc at `va` as the GDT entry it names
// (12..14; -1 picks a free one and writes the number back) and its descriptor; 0 or -errno.
int64_t read_tls_descriptor(SyscallContext& c, uint64_t va, unsigned& index, uint64_t& desc);

// A call that would wait on the host (syscall/host_wait.cpp): true when it would block now,
// with the descriptors in `fds` (or the children in `child`: wait4, waitid) and its
// timeout in `ms` (-1: none). False: make the call (not such a call, no wait, a
// non-blocking descriptor, or ready already); a ready write is then changed so that it
// cannot block (`again_on_eagain`: its -EAGAIN means wait again).
// `fn` is the call's handler (socketcall's inner one).
bool host_wait_set(SyscallContext& c, SyscallHandler fn, std::vector<pollfd>& fds, ChildWait& child,
                   int64_t& ms, bool& again_on_eagain);
// i386 socketcall (syscall/socket.cpp): its call's handler and arguments in `fn` and c.a;
// 0, or -errno with c.a unchanged.
int64_t socketcall_unpack(SyscallContext& c, SyscallHandler& fn);
// connect with other threads to run (syscall/host_wait.cpp): made on a non-blocking
// descriptor. Done: `r` is its result. Writable: in progress, wait for `fds` (then
// `in_progress` asks SO_ERROR for the result). Retry: no room in the listener's backlog
// (AF_UNIX), try again later. Blocking: the descriptor is non-blocking, make the call.
enum class ConnectStep : uint8_t { Done, Writable, Retry, Blocking };
ConnectStep host_connect(SyscallContext& c, bool in_progress, std::vector<pollfd>& fds, int64_t& r);
// A blocking write of more than PIPE_BUF bytes to a pipe with other threads to run
// (syscall/host_wait.cpp): made in pieces on the non-blocking descriptor, each as much as
// the pipe takes; `done` counts what earlier pieces wrote. True: finished, `r` is the
// call's result (the whole count, or what was written before an error); false: wait for
// `fds` (room in the pipe), then make the call again.
bool long_pipe_write(SyscallContext& c, SyscallHandler fn);
bool pipe_write_step(SyscallContext& c, uint64_t& done, std::vector<pollfd>& fds, int64_t& r);
// A child waiter's children (wait4, waitid): true when the call would not block now.
bool child_ready(const ChildWait& w);

// A sleep of `ns` on the guest's virtual clock (timing on; syscall/time.cpp), nanosleep's:
// other threads run meanwhile (c.blocks), a signal due ends it with -EINTR and `left_ns`
// (0 when the thread blocked).
int64_t virtual_sleep(SyscallContext& c, int64_t ns, int64_t& left_ns);

// An epoll descriptor with no descriptor in its set (syscall/poll_wait.cpp): with timing
// on, epoll_wait on it is a sleep on the virtual clock.
bool epoll_set_empty(int epfd);

// Waits, alone in its process, with `set` unblocked until a signal of it is pending (0),
// another signal's handler must run (-EINTR) or `deadline` passes (-EAGAIN)
// (syscall/signal.cpp).
int64_t sigwait_alone(SyscallContext& c, uint64_t set, uint64_t deadline);
// signalfd (syscall/signalfd.cpp): its descriptors' readiness set to their pending
// signals (the process's and `own`, a thread's own; without it the running thread's),
// whether a descriptor is one, and read on one.
void sync_signalfds(Process& p, uint64_t own);
void sync_signalfds(Process& p);
bool is_signalfd(Process& p, int fd);
int64_t signalfd_read(SyscallContext& c);
// An emulated descriptor's host eventfd made readable or not (count 1 or 0).
void set_eventfd_readable(int fd, bool readable);
// Timerfds on the virtual clock (syscall/timerfd.cpp): their expirations counted up to
// now and their eventfds' readiness set to match; whether a descriptor is one; read on
// one; the first virtual cycle at which `fd` (a timerfd, a signalfd while a timer is
// armed, an epoll descriptor watching one) may become ready (kNever: none).
void sync_timerfds(Process& p);
bool is_virtual_timerfd(Process& p, int fd);
int64_t timerfd_read(SyscallContext& c);
uint64_t virtual_fd_event(Process& p, int fd);
// The signal mask argument of pselect6, ppoll and epoll_pwait (syscall/poll_wait.cpp):
// 1 and `mask` when the call has one, 0 when not, or -EFAULT/-EINVAL.
int wait_mask(SyscallContext& c, SyscallHandler fn, uint64_t& mask);
// The descriptors an epoll descriptor watches (none for another descriptor).
std::vector<int> epoll_members(int epfd);

// Host result (-1 with errno) to a Linux result.
inline int64_t host_result(int64_t r) {
  return r < 0 ? -errno : r;
}

}  // namespace padlock::emu
