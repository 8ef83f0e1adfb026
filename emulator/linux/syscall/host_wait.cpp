// Host waits of a thread while other guest threads can run (docs/emulator.md, "Threads"):
// a system call that would block on a host descriptor (read, recv, accept, poll, select,
// epoll_wait; write and send to a full pipe or socket) or on a child (wait4, waitid) is not
// made. The calling thread waits in the scheduler on the descriptors (or its children)
// instead, and makes the call again once the host says one of them is ready
// (Scheduler::host_wait, emulator/linux/threads/scheduler.hpp). This file says which calls wait on
// what.
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

// How a call names what it waits for.
enum class WaitOn : uint8_t {
  ReadFd,     // a[0] is a descriptor to be readable (accept: a connection)
  RecvFd,     // the same, unless flags (recvfrom a[3], recvmsg a[2]) hold MSG_DONTWAIT
  WriteFd,    // a[0] is a descriptor to be writable
  SendFd,     // the same, unless flags (sendto a[3], sendmsg a[2]) hold MSG_DONTWAIT
  PollFds,    // poll/ppoll: a[0] the pollfd array, a[1] its length
  SelectFds,  // select/pselect6: a[0] nfds, a[1..3] fd_sets
  Wait4,      // wait4/waitpid: a[0] the pid, a[2] the options
  Waitid,     // waitid: a[0] idtype, a[1] id, a[3] options
};
enum class Timeout : uint8_t {
  None,
  Ms2,
  Ms3,
  Timespec2,
  Timespec2_64,
  Timeval4,
  Timespec4,
  Timespec4_64
};

struct WaitingCall {
  SyscallHandler fn;
  WaitOn on;
  Timeout timeout;
  int flags_arg;  // RecvFd, SendFd: the argument that holds the MSG_* flags
};

constexpr WaitingCall kWaitingCalls[] = {
    {sys_read, WaitOn::ReadFd, Timeout::None, -1},
    {sys_readv, WaitOn::ReadFd, Timeout::None, -1},
    {sys_accept, WaitOn::ReadFd, Timeout::None, -1},
    {sys_accept4, WaitOn::ReadFd, Timeout::None, -1},
    {sys_recvfrom, WaitOn::RecvFd, Timeout::None, 3},
    {sys_recvmsg, WaitOn::RecvFd, Timeout::None, 2},
    {sys_write, WaitOn::WriteFd, Timeout::None, -1},
    {sys_writev, WaitOn::WriteFd, Timeout::None, -1},
    {sys_sendto, WaitOn::SendFd, Timeout::None, 3},
    {sys_sendmsg, WaitOn::SendFd, Timeout::None, 2},
    {sys_recvmmsg, WaitOn::RecvFd, Timeout::None, 3},
    {sys_recvmmsg_time64, WaitOn::RecvFd, Timeout::None, 3},
    {sys_sendmmsg, WaitOn::SendFd, Timeout::None, 3},
    {sys_wait4, WaitOn::Wait4, Timeout::None, -1},
    {sys_waitpid, WaitOn::Wait4, Timeout::None, -1},
    {sys_waitid, WaitOn::Waitid, Timeout::None, -1},
    {sys_epoll_wait, WaitOn::ReadFd, Timeout::Ms3, -1},  // the epoll descriptor is pollable
    {sys_epoll_pwait, WaitOn::ReadFd, Timeout::Ms3, -1},
    {sys_poll, WaitOn::PollFds, Timeout::Ms2, -1},
    {sys_ppoll, WaitOn::PollFds, Timeout::Timespec2, -1},
    {sys_ppoll_time64, WaitOn::PollFds, Timeout::Timespec2_64, -1},
    {sys_select, WaitOn::SelectFds, Timeout::Timeval4, -1},
    {sys_pselect6, WaitOn::SelectFds, Timeout::Timespec4, -1},
    {sys_pselect6_time64, WaitOn::SelectFds, Timeout::Timespec4_64, -1},
};

// The call's timeout in milliseconds: -1 none, 0 it does not wait; false: unreadable.
bool timeout_ms(SyscallContext& c, Timeout t, int64_t& ms) {
  ms = -1;
  uint8_t raw[16];
  switch (t) {
    case Timeout::None:
      return true;
    case Timeout::Ms2:
    case Timeout::Ms3: {
      const int32_t v = static_cast<int32_t>(c.a[t == Timeout::Ms2 ? 2 : 3]);
      ms = v < 0 ? -1 : v;
      return true;
    }
    case Timeout::Timeval4: {
      if (c.a[4] == 0) return true;
      const bool w = c.abi.wide;
      if (!c.user.read(c.a[4], raw, w ? 16 : 8)) return false;
      ms = get_long(raw, 0, w) * 1000 + (get_long(raw, w ? 8 : 4, w) + 999) / 1000;
      return true;
    }
    default: {
      const bool time64 = t == Timeout::Timespec2_64 || t == Timeout::Timespec4_64 ||
                          (c.abi.wide && (t == Timeout::Timespec2 || t == Timeout::Timespec4));
      const uint64_t va = (t == Timeout::Timespec2 || t == Timeout::Timespec2_64) ? c.a[2] : c.a[4];
      if (va == 0) return true;
      if (!c.user.read(va, raw, timespec_size(time64))) return false;
      const timespec ts = decode_timespec(raw, time64);
      ms = int64_t(ts.tv_sec) * 1000 + (ts.tv_nsec + 999999) / 1000000;
      return true;
    }
  }
}

// wait4's pid as waitid's idtype and id, its options as waitid's (WEXITED is implied).
ChildWait wait4_children(const SyscallContext& c) {
  const int32_t pid = static_cast<int32_t>(c.a[0]);
  const int opts = static_cast<int>(c.a[2]);
  ChildWait w;
  w.on = true;
  w.options = WEXITED | (opts & (WUNTRACED | WCONTINUED | __WALL | __WCLONE | __WNOTHREAD));
  if (pid < -1) {
    w.idtype = P_PGID;
    w.id = static_cast<unsigned>(-pid);
  } else if (pid == -1) {
    w.idtype = P_ALL;
  } else if (pid == 0) {
    w.idtype = P_PGID;
    w.id = static_cast<unsigned>(getpgrp());
  } else {
    w.idtype = P_PID;
    w.id = static_cast<unsigned>(pid);
  }
  return w;
}

// A ready send is made so that it cannot block the process: MSG_DONTWAIT (its -EAGAIN:
// wait again). A write of at most PIPE_BUF bytes to a pipe fits the free page that POLLOUT
// promises, whole (atomic); a longer one is made in pieces (pipe_write_step). A write or
// writev to a socket is made as it is.
void cannot_block(SyscallContext& c, const WaitingCall& w, bool& again_on_eagain) {
  if (w.on == WaitOn::SendFd) {
    c.a[w.flags_arg] |= MSG_DONTWAIT;
    again_on_eagain = true;
  }
}

}  // namespace

ConnectStep host_connect(SyscallContext& c, bool in_progress, std::vector<pollfd>& fds,
                         int64_t& r) {
  const int fd = static_cast<int>(c.a[0]);
  if (in_progress) {
    int err = 0;
    socklen_t len = sizeof err;
    r = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ? -errno : -err;
    return ConnectStep::Done;
  }
  const int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || (fl & O_NONBLOCK)) return ConnectStep::Blocking;
  // The flag is the open file description's: set only for the call.
  fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  r = sys_connect(c);
  fcntl(fd, F_SETFL, fl);
  if (r == -EINPROGRESS) {
    fds.assign(1, pollfd{fd, POLLOUT, 0});
    return ConnectStep::Writable;
  }
  return r == -EAGAIN ? ConnectStep::Retry : ConnectStep::Done;
}

bool long_pipe_write(SyscallContext& c, SyscallHandler fn) {
  if (fn != sys_write || c.a[2] <= PIPE_BUF) return false;
  const int fd = static_cast<int>(c.a[0]);
  struct stat st;
  const int fl = fcntl(fd, F_GETFL);
  return fl >= 0 && !(fl & O_NONBLOCK) && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

bool pipe_write_step(SyscallContext& c, uint64_t& done, std::vector<pollfd>& fds, int64_t& r) {
  const int fd = static_cast<int>(c.a[0]);
  const uint64_t total = c.a[2];
  const int fl = fcntl(fd, F_GETFL);
  // The flag is the open file description's: set only for the piece (as connect's).
  if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  c.a[1] += done;
  c.a[2] = total - done;
  const int64_t n = sys_write(c);
  if (fl >= 0) fcntl(fd, F_SETFL, fl);
  if (n > 0) done += static_cast<uint64_t>(n);
  if (done < total && (n > 0 || n == -EAGAIN)) {
    fds.assign(1, pollfd{fd, POLLOUT, 0});
    return false;
  }
  // All of it, or an error: what was written counts (Linux returns it before the error).
  r = done > 0 ? static_cast<int64_t>(done) : n;
  done = 0;
  return true;
}

bool child_ready(const ChildWait& w) {
  siginfo_t si;
  std::memset(&si, 0, sizeof si);
  // WNOWAIT: the state change stays for the call itself; an error (ECHILD) is its answer.
  const int r = waitid(static_cast<idtype_t>(w.idtype), w.id, &si, w.options | WNOHANG | WNOWAIT);
  return r != 0 || si.si_pid != 0;
}

bool host_wait_set(SyscallContext& c, SyscallHandler fn, std::vector<pollfd>& fds, ChildWait& child,
                   int64_t& ms, bool& again_on_eagain) {
  again_on_eagain = false;
  child.on = false;
  const WaitingCall* w = nullptr;
  for (const WaitingCall& k : kWaitingCalls) {
    if (k.fn == fn) w = &k;
  }
  if (w == nullptr) return false;
  if (!timeout_ms(c, w->timeout, ms) || ms == 0) return false;  // the call itself answers
  fds.clear();
  switch (w->on) {
    case WaitOn::RecvFd:
    case WaitOn::SendFd:
      if (static_cast<int>(c.a[w->flags_arg]) & MSG_DONTWAIT) return false;
      [[fallthrough]];
    case WaitOn::ReadFd:
    case WaitOn::WriteFd: {
      const int fd = static_cast<int>(c.a[0]);
      const int fl = fcntl(fd, F_GETFL);
      // A signalfd's read waits as rt_sigtimedwait does (syscall/signalfd.cpp).
      if (fl < 0 || (fl & O_NONBLOCK) || is_signalfd(c.p, fd)) return false;
      // An empty epoll set with timing on: the call sleeps on the virtual clock itself.
      if (w->timeout == Timeout::Ms3 && c.p.options().timing && epoll_set_empty(fd)) return false;
      const bool write = w->on == WaitOn::WriteFd || w->on == WaitOn::SendFd;
      fds.push_back(pollfd{fd, static_cast<short>(write ? POLLOUT : POLLIN), 0});
      if (write && poll(fds.data(), 1, 0) != 0) {
        cannot_block(c, *w, again_on_eagain);
        return false;
      }
      break;
    }
    case WaitOn::Wait4:
    case WaitOn::Waitid: {
      const int opts = static_cast<int>(c.a[w->on == WaitOn::Wait4 ? 2 : 3]);
      if (opts & WNOHANG) return false;
      if (w->on == WaitOn::Wait4) {
        child = wait4_children(c);
      } else {
        child = ChildWait{true, static_cast<int>(c.a[0]), static_cast<unsigned>(c.a[1]), opts};
      }
      if (child_ready(child)) {
        child.on = false;
        return false;
      }
      return true;
    }
    case WaitOn::PollFds: {
      const uint64_t n = c.a[1];
      if (n == 0 || n > 4096) return false;
      const uint8_t* p = c.user.ptr(c.a[0], n * sizeof(pollfd), false);
      if (p == nullptr) return false;
      fds.resize(n);
      std::memcpy(fds.data(), p, n * sizeof(pollfd));
      break;
    }
    case WaitOn::SelectFds: {
      const uint64_t nfds = c.a[0];
      if (nfds == 0 || nfds > 1024) return false;
      const short events[3] = {POLLIN, POLLOUT, POLLPRI};
      for (int set = 0; set < 3; ++set) {
        if (c.a[1 + set] == 0) continue;
        const uint8_t* bits = c.user.ptr(c.a[1 + set], (nfds + 7) / 8, false);
        if (bits == nullptr) return false;
        for (uint64_t fd = 0; fd < nfds; ++fd) {
          if (bits[fd / 8] & (1u << (fd % 8))) {
            fds.push_back(pollfd{static_cast<int>(fd), events[set], 0});
          }
        }
      }
      if (fds.empty()) return false;
      break;
    }
  }
  for (pollfd& f : fds) {
    // An emulator descriptor is POLLNVAL or EBADF at once (poll_wait.cpp): no wait.
    if (c.files.emulator_fd(f.fd)) return false;
    f.revents = 0;
  }
  sync_signalfds(c.p);
  sync_timerfds(c.p);
  // Ready already (or a descriptor the host cannot poll): the call runs now.
  if (poll(fds.data(), fds.size(), 0) != 0) return false;
  // pselect6, ppoll, epoll_pwait: the thread waits with the call's signal mask (the call
  // made again finds it in place and the old one saved: poll_wait.cpp), so a signal it
  // unblocks wakes the thread; one already pending ends the call at once.
  uint64_t mask = 0;
  const int m = wait_mask(c, fn, mask);
  if (m < 0) return false;
  if (m > 0) {
    SignalState& s = c.p.signals();
    if ((s.all_pending() & ~(mask & ~kUnblockable)) != 0) return false;
    if (!s.has_saved_mask) s.saved_mask = s.blocked;
    s.has_saved_mask = true;
    s.blocked = mask & ~kUnblockable;
  }
  return true;
}

}  // namespace padlock::emu
