// Process, identity, limits, TLS and futex system calls. The guest's PID is the emulator's
// own; its threads (emulator/linux/threads/scheduler.hpp) have TIDs from PID on.
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

int64_t sys_exit(SyscallContext& c) {
  // The calling thread ends; the last one's exit ends the process, as exit_group does.
  c.no_result = true;
  c.sched.exit_thread(static_cast<int>(c.a[0] & 0xFF));
  return 0;
}

int64_t sys_exit_group(SyscallContext& c) {
  c.futexes.exit_all_robust_lists(c.p.kernel().robust_list);
  c.p.exit_group(static_cast<int>(c.a[0] & 0xFF));
  return 0;
}

int64_t sys_getpid(SyscallContext& c) {
  return c.p.identity().pid;
}
int64_t sys_gettid(SyscallContext& c) {
  return c.sched.tid();
}
int64_t sys_getppid(SyscallContext&) {
  return getppid();
}
int64_t sys_getuid(SyscallContext&) {
  return getuid();
}
int64_t sys_geteuid(SyscallContext&) {
  return geteuid();
}
int64_t sys_getgid(SyscallContext&) {
  return getgid();
}
int64_t sys_getegid(SyscallContext&) {
  return getegid();
}
int64_t sys_getpgrp(SyscallContext&) {
  return getpgrp();
}
int64_t sys_getpgid(SyscallContext& c) {
  return host_result(getpgid(static_cast<pid_t>(static_cast<int32_t>(c.a[0]))));
}
int64_t sys_getsid(SyscallContext& c) {
  return host_result(getsid(static_cast<pid_t>(static_cast<int32_t>(c.a[0]))));
}

int64_t sys_uname(SyscallContext& c) {
  struct utsname u;
  if (uname(&u) != 0) return -errno;
  std::strncpy(u.machine, c.abi.wide ? "x86_64" : "i686", sizeof u.machine);
  // struct new_utsname: six 65-byte fields on both ABIs.
  return c.user.write(c.a[0], &u, 6 * 65) ? 0 : -EFAULT;
}

int64_t sys_sysinfo(SyscallContext& c) {
  struct sysinfo si;
  if (sysinfo(&si) != 0) return -errno;
  uint8_t out[112];
  encode_sysinfo(out, c.abi.wide, si);
  return c.user.write(c.a[0], out, sysinfo_size(c.abi.wide)) ? 0 : -EFAULT;
}

// --- resource limits --------------------------------------------------------------------

namespace {

// RLIMIT_STACK, RLIMIT_AS and RLIMIT_DATA describe the guest, not the emulator: they are
// kept per process and never applied to the host.
bool guest_only(int res) {
  return res == RLIMIT_STACK || res == RLIMIT_AS || res == RLIMIT_DATA;
}

int get_limit(Process& p, int res, uint64_t& cur, uint64_t& max) {
  if (res < 0 || res >= 16) return -EINVAL;
  KernelState& k = p.kernel();
  if (k.rlimit_set[res]) {
    cur = k.rlimit_cur[res];
    max = k.rlimit_max[res];
    return 0;
  }
  struct rlimit rl;
  if (getrlimit(static_cast<__rlimit_resource>(res), &rl) != 0) return -errno;
  cur = rl.rlim_cur;
  max = rl.rlim_max;
  if (res == RLIMIT_STACK) cur = p.vm().layout().stack_size;
  return 0;
}

int set_limit(Process& p, int res, uint64_t cur, uint64_t max) {
  if (res < 0 || res >= 16) return -EINVAL;
  if (cur > max) return -EINVAL;
  if (guest_only(res)) {
    KernelState& k = p.kernel();
    k.rlimit_set[res] = true;
    k.rlimit_cur[res] = cur;
    k.rlimit_max[res] = max;
    return 0;
  }
  struct rlimit rl {
    cur, max
  };
  return setrlimit(static_cast<__rlimit_resource>(res), &rl) == 0 ? 0 : -errno;
}

// 32-bit rlimit: RLIM_INFINITY is ~0UL; `old_style` (getrlimit #76) clamps to 0x7FFFFFFF.
uint32_t clamp32(uint64_t v, bool old_style) {
  if (old_style) return v > 0x7FFFFFFFu ? 0x7FFFFFFFu : static_cast<uint32_t>(v);
  return v > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<uint32_t>(v);
}

int64_t getrlimit_common(SyscallContext& c, bool old_style) {
  uint64_t cur = 0, max = 0;
  if (const int r = get_limit(c.p, static_cast<int>(c.a[0]), cur, max); r < 0) return r;
  if (c.abi.wide) {
    const uint64_t v[2] = {cur, max};
    return c.user.write(c.a[1], v, sizeof v) ? 0 : -EFAULT;
  }
  const uint32_t v[2] = {clamp32(cur, old_style), clamp32(max, old_style)};
  return c.user.write(c.a[1], v, sizeof v) ? 0 : -EFAULT;
}

}  // namespace

int64_t sys_getrlimit(SyscallContext& c) {
  return getrlimit_common(c, !c.abi.wide);
}
int64_t sys_ugetrlimit(SyscallContext& c) {
  return getrlimit_common(c, false);
}

int64_t sys_setrlimit(SyscallContext& c) {
  uint64_t cur, max;
  if (c.abi.wide) {
    uint64_t v[2];
    if (!c.user.read(c.a[1], v, sizeof v)) return -EFAULT;
    cur = v[0];
    max = v[1];
  } else {
    uint32_t v[2];
    if (!c.user.read(c.a[1], v, sizeof v)) return -EFAULT;
    cur = v[0] == 0xFFFFFFFFu ? RLIM_INFINITY : v[0];
    max = v[1] == 0xFFFFFFFFu ? RLIM_INFINITY : v[1];
  }
  return set_limit(c.p, static_cast<int>(c.a[0]), cur, max);
}

int64_t sys_prlimit64(SyscallContext& c) {
  const int32_t pid = static_cast<int32_t>(c.a[0]);
  if (pid != 0 && pid != c.p.identity().pid) return -EPERM;
  const int res = static_cast<int>(c.a[1]);
  uint64_t cur = 0, max = 0;
  if (const int r = get_limit(c.p, res, cur, max); r < 0) return r;
  if (c.a[2] != 0) {
    uint64_t v[2];
    if (!c.user.read(c.a[2], v, sizeof v)) return -EFAULT;
    if (const int r = set_limit(c.p, res, v[0], v[1]); r < 0) return r;
  }
  if (c.a[3] != 0) {
    const uint64_t v[2] = {cur, max};
    if (!c.user.write(c.a[3], v, sizeof v)) return -EFAULT;
  }
  return 0;
}

// --- randomness, threads, futex ----------------------------------------------------------

int64_t sys_getrandom(SyscallContext& c) {
  const uint64_t len = c.a[1] > 33554431 ? 33554431 : c.a[1];
  uint8_t* buf = c.user.ptr(c.a[0], len, true);
  if (buf == nullptr && len > 0) return -EFAULT;
  for (uint64_t i = 0; i < len; i += 8) {
    const uint64_t r = c.p.kernel().random.next();
    std::memcpy(buf + i, &r, len - i < 8 ? len - i : 8);
  }
  return static_cast<int64_t>(len);
}

int64_t sys_set_tid_address(SyscallContext& c) {
  c.p.kernel().clear_child_tid = c.a[0];
  return c.sched.tid();
}

int64_t sys_set_robust_list(SyscallContext& c) {
  const uint64_t expected = c.abi.wide ? 24 : 12;  // sizeof(struct robust_list_head)
  if (c.a[1] != expected) return -EINVAL;
  c.p.kernel().robust_list = c.a[0];
  c.p.kernel().robust_list_len = c.a[1];
  return 0;
}

int64_t sys_get_robust_list(SyscallContext& c) {
  const int32_t pid = static_cast<int32_t>(c.a[0]);
  if (pid != 0 && pid != c.p.identity().pid) return -ESRCH;
  if (!c.user.put_word(c.a[1], c.p.kernel().robust_list)) return -EFAULT;
  if (!c.user.put_word(c.a[2], c.p.kernel().robust_list_len)) return -EFAULT;
  return 0;
}

namespace {

constexpr int kFutexWait = 0, kFutexWake = 1, kFutexRequeue = 3, kFutexCmpRequeue = 4,
              kFutexWakeOp = 5, kFutexLockPi = 6, kFutexUnlockPi = 7, kFutexTrylockPi = 8,
              kFutexWaitBitset = 9, kFutexWakeBitset = 10, kFutexWaitRequeuePi = 11,
              kFutexCmpRequeuePi = 12, kFutexLockPi2 = 13;
constexpr int kFutexPrivate = 128, kFutexClockRealtime = 256;

// FUTEX_WAKE_OP's operation on the second word and its comparison of the old value (Linux
// include/uapi/linux/futex.h): set, add, or, andn, xor; eq, ne, lt, le, gt, ge.
bool wake_op(uint32_t encoded, uint32_t& word, bool& wake2) {
  const int op = (encoded >> 28) & 7, cmp = (encoded >> 24) & 15;
  uint32_t oparg = (encoded >> 12) & 0xFFF;
  int32_t cmparg = static_cast<int32_t>(encoded & 0xFFF);
  if (oparg & 0x800) oparg |= 0xFFFFF000u;  // sign-extend
  if (cmparg & 0x800) cmparg |= static_cast<int32_t>(0xFFFFF000u);
  if ((encoded >> 31) & 1) oparg = 1u << (oparg & 31);
  const uint32_t old = word;
  switch (op) {
    case 0:
      word = oparg;
      break;
    case 1:
      word = old + oparg;
      break;
    case 2:
      word = old | oparg;
      break;
    case 3:
      word = old & ~oparg;
      break;
    case 4:
      word = old ^ oparg;
      break;
    default:
      return false;
  }
  const int32_t o = static_cast<int32_t>(old);
  constexpr int kCmps = 6;
  if (cmp >= kCmps) return false;
  const bool results[kCmps] = {o == cmparg, o != cmparg, o<cmparg, o <= cmparg, o> cmparg,
                               o >= cmparg};
  wake2 = results[cmp];
  return true;
}

// A futex timeout (the struct timespec at c.a[3], 0: none) as a deadline on the virtual
// clock: relative, or absolute on `clock`. `expired`: it is not in the future.
int64_t futex_deadline(SyscallContext& c, bool time64, bool absolute, clockid_t clock,
                       uint64_t& deadline, bool& expired) {
  deadline = VirtualTime::kNever;
  expired = false;
  if (c.a[3] == 0) return 0;
  uint8_t raw[16];
  if (!c.user.read(c.a[3], raw, timespec_size(time64))) return -EFAULT;
  const timespec ts = decode_timespec(raw, time64);
  if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000) return -EINVAL;
  VirtualTime& vt = c.p.vtime();
  int64_t wait_ns = int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  if (absolute) {
    int64_t now_ns = 0;
    vt.clock_ns(clock, now_ns);
    wait_ns -= now_ns;
  }
  expired = wait_ns <= 0;
  deadline = expired ? vt.now() : vt.now() + vt.cycles_of_ns(static_cast<uint64_t>(wait_ns));
  return 0;
}

// The checks before a wait on the word at c.a[0]: it holds c.a[2] (else EAGAIN), and the
// timeout (relative, or absolute on the clock FUTEX_CLOCK_REALTIME in `op` picks) is a
// `deadline` still to come (else ETIMEDOUT).
int64_t wait_start(SyscallContext& c, bool time64, bool absolute, int op, uint64_t& deadline) {
  uint32_t v;
  if (!c.user.get(c.a[0], v)) return -EFAULT;
  if (v != static_cast<uint32_t>(c.a[2])) return -EAGAIN;
  bool expired;
  const clockid_t clock = (op & kFutexClockRealtime) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
  if (const int64_t r = futex_deadline(c, time64, absolute, clock, deadline, expired); r < 0) {
    return r;
  }
  return expired ? -ETIMEDOUT : 0;
}

// Threads wait in the scheduler (threads/scheduler.hpp): a wait blocks the calling thread, a wake
// makes waiters runnable. Timeouts are virtual time: FUTEX_WAIT's is relative, FUTEX_WAIT_
// BITSET's absolute on CLOCK_MONOTONIC or, with FUTEX_CLOCK_REALTIME, CLOCK_REALTIME;
// FUTEX_LOCK_PI's absolute on CLOCK_REALTIME, FUTEX_LOCK_PI2's as FUTEX_WAIT_BITSET's.
// FUTEX_PRIVATE_FLAG changes nothing: the waiters are all in this process.
int64_t futex_common(SyscallContext& c, bool time64) {
  const int op = static_cast<int>(c.a[1]);
  const int cmd = op & ~(kFutexPrivate | kFutexClockRealtime);
  const uint64_t uaddr = c.a[0];
  if ((uaddr & 3) != 0) return -EINVAL;
  switch (cmd) {
    case kFutexWait:
    case kFutexWaitBitset: {
      const uint32_t bitset = cmd == kFutexWait ? ~0u : static_cast<uint32_t>(c.a[5]);
      if (bitset == 0) return -EINVAL;
      uint64_t deadline;
      if (const int64_t r = wait_start(c, time64, cmd == kFutexWaitBitset, op, deadline); r < 0) {
        return r;
      }
      if (c.p.signals().next_deliverable() != 0) {
        c.interrupted = true;
        return -EINTR;
      }
      c.sched.block(uaddr, bitset, deadline);
      c.blocks = true;
      return 0;
    }
    case kFutexWake:
    case kFutexWakeBitset: {
      const uint32_t bitset = cmd == kFutexWake ? ~0u : static_cast<uint32_t>(c.a[5]);
      if (bitset == 0) return -EINVAL;
      return c.futexes.wake(uaddr, static_cast<int32_t>(c.a[2]), bitset);
    }
    case kFutexRequeue:
    case kFutexCmpRequeue: {
      // val2 (the number to requeue) travels in the timeout argument.
      if (cmd == kFutexCmpRequeue) {
        uint32_t v;
        if (!c.user.get(uaddr, v)) return -EFAULT;
        if (v != static_cast<uint32_t>(c.a[5])) return -EAGAIN;
      }
      return c.futexes.requeue(uaddr, static_cast<int32_t>(c.a[2]), c.a[4],
                               static_cast<int32_t>(c.a[3]));
    }
    case kFutexWakeOp: {
      uint32_t word;
      if ((c.a[4] & 3) != 0) return -EINVAL;
      if (!c.user.get(c.a[4], word)) return -EFAULT;
      bool wake2 = false;
      if (!wake_op(static_cast<uint32_t>(c.a[5]), word, wake2)) return -ENOSYS;
      if (!c.user.put(c.a[4], word)) return -EFAULT;
      int n = c.futexes.wake(uaddr, static_cast<int32_t>(c.a[2]), ~0u);
      if (wake2) n += c.futexes.wake(c.a[4], static_cast<int32_t>(c.a[3]), ~0u);
      return n;
    }
    case kFutexLockPi:
    case kFutexLockPi2:
    case kFutexTrylockPi: {
      uint64_t deadline = VirtualTime::kNever;
      bool expired = false;
      if (cmd != kFutexTrylockPi) {
        const clockid_t clock =
            (cmd == kFutexLockPi || (op & kFutexClockRealtime)) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
        if (const int64_t r = futex_deadline(c, time64, true, clock, deadline, expired); r < 0) {
          return r;
        }
      }
      return c.futexes.lock_pi(uaddr, deadline, cmd == kFutexTrylockPi, c.blocks);
    }
    case kFutexUnlockPi:
      return c.futexes.unlock_pi(uaddr);
    case kFutexWaitRequeuePi: {
      // (uaddr, val, absolute timeout as FUTEX_WAIT_BITSET's, uaddr2): wait on uaddr to be
      // moved to the PI word uaddr2; woken with 0, the caller owns uaddr2.
      const uint64_t uaddr2 = c.a[4];
      if ((uaddr2 & 3) != 0 || uaddr2 == uaddr) return -EINVAL;
      uint64_t deadline;
      if (const int64_t r = wait_start(c, time64, true, op, deadline); r < 0) return r;
      c.futexes.wait_requeue_pi(uaddr, uaddr2, deadline);
      c.blocks = true;
      return 0;
    }
    case kFutexCmpRequeuePi: {
      // (uaddr, nr_wake = 1, nr_requeue in the timeout argument, uaddr2, cmpval).
      const uint64_t uaddr2 = c.a[4];
      if ((uaddr2 & 3) != 0 || uaddr2 == uaddr || static_cast<int32_t>(c.a[2]) != 1 ||
          static_cast<int32_t>(c.a[3]) < 0) {
        return -EINVAL;
      }
      uint32_t v;
      if (!c.user.get(uaddr, v)) return -EFAULT;
      if (v != static_cast<uint32_t>(c.a[5])) return -EAGAIN;
      return c.futexes.cmp_requeue_pi(uaddr, uaddr2, static_cast<int32_t>(c.a[3]));
    }
    default:
      return -ENOSYS;
  }
}

}  // namespace

int64_t sys_futex(SyscallContext& c) {
  return futex_common(c, c.abi.wide);
}
int64_t sys_futex_time64(SyscallContext& c) {
  return futex_common(c, true);
}

// rseq: answered as by a kernel built without CONFIG_RSEQ, a configuration Linux allows and
// the C library expects (glibc then keeps sched_getcpu on getcpu, which says CPU 0). The
// guest is not told that rseq is unsupported: it has nothing to miss.
int64_t sys_rseq(SyscallContext&) {
  return -ENOSYS;
}

int64_t sys_sched_yield(SyscallContext& c) {
  c.sched.yield();
  return 0;
}

// The guest has one CPU, CPU 0 (the modelled chip is single-core): the affinity calls see
// a one-CPU mask, and a process that pins itself to CPU 0 (Gladman's modetest does) may.
namespace {
bool is_self(const SyscallContext& c, uint64_t pid) {
  return pid == 0 || static_cast<int>(pid) == c.p.identity().pid;
}
}  // namespace

int64_t sys_sched_getaffinity(SyscallContext& c) {
  // One CPU, reported as one "long" of mask like the kernel does.
  const uint64_t size = c.abi.wide ? 8 : 4;
  if (!is_self(c, c.a[0])) return -ESRCH;
  if (c.a[1] < size || (c.a[1] & (size - 1))) return -EINVAL;
  uint8_t mask[8] = {1};
  return c.user.write(c.a[2], mask, size) ? static_cast<int64_t>(size) : -EFAULT;
}

int64_t sys_sched_setaffinity(SyscallContext& c) {
  if (!is_self(c, c.a[0])) return -ESRCH;
  if (c.a[1] == 0) return -EINVAL;
  uint8_t first = 0;
  if (!c.user.read(c.a[2], &first, 1)) return -EFAULT;
  // Linux: EINVAL when the mask holds no CPU of the system; CPU 0 is the only one.
  return (first & 1) != 0 ? 0 : -EINVAL;
}

int64_t sys_getcpu(SyscallContext& c) {
  const uint32_t zero = 0;
  if (c.a[0] != 0 && !c.user.put(c.a[0], zero)) return -EFAULT;
  if (c.a[1] != 0 && !c.user.put(c.a[1], zero)) return -EFAULT;
  return 0;
}

// --- TLS -----------------------------------------------------------------------------------

namespace {

// struct user_desc (asm/ldt.h) and the descriptor Linux builds from it (fill_ldt).
struct UserDesc {
  uint32_t entry_number, base_addr, limit, bits;
};
constexpr uint32_t kSeg32 = 1u << 0, kContentsShift = 1, kReadExecOnly = 1u << 3,
                   kLimitInPages = 1u << 4, kSegNotPresent = 1u << 5, kUseable = 1u << 6;

bool desc_empty(const UserDesc& u) {
  return u.base_addr == 0 && u.limit == 0 && ((u.bits >> kContentsShift) & 3) == 0 &&
         (u.bits & kReadExecOnly) && !(u.bits & kSeg32) && !(u.bits & kLimitInPages) &&
         (u.bits & kSegNotPresent) && !(u.bits & kUseable);
}

uint64_t desc_from_user(const UserDesc& u) {
  const uint32_t base = u.base_addr, limit = u.limit;
  const uint32_t a = ((base & 0xFFFF) << 16) | (limit & 0xFFFF);
  uint32_t b = (base & 0xFF000000u) | ((base & 0x00FF0000u) >> 16) | (limit & 0xF0000u) |
               ((((u.bits & kReadExecOnly) ? 0u : 1u)) << 9) |
               (((u.bits >> kContentsShift) & 3) << 10) |
               (((u.bits & kSegNotPresent) ? 0u : 1u) << 15) | ((u.bits & kSeg32) ? 1u << 22 : 0) |
               ((u.bits & kLimitInPages) ? 1u << 23 : 0) | ((u.bits & kUseable) ? 1u << 20 : 0) |
               0x7000u;  // S = 1, DPL = 3
  // The accessed bit is preset so that loading the selector never writes the GDT page,
  // which the guest cannot write.
  b |= 1u << 8;
  return (uint64_t{b} << 32) | a;
}

UserDesc user_from_desc(unsigned index, uint64_t d) {
  UserDesc u{};
  u.entry_number = index;
  if (d == 0) {
    u.bits = kReadExecOnly | kSegNotPresent;
    return u;
  }
  const uint32_t a = static_cast<uint32_t>(d), b = static_cast<uint32_t>(d >> 32);
  u.base_addr = (a >> 16) | ((b & 0xFF) << 16) | (b & 0xFF000000u);
  u.limit = (a & 0xFFFF) | (b & 0xF0000u);
  u.bits = ((b >> 22) & 1 ? kSeg32 : 0) | (((b >> 10) & 3) << kContentsShift) |
           ((b >> 9) & 1 ? 0 : kReadExecOnly) | ((b >> 23) & 1 ? kLimitInPages : 0) |
           ((b >> 15) & 1 ? 0 : kSegNotPresent) | ((b >> 20) & 1 ? kUseable : 0);
  return u;
}

}  // namespace

int64_t read_tls_descriptor(SyscallContext& c, uint64_t va, unsigned& index, uint64_t& desc) {
  UserDesc u;
  if (!c.user.get(va, u)) return -EFAULT;
  Cpu& cpu = c.p.cpu();
  index = u.entry_number;
  if (index == 0xFFFFFFFFu) {
    index = 0;
    for (unsigned i = kGdtTlsMin; i < kGdtTlsMin + kGdtTlsEntries; ++i) {
      if (cpu.gdt_entry(i) == 0) {
        index = i;
        break;
      }
    }
    if (index == 0) return -ESRCH;
    u.entry_number = index;
    if (!c.user.put(va, u)) return -EFAULT;
  }
  if (index < kGdtTlsMin || index >= kGdtTlsMin + kGdtTlsEntries) return -EINVAL;
  desc = desc_empty(u) ? 0 : desc_from_user(u);
  return 0;
}

int64_t sys_set_thread_area(SyscallContext& c) {
  unsigned index = 0;
  uint64_t desc = 0;
  if (const int64_t r = read_tls_descriptor(c, c.a[0], index, desc); r < 0) return r;
  c.p.cpu().set_gdt_entry(index, desc);
  c.p.cpu().reload_segments_using(index);
  return 0;
}

int64_t sys_get_thread_area(SyscallContext& c) {
  UserDesc u;
  if (!c.user.get(c.a[0], u)) return -EFAULT;
  const unsigned index = u.entry_number;
  if (index < kGdtTlsMin || index >= kGdtTlsMin + kGdtTlsEntries) return -EINVAL;
  u = user_from_desc(index, c.p.cpu().gdt_entry(index));
  return c.user.put(c.a[0], u) ? 0 : -EFAULT;
}

int64_t sys_arch_prctl(SyscallContext& c) {
  constexpr uint64_t kSetGs = 0x1001, kSetFs = 0x1002, kGetFs = 0x1003, kGetGs = 0x1004;
  Cpu& cpu = c.p.cpu();
  switch (c.a[0]) {
    case kSetFs:
    case kSetGs:
      if (c.a[1] >= (uint64_t{1} << 47)) return -EPERM;
      cpu.set_reg(c.a[0] == kSetFs ? UC_X86_REG_FS_BASE : UC_X86_REG_GS_BASE, c.a[1]);
      return 0;
    case kGetFs:
    case kGetGs: {
      const uint64_t v = cpu.reg(c.a[0] == kGetFs ? UC_X86_REG_FS_BASE : UC_X86_REG_GS_BASE);
      return c.user.put(c.a[1], v) ? 0 : -EFAULT;
    }
    default:
      return -EINVAL;
  }
}

int64_t sys_prctl(SyscallContext& c) {
  switch (static_cast<int>(c.a[0])) {
    case PR_SET_NAME:
    case PR_GET_NAME: {
      uint8_t* p = c.user.ptr(c.a[1], 16, c.a[0] == PR_GET_NAME);
      if (p == nullptr) return -EFAULT;
      return host_result(prctl(static_cast<int>(c.a[0]), p, 0, 0, 0));
    }
    case PR_GET_DUMPABLE:
    case PR_SET_DUMPABLE:
      return host_result(prctl(static_cast<int>(c.a[0]), c.a[1], 0, 0, 0));
    default:
      return -EINVAL;
  }
}

int64_t sys_personality(SyscallContext& c) {
  const uint64_t old = c.p.kernel().personality;
  if (static_cast<uint32_t>(c.a[0]) != 0xFFFFFFFFu) c.p.kernel().personality = c.a[0] & 0xFFFFFFFFu;
  return static_cast<int64_t>(old);
}

}  // namespace padlock::emu
