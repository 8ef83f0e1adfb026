// timerfd_create, timerfd_settime and timerfd_gettime (time64 too) (docs/emulator.md,
// "Sockets"). With timing on a timerfd runs on the guest's virtual clock: an emulated
// descriptor whose number is a host eventfd's, kept readable exactly while expirations
// wait to be read (sync_timerfds, as signalfd.cpp does for signals), so that poll, select
// and epoll see it; its expiry and interval are virtual cycles, and a wait for it moves
// the virtual clock to its expiry (lone: read's sleep, or timed_wait in poll_wait.cpp;
// with other threads, the scheduler: Process::host_wait). With --timing off it is the
// host's timerfd, in real time.
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>

#include <algorithm>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/signal/host_signals.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

constexpr int64_t kNsPerSec = 1000000000;
constexpr int kClockRealtimeAlarm = 8, kClockBoottimeAlarm = 9;

int64_t ns_of(const timespec& t) {
  return int64_t{t.tv_sec} * kNsPerSec + t.tv_nsec;
}

timespec timespec_of_ns(uint64_t ns) {
  return timespec{static_cast<time_t>(ns / kNsPerSec), static_cast<long>(ns % kNsPerSec)};
}

bool valid(const timespec& t) {
  return t.tv_sec >= 0 && t.tv_nsec >= 0 && t.tv_nsec < kNsPerSec;
}

// struct itimerspec of `time64` width: interval, then value.
bool read_itimerspec(SyscallContext& c, uint64_t va, bool time64, itimerspec& out) {
  uint8_t raw[32];
  const size_t ts = timespec_size(time64);
  if (!c.user.read(va, raw, 2 * ts)) return false;
  out.it_interval = decode_timespec(raw, time64);
  out.it_value = decode_timespec(raw + ts, time64);
  return true;
}

bool write_itimerspec(SyscallContext& c, uint64_t va, bool time64, const itimerspec& v) {
  uint8_t raw[32];
  const size_t ts = timespec_size(time64);
  encode_timespec(raw, time64, v.it_interval);
  encode_timespec(raw + ts, time64, v.it_value);
  return c.user.write(va, raw, 2 * ts);
}

VirtualTimerfd* find(Process& p, int fd) {
  const auto it = p.files().timerfds.find(fd);
  return it == p.files().timerfds.end() ? nullptr : it->second.get();
}

// Expirations up to now: each passed expiry counts once, and an interval timer's next
// expiry moves past now (Linux's hrtimer_forward: the overruns are counted, not queued).
void count_expiries(VirtualTimerfd& t, uint64_t now) {
  if (t.deadline > now) return;
  const uint64_t n = 1 + (t.interval > 0 ? (now - t.deadline) / t.interval : 0);
  t.ticks += n;
  t.deadline = t.interval > 0 ? t.deadline + n * t.interval : VirtualTime::kNever;
}

itimerspec current(Process& p, VirtualTimerfd& t) {
  count_expiries(t, p.vtime().now());
  itimerspec v{};
  v.it_interval = timespec_of_ns(t.interval_ns);
  if (t.deadline != VirtualTime::kNever) {
    v.it_value =
        timespec_of_ns(std::max<uint64_t>(1, p.vtime().ns_of(t.deadline - p.vtime().now())));
  }
  return v;
}

int64_t settime_common(SyscallContext& c, bool time64) {
  const int fd = static_cast<int32_t>(c.a[0]);
  const int flags = static_cast<int>(c.a[1]);
  itimerspec v{}, old{};
  if (!read_itimerspec(c, c.a[2], time64, v)) return -EFAULT;
  VirtualTimerfd* t = find(c.p, fd);
  if (t == nullptr) {
    // The host's timerfd (--timing off), or not one: the host answers.
    const int64_t r = host_result(timerfd_settime(fd, flags, &v, c.a[3] != 0 ? &old : nullptr));
    if (r < 0) return r;
    if (c.a[3] != 0 && !write_itimerspec(c, c.a[3], time64, old)) return -EFAULT;
    return 0;
  }
  if (flags & ~(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET)) return -EINVAL;
  if (!valid(v.it_value) || !valid(v.it_interval)) return -EINVAL;
  VirtualTime& vt = c.p.vtime();
  old = current(c.p, *t);
  // Linux: a new setting drops the expirations not yet read.
  t->ticks = 0;
  t->interval_ns = static_cast<uint64_t>(ns_of(v.it_interval));
  t->interval = t->interval_ns > 0 ? std::max<uint64_t>(1, vt.cycles_of_ns(t->interval_ns)) : 0;
  t->deadline = VirtualTime::kNever;
  const int64_t value = ns_of(v.it_value);
  if (value != 0) {
    int64_t delta = value;
    if (flags & TFD_TIMER_ABSTIME) {
      // An absolute expiry on the timer's clock as the guest reads it; one already past
      // expires at once.
      int64_t guest_now = 0;
      if (!vt.clock_ns(t->clock, guest_now)) return -EINVAL;
      delta = std::max<int64_t>(0, value - guest_now);
    }
    t->deadline = vt.now() + vt.cycles_of_ns(static_cast<uint64_t>(delta));
  }
  count_expiries(*t, vt.now());
  set_eventfd_readable(fd, t->ticks > 0);
  if (c.a[3] != 0 && !write_itimerspec(c, c.a[3], time64, old)) return -EFAULT;
  return 0;
}

int64_t gettime_common(SyscallContext& c, bool time64) {
  const int fd = static_cast<int32_t>(c.a[0]);
  itimerspec cur{};
  if (VirtualTimerfd* t = find(c.p, fd); t != nullptr) {
    cur = current(c.p, *t);
  } else if (const int64_t r = host_result(timerfd_gettime(fd, &cur)); r < 0) {
    return r;
  }
  return write_itimerspec(c, c.a[1], time64, cur) ? 0 : -EFAULT;
}

}  // namespace

void sync_timerfds(Process& p) {
  for (const auto& [fd, t] : p.files().timerfds) {
    count_expiries(*t, p.vtime().now());
    set_eventfd_readable(fd, t->ticks > 0);
  }
}

bool is_virtual_timerfd(Process& p, int fd) {
  return find(p, fd) != nullptr;
}

uint64_t virtual_fd_event(Process& p, int fd) {
  GuestFiles& k = p.files();
  if (k.timerfds.empty() && k.signalfd_mask.empty()) return VirtualTime::kNever;
  if (const VirtualTimerfd* t = find(p, fd); t != nullptr) return t->deadline;
  // A signalfd may become readable when a virtual timer's signal arrives.
  if (is_signalfd(p, fd)) return p.options().timing ? p.vtime().next_timer() : VirtualTime::kNever;
  uint64_t first = VirtualTime::kNever;
  for (const int m : epoll_members(fd)) {
    if (m != fd) first = std::min(first, virtual_fd_event(p, m));
  }
  return first;
}

int64_t timerfd_read(SyscallContext& c) {
  const int fd = static_cast<int32_t>(c.a[0]);
  VirtualTimerfd& t = *find(c.p, fd);
  if (c.a[2] < sizeof(uint64_t)) return -EINVAL;
  VirtualTime& vt = c.p.vtime();
  count_expiries(t, vt.now());
  if (t.ticks == 0) {
    const int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK)) return -EAGAIN;
    // Alone (with other threads the scheduler waits for it: Process::host_wait): the
    // clock moves to the expiry, unless a signal's handler must run first.
    while (t.ticks == 0) {
      if (c.p.signals().next_deliverable() != 0) return -EINTR;
      if (t.deadline == VirtualTime::kNever) {
        wait_host_signal();  // never expires: only a signal ends the read
        collect_host_signals(c.p);
        continue;
      }
      if (c.p.sleep_until(t.deadline)) return -EINTR;
      count_expiries(t, vt.now());
    }
  }
  if (!c.user.put(c.a[1], t.ticks)) return -EFAULT;
  t.ticks = 0;
  set_eventfd_readable(fd, false);
  return sizeof(uint64_t);
}

int64_t sys_timerfd_create(SyscallContext& c) {
  const int clock = static_cast<int>(c.a[0]);
  const int flags = static_cast<int>(c.a[1]);
  if (!c.p.options().timing) return host_result(timerfd_create(clock, flags));
  if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC && clock != CLOCK_BOOTTIME &&
      clock != kClockRealtimeAlarm && clock != kClockBoottimeAlarm) {
    return -EINVAL;
  }
  if (flags & ~(TFD_NONBLOCK | TFD_CLOEXEC)) return -EINVAL;
  // TFD_NONBLOCK and TFD_CLOEXEC are the eventfd's own flags (O_NONBLOCK, O_CLOEXEC), so
  // F_GETFL/F_SETFL keep them; the emulator's own reads of it never block.
  const int64_t r = host_result(eventfd(0, flags));
  if (r < 0) return r;
  auto t = std::make_shared<VirtualTimerfd>();
  // The alarm clocks count as their plain clocks (the guest cannot suspend).
  t->clock = clock == kClockRealtimeAlarm   ? CLOCK_REALTIME
             : clock == kClockBoottimeAlarm ? CLOCK_BOOTTIME
                                            : clock;
  c.files.timerfds[static_cast<int>(r)] = std::move(t);
  return r;
}
int64_t sys_timerfd_settime(SyscallContext& c) {
  return settime_common(c, c.abi.wide);
}
int64_t sys_timerfd_settime64(SyscallContext& c) {
  return settime_common(c, true);
}
int64_t sys_timerfd_gettime(SyscallContext& c) {
  return gettime_common(c, c.abi.wide);
}
int64_t sys_timerfd_gettime64(SyscallContext& c) {
  return gettime_common(c, true);
}

}  // namespace padlock::emu
