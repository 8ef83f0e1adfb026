// Time system calls (docs/timing.md). With timing on (the default) they read the guest's
// virtual clock (emulator/time/virtual_time.hpp): clock_gettime for every clock, gettimeofday,
// time, times, getrusage; the sleeps advance virtual time instead of blocking (and end
// early with -EINTR when a signal for the guest becomes due, e.g. a timer's). With
// --timing off they follow the host clock and really sleep.
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

constexpr int64_t kNsPerSec = 1000000000;

timespec ts_of_ns(int64_t ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(ns / kNsPerSec);
  ts.tv_nsec = static_cast<long>(ns % kNsPerSec);
  return ts;
}

bool virtual_time(SyscallContext& c) {
  return c.p.options().timing;
}

int64_t gettime(SyscallContext& c, bool time64, bool res) {
  timespec ts;
  const clockid_t clk = static_cast<clockid_t>(static_cast<int32_t>(c.a[0]));
  if (res) {
    if (clock_getres(clk, &ts) != 0) return -errno;
    if (virtual_time(c) && ts.tv_sec == 0 && ts.tv_nsec < 1000000) ts.tv_nsec = 1;  // 1 ns
  } else if (virtual_time(c)) {
    int64_t ns = 0;
    if (!c.p.vtime().clock_ns(clk, ns)) return -EINVAL;
    ts = ts_of_ns(ns);
  } else if (clock_gettime(clk, &ts) != 0) {
    return -errno;
  }
  if (c.a[1] == 0) return 0;
  uint8_t out[16];
  encode_timespec(out, time64, ts);
  return c.user.write(c.a[1], out, timespec_size(time64)) ? 0 : -EFAULT;
}

bool read_timespec(SyscallContext& c, uint64_t va, bool time64, timespec& ts) {
  uint8_t raw[16];
  if (!c.user.read(va, raw, timespec_size(time64))) return false;
  ts = decode_timespec(raw, time64);
  return true;
}

int64_t sleep_common(SyscallContext& c, clockid_t clk, int flags, uint64_t req_va, uint64_t rem_va,
                     bool time64) {
  timespec req, rem{};
  if (!read_timespec(c, req_va, time64, req)) return -EFAULT;
  if (req.tv_nsec < 0 || req.tv_nsec >= 1000000000 || req.tv_sec < 0) return -EINVAL;
  if (virtual_time(c)) {
    VirtualTime& vt = c.p.vtime();
    const int64_t req_ns = int64_t(req.tv_sec) * kNsPerSec + req.tv_nsec;
    int64_t now_ns = 0;
    if (!vt.clock_ns(clk, now_ns)) return -EINVAL;
    const int64_t wait_ns = (flags & TIMER_ABSTIME) ? req_ns - now_ns : req_ns;
    int64_t left = 0;
    const int64_t r = virtual_sleep(c, wait_ns, left);
    if (r == -EINTR && rem_va != 0 && !(flags & TIMER_ABSTIME)) {
      uint8_t out[16];
      encode_timespec(out, time64, ts_of_ns(left));
      c.user.write(rem_va, out, timespec_size(time64));
    }
    return r;
  }
  const int r = clock_nanosleep(clk, flags, &req, &rem);
  if (r == EINTR) {
    c.interrupted = true;
    if (rem_va != 0 && !(flags & TIMER_ABSTIME)) {
      uint8_t out[16];
      encode_timespec(out, time64, rem);
      c.user.write(rem_va, out, timespec_size(time64));
    }
    return -EINTR;
  }
  return -r;
}

}  // namespace

int64_t virtual_sleep(SyscallContext& c, int64_t ns, int64_t& left_ns) {
  left_ns = 0;
  if (ns <= 0) return 0;
  VirtualTime& vt = c.p.vtime();
  const uint64_t until = vt.now() + vt.cycles_of_ns(static_cast<uint64_t>(ns));
  if (c.sched.live() > 1) {
    // Other threads run meanwhile (emulator/linux/threads/scheduler.hpp); a signal ends the sleep
    // with EINTR, without the remaining time.
    c.sched.block(0, 0, until);
    c.blocks = true;
    return 0;
  }
  if (c.p.sleep_until(until)) {
    c.interrupted = true;
    left_ns = static_cast<int64_t>(vt.ns_of(until - vt.now()));
    return -EINTR;
  }
  return 0;
}

// The native timespec is 64-bit on x86-64 and 32-bit for classic i386 calls.
int64_t sys_clock_gettime(SyscallContext& c) {
  return gettime(c, c.abi.wide, false);
}
int64_t sys_clock_gettime64(SyscallContext& c) {
  return gettime(c, true, false);
}
int64_t sys_clock_getres(SyscallContext& c) {
  return gettime(c, c.abi.wide, true);
}
int64_t sys_clock_getres64(SyscallContext& c) {
  return gettime(c, true, true);
}

int64_t sys_gettimeofday(SyscallContext& c) {
  timeval tv;
  if (virtual_time(c)) {
    int64_t ns = 0;
    c.p.vtime().clock_ns(CLOCK_REALTIME, ns);
    tv.tv_sec = static_cast<time_t>(ns / kNsPerSec);
    tv.tv_usec = static_cast<suseconds_t>(ns % kNsPerSec / 1000);
  } else {
    gettimeofday(&tv, nullptr);
  }
  if (c.a[0] != 0) {
    uint8_t out[16];
    encode_timeval(out, c.abi.wide, tv);
    if (!c.user.write(c.a[0], out, c.abi.wide ? 16 : 8)) return -EFAULT;
  }
  if (c.a[1] != 0) {
    const int32_t tz[2] = {0, 0};
    if (!c.user.write(c.a[1], tz, sizeof tz)) return -EFAULT;
  }
  return 0;
}

int64_t sys_time(SyscallContext& c) {
  time_t t;
  if (virtual_time(c)) {
    int64_t ns = 0;
    c.p.vtime().clock_ns(CLOCK_REALTIME, ns);
    t = static_cast<time_t>(ns / kNsPerSec);
  } else {
    t = time(nullptr);
  }
  if (c.a[0] != 0) {
    uint8_t out[8];
    put_long(out, 0, c.abi.wide, t);
    if (!c.user.write(c.a[0], out, c.abi.wide ? 8 : 4)) return -EFAULT;
  }
  return c.abi.wide ? t : static_cast<int32_t>(t);
}

// times(): user time = the guest's CPU time, system time 0; the result is the monotonic
// clock in ticks (CLK_TCK).
int64_t sys_times(SyscallContext& c) {
  struct tms t;
  clock_t r;
  if (virtual_time(c)) {
    const long hz = sysconf(_SC_CLK_TCK);
    int64_t mono = 0;
    c.p.vtime().clock_ns(CLOCK_MONOTONIC, mono);
    t = {};
    t.tms_utime = static_cast<clock_t>(c.p.vtime().cpu_ns() / (kNsPerSec / hz));
    r = static_cast<clock_t>(mono / (kNsPerSec / hz));
  } else {
    r = times(&t);
  }
  if (c.a[0] != 0) {
    uint8_t out[32];
    encode_tms(out, c.abi.wide, t);
    if (!c.user.write(c.a[0], out, tms_size(c.abi.wide))) return -EFAULT;
  }
  return c.abi.wide ? r : static_cast<int32_t>(r);
}

// getrusage(): with virtual time ru_utime is the guest's CPU time and ru_stime 0; the
// other fields (maxrss, faults ...) are the host's.
int64_t sys_getrusage(SyscallContext& c) {
  struct rusage ru;
  if (getrusage(static_cast<int>(static_cast<int32_t>(c.a[0])), &ru) != 0) return -errno;
  if (virtual_time(c)) {
    const int64_t ns = c.p.vtime().cpu_ns();
    ru.ru_utime.tv_sec = static_cast<time_t>(ns / kNsPerSec);
    ru.ru_utime.tv_usec = static_cast<suseconds_t>(ns % kNsPerSec / 1000);
    ru.ru_stime = {};
  }
  uint8_t out[144];
  encode_rusage(out, c.abi.wide, ru);
  return c.user.write(c.a[1], out, rusage_size(c.abi.wide)) ? 0 : -EFAULT;
}

int64_t sys_nanosleep(SyscallContext& c) {
  return sleep_common(c, CLOCK_MONOTONIC, 0, c.a[0], c.a[1], c.abi.wide);
}

int64_t sys_clock_nanosleep(SyscallContext& c) {
  return sleep_common(c, static_cast<clockid_t>(static_cast<int32_t>(c.a[0])),
                      static_cast<int>(c.a[1]), c.a[2], c.a[3], c.abi.wide);
}

int64_t sys_clock_nanosleep64(SyscallContext& c) {
  return sleep_common(c, static_cast<clockid_t>(static_cast<int32_t>(c.a[0])),
                      static_cast<int>(c.a[1]), c.a[2], c.a[3], true);
}

}  // namespace padlock::emu
