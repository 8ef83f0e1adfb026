// clone and clone3. One guest thread only: a new thread (CLONE_THREAD) gets -EAGAIN, as
// when RLIMIT_NPROC is reached, so pthread_create() fails with a clear error instead of
// the guest running on in a half-made thread. clone3 is -ENOSYS, which makes glibc fall
// back to clone (and so to the same EAGAIN). New processes (clone without CLONE_THREAD;
// fork and vfork have no handler) are -ENOSYS: padlock-emu runs one process. --strace
// says why.
#include <sched.h>

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
}  // namespace

int64_t sys_clone(SyscallContext& c) {
  if (c.a[0] & CLONE_THREAD) {
    note(c, "threads are not supported; the guest gets EAGAIN");
    return -EAGAIN;
  }
  note(c, "new processes are not supported; the guest gets ENOSYS");
  return -ENOSYS;
}

int64_t sys_clone3(SyscallContext& c) {
  // struct clone_args starts with the 64-bit flags.
  uint64_t flags = 0;
  c.p.get(c.a[0], flags);
  c.a[0] = flags;
  note(c, "not provided; the guest gets ENOSYS (glibc then tries clone)");
  return -ENOSYS;
}

}  // namespace padlock::emu
