// Time system calls. For now they follow the host clock (virtual time for the guest is
// the timing issue's; docs/emulator.md says so). Sleeps really sleep and return -EINTR
// when a signal for the guest arrives.
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

#include "emulator/abi_structs.hpp"
#include "emulator/process.hpp"
#include "emulator/syscalls.hpp"

namespace padlock::emu {

namespace {

int64_t gettime(SyscallContext& c, bool time64, bool res) {
  timespec ts;
  const clockid_t clk = static_cast<clockid_t>(static_cast<int32_t>(c.a[0]));
  if ((res ? clock_getres(clk, &ts) : clock_gettime(clk, &ts)) != 0) return -errno;
  if (c.a[1] == 0) return 0;
  uint8_t out[16];
  encode_timespec(out, time64, ts);
  return c.p.write_user(c.a[1], out, timespec_size(time64)) ? 0 : -EFAULT;
}

bool read_timespec(SyscallContext& c, uint64_t va, bool time64, timespec& ts) {
  uint8_t raw[16];
  if (!c.p.read_user(va, raw, timespec_size(time64))) return false;
  ts = decode_timespec(raw, time64);
  return true;
}

int64_t sleep_common(SyscallContext& c, clockid_t clk, int flags, uint64_t req_va, uint64_t rem_va,
                     bool time64) {
  timespec req, rem{};
  if (!read_timespec(c, req_va, time64, req)) return -EFAULT;
  if (req.tv_nsec < 0 || req.tv_nsec >= 1000000000 || req.tv_sec < 0) return -EINVAL;
  const int r = clock_nanosleep(clk, flags, &req, &rem);
  if (r == EINTR) {
    c.interrupted = true;
    if (rem_va != 0 && !(flags & TIMER_ABSTIME)) {
      uint8_t out[16];
      encode_timespec(out, time64, rem);
      c.p.write_user(rem_va, out, timespec_size(time64));
    }
    return -EINTR;
  }
  return -r;
}

}  // namespace

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
  gettimeofday(&tv, nullptr);
  if (c.a[0] != 0) {
    uint8_t out[16];
    encode_timeval(out, c.abi.wide, tv);
    if (!c.p.write_user(c.a[0], out, c.abi.wide ? 16 : 8)) return -EFAULT;
  }
  if (c.a[1] != 0) {
    const int32_t tz[2] = {0, 0};
    if (!c.p.write_user(c.a[1], tz, sizeof tz)) return -EFAULT;
  }
  return 0;
}

int64_t sys_time(SyscallContext& c) {
  const time_t t = time(nullptr);
  if (c.a[0] != 0) {
    uint8_t out[8];
    put_long(out, 0, c.abi.wide, t);
    if (!c.p.write_user(c.a[0], out, c.abi.wide ? 8 : 4)) return -EFAULT;
  }
  return c.abi.wide ? t : static_cast<int32_t>(t);
}

int64_t sys_times(SyscallContext& c) {
  struct tms t;
  const clock_t r = times(&t);
  if (c.a[0] != 0) {
    uint8_t out[32];
    encode_tms(out, c.abi.wide, t);
    if (!c.p.write_user(c.a[0], out, tms_size(c.abi.wide))) return -EFAULT;
  }
  return c.abi.wide ? r : static_cast<int32_t>(r);
}

int64_t sys_getrusage(SyscallContext& c) {
  struct rusage ru;
  if (getrusage(static_cast<int>(static_cast<int32_t>(c.a[0])), &ru) != 0) return -errno;
  uint8_t out[144];
  encode_rusage(out, c.abi.wide, ru);
  return c.p.write_user(c.a[1], out, rusage_size(c.abi.wide)) ? 0 : -EFAULT;
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
