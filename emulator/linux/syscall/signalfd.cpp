// signalfd and signalfd4 (docs/emulator.md, "Sockets"): an emulated
// descriptor. Its number is a host eventfd's, which the emulator keeps readable exactly
// while a signal of the descriptor's mask is pending (sync_signalfds), so that poll,
// select and epoll see it as Linux's; read takes those pending signals, lowest first, as
// struct signalfd_siginfo (128 bytes, the same layout in both ABIs).
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstring>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

constexpr size_t kSiginfoSize = 128;  // struct signalfd_siginfo
constexpr uint64_t kSigsetBytes = 8;
// SFD_CLOEXEC and SFD_NONBLOCK are O_CLOEXEC and O_NONBLOCK, as EFD_* are.
constexpr int kSfdFlags = O_CLOEXEC | O_NONBLOCK;

template <typename T>
void put(uint8_t* out, size_t at, T v) {
  std::memcpy(out + at, &v, sizeof v);
}

// struct signalfd_siginfo (<sys/signalfd.h>): the fields a GuestSiginfo holds.
void encode_signalfd_siginfo(uint8_t* out, const GuestSiginfo& si) {
  std::memset(out, 0, kSiginfoSize);
  put<uint32_t>(out, 0, static_cast<uint32_t>(si.signo));    // ssi_signo
  put<int32_t>(out, 4, si.err);                              // ssi_errno
  put<int32_t>(out, 8, si.code);                             // ssi_code
  put<uint32_t>(out, 12, static_cast<uint32_t>(si.pid));     // ssi_pid
  put<uint32_t>(out, 16, static_cast<uint32_t>(si.uid));     // ssi_uid
  put<uint32_t>(out, 36, static_cast<uint32_t>(si.trapno));  // ssi_trapno
  put<uint64_t>(out, 72, si.addr);                           // ssi_addr
}

int64_t signalfd_common(SyscallContext& c, int flags) {
  if (flags & ~kSfdFlags) return -EINVAL;
  if (c.a[2] != kSigsetBytes) return -EINVAL;
  uint64_t mask = 0;
  if (!c.user.get(c.a[1], mask)) return -EFAULT;
  mask &= ~kUnblockable;
  auto& fds = c.files.signalfd_mask;
  const int fd = static_cast<int32_t>(c.a[0]);
  int64_t r = fd;
  if (fd == -1) {
    // SFD_NONBLOCK on the eventfd too, so that F_GETFL/F_SETFL keep it (the emulator's
    // own reads and writes of it never block: sync_one).
    r = host_result(eventfd(0, flags));
    if (r < 0) return r;
  } else if (fds.find(fd) == fds.end()) {
    return fcntl(fd, F_GETFD) < 0 ? -EBADF : -EINVAL;
  }
  auto& shared = fds[static_cast<int>(r)];
  if (!shared) shared = std::make_shared<uint64_t>();
  *shared = mask;
  sync_signalfds(c.p);
  return r;
}

}  // namespace

void set_eventfd_readable(int fd, bool readable) {
  uint64_t v = 0;
  pollfd p{fd, POLLIN, 0};
  const bool is = poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
  if (readable == is) return;
  if (readable) {
    v = 1;
    (void)!write(fd, &v, sizeof v);
  } else {
    (void)!read(fd, &v, sizeof v);  // the count back to 0 (the eventfd is non-blocking)
  }
}

void sync_signalfds(Process& p, uint64_t own) {
  const uint64_t pending = p.signals().shared | own;
  // Readable while a signal of the mask is pending: the eventfd's count is 1 or 0.
  for (const auto& [fd, mask] : p.files().signalfd_mask) {
    set_eventfd_readable(fd, (pending & *mask) != 0);
  }
}

void sync_signalfds(Process& p) {
  sync_signalfds(p, p.signals().pending);
}

bool is_signalfd(Process& p, int fd) {
  return p.files().signalfd_mask.count(fd) != 0;
}

int64_t signalfd_read(SyscallContext& c) {
  const int fd = static_cast<int32_t>(c.a[0]);
  const uint64_t mask = *c.files.signalfd_mask.at(fd);
  const uint64_t count = c.a[2] / kSiginfoSize;
  if (count == 0) return -EINVAL;
  SignalState& s = c.p.signals();
  auto take = [&]() -> int64_t {
    uint64_t n = 0;
    for (int sig; n < count && (sig = s.lowest_pending(mask)) != 0; ++n) {
      uint8_t out[kSiginfoSize];
      encode_signalfd_siginfo(out, s.info[sig]);
      if (!c.user.write(c.a[1] + n * kSiginfoSize, out, kSiginfoSize)) {
        return n > 0 ? static_cast<int64_t>(n * kSiginfoSize) : -EFAULT;
      }
      s.take(sig);
    }
    return static_cast<int64_t>(n * kSiginfoSize);
  };
  int64_t r = take();
  if (r == 0) {
    const int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK)) {
      r = -EAGAIN;
    } else if (c.sched.live() > 1) {
      // Waits in the scheduler as rt_sigtimedwait does; the read is made again once a
      // signal of the mask woke the thread.
      c.sched.sigwait_block(mask, VirtualTime::kNever);
      c.blocks = true;
      r = 0;
    } else {
      r = sigwait_alone(c, mask, VirtualTime::kNever);
      if (r == 0) r = take();
    }
  }
  sync_signalfds(c.p);
  return r;
}

int64_t sys_signalfd(SyscallContext& c) {
  return signalfd_common(c, 0);
}

int64_t sys_signalfd4(SyscallContext& c) {
  return signalfd_common(c, static_cast<int>(c.a[3]));
}

}  // namespace padlock::emu
