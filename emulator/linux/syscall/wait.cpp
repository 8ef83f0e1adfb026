// wait4, waitpid (i386), waitid, and the process-group calls. Guest processes are host
// processes (each a padlock-emu, syscall/clone.cpp), and a guest's PID is its host PID, so
// these pass through: a child emulator exits with its guest's status or dies by its
// guest's signal (docs/emulator.md, "Exit status and signals"), which is what the parent
// guest then reads. A wait blocks in real time (with other threads to run, the scheduler
// waits instead: syscall/host_wait.cpp); a signal for the guest interrupts it.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

int64_t interrupted(SyscallContext& c, int64_t r) {
  if (r == -EINTR) c.interrupted = true;
  return r;
}

}  // namespace

int64_t sys_wait4(SyscallContext& c) {
  int status = 0;
  struct rusage ru {};
  const pid_t pid = static_cast<pid_t>(static_cast<int32_t>(c.a[0]));
  const int64_t r = host_result(wait4(pid, &status, static_cast<int>(c.a[2]), &ru));
  if (r <= 0) return interrupted(c, r);
  if (c.a[1] != 0 && !c.user.put(c.a[1], static_cast<int32_t>(status))) return -EFAULT;
  if (c.a[3] != 0) {
    uint8_t out[144];
    encode_rusage(out, c.abi.wide, ru);
    if (!c.user.write(c.a[3], out, rusage_size(c.abi.wide))) return -EFAULT;
  }
  return r;
}

int64_t sys_waitpid(SyscallContext& c) {
  c.a[3] = 0;
  return sys_wait4(c);
}

// waitid(idtype, id, infop, options, rusage): the child's siginfo in the ABI's layout
// (si_signo, si_errno, si_code, then si_pid, si_uid, si_status, si_utime, si_stime).
int64_t sys_waitid(SyscallContext& c) {
  siginfo_t si;
  std::memset(&si, 0, sizeof si);
  const int64_t r = host_result(waitid(static_cast<idtype_t>(c.a[0]), static_cast<id_t>(c.a[1]),
                                       &si, static_cast<int>(c.a[3])));
  if (r < 0) return interrupted(c, r);
  if (c.a[2] != 0) {
    uint8_t out[128] = {};
    const bool wide = c.abi.wide;
    const size_t body = wide ? 16 : 12, word = wide ? 8 : 4;
    const int32_t head[3] = {si.si_signo, si.si_errno, si.si_code};
    std::memcpy(out, head, sizeof head);
    const int32_t ids[3] = {si.si_pid, static_cast<int32_t>(si.si_uid), si.si_status};
    std::memcpy(out + body, ids, sizeof ids);
    const uint64_t times[2] = {static_cast<uint64_t>(si.si_utime),
                               static_cast<uint64_t>(si.si_stime)};
    for (int i = 0; i < 2; ++i) {
      std::memcpy(out + (wide ? 32 : 24) + i * word, &times[i], word);
    }
    if (!c.user.write(c.a[2], out, sizeof out)) return -EFAULT;
  }
  if (c.a[4] != 0) {
    struct rusage ru {};
    getrusage(RUSAGE_CHILDREN, &ru);
    uint8_t out[144];
    encode_rusage(out, c.abi.wide, ru);
    if (!c.user.write(c.a[4], out, rusage_size(c.abi.wide))) return -EFAULT;
  }
  return 0;
}

int64_t sys_setpgid(SyscallContext& c) {
  return host_result(setpgid(static_cast<pid_t>(static_cast<int32_t>(c.a[0])),
                             static_cast<pid_t>(static_cast<int32_t>(c.a[1]))));
}

int64_t sys_setsid(SyscallContext&) {
  return host_result(setsid());
}

}  // namespace padlock::emu
