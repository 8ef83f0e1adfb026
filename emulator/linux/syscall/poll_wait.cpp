// Waiting for descriptors: select, pselect6, ppoll, epoll, eventfd and timerfd, passed to
// the host (poll itself is in file.cpp). fd_set bitmaps, struct pollfd and struct
// epoll_event (packed: 12 bytes in both ABIs) have the same bytes in both ABIs and are used
// in place; timeouts are converted. Timeouts and timerfd run on the host clock, in real
// time (a timerfd's absolute expiry on the guest's clock becomes the same distance from now),
// also when
// the guest's clock is virtual: they wait for the outside world (docs/emulator.md,
// "Sockets"). The signal mask of pselect6, ppoll and epoll_pwait is not applied: the host
// call waits with the emulator's mask, and a signal for the guest interrupts it as any
// blocking call (-EINTR).
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/timerfd.h>
#include <time.h>

#include <algorithm>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

int64_t blocking(SyscallContext& c, int64_t r) {
  if (r == -EINTR) c.interrupted = true;
  return r;
}

// An fd_set of `nfds` bits in guest memory, as a host pointer (nullptr if va is 0).
bool fdset(SyscallContext& c, uint64_t va, uint64_t nfds, fd_set*& out) {
  out = nullptr;
  if (va == 0) return true;
  const uint64_t bytes = ((nfds + 63) / 64) * 8;
  uint8_t* p = c.p.user_ptr(va, bytes == 0 ? 1 : bytes, true);
  if (p == nullptr) return false;
  c.p.mem().will_write(va, bytes);
  out = reinterpret_cast<fd_set*>(p);
  return true;
}

int64_t select_common(SyscallContext& c, timespec* timeout) {
  const uint64_t nfds = c.a[0];
  if (static_cast<int32_t>(nfds) < 0 || nfds > FD_SETSIZE) return -EINVAL;
  fd_set *r = nullptr, *w = nullptr, *e = nullptr;
  if (!fdset(c, c.a[1], nfds, r) || !fdset(c, c.a[2], nfds, w) || !fdset(c, c.a[3], nfds, e)) {
    return -EFAULT;
  }
  return blocking(c, host_result(pselect(static_cast<int>(nfds), r, w, e, timeout, nullptr)));
}

// A timespec argument of `time64` width; false: unreadable. `present` says whether there
// was one.
bool read_timespec(SyscallContext& c, uint64_t va, bool time64, timespec& ts, bool& present) {
  present = va != 0;
  if (!present) return true;
  uint8_t raw[16];
  if (!c.p.read_user(va, raw, timespec_size(time64))) return false;
  ts = decode_timespec(raw, time64);
  return ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000 && ts.tv_sec >= 0;
}

}  // namespace

// select(nfds, readfds, writefds, exceptfds, struct timeval *timeout): the time left is
// written back, as Linux does.
int64_t sys_select(SyscallContext& c) {
  const bool w = c.abi.wide;
  timespec ts{};
  if (c.a[4] != 0) {
    uint8_t raw[16];
    if (!c.p.read_user(c.a[4], raw, w ? 16 : 8)) return -EFAULT;
    ts.tv_sec = static_cast<time_t>(get_long(raw, 0, w));
    const int64_t usec = get_long(raw, w ? 8 : 4, w);
    if (ts.tv_sec < 0 || usec < 0 || usec >= 1000000) return -EINVAL;
    ts.tv_nsec = static_cast<long>(usec * 1000);
  }
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  const int64_t r = select_common(c, c.a[4] != 0 ? &ts : nullptr);
  if (c.a[4] != 0 && r >= 0) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t left = (ts.tv_sec - (now.tv_sec - start.tv_sec)) * 1000000000LL +
                   (ts.tv_nsec - (now.tv_nsec - start.tv_nsec));
    if (left < 0 || r == 0) left = 0;
    uint8_t raw[16];
    encode_timeval(raw, w,
                   timeval{static_cast<time_t>(left / 1000000000),
                           static_cast<suseconds_t>(left % 1000000000 / 1000)});
    c.p.write_user(c.a[4], raw, w ? 16 : 8);
  }
  return r;
}

namespace {
int64_t pselect_common(SyscallContext& c, bool time64) {
  timespec ts{};
  bool present = false;
  if (!read_timespec(c, c.a[4], time64, ts, present)) return -EINVAL;
  return select_common(c, present ? &ts : nullptr);
}

int64_t ppoll_common(SyscallContext& c, bool time64) {
  const uint64_t n = c.a[1];
  if (n > 1024 * 1024) return -EINVAL;
  uint8_t* p = c.p.user_ptr(c.a[0], n * sizeof(pollfd), true);
  if (p == nullptr && n > 0) return -EFAULT;
  timespec ts{};
  bool present = false;
  if (!read_timespec(c, c.a[2], time64, ts, present)) return -EINVAL;
  return blocking(
      c, host_result(ppoll(reinterpret_cast<pollfd*>(p), n, present ? &ts : nullptr, nullptr)));
}
}  // namespace

int64_t sys_pselect6(SyscallContext& c) {
  return pselect_common(c, c.abi.wide);
}
int64_t sys_pselect6_time64(SyscallContext& c) {
  return pselect_common(c, true);
}
int64_t sys_ppoll(SyscallContext& c) {
  return ppoll_common(c, c.abi.wide);
}
int64_t sys_ppoll_time64(SyscallContext& c) {
  return ppoll_common(c, true);
}

int64_t sys_epoll_create(SyscallContext& c) {
  if (static_cast<int32_t>(c.a[0]) <= 0) return -EINVAL;
  return host_result(epoll_create1(0));
}

int64_t sys_epoll_create1(SyscallContext& c) {
  return host_result(epoll_create1(static_cast<int>(c.a[0])));
}

int64_t sys_epoll_ctl(SyscallContext& c) {
  static_assert(sizeof(epoll_event) == 12, "struct epoll_event is packed on x86-64");
  epoll_event* ev = nullptr;
  if (c.a[3] != 0) {
    ev = reinterpret_cast<epoll_event*>(c.p.user_ptr(c.a[3], sizeof(epoll_event), false));
    if (ev == nullptr) return -EFAULT;
  }
  return host_result(epoll_ctl(static_cast<int32_t>(c.a[0]), static_cast<int>(c.a[1]),
                               static_cast<int32_t>(c.a[2]), ev));
}

int64_t sys_epoll_wait(SyscallContext& c) {
  const int32_t max = static_cast<int32_t>(c.a[2]);
  if (max <= 0 || max > 1 << 20) return -EINVAL;
  const uint64_t bytes = static_cast<uint64_t>(max) * sizeof(epoll_event);
  uint8_t* p = c.p.user_ptr(c.a[1], bytes, true);
  if (p == nullptr) return -EFAULT;
  c.p.mem().will_write(c.a[1], bytes);
  return blocking(
      c, host_result(epoll_wait(static_cast<int32_t>(c.a[0]), reinterpret_cast<epoll_event*>(p),
                                max, static_cast<int32_t>(c.a[3]))));
}

int64_t sys_epoll_pwait(SyscallContext& c) {
  return sys_epoll_wait(c);  // the signal mask is not applied (see the top of the file)
}

int64_t sys_eventfd(SyscallContext& c) {
  return host_result(eventfd(static_cast<unsigned>(c.a[0]), 0));
}

int64_t sys_eventfd2(SyscallContext& c) {
  return host_result(eventfd(static_cast<unsigned>(c.a[0]), static_cast<int>(c.a[1])));
}

}  // namespace padlock::emu

// --- timerfd -------------------------------------------------------------------------------

namespace padlock::emu {

namespace {

// struct itimerspec of `time64` width: interval, then value.
bool read_itimerspec(SyscallContext& c, uint64_t va, bool time64, itimerspec& out) {
  uint8_t raw[32];
  const size_t ts = timespec_size(time64);
  if (!c.p.read_user(va, raw, 2 * ts)) return false;
  out.it_interval = decode_timespec(raw, time64);
  out.it_value = decode_timespec(raw + ts, time64);
  return true;
}

bool write_itimerspec(SyscallContext& c, uint64_t va, bool time64, const itimerspec& v) {
  uint8_t raw[32];
  const size_t ts = timespec_size(time64);
  encode_timespec(raw, time64, v.it_interval);
  encode_timespec(raw + ts, time64, v.it_value);
  return c.p.write_user(va, raw, 2 * ts);
}

int64_t ns_of(const timespec& t) {
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

timespec timespec_of(int64_t ns) {
  return timespec{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
}

int64_t timerfd_settime_common(SyscallContext& c, bool time64) {
  const int fd = static_cast<int32_t>(c.a[0]);
  int flags = static_cast<int>(c.a[1]);
  itimerspec v{}, old{};
  if (!read_itimerspec(c, c.a[2], time64, v)) return -EFAULT;
  // An absolute expiry is a time of the guest's clock: the same distance from now on the
  // host's (timerfd runs in real time, as the other waits here).
  if ((flags & TFD_TIMER_ABSTIME) && c.p.options().timing &&
      (v.it_value.tv_sec != 0 || v.it_value.tv_nsec != 0)) {
    const auto it = c.p.kernel().timerfd_clock.find(fd);
    const int clock = it != c.p.kernel().timerfd_clock.end() ? it->second : CLOCK_MONOTONIC;
    int64_t guest_now = 0;
    if (!c.p.vtime().clock_ns(clock, guest_now)) return -EINVAL;
    const int64_t left = std::max<int64_t>(1, ns_of(v.it_value) - guest_now);
    v.it_value = timespec_of(left);
    flags &= ~TFD_TIMER_ABSTIME;
  }
  const int64_t r = host_result(timerfd_settime(fd, flags, &v, c.a[3] != 0 ? &old : nullptr));
  if (r < 0) return r;
  if (c.a[3] != 0 && !write_itimerspec(c, c.a[3], time64, old)) return -EFAULT;
  return 0;
}

int64_t timerfd_gettime_common(SyscallContext& c, bool time64) {
  itimerspec cur{};
  const int64_t r = host_result(timerfd_gettime(static_cast<int32_t>(c.a[0]), &cur));
  if (r < 0) return r;
  return write_itimerspec(c, c.a[1], time64, cur) ? 0 : -EFAULT;
}

}  // namespace

int64_t sys_timerfd_create(SyscallContext& c) {
  const int clock = static_cast<int>(c.a[0]);
  const int64_t r = host_result(timerfd_create(clock, static_cast<int>(c.a[1])));
  if (r >= 0) c.p.kernel().timerfd_clock[static_cast<int>(r)] = clock;
  return r;
}
int64_t sys_timerfd_settime(SyscallContext& c) {
  return timerfd_settime_common(c, c.abi.wide);
}
int64_t sys_timerfd_settime64(SyscallContext& c) {
  return timerfd_settime_common(c, true);
}
int64_t sys_timerfd_gettime(SyscallContext& c) {
  return timerfd_gettime_common(c, c.abi.wide);
}
int64_t sys_timerfd_gettime64(SyscallContext& c) {
  return timerfd_gettime_common(c, true);
}

}  // namespace padlock::emu
