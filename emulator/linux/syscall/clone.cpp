// clone, clone3, fork and vfork. A new process (no CLONE_VM, or CLONE_VM with CLONE_VFORK
// as posix_spawn asks) is a fork of the emulator itself: the child's guest has a copy of
// the parent's memory, registers, descriptors and signal actions, and from then on its own
// virtual clock, statistics and output files (Process::become_child). A new thread
// (CLONE_VM | CLONE_SIGHAND | CLONE_THREAD) is a guest thread of this process, run by its
// scheduler (emulator/linux/threads/scheduler.hpp). clone3 is -ENOSYS, what a kernel before 5.3
// answers: glibc then uses clone.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

void note(SyscallContext& c, const char* what) {
  if (c.p.options().strace) {
    std::fprintf(c.p.options().log, "padlock-emu: %s (flags 0x%llx): %s\n",
                 c.abi.table[c.nr].name != nullptr ? c.abi.table[c.nr].name : "clone",
                 static_cast<unsigned long long>(c.a[0]), what);
  }
}

// The new process. `vfork`: the parent waits until the child has exec'd or exited, as
// vfork's parent does (the child's copy of memory is its own, though: what a vfork child
// writes before exec does not reach the parent). Returns the child's PID or -errno.
int64_t new_process(SyscallContext& c, uint64_t flags, uint64_t child_sp, uint64_t parent_tid,
                    uint64_t child_tid) {
  int gate[2] = {-1, -1};  // closed in the child by exec (O_CLOEXEC) or exit
  const bool vfork = (flags & CLONE_VFORK) != 0;
  if (vfork && pipe2(gate, O_CLOEXEC) != 0) return -errno;
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    if (vfork) close(gate[0]), close(gate[1]);
    return -err;
  }
  if (pid == 0) {
    if (vfork) close(gate[0]);
    c.p.become_child();                           // (the gate closes at exec or exit)
    if (vfork) c.files.host_fds.insert(gate[1]);  // the emulator's, not the guest's
    const uint32_t tid = static_cast<uint32_t>(getpid());
    if (flags & CLONE_CHILD_SETTID) c.user.put(child_tid, tid);
    if (flags & CLONE_CHILD_CLEARTID) c.p.kernel().clear_child_tid = child_tid;
    if (child_sp != 0)
      c.p.cpu().set_reg(c.p.identity().guest64 ? UC_X86_REG_RSP : UC_X86_REG_ESP, child_sp);
    return 0;
  }
  if (flags & CLONE_PARENT_SETTID) c.user.put(parent_tid, static_cast<uint32_t>(pid));
  if (vfork) {
    close(gate[1]);
    char b;
    while (read(gate[0], &b, 1) < 0 && errno == EINTR) {
    }
    close(gate[0]);
  }
  return pid;
}

}  // namespace

int64_t sys_clone(SyscallContext& c) {
  const uint64_t flags = c.a[0];
  // The ABIs order the last arguments differently: x86-64 (flags, sp, parent_tid,
  // child_tid, tls), i386 (flags, sp, parent_tid, tls, child_tid).
  const bool i386 = &c.abi == &kAbiI386;
  const uint64_t child_tid = i386 ? c.a[4] : c.a[3], tls = i386 ? c.a[3] : c.a[4];
  if (flags & CLONE_THREAD) {
    // Linux: CLONE_THREAD needs CLONE_SIGHAND, which needs CLONE_VM.
    if (!(flags & CLONE_SIGHAND) || !(flags & CLONE_VM)) return -EINVAL;
    unsigned tls_index = 0;
    uint64_t tls_desc = 0;
    if ((flags & CLONE_SETTLS) && i386) {
      if (const int64_t r = read_tls_descriptor(c, tls, tls_index, tls_desc); r < 0) return r;
    }
    const int64_t tid = c.sched.clone(flags, c.a[1], child_tid, tls, tls_index, tls_desc);
    if (tid > 0 && (flags & CLONE_PARENT_SETTID)) c.user.put(c.a[2], static_cast<uint32_t>(tid));
    return tid;
  }
  if ((flags & CLONE_VM) && !(flags & CLONE_VFORK)) {
    // Two processes sharing one memory: the emulator's processes cannot.
    note(c,
         "CLONE_VM without CLONE_VFORK or CLONE_THREAD is not supported; the guest gets "
         "EINVAL");
    return -EINVAL;
  }
  return new_process(c, flags, c.a[1], c.a[2], child_tid);
}

int64_t sys_fork(SyscallContext& c) {
  return new_process(c, SIGCHLD, 0, 0, 0);
}

int64_t sys_vfork(SyscallContext& c) {
  return new_process(c, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0);
}

int64_t sys_clone3(SyscallContext& c) {
  // struct clone_args starts with the 64-bit flags.
  uint64_t flags = 0;
  c.user.get(c.a[0], flags);
  c.a[0] = flags;
  note(c, "not provided; the guest gets ENOSYS (glibc then tries clone)");
  return -ENOSYS;
}

}  // namespace padlock::emu
