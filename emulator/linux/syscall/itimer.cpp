// alarm, setitimer/getitimer and the POSIX timers (timer_create ...) (docs/timing.md). With
// timing on (the default) every timer runs on the guest's virtual clock
// (emulator/time/virtual_time.hpp) and its signal is queued at the virtual deadline (checked
// after every block, PadLock instruction and sleep), so `openssl speed`, which counts
// operations until SIGALRM, measures the modelled chip. ITIMER_VIRTUAL and ITIMER_PROF
// also run on that clock (the guest has the CPU to itself). With --timing off, alarm and
// the itimers are the host kernel's (their host signals reach the guest through
// host_signals.cpp) and the POSIX timers are not provided (-ENOSYS).
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

constexpr int kSiTimer = -2;  // SI_TIMER
constexpr int kItimerSignal[VirtualTime::kItimers] = {SIGALRM, SIGVTALRM, SIGPROF};

// struct itimerval: two timevals of the ABI's long (4 bytes on i386, 8 on x86-64).
bool read_itimerval(SyscallContext& c, uint64_t va, itimerval& v) {
  const size_t w = c.abi.wide ? 8 : 4;
  uint8_t raw[32];
  if (!c.user.read(va, raw, 4 * w)) return false;
  v.it_interval.tv_sec = static_cast<time_t>(get_long(raw, 0, c.abi.wide));
  v.it_interval.tv_usec = static_cast<suseconds_t>(get_long(raw, w, c.abi.wide));
  v.it_value.tv_sec = static_cast<time_t>(get_long(raw, 2 * w, c.abi.wide));
  v.it_value.tv_usec = static_cast<suseconds_t>(get_long(raw, 3 * w, c.abi.wide));
  return true;
}

bool write_itimerval(SyscallContext& c, uint64_t va, const itimerval& v) {
  const size_t w = c.abi.wide ? 8 : 4;
  uint8_t raw[32];
  encode_timeval(raw, c.abi.wide, v.it_interval);
  encode_timeval(raw + 2 * w, c.abi.wide, v.it_value);
  return c.user.write(va, raw, 4 * w);
}

uint64_t ns_of_tv(const timeval& tv) {
  return uint64_t(tv.tv_sec) * 1000000000ull + uint64_t(tv.tv_usec) * 1000ull;
}
uint64_t ns_of_ts(const timespec& ts) {
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}
timeval tv_of_ns(uint64_t ns) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(ns / 1000000000ull);
  tv.tv_usec = static_cast<suseconds_t>(ns % 1000000000ull / 1000);
  return tv;
}
timespec ts_of_ns(uint64_t ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(ns / 1000000000ull);
  ts.tv_nsec = static_cast<long>(ns % 1000000000ull);
  return ts;
}

// A non-zero remainder never reads as zero (Linux rounds an armed timer up to 1 us).
itimerval current(VirtualTime& vt, int i) {
  itimerval v{};
  const VirtualTimer& t = vt.timer(i);
  if (!t.armed) return v;
  uint64_t ns = vt.ns_of(vt.remaining(i));
  if (ns < 1000) ns = 1000;
  v.it_value = tv_of_ns(ns);
  v.it_interval = tv_of_ns(vt.ns_of(t.interval));
  return v;
}

uint64_t cycles_of(VirtualTime& vt, uint64_t ns) {
  return ns == 0 ? 0 : std::max<uint64_t>(1, vt.cycles_of_ns(ns));
}

bool virtual_time(SyscallContext& c) {
  return c.p.options().timing;
}

}  // namespace

int64_t sys_alarm(SyscallContext& c) {
  if (!virtual_time(c)) return alarm(static_cast<unsigned>(c.a[0]));
  VirtualTime& vt = c.p.vtime();
  const itimerval old = current(vt, 0);
  vt.arm(0, cycles_of(vt, uint64_t(static_cast<uint32_t>(c.a[0])) * 1000000000ull), 0, SIGALRM,
         kSiKernel);
  // Linux: the old remainder in seconds, rounded to nearest, at least 1 if it was armed.
  int64_t secs = old.it_value.tv_sec + (old.it_value.tv_usec >= 500000 ? 1 : 0);
  if (secs == 0 && (old.it_value.tv_sec | old.it_value.tv_usec)) secs = 1;
  return secs;
}

int64_t sys_setitimer(SyscallContext& c) {
  const int which = static_cast<int32_t>(c.a[0]);
  itimerval nv{}, ov{};
  if (c.a[1] != 0 && !read_itimerval(c, c.a[1], nv)) return -EFAULT;
  if (!virtual_time(c)) {
    if (setitimer(static_cast<__itimer_which>(which), &nv, &ov) != 0) return -errno;
  } else {
    if (which < 0 || which >= VirtualTime::kItimers) return -EINVAL;
    if (nv.it_value.tv_usec < 0 || nv.it_value.tv_usec >= 1000000 || nv.it_interval.tv_usec < 0 ||
        nv.it_interval.tv_usec >= 1000000) {
      return -EINVAL;
    }
    VirtualTime& vt = c.p.vtime();
    ov = current(vt, which);
    vt.arm(which, cycles_of(vt, ns_of_tv(nv.it_value)), cycles_of(vt, ns_of_tv(nv.it_interval)),
           kItimerSignal[which], kSiKernel);
  }
  if (c.a[2] != 0 && !write_itimerval(c, c.a[2], ov)) return -EFAULT;
  return 0;
}

int64_t sys_getitimer(SyscallContext& c) {
  const int which = static_cast<int32_t>(c.a[0]);
  itimerval v{};
  if (!virtual_time(c)) {
    if (getitimer(static_cast<__itimer_which>(which), &v) != 0) return -errno;
  } else {
    if (which < 0 || which >= VirtualTime::kItimers) return -EINVAL;
    v = current(c.p.vtime(), which);
  }
  return write_itimerval(c, c.a[1], v) ? 0 : -EFAULT;
}

// --- POSIX timers ---------------------------------------------------------------------

int64_t sys_timer_create(SyscallContext& c) {
  if (!virtual_time(c)) return -ENOSYS;
  const int clk = static_cast<int32_t>(c.a[0]);
  VirtualTime& vt = c.p.vtime();
  int64_t probe = 0;
  if (!vt.clock_ns(clk, probe)) return -EINVAL;
  int signo = SIGALRM, notify = 0;  // NULL sevp: SIGEV_SIGNAL with SIGALRM
  if (c.a[1] != 0) {
    // struct sigevent: sigev_value (pointer-sized union), sigev_signo, sigev_notify.
    const size_t w = c.abi.wide ? 8 : 4;
    uint8_t raw[16];
    if (!c.user.read(c.a[1], raw, w + 8)) return -EFAULT;
    signo = get_field<int32_t>(raw, w);
    notify = get_field<int32_t>(raw, w + 4);
    if (notify == 1)
      signo = 0;  // SIGEV_NONE
    else if (notify != 0 && notify != 4)
      return -EINVAL;  // SIGEV_SIGNAL, SIGEV_THREAD_ID
    if (notify != 1 && (signo < 1 || signo > kNumSignals)) return -EINVAL;
  }
  const int id = vt.posix_alloc();
  if (id < 0) return -EAGAIN;
  vt.timer(VirtualTime::posix_index(id)).signo = signo;
  vt.timer(VirtualTime::posix_index(id)).code = kSiTimer;
  const int32_t out = id;
  if (!c.user.write(c.a[2], &out, 4)) {
    vt.posix_free(id);
    return -EFAULT;
  }
  return 0;
}

namespace {

bool posix_id(SyscallContext& c, int& id) {
  id = static_cast<int32_t>(c.a[0]);
  return id >= 0 && id < VirtualTime::kPosixTimers && c.p.vtime().posix_slot_used(id);
}

int64_t timer_settime_common(SyscallContext& c, bool time64) {
  if (!virtual_time(c)) return -ENOSYS;
  int id;
  if (!posix_id(c, id)) return -EINVAL;
  VirtualTime& vt = c.p.vtime();
  const size_t ts = timespec_size(time64);
  uint8_t raw[32];
  if (!c.user.read(c.a[2], raw, 2 * ts)) return -EFAULT;
  const timespec interval = decode_timespec(raw, time64);
  const timespec value = decode_timespec(raw + ts, time64);
  if (interval.tv_nsec < 0 || interval.tv_nsec >= 1000000000 || value.tv_nsec < 0 ||
      value.tv_nsec >= 1000000000 || value.tv_sec < 0 || interval.tv_sec < 0) {
    return -EINVAL;
  }
  const int i = VirtualTime::posix_index(id);
  VirtualTimer& t = vt.timer(i);
  if (c.a[3] != 0) {
    uint8_t old[32];
    encode_timespec(old, time64, ts_of_ns(t.armed ? vt.ns_of(t.interval) : 0));
    encode_timespec(old + ts, time64, ts_of_ns(t.armed ? vt.ns_of(vt.remaining(i)) : 0));
    if (!c.user.write(c.a[3], old, 2 * ts)) return -EFAULT;
  }
  uint64_t value_ns = ns_of_ts(value);
  if ((c.a[1] & TIMER_ABSTIME) && value_ns != 0) {
    int64_t now_ns = 0;
    vt.clock_ns(CLOCK_MONOTONIC, now_ns);  // the clock given to timer_create is not kept
    value_ns = value_ns > uint64_t(now_ns) ? value_ns - uint64_t(now_ns) : 1;
  }
  vt.arm(i, cycles_of(vt, value_ns), cycles_of(vt, ns_of_ts(interval)), t.signo, t.code);
  return 0;
}

int64_t timer_gettime_common(SyscallContext& c, bool time64) {
  if (!virtual_time(c)) return -ENOSYS;
  int id;
  if (!posix_id(c, id)) return -EINVAL;
  VirtualTime& vt = c.p.vtime();
  const int i = VirtualTime::posix_index(id);
  const VirtualTimer& t = vt.timer(i);
  const size_t ts = timespec_size(time64);
  uint8_t out[32];
  encode_timespec(out, time64, ts_of_ns(t.armed ? vt.ns_of(t.interval) : 0));
  encode_timespec(out + ts, time64, ts_of_ns(t.armed ? vt.ns_of(vt.remaining(i)) : 0));
  return c.user.write(c.a[1], out, 2 * ts) ? 0 : -EFAULT;
}

}  // namespace

int64_t sys_timer_settime(SyscallContext& c) {
  return timer_settime_common(c, c.abi.wide);
}
int64_t sys_timer_settime64(SyscallContext& c) {
  return timer_settime_common(c, true);
}
int64_t sys_timer_gettime(SyscallContext& c) {
  return timer_gettime_common(c, c.abi.wide);
}
int64_t sys_timer_gettime64(SyscallContext& c) {
  return timer_gettime_common(c, true);
}

int64_t sys_timer_getoverrun(SyscallContext& c) {
  if (!virtual_time(c)) return -ENOSYS;
  int id;
  if (!posix_id(c, id)) return -EINVAL;
  return static_cast<int64_t>(
      std::min<uint64_t>(c.p.vtime().timer(VirtualTime::posix_index(id)).overrun, 0x7FFFFFFF));
}

int64_t sys_timer_delete(SyscallContext& c) {
  if (!virtual_time(c)) return -ENOSYS;
  int id;
  if (!posix_id(c, id)) return -EINVAL;
  c.p.vtime().posix_free(id);
  return 0;
}

}  // namespace padlock::emu
