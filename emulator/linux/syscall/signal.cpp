// Signal system calls: actions, masks, the alternate stack, kill to ourselves, sigreturn.
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/signal/host_signals.hpp"
#include "emulator/linux/signal/signal_frame.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

constexpr uint64_t kSigsetSize = 8;

bool valid_signal(uint64_t sig) {
  return sig >= 1 && sig <= kNumSignals;
}

// Applies SIG_BLOCK / SIG_UNBLOCK / SIG_SETMASK; SIGKILL and SIGSTOP stay unblocked.
int change_mask(Process& p, int how, uint64_t set) {
  SignalState& s = p.signals();
  switch (how) {
    case SIG_BLOCK:
      s.blocked |= set;
      break;
    case SIG_UNBLOCK:
      s.blocked &= ~set;
      break;
    case SIG_SETMASK:
      s.blocked = set;
      break;
    default:
      return -EINVAL;
  }
  s.blocked &= ~kUnblockable;
  return 0;
}

}  // namespace

int64_t sys_rt_sigaction(SyscallContext& c) {
  const uint64_t sig = c.a[0];
  if (c.a[3] != kSigsetSize || !valid_signal(sig)) return -EINVAL;
  const bool wide = c.abi.wide;
  const size_t w = wide ? 8 : 4;
  const size_t size = 3 * w + 8;  // handler, flags, restorer, mask
  SignalState& s = c.p.signals();
  const GuestSigaction old = s.action[sig];
  if (c.a[1] != 0) {
    if (sig == SIGKILL || sig == SIGSTOP) return -EINVAL;
    uint8_t raw[32];
    if (!c.user.read(c.a[1], raw, size)) return -EFAULT;
    GuestSigaction act;
    act.handler = get_ulong(raw, 0, wide);
    act.flags = get_ulong(raw, w, wide);
    act.restorer = get_ulong(raw, 2 * w, wide);
    act.mask = get_field<uint64_t>(raw, 3 * w) & ~kUnblockable;
    s.action[sig] = act;
    // Setting SIG_IGN (or SIG_DFL of an ignored-by-default signal) discards a pending one.
    if (act.handler == kSigIgn || (act.handler == kSigDfl && default_action(static_cast<int>(
                                                                 sig)) == DefaultAction::Ignore)) {
      s.pending &= ~sig_bit(static_cast<int>(sig));
      s.shared &= ~sig_bit(static_cast<int>(sig));
    }
    host_signal_update(c.p, static_cast<int>(sig));
  }
  if (c.a[2] != 0) {
    uint8_t raw[32] = {};
    put_long(raw, 0, wide, static_cast<int64_t>(old.handler));
    put_long(raw, w, wide, static_cast<int64_t>(old.flags));
    put_long(raw, 2 * w, wide, static_cast<int64_t>(old.restorer));
    put_field<uint64_t>(raw, 3 * w, old.mask);
    if (!c.user.write(c.a[2], raw, size)) return -EFAULT;
  }
  return 0;
}

int64_t sys_rt_sigprocmask(SyscallContext& c) {
  if (c.a[3] != kSigsetSize) return -EINVAL;
  SignalState& s = c.p.signals();
  const uint64_t old = s.blocked;
  if (c.a[1] != 0) {
    uint64_t set;
    if (!c.user.get(c.a[1], set)) return -EFAULT;
    if (const int r = change_mask(c.p, static_cast<int>(c.a[0]), set); r < 0) return r;
  }
  if (c.a[2] != 0 && !c.user.put(c.a[2], old)) return -EFAULT;
  return 0;
}

int64_t sys_sigprocmask(SyscallContext& c) {
  SignalState& s = c.p.signals();
  const uint32_t old = static_cast<uint32_t>(s.blocked);
  if (c.a[1] != 0) {
    uint32_t set;
    if (!c.user.get(c.a[1], set)) return -EFAULT;
    const int how = static_cast<int>(c.a[0]);
    // The old call only covers signals 1..32; SIG_SETMASK keeps the rest.
    const uint64_t full = how == SIG_SETMASK ? ((s.blocked & ~0xFFFFFFFFull) | set) : set;
    if (const int r = change_mask(c.p, how, full); r < 0) return r;
  }
  if (c.a[2] != 0 && !c.user.put(c.a[2], old)) return -EFAULT;
  return 0;
}

int64_t sys_rt_sigpending(SyscallContext& c) {
  if (c.a[1] > kSigsetSize) return -EINVAL;
  const SignalState& s = c.p.signals();
  const uint64_t set = s.all_pending() & s.blocked;
  return c.user.write(c.a[0], &set, c.a[1]) ? 0 : -EFAULT;
}

namespace {
// With virtual time (docs/timing.md) waiting advances the clock to the next timer deadline (the
// timer's signal then arrives); with no timer armed, or --timing off, it waits for a host
// signal.
void wait_for_signal(Process& p) {
  while (p.signals().next_deliverable() == 0) {
    if (p.options().timing && p.vtime().next_timer() != VirtualTime::kNever) {
      p.sleep_until(p.vtime().next_timer());
      continue;
    }
    wait_host_signal();
    collect_host_signals(p);
  }
}

// pause and sigsuspend end with EINTR once a signal is delivered. With other threads the
// caller waits in the scheduler (threads/scheduler.hpp), which wakes it with -EINTR when a signal
// it does not block arrives, and the others run meanwhile.
int64_t wait_for_signal_or_block(SyscallContext& c) {
  if (c.sched.live() > 1 && c.p.signals().next_deliverable() == 0) {
    c.sched.block(0, 0, VirtualTime::kNever);
    c.blocks = true;
    return 0;
  }
  wait_for_signal(c.p);
  return -EINTR;
}

}  // namespace

int64_t sys_rt_sigsuspend(SyscallContext& c) {
  if (c.a[1] != kSigsetSize) return -EINVAL;
  uint64_t set;
  if (!c.user.get(c.a[0], set)) return -EFAULT;
  SignalState& s = c.p.signals();
  s.saved_mask = s.blocked;
  s.has_saved_mask = true;
  s.blocked = set & ~kUnblockable;
  // Sleep until a signal the new mask lets through has arrived.
  return wait_for_signal_or_block(c);
}

int64_t sys_pause(SyscallContext& c) {
  return wait_for_signal_or_block(c);
}

int64_t sigwait_alone(SyscallContext& c, uint64_t set, uint64_t deadline) {
  SignalState& s = c.p.signals();
  VirtualTime& vt = c.p.vtime();
  const uint64_t old = s.blocked;
  s.blocked &= ~set;
  while (s.lowest_pending(set) == 0 && s.next_deliverable() == 0 && vt.now() < deadline) {
    uint64_t until = deadline;
    if (c.p.options().timing) until = std::min(until, vt.next_timer());
    if (until != VirtualTime::kNever) {
      c.p.sleep_until(until);
      continue;
    }
    wait_host_signal();
    collect_host_signals(c.p);
  }
  s.blocked = old;
  if (s.lowest_pending(set) != 0) return 0;
  if (s.next_deliverable() != 0) {
    c.interrupted = true;
    return -EINTR;
  }
  return -EAGAIN;
}

namespace {

// rt_sigtimedwait(set, info, timeout, sigsetsize): takes the lowest pending signal of
// `set` without running its handler, and writes its siginfo. It waits (the signals of
// `set` unblocked meanwhile, as Linux does) until one is pending, `timeout` (relative,
// virtual time) passes (EAGAIN), or another signal's handler must run (EINTR). With other
// threads the caller waits in the scheduler (Scheduler::sigwait_block) and the call is made
// again once a signal woke it.
int64_t sigtimedwait_common(SyscallContext& c, bool time64) {
  if (c.a[3] != kSigsetSize) return -EINVAL;
  uint64_t set;
  if (!c.user.get(c.a[0], set)) return -EFAULT;
  set &= ~kUnblockable;
  VirtualTime& vt = c.p.vtime();
  uint64_t deadline = VirtualTime::kNever;
  bool expired = false;
  if (c.a[2] != 0) {
    uint8_t raw[16];
    if (!c.user.read(c.a[2], raw, timespec_size(time64))) return -EFAULT;
    const timespec ts = decode_timespec(raw, time64);
    if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000) return -EINVAL;
    const uint64_t ns = uint64_t(ts.tv_sec) * 1000000000 + uint64_t(ts.tv_nsec);
    expired = ns == 0;
    deadline = vt.now() + vt.cycles_of_ns(ns);
  }
  SignalState& s = c.p.signals();
  auto take = [&]() -> int64_t {
    const int sig = s.lowest_pending(set);
    if (sig == 0) return 0;
    s.take(sig);
    if (c.a[1] != 0) {
      uint8_t out[128];
      encode_siginfo(out, c.abi.wide, s.info[sig]);
      if (!c.user.write(c.a[1], out, sizeof out)) return -EFAULT;
    }
    return sig;
  };
  if (const int64_t r = take(); r != 0) return r;
  if (expired) return -EAGAIN;
  if (s.next_deliverable() != 0) {
    c.interrupted = true;
    return -EINTR;
  }
  if (c.sched.live() > 1) {
    c.sched.sigwait_block(set, deadline);
    c.blocks = true;
    return 0;
  }
  if (const int64_t w = sigwait_alone(c, set, deadline); w != 0) return w;
  return take();
}

}  // namespace

int64_t sys_rt_sigtimedwait(SyscallContext& c) {
  return sigtimedwait_common(c, c.abi.wide);
}
int64_t sys_rt_sigtimedwait_time64(SyscallContext& c) {
  return sigtimedwait_common(c, true);
}

int64_t sys_sigaltstack(SyscallContext& c) {
  const bool wide = c.abi.wide;
  const size_t size = wide ? 24 : 12;  // stack_t: ss_sp, ss_flags, ss_size
  SignalState& s = c.p.signals();
  const uint64_t sp = c.p.cpu().reg(wide ? UC_X86_REG_RSP : UC_X86_REG_ESP);
  uint8_t old[24] = {};
  const uint64_t ss_sp = s.altstack_sp;
  const uint64_t ss_size = s.altstack_size;
  const int ss_flags =
      s.altstack_flags == kSsDisable ? kSsDisable : (s.on_altstack(sp) ? kSsOnstack : 0);
  put_long(old, 0, wide, static_cast<int64_t>(ss_sp));
  put_field<int32_t>(old, wide ? 8 : 4, ss_flags);
  put_long(old, wide ? 16 : 8, wide, static_cast<int64_t>(ss_size));
  if (c.a[0] != 0) {
    uint8_t raw[24];
    if (!c.user.read(c.a[0], raw, size)) return -EFAULT;
    if (s.on_altstack(sp)) return -EPERM;
    const uint64_t new_sp = get_ulong(raw, 0, wide);
    const int flags = get_field<int32_t>(raw, wide ? 8 : 4);
    const uint64_t new_size = get_ulong(raw, wide ? 16 : 8, wide);
    if (flags & ~(kSsDisable | kSsOnstack | static_cast<int>(1u << 31))) return -EINVAL;
    if (flags & kSsDisable) {
      s.altstack_flags = kSsDisable;
      s.altstack_sp = s.altstack_size = 0;
    } else {
      if (new_size < 2048) return -ENOMEM;  // MINSIGSTKSZ
      s.altstack_flags = 0;
      s.altstack_sp = new_sp;
      s.altstack_size = new_size;
    }
  }
  if (c.a[1] != 0 && !c.user.write(c.a[1], old, size)) return -EFAULT;
  return 0;
}

namespace {

// kill to this process: a signal for the process (pending for it, any thread may take it).
int64_t signal_self(SyscallContext& c, int sig, int code) {
  if (sig == 0) return 0;
  if (!valid_signal(static_cast<uint64_t>(sig))) return -EINVAL;
  GuestSiginfo si;
  si.signo = sig;
  si.code = code;
  si.pid = c.p.identity().pid;
  si.uid = static_cast<int>(getuid());
  c.p.queue_process_signal(si);
  return 0;
}

}  // namespace

int64_t sys_kill(SyscallContext& c) {
  const int32_t pid = static_cast<int32_t>(c.a[0]);
  const int sig = static_cast<int>(c.a[1]);
  if (pid == c.p.identity().pid || pid == 0) return signal_self(c, sig, kSiUser);
  return host_result(kill(pid, sig));  // another process: the host's business
}

namespace {

// tgkill/tkill: a signal to one thread of this process (emulator/linux/threads/scheduler.hpp).
int64_t signal_thread(SyscallContext& c, int32_t tid, int sig) {
  if (!valid_signal(static_cast<uint64_t>(sig)) && sig != 0) return -EINVAL;
  GuestSiginfo si;
  si.signo = sig;
  si.code = kSiTkill;
  si.pid = c.p.identity().pid;
  si.uid = static_cast<int>(getuid());
  return c.sched.signal_thread(tid, si) ? 0 : -ESRCH;
}

}  // namespace

int64_t sys_tgkill(SyscallContext& c) {
  const int32_t tgid = static_cast<int32_t>(c.a[0]), tid = static_cast<int32_t>(c.a[1]);
  if (tgid <= 0 || tid <= 0) return -EINVAL;
  if (tgid != c.p.identity().pid) return -ESRCH;
  return signal_thread(c, tid, static_cast<int>(c.a[2]));
}

int64_t sys_tkill(SyscallContext& c) {
  const int32_t tid = static_cast<int32_t>(c.a[0]);
  if (tid <= 0) return -EINVAL;
  return signal_thread(c, tid, static_cast<int>(c.a[1]));
}

int64_t sys_rt_sigreturn(SyscallContext& c) {
  c.no_result = true;
  c.p.request_sigreturn(Process::SigreturnKind::Rt);
  return 0;
}

int64_t sys_sigreturn(SyscallContext& c) {
  c.no_result = true;
  c.p.request_sigreturn(Process::SigreturnKind::Legacy);
  return 0;
}

}  // namespace padlock::emu
