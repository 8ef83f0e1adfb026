// Sockets, passed through to the host: AF_UNIX, AF_INET and AF_INET6 (any family the host
// has), stream and datagram. Socket addresses, option values and the select bitmaps have
// the same bytes in both ABIs and are used in place in guest memory; what differs is
// converted: struct msghdr and its iovecs, control messages (SCM_RIGHTS descriptors are
// host descriptors, which guest descriptors are), and struct timeval in SO_RCVTIMEO and
// SO_SNDTIMEO. i386 reaches them through socketcall as well as its direct system calls.
// A call that blocks (accept, connect, recv ...) blocks in real time; a signal for the
// guest interrupts it (-EINTR, restarted under SA_RESTART).
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>

#include <climits>
#include <cstring>
#include <vector>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

int fd_of(uint64_t v) {
  return static_cast<int32_t>(v);
}

int64_t blocking(SyscallContext& c, int64_t r) {
  if (r == -EINTR) c.interrupted = true;
  return r;
}

// A guest buffer of `len` bytes as a host pointer (nullptr for a null guest pointer);
// false: not accessible.
bool buffer(SyscallContext& c, uint64_t va, uint64_t len, bool write, void*& out) {
  out = nullptr;
  if (va == 0) return true;
  if (len > 0 && write) c.p.mem().will_write(va, len);
  uint8_t* p = c.user.ptr(va, len == 0 ? 1 : len, write);
  if (p == nullptr && len > 0) return false;
  out = p != nullptr ? p : c.p.mem().host(va);
  return true;
}

// A socket address argument (va, len) and an in/out length pointer (socklen_t, 32 bits in
// both ABIs).
bool address_in(SyscallContext& c, uint64_t va, uint64_t len, sockaddr*& out) {
  void* p = nullptr;
  if (!buffer(c, va, len, false, p)) return false;
  out = static_cast<sockaddr*>(p);
  return true;
}

struct AddressOut {
  sockaddr* addr = nullptr;
  socklen_t len = 0;
  uint64_t len_va = 0;
};

bool address_out(SyscallContext& c, uint64_t va, uint64_t len_va, AddressOut& out) {
  out.len_va = len_va;
  if (va == 0 || len_va == 0) return true;
  uint32_t n = 0;
  if (!c.user.get(len_va, n)) return false;
  void* p = nullptr;
  if (!buffer(c, va, n, true, p)) return false;
  out.addr = static_cast<sockaddr*>(p);
  out.len = n;
  return true;
}

bool address_done(SyscallContext& c, const AddressOut& a) {
  return a.addr == nullptr || c.user.put(a.len_va, static_cast<uint32_t>(a.len));
}

// --- msghdr ----------------------------------------------------------------------------------

// Guest struct msghdr: name, namelen, iov, iovlen, control, controllen, flags.
struct GuestMsghdr {
  uint64_t name, iov, iovlen, control, controllen;
  uint32_t namelen;
  int32_t flags;
};

size_t msghdr_size(bool wide) {
  return wide ? 56 : 28;
}

bool read_msghdr(SyscallContext& c, uint64_t va, GuestMsghdr& m) {
  uint8_t raw[56];
  const bool w = c.abi.wide;
  if (!c.user.read(va, raw, msghdr_size(w))) return false;
  const size_t word = w ? 8 : 4;
  m.name = get_ulong(raw, 0, w);
  m.namelen = get_field<uint32_t>(raw, word);
  m.iov = get_ulong(raw, 2 * word, w);
  m.iovlen = get_ulong(raw, 3 * word, w);
  m.control = get_ulong(raw, 4 * word, w);
  m.controllen = get_ulong(raw, 5 * word, w);
  m.flags = get_field<int32_t>(raw, 6 * word);
  return true;
}

// sendmsg and recvmsg: the guest's msghdr at `va` and its iovec as host buffers (`write`:
// the host writes them). 0, -EFAULT, -EMSGSIZE beyond IOV_MAX, or gather_iov's error.
int64_t guest_msg_iov(SyscallContext& c, uint64_t va, bool write, GuestMsghdr& m,
                      std::vector<iovec>& iov) {
  if (!read_msghdr(c, va, m)) return -EFAULT;
  if (m.iovlen > IOV_MAX) return -EMSGSIZE;
  const int64_t r = gather_iov(c, m.iov, m.iovlen, write, iov);
  return r < 0 ? r : 0;
}

// Control messages: the guest's cmsghdr has a "long" length and its data aligned to a
// "long" (12-byte header on i386, 16 on x86-64).
size_t cmsg_align(size_t n, bool wide) {
  const size_t a = wide ? 8 : 4;
  return (n + a - 1) & ~(a - 1);
}
size_t cmsg_header(bool wide) {
  return wide ? 16 : 12;
}

// Guest control messages to host ones: 0, -EINVAL on a malformed one, -EBADF when
// SCM_RIGHTS would pass one of the emulator's descriptors.
int control_in(Process& p, const uint8_t* g, size_t len, bool wide, std::vector<uint8_t>& host) {
  size_t at = 0;
  while (at + cmsg_header(wide) <= len) {
    const uint64_t clen = get_ulong(g, at, wide);
    if (clen < cmsg_header(wide) || at + clen > len) return -EINVAL;
    const int level = get_field<int32_t>(g, at + (wide ? 8 : 4));
    const int type = get_field<int32_t>(g, at + (wide ? 12 : 8));
    const size_t data = clen - cmsg_header(wide);
    if (level == SOL_SOCKET && type == SCM_RIGHTS) {
      for (size_t i = 0; i + 4 <= data; i += 4) {
        if (p.files().emulator_fd(get_field<int32_t>(g, at + cmsg_header(wide) + i))) return -EBADF;
      }
    }
    const size_t off = host.size();
    host.resize(off + CMSG_SPACE(data));
    cmsghdr* h = reinterpret_cast<cmsghdr*>(host.data() + off);
    h->cmsg_len = CMSG_LEN(data);
    h->cmsg_level = level;
    h->cmsg_type = type;
    std::memcpy(CMSG_DATA(h), g + at + cmsg_header(wide), data);
    at += cmsg_align(clen, wide);
  }
  return 0;
}

// Host control messages to the guest's layout in `g` (capacity `cap`); returns the length
// used and sets MSG_CTRUNC in `flags` when they did not fit.
size_t control_out(msghdr& hm, uint8_t* g, size_t cap, bool wide, int& flags) {
  size_t at = 0;
  for (cmsghdr* h = CMSG_FIRSTHDR(&hm); h != nullptr; h = CMSG_NXTHDR(&hm, h)) {
    const size_t data = h->cmsg_len - CMSG_LEN(0);
    const size_t clen = cmsg_header(wide) + data;
    if (at + clen > cap) {
      flags |= MSG_CTRUNC;
      break;
    }
    put_long(g, at, wide, static_cast<int64_t>(clen));
    put_field<int32_t>(g, at + (wide ? 8 : 4), h->cmsg_level);
    put_field<int32_t>(g, at + (wide ? 12 : 8), h->cmsg_type);
    std::memcpy(g + at + cmsg_header(wide), CMSG_DATA(h), data);
    at += std::min(cmsg_align(clen, wide), cap - at);
  }
  return at;
}

}  // namespace

namespace {

// --sandbox: the address the host gets for the guest's `*a` (bind: `binds`), checked as
// paths are (Sandbox::socket_address); `*a` and `*len` are replaced when it names a file.
// 0 or -errno.
int sandboxed(SyscallContext& c, sockaddr*& a, socklen_t& len, bool binds, SandboxedAddress& s) {
  if (!c.files.sandbox().active() || a == nullptr) return 0;
  const int r = c.files.sandbox().socket_address(a, len, binds, s);
  if (r <= 0) return r;
  a = reinterpret_cast<sockaddr*>(&s.un);
  len = s.len;
  return 0;
}

// The address a call hands the host for the guest's (va, len) (bind, connect, sendto,
// sendmsg): the guest's bytes, or the sandbox's rewriting of them (sandboxed()), which
// `rewritten` holds while the call runs.
struct HostAddress {
  sockaddr* addr = nullptr;
  socklen_t len = 0;
  SandboxedAddress rewritten;
};

// 0, -EFAULT, or the sandbox's refusal.
int host_address(SyscallContext& c, uint64_t va, uint64_t len, bool binds, HostAddress& h) {
  if (!address_in(c, va, len, h.addr)) return -EFAULT;
  h.len = static_cast<socklen_t>(len);
  return sandboxed(c, h.addr, h.len, binds, h.rewritten);
}

}  // namespace

int64_t sys_socket(SyscallContext& c) {
  // --sandbox without --net: no socket reaches the network or a host socket file (EACCES,
  // as a security module refuses socket()). socketpair stays: its addresses are checked
  // (bind, connect, sendto, sendmsg: Sandbox::socket_address).
  if (c.files.sandbox().active() && !c.files.sandbox().net()) return -EACCES;
  return host_result(
      socket(static_cast<int>(c.a[0]), static_cast<int>(c.a[1]), static_cast<int>(c.a[2])));
}

int64_t sys_socketpair(SyscallContext& c) {
  int fds[2];
  const int64_t r = host_result(socketpair(static_cast<int>(c.a[0]), static_cast<int>(c.a[1]),
                                           static_cast<int>(c.a[2]), fds));
  if (r < 0) return r;
  const int32_t out[2] = {fds[0], fds[1]};
  if (!c.user.write(c.a[3], out, sizeof out)) {
    close(fds[0]);
    close(fds[1]);
    return -EFAULT;
  }
  return 0;
}

int64_t sys_bind(SyscallContext& c) {
  HostAddress a;
  if (const int r = host_address(c, c.a[1], c.a[2], true, a); r < 0) return r;
  return host_result(bind(fd_of(c.a[0]), a.addr, a.len));
}

int64_t sys_connect(SyscallContext& c) {
  HostAddress a;
  if (const int r = host_address(c, c.a[1], c.a[2], false, a); r < 0) return r;
  return blocking(c, host_result(connect(fd_of(c.a[0]), a.addr, a.len)));
}

int64_t sys_listen(SyscallContext& c) {
  return host_result(listen(fd_of(c.a[0]), static_cast<int>(c.a[1])));
}

int64_t sys_accept4(SyscallContext& c) {
  AddressOut a;
  if (!address_out(c, c.a[1], c.a[2], a)) return -EFAULT;
  const int64_t r =
      blocking(c, host_result(accept4(fd_of(c.a[0]), a.addr, a.addr ? &a.len : nullptr,
                                      static_cast<int>(c.a[3]))));
  if (r >= 0 && !address_done(c, a)) return -EFAULT;
  return r;
}

int64_t sys_accept(SyscallContext& c) {
  c.a[3] = 0;
  return sys_accept4(c);
}

namespace {
template <typename F>
int64_t name_call(SyscallContext& c, F f) {
  AddressOut a;
  if (!address_out(c, c.a[1], c.a[2], a) || a.addr == nullptr) return -EFAULT;
  const int64_t r = host_result(f(fd_of(c.a[0]), a.addr, &a.len));
  if (r >= 0 && !address_done(c, a)) return -EFAULT;
  return r;
}
}  // namespace

int64_t sys_getsockname(SyscallContext& c) {
  return name_call(c, getsockname);
}

int64_t sys_getpeername(SyscallContext& c) {
  return name_call(c, getpeername);
}

int64_t sys_sendto(SyscallContext& c) {
  void* buf = nullptr;
  if (!buffer(c, c.a[1], c.a[2], false, buf)) return -EFAULT;
  HostAddress a;
  if (const int r = host_address(c, c.a[4], c.a[5], false, a); r < 0) return r;
  const int64_t r =
      host_result(sendto(fd_of(c.a[0]), buf, c.a[2], static_cast<int>(c.a[3]), a.addr, a.len));
  return blocking(c, r);
}

int64_t sys_recvfrom(SyscallContext& c) {
  void* buf = nullptr;
  AddressOut a;
  if (!buffer(c, c.a[1], c.a[2], true, buf) || !address_out(c, c.a[4], c.a[5], a)) return -EFAULT;
  const int64_t r = host_result(recvfrom(fd_of(c.a[0]), buf, c.a[2], static_cast<int>(c.a[3]),
                                         a.addr, a.addr ? &a.len : nullptr));
  if (r >= 0 && !address_done(c, a)) return -EFAULT;
  return blocking(c, r);
}

int64_t sys_sendmsg(SyscallContext& c) {
  GuestMsghdr m;
  std::vector<iovec> iov;
  if (const int64_t r = guest_msg_iov(c, c.a[1], false, m, iov); r < 0) return r;
  msghdr hm{};
  HostAddress a;
  if (const int r = host_address(c, m.name, m.namelen, false, a); r < 0) return r;
  hm.msg_name = a.addr;
  hm.msg_namelen = a.len;
  hm.msg_iov = iov.data();
  hm.msg_iovlen = iov.size();
  std::vector<uint8_t> control;
  if (m.control != 0 && m.controllen > 0) {
    void* g = nullptr;
    if (!buffer(c, m.control, m.controllen, false, g)) return -EFAULT;
    if (const int r = control_in(c.p, static_cast<uint8_t*>(g), m.controllen, c.abi.wide, control);
        r < 0) {
      return r;
    }
    hm.msg_control = control.data();
    hm.msg_controllen = control.size();
  }
  return blocking(c, host_result(sendmsg(fd_of(c.a[0]), &hm, static_cast<int>(c.a[2]))));
}

int64_t sys_recvmsg(SyscallContext& c) {
  GuestMsghdr m;
  std::vector<iovec> iov;
  if (const int64_t r = guest_msg_iov(c, c.a[1], true, m, iov); r < 0) return r;
  msghdr hm{};
  void* name = nullptr;
  if (!buffer(c, m.name, m.namelen, true, name)) return -EFAULT;
  hm.msg_name = name;
  hm.msg_namelen = name != nullptr ? m.namelen : 0;
  hm.msg_iov = iov.data();
  hm.msg_iovlen = iov.size();
  // Room for the host's larger headers: each guest message fits in twice its space.
  std::vector<uint8_t> control(m.control != 0 ? 2 * m.controllen + 64 : 0);
  hm.msg_control = control.empty() ? nullptr : control.data();
  hm.msg_controllen = control.size();
  const int64_t r = blocking(c, host_result(recvmsg(fd_of(c.a[0]), &hm, static_cast<int>(c.a[2]))));
  if (r < 0) return r;
  int flags = hm.msg_flags;
  uint64_t used = 0;
  if (!control.empty()) {
    void* g = nullptr;
    if (!buffer(c, m.control, m.controllen, true, g)) return -EFAULT;
    used = control_out(hm, static_cast<uint8_t*>(g), m.controllen, c.abi.wide, flags);
  }
  // Write back namelen, controllen and flags.
  const bool w = c.abi.wide;
  const size_t word = w ? 8 : 4;
  uint8_t raw[56];
  if (!c.user.read(c.a[1], raw, msghdr_size(w))) return -EFAULT;
  put_field<uint32_t>(raw, word, name != nullptr ? hm.msg_namelen : 0);
  if (w)
    put_field<uint64_t>(raw, 5 * word, used);
  else
    put_field<uint32_t>(raw, 5 * word, static_cast<uint32_t>(used));
  put_field<int32_t>(raw, 6 * word, flags);
  return c.user.write(c.a[1], raw, msghdr_size(w)) ? r : -EFAULT;
}

int64_t sys_shutdown(SyscallContext& c) {
  return host_result(shutdown(fd_of(c.a[0]), static_cast<int>(c.a[1])));
}

namespace {
// SO_RCVTIMEO and SO_SNDTIMEO hold a struct timeval ("long" fields).
bool is_timeval_option(uint64_t level, uint64_t name) {
  return level == SOL_SOCKET && (name == SO_RCVTIMEO || name == SO_SNDTIMEO);
}
}  // namespace

int64_t sys_setsockopt(SyscallContext& c) {
  const int fd = fd_of(c.a[0]), level = static_cast<int>(c.a[1]), name = static_cast<int>(c.a[2]);
  if (is_timeval_option(c.a[1], c.a[2]) && !c.abi.wide) {
    uint8_t raw[8];
    if (c.a[4] < sizeof raw) return -EINVAL;
    if (!c.user.read(c.a[3], raw, sizeof raw)) return -EFAULT;
    const timeval tv{get_field<int32_t>(raw, 0), get_field<int32_t>(raw, 4)};
    return host_result(setsockopt(fd, level, name, &tv, sizeof tv));
  }
  void* v = nullptr;
  if (!buffer(c, c.a[3], c.a[4], false, v)) return -EFAULT;
  return host_result(setsockopt(fd, level, name, v, static_cast<socklen_t>(c.a[4])));
}

int64_t sys_getsockopt(SyscallContext& c) {
  const int fd = fd_of(c.a[0]), level = static_cast<int>(c.a[1]), name = static_cast<int>(c.a[2]);
  uint32_t len = 0;
  if (!c.user.get(c.a[4], len)) return -EFAULT;
  if (is_timeval_option(c.a[1], c.a[2]) && !c.abi.wide) {
    timeval tv{};
    socklen_t hl = sizeof tv;
    if (const int64_t r = host_result(getsockopt(fd, level, name, &tv, &hl)); r < 0) return r;
    uint8_t raw[8];
    encode_timeval(raw, false, tv);
    const uint32_t n = std::min<uint32_t>(len, sizeof raw);
    if (!c.user.write(c.a[3], raw, n) || !c.user.put(c.a[4], n)) return -EFAULT;
    return 0;
  }
  void* v = nullptr;
  if (!buffer(c, c.a[3], len, true, v)) return -EFAULT;
  socklen_t hl = len;
  const int64_t r = host_result(getsockopt(fd, level, name, v, &hl));
  if (r < 0) return r;
  return c.user.put(c.a[4], static_cast<uint32_t>(hl)) ? 0 : -EFAULT;
}

namespace {

// struct mmsghdr: a struct msghdr (56 bytes on x86-64, 28 on i386) and the unsigned
// msg_len the call writes, padded to the msghdr's alignment.
uint64_t mmsghdr_size(bool wide) {
  return wide ? 64 : 32;
}

// sendmmsg and recvmmsg: sendmsg or recvmsg for each entry of the vector (at most
// UIO_MAXIOV), each entry's msg_len written; an error ends the batch, and is the result
// only when no entry was done (Linux). `more` says whether to go on after `done` entries.
template <typename More>
int64_t each_msg(SyscallContext& c, SyscallHandler one, int flags, More more) {
  constexpr uint64_t kUioMaxiov = 1024;
  const uint64_t n = std::min<uint64_t>(c.a[2], kUioMaxiov);
  const uint64_t size = mmsghdr_size(c.abi.wide);
  uint64_t done = 0;
  for (; done < n && (done == 0 || more(done)); ++done) {
    SyscallContext one_c = c;
    one_c.a[1] = c.a[1] + done * size;
    one_c.a[2] = static_cast<uint64_t>(static_cast<uint32_t>(flags));
    const int64_t r = one(one_c);
    if (r < 0) {
      if (done > 0) break;
      c.interrupted = one_c.interrupted;
      return r;
    }
    if (!c.user.put(one_c.a[1] + size - (c.abi.wide ? 8 : 4), static_cast<uint32_t>(r))) {
      return done > 0 ? static_cast<int64_t>(done) : -EFAULT;
    }
  }
  return static_cast<int64_t>(done);
}

// recvmmsg(fd, msgvec, vlen, flags, timeout): MSG_WAITFORONE makes every receive after
// the first non-blocking. The timeout is looked at after each message, as Linux does, on
// the guest's CLOCK_MONOTONIC. With other threads a receive after the first does not wait
// (a second message from another guest thread could never come while the process blocks).
int64_t recvmmsg_common(SyscallContext& c, bool time64) {
  constexpr int kMsgWaitforone = 0x10000;
  int flags = static_cast<int>(c.a[3]);
  const bool wait_for_one = (flags & kMsgWaitforone) != 0;
  flags &= ~kMsgWaitforone;
  int64_t end_ns = -1;
  if (c.a[4] != 0) {
    uint8_t raw[16];
    if (!c.user.read(c.a[4], raw, timespec_size(time64))) return -EFAULT;
    const timespec ts = decode_timespec(raw, time64);
    if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000) return -EINVAL;
    int64_t now = 0;
    c.p.vtime().clock_ns(CLOCK_MONOTONIC, now);
    end_ns = now + int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
  }
  const bool dontwait_after_first = wait_for_one || c.sched.live() > 1;
  int first_flags = flags;
  const uint64_t size = mmsghdr_size(c.abi.wide);
  // The first receive with the call's flags; the others as `more` allows.
  SyscallContext first = c;
  first.a[2] = 1;
  first.a[3] = static_cast<uint64_t>(static_cast<uint32_t>(first_flags));
  const int64_t r = each_msg(first, sys_recvmsg, first_flags, [](uint64_t) { return false; });
  c.interrupted = first.interrupted;
  if (r <= 0 || c.a[2] <= 1) return r;
  auto in_time = [&](uint64_t) {
    if (end_ns < 0) return true;
    int64_t now = 0;
    c.p.vtime().clock_ns(CLOCK_MONOTONIC, now);
    return now < end_ns;
  };
  if (!in_time(0)) return r;
  SyscallContext rest = c;
  rest.a[1] = c.a[1] + size;
  rest.a[2] = c.a[2] - 1;
  const int more_flags = flags | (dontwait_after_first ? MSG_DONTWAIT : 0);
  const int64_t m = each_msg(rest, sys_recvmsg, more_flags, in_time);
  return m > 0 ? r + m : r;
}

}  // namespace

int64_t sys_sendmmsg(SyscallContext& c) {
  return each_msg(c, sys_sendmsg, static_cast<int>(c.a[3]), [](uint64_t) { return true; });
}

int64_t sys_recvmmsg(SyscallContext& c) {
  return recvmmsg_common(c, c.abi.wide);
}

int64_t sys_recvmmsg_time64(SyscallContext& c) {
  return recvmmsg_common(c, true);
}

// i386 socketcall(call, args): the arguments are 32-bit words in guest memory.
int64_t socketcall_unpack(SyscallContext& c, SyscallHandler& fn) {
  struct Call {
    SyscallHandler fn;
    uint8_t nargs;
  };
  static const Call kCalls[] = {
      {nullptr, 0},        {sys_socket, 3},   {sys_bind, 3},        {sys_connect, 3},
      {sys_listen, 2},     {sys_accept, 3},   {sys_getsockname, 3}, {sys_getpeername, 3},
      {sys_socketpair, 4}, {sys_sendto, 4},   {sys_recvfrom, 4},    {sys_sendto, 6},
      {sys_recvfrom, 6},   {sys_shutdown, 2}, {sys_setsockopt, 5},  {sys_getsockopt, 5},
      {sys_sendmsg, 3},    {sys_recvmsg, 3},  {sys_accept4, 4},     {sys_recvmmsg, 5},
      {sys_sendmmsg, 4},
  };
  const uint64_t call = c.a[0];
  if (call == 0 || call >= sizeof kCalls / sizeof kCalls[0]) return -EINVAL;
  uint32_t words[6] = {};
  if (!c.user.read(c.a[1], words, 4 * kCalls[call].nargs)) return -EFAULT;
  // Every call but socket and socketpair takes a descriptor first: never the emulator's.
  if (kCalls[call].fn != sys_socket && kCalls[call].fn != sys_socketpair &&
      c.files.emulator_fd(static_cast<int32_t>(words[0]))) {
    return -EBADF;
  }
  for (int i = 0; i < 6; ++i) c.a[i] = words[i];  // send/recv: no address (zeros)
  fn = kCalls[call].fn;
  return 0;
}

int64_t sys_socketcall(SyscallContext& c) {
  SyscallHandler fn = nullptr;
  const int64_t r = socketcall_unpack(c, fn);
  return r < 0 ? r : fn(c);
}

}  // namespace padlock::emu
