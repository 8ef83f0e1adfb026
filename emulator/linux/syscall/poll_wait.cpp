// Waiting for descriptors: select, pselect6, poll, ppoll, epoll and eventfd, passed
// to the host. fd_set bitmaps, struct pollfd and struct epoll_event (packed: 12 bytes in
// both ABIs) have the same bytes in both ABIs and are used in place; timeouts are
// converted. With timing on, timeouts run on the guest's virtual clock (docs/emulator.md,
// "Sockets"): a wait on no descriptor is a sleep, as nanosleep's; a wait on descriptors
// waits on the host in real time for the outside world, and when it times out the virtual
// clock moves to the call's deadline (a descriptor ready first takes no virtual time, as a
// blocking read). With --timing off, timeouts run in real time. Timerfds: timerfd.cpp.
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/timerfd.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/signal/host_signals.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

constexpr int64_t kNsPerSec = 1000000000;

int64_t blocking(SyscallContext& c, int64_t r) {
  if (r == -EINTR) c.interrupted = true;
  return r;
}

int64_t ns_of(const timespec& t) {
  return int64_t{t.tv_sec} * kNsPerSec + t.tv_nsec;
}

timespec timespec_of_ns(int64_t ns) {
  return timespec{static_cast<time_t>(ns / kNsPerSec), static_cast<long>(ns % kNsPerSec)};
}

int64_t host_now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return ns_of(t);
}

// The wait of select, poll and epoll_wait: `timeout_ns` -1 for none; `call` makes the host
// call with a timeout (nullptr: none). `left_ns` is select's time left: with timing on the
// virtual time left (the whole timeout when a descriptor was ready first, 0 when the call
// timed out or its thread waits in the scheduler), with timing off the real time left.
// The host call, made again after a host signal that the guest blocks (Linux would not
// have interrupted the wait for it): it may have made a signalfd readable, which the host
// then sees. `ts` is the timeout (nullptr: none), shortened by the time already waited.
template <typename HostCall>
int64_t host_wait_call(SyscallContext& c, const timespec* ts, HostCall call) {
  const int64_t end = ts == nullptr ? -1 : host_now_ns() + ns_of(*ts);
  timespec left = ts == nullptr ? timespec{} : *ts;
  for (;;) {
    const int64_t r = host_result(call(ts == nullptr ? nullptr : &left));
    if (r != -EINTR || collect_host_signals(c.p) == 0 || c.p.signals().next_deliverable() != 0) {
      return blocking(c, r);
    }
    sync_signalfds(c.p);
    if (end >= 0) left = timespec_of_ns(std::max<int64_t>(0, end - host_now_ns()));
  }
}

// With timing on, a wait on descriptors of which some become ready on the virtual clock
// (`fds`: a timerfd, a signalfd while a timer is armed, an epoll set with one): the host
// descriptors are looked at without waiting, and the clock moves to the next such event
// or the call's deadline, as the scheduler does when every thread waits (threads/scheduler.cpp,
// idle). False: no such descriptor, the host waits as for any other.
template <typename HostCall>
bool virtual_wait(SyscallContext& c, const std::vector<int>& fds, int64_t timeout_ns,
                  int64_t waited_ns, int64_t& left_ns, int64_t& r, HostCall call) {
  VirtualTime& vt = c.p.vtime();
  auto first_event = [&] {
    uint64_t first = VirtualTime::kNever;
    for (const int fd : fds) first = std::min(first, virtual_fd_event(c.p, fd));
    return first;
  };
  if (first_event() == VirtualTime::kNever) return false;
  const uint64_t deadline = timeout_ns < 0
                                ? VirtualTime::kNever
                                : vt.now() + vt.cycles_of_ns(static_cast<uint64_t>(
                                                 std::max<int64_t>(0, timeout_ns - waited_ns)));
  auto left = [&] {
    return deadline == VirtualTime::kNever
               ? 0
               : static_cast<int64_t>(vt.ns_of(deadline - std::min(deadline, vt.now())));
  };
  const timespec zero{0, 0};
  for (;;) {
    sync_signalfds(c.p);
    sync_timerfds(c.p);
    r = blocking(c, host_result(call(&zero)));
    if (r != 0 || vt.now() >= deadline) break;
    const uint64_t next = std::min(deadline, first_event());
    if (next == VirtualTime::kNever) {
      r = blocking(c, host_result(call(nullptr)));  // nothing virtual is due any more
      break;
    }
    if (c.p.sleep_until(next)) {
      r = blocking(c, -EINTR);
      break;
    }
  }
  left_ns = left();
  return true;
}

template <typename HostCall>
int64_t timed_wait(SyscallContext& c, const std::vector<int>& fds, bool no_fds, int64_t timeout_ns,
                   int64_t& left_ns, HostCall call) {
  left_ns = std::max<int64_t>(timeout_ns, 0);
  // Timed out in the scheduler already: the real wait is over, and the virtual deadline
  // counts from when it began.
  VirtualTime& vt = c.p.vtime();
  const int64_t waited_ns =
      c.waited_out ? static_cast<int64_t>(vt.ns_of(vt.now() - c.waited_since)) : 0;
  const timespec ts = timespec_of_ns(c.waited_out ? 0 : left_ns);
  sync_signalfds(c.p);
  sync_timerfds(c.p);
  if (!c.p.options().timing) {
    const int64_t start = host_now_ns();
    const int64_t r = host_wait_call(c, timeout_ns >= 0 ? &ts : nullptr, call);
    left_ns = std::max<int64_t>(0, timeout_ns - (host_now_ns() - start));
    if (r == 0) left_ns = 0;
    return r;
  }
  // Nothing to wait for but time: a sleep on the virtual clock.
  if (no_fds && timeout_ns >= 0) return virtual_sleep(c, timeout_ns, left_ns);
  if (int64_t r = 0; virtual_wait(c, fds, timeout_ns, waited_ns, left_ns, r, call)) return r;
  const int64_t r = host_wait_call(c, timeout_ns >= 0 ? &ts : nullptr, call);
  if (r != 0 || timeout_ns <= 0) return r;
  // Timed out in real time: the guest's clock reaches the deadline too.
  return virtual_sleep(c, timeout_ns - waited_ns, left_ns);
}

// An fd_set of `nfds` bits in guest memory, as a host pointer (nullptr if va is 0).
bool fdset(SyscallContext& c, uint64_t va, uint64_t nfds, fd_set*& out) {
  out = nullptr;
  if (va == 0) return true;
  const uint64_t bytes = ((nfds + 63) / 64) * 8;
  uint8_t* p = c.user.ptr(va, bytes == 0 ? 1 : bytes, true);
  if (p == nullptr) return false;
  c.p.mem().will_write(va, bytes);
  out = reinterpret_cast<fd_set*>(p);
  return true;
}

bool any_fd(const fd_set* set, uint64_t nfds) {
  if (set == nullptr) return false;
  const uint8_t* bits = reinterpret_cast<const uint8_t*>(set);
  for (uint64_t fd = 0; fd < nfds; ++fd) {
    if (bits[fd / 8] & (1u << (fd % 8))) return true;
  }
  return false;
}

int64_t select_common(SyscallContext& c, int64_t timeout_ns, int64_t& left_ns) {
  const uint64_t nfds = c.a[0];
  if (static_cast<int32_t>(nfds) < 0 || nfds > FD_SETSIZE) return -EINVAL;
  fd_set *r = nullptr, *w = nullptr, *e = nullptr;
  if (!fdset(c, c.a[1], nfds, r) || !fdset(c, c.a[2], nfds, w) || !fdset(c, c.a[3], nfds, e)) {
    return -EFAULT;
  }
  const bool no_fds = !any_fd(r, nfds) && !any_fd(w, nfds) && !any_fd(e, nfds);
  std::vector<int> fds;
  for (const fd_set* set : {r, w, e}) {
    for (uint64_t fd = 0; set != nullptr && fd < nfds; ++fd) {
      if (reinterpret_cast<const uint8_t*>(set)[fd / 8] & (1u << (fd % 8))) {
        // The emulator's descriptors are not open for the guest: Linux's max_select_fd
        // fails the call with EBADF before it waits.
        if (c.files.emulator_fd(static_cast<int>(fd))) return -EBADF;
        fds.push_back(static_cast<int>(fd));
      }
    }
  }
  return timed_wait(c, fds, no_fds, timeout_ns, left_ns, [&](const timespec* ts) {
    return pselect(static_cast<int>(nfds), r, w, e, ts, nullptr);
  });
}

// A timespec argument of `time64` width; false: unreadable. `present` says whether there
// was one.
bool read_timespec(SyscallContext& c, uint64_t va, bool time64, timespec& ts, bool& present) {
  present = va != 0;
  if (!present) return true;
  uint8_t raw[16];
  if (!c.user.read(va, raw, timespec_size(time64))) return false;
  ts = decode_timespec(raw, time64);
  return ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000 && ts.tv_sec >= 0;
}

// The wait's signal mask of pselect6, ppoll and epoll_pwait, installed for the call as
// Linux's set_user_sigmask does: a signal it unblocks ends the wait with EINTR and its
// handler runs with that mask, the old one back at the handler's sigreturn (the frame
// holds it: SignalState::saved_mask); otherwise the old mask is back when the call returns.
template <typename Call>
int64_t with_wait_mask(SyscallContext& c, SyscallHandler fn, Call call) {
  uint64_t mask = 0;
  const int m = wait_mask(c, fn, mask);
  if (m < 0) return m;
  if (m == 0) return call();
  SignalState& s = c.p.signals();
  // Made again after its thread waited in the scheduler: the mask is in place already
  // (host_wait.cpp), the old one saved.
  const uint64_t old = s.has_saved_mask ? s.saved_mask : s.blocked;
  s.blocked = mask & ~kUnblockable;
  const int64_t r = s.next_deliverable() != 0 ? -EINTR : call();
  if (c.blocks || (r == -EINTR && s.next_deliverable() != 0)) {
    s.saved_mask = old;
    s.has_saved_mask = true;
  } else {
    s.blocked = old;
    s.has_saved_mask = false;
  }
  return r;
}

}  // namespace

// select(nfds, readfds, writefds, exceptfds, struct timeval *timeout): the time left is
// written back, as Linux does (with timing on, the virtual time left: timed_wait).
int64_t sys_select(SyscallContext& c) {
  const bool w = c.abi.wide;
  int64_t timeout_ns = -1;
  if (c.a[4] != 0) {
    uint8_t raw[16];
    if (!c.user.read(c.a[4], raw, w ? 16 : 8)) return -EFAULT;
    const int64_t sec = get_long(raw, 0, w);
    const int64_t usec = get_long(raw, w ? 8 : 4, w);
    if (sec < 0 || usec < 0 || usec >= 1000000) return -EINVAL;
    timeout_ns = sec * kNsPerSec + usec * 1000;
  }
  int64_t left = 0;
  const int64_t r = select_common(c, timeout_ns, left);
  if (c.a[4] != 0 && (r >= 0 || r == -EINTR)) {
    uint8_t raw[16];
    encode_timeval(raw, w,
                   timeval{static_cast<time_t>(left / kNsPerSec),
                           static_cast<suseconds_t>(left % kNsPerSec / 1000)});
    c.user.write(c.a[4], raw, w ? 16 : 8);
  }
  return r;
}

namespace {
// pselect6 writes the time left back too, as select (the C library's pselect passes a
// copy; its select may be made with pselect6).
int64_t pselect_common(SyscallContext& c, bool time64) {
  timespec ts{};
  bool present = false;
  if (!read_timespec(c, c.a[4], time64, ts, present)) return -EINVAL;
  int64_t left = 0;
  const int64_t r = select_common(c, present ? ns_of(ts) : -1, left);
  if (present && (r >= 0 || r == -EINTR)) {
    uint8_t raw[16];
    encode_timespec(raw, time64, timespec_of_ns(left));
    c.user.write(c.a[4], raw, timespec_size(time64));
  }
  return r;
}

// A poll set naming an emulator descriptor: that entry is POLLNVAL, as for a number that
// is not open (Linux's do_pollfd), and counts as ready, so the call does not wait; the
// others get their state now. The host never sees the emulator's descriptor.
int64_t poll_emulator_fds(SyscallContext& c, pollfd* set, uint64_t n) {
  std::vector<pollfd> host(set, set + n);
  for (pollfd& f : host) {
    if (c.files.emulator_fd(f.fd)) f.fd = -1;  // ignored by the host (revents 0)
  }
  const int64_t r = host_result(poll(host.data(), n, 0));
  if (r < 0) return r;
  int64_t ready = 0;
  for (uint64_t i = 0; i < n; ++i) {
    set[i].revents = c.files.emulator_fd(set[i].fd) ? POLLNVAL : host[i].revents;
    ready += set[i].revents != 0;
  }
  return ready;
}

int64_t poll_common(SyscallContext& c, int64_t timeout_ns) {
  const uint64_t n = c.a[1];
  if (n > 1024 * 1024) return -EINVAL;
  uint8_t* p = c.user.ptr(c.a[0], n * sizeof(pollfd), true);
  if (p == nullptr && n > 0) return -EFAULT;
  int64_t left = 0;
  std::vector<int> fds(n);
  for (uint64_t i = 0; i < n; ++i) fds[i] = reinterpret_cast<const pollfd*>(p)[i].fd;
  if (std::any_of(fds.begin(), fds.end(), [&](int fd) { return c.files.emulator_fd(fd); })) {
    return poll_emulator_fds(c, reinterpret_cast<pollfd*>(p), n);
  }
  return timed_wait(c, fds, n == 0, timeout_ns, left, [&](const timespec* ts) {
    return ppoll(reinterpret_cast<pollfd*>(p), n, ts, nullptr);
  });
}

int64_t ppoll_common(SyscallContext& c, bool time64) {
  timespec ts{};
  bool present = false;
  if (!read_timespec(c, c.a[2], time64, ts, present)) return -EINVAL;
  return poll_common(c, present ? ns_of(ts) : -1);
}
}  // namespace

int64_t sys_poll(SyscallContext& c) {
  const int32_t ms = static_cast<int32_t>(c.a[2]);
  return poll_common(c, ms < 0 ? -1 : int64_t{ms} * 1000000);
}

int wait_mask(SyscallContext& c, SyscallHandler fn, uint64_t& mask) {
  uint64_t va = 0, size = 0;
  if (fn == sys_ppoll || fn == sys_ppoll_time64) {
    va = c.a[3];
    size = c.a[4];
  } else if (fn == sys_epoll_pwait) {
    va = c.a[4];
    size = c.a[5];
  } else if (fn == sys_pselect6 || fn == sys_pselect6_time64) {
    // pselect6's sixth argument: { const sigset_t *ss; size_t ss_len } (words of the ABI).
    if (c.a[5] == 0) return 0;
    bool ok = false;
    va = c.user.get_word(c.a[5], ok);
    if (ok) size = c.user.get_word(c.a[5] + (c.abi.wide ? 8 : 4), ok);
    if (!ok) return -EFAULT;
  }
  if (va == 0) return 0;
  if (size != sizeof mask) return -EINVAL;
  return c.user.get(va, mask) ? 1 : -EFAULT;
}

int64_t sys_pselect6(SyscallContext& c) {
  return with_wait_mask(c, sys_pselect6, [&] { return pselect_common(c, c.abi.wide); });
}
int64_t sys_pselect6_time64(SyscallContext& c) {
  return with_wait_mask(c, sys_pselect6_time64, [&] { return pselect_common(c, true); });
}
int64_t sys_ppoll(SyscallContext& c) {
  return with_wait_mask(c, sys_ppoll, [&] { return ppoll_common(c, c.abi.wide); });
}
int64_t sys_ppoll_time64(SyscallContext& c) {
  return with_wait_mask(c, sys_ppoll_time64, [&] { return ppoll_common(c, true); });
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
    ev = reinterpret_cast<epoll_event*>(c.user.ptr(c.a[3], sizeof(epoll_event), false));
    if (ev == nullptr) return -EFAULT;
  }
  return host_result(epoll_ctl(static_cast<int32_t>(c.a[0]), static_cast<int>(c.a[1]),
                               static_cast<int32_t>(c.a[2]), ev));
}

std::vector<int> epoll_members(int epfd) {
  // The host lists an epoll descriptor's registered descriptors as "tfd: N" lines.
  std::vector<int> out;
  char path[48];
  std::snprintf(path, sizeof path, "/proc/self/fdinfo/%d", epfd);
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) return out;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    int fd = 0;
    if (std::sscanf(line, "tfd: %d", &fd) == 1) out.push_back(fd);
  }
  std::fclose(f);
  return out;
}

bool epoll_set_empty(int epfd) {
  return epoll_members(epfd).empty();
}

int64_t sys_epoll_wait(SyscallContext& c) {
  const int32_t max = static_cast<int32_t>(c.a[2]);
  if (max <= 0 || max > 1 << 20) return -EINVAL;
  const uint64_t bytes = static_cast<uint64_t>(max) * sizeof(epoll_event);
  uint8_t* p = c.user.ptr(c.a[1], bytes, true);
  if (p == nullptr) return -EFAULT;
  c.p.mem().will_write(c.a[1], bytes);
  const int epfd = static_cast<int32_t>(c.a[0]);
  epoll_event* events = reinterpret_cast<epoll_event*>(p);
  const int32_t ms = static_cast<int32_t>(c.a[3]);
  // Not an epoll descriptor, or ready: the call's own answer, without waiting.
  sync_signalfds(c.p);
  sync_timerfds(c.p);
  const int64_t now = host_result(epoll_wait(epfd, events, max, 0));
  if (now != 0 || ms == 0) return now;
  const bool no_fds = c.p.options().timing && ms > 0 && epoll_set_empty(epfd);
  int64_t left = 0;
  return timed_wait(
      c, {epfd}, no_fds, ms < 0 ? -1 : int64_t{ms} * 1000000, left, [&](const timespec* ts) {
        return epoll_wait(epfd, events, max,
                          ts == nullptr ? -1 : static_cast<int>(ns_of(*ts) / 1000000));
      });
}

int64_t sys_epoll_pwait(SyscallContext& c) {
  return with_wait_mask(c, sys_epoll_pwait, [&] { return sys_epoll_wait(c); });
}

int64_t sys_eventfd(SyscallContext& c) {
  return host_result(eventfd(static_cast<unsigned>(c.a[0]), 0));
}

int64_t sys_eventfd2(SyscallContext& c) {
  return host_result(eventfd(static_cast<unsigned>(c.a[0]), static_cast<int>(c.a[1])));
}

}  // namespace padlock::emu
