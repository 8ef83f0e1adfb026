// File and descriptor system calls. Guest descriptors are host descriptors; the emulator's
// own are refused before any handler runs (Process::dispatch_syscall). Guest paths that are
// looked up (open, access, readlink, stat, chdir, chmod) go through -L/--sysroot
// (GuestPaths) and are then identified by what the host resolves them to (proc_lookup.hpp):
// /proc/self/exe names the guest program, /proc/self/mem serves the guest's memory,
// /proc/self/fd/ lists the guest's descriptors only, under every spelling of those paths;
// paths that create or remove are the host's. With --sandbox every path is opened beneath
// the sandbox's roots (sandbox.hpp).
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/guest_proc.hpp"
#include "emulator/linux/proc_lookup.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

int fd_arg(uint64_t v) {
  return static_cast<int32_t>(v);
}

// Reads a path argument; 0 or -errno.
int path_arg(SyscallContext& c, uint64_t va, std::string& out) {
  if (!c.user.read_cstring(va, out, PATH_MAX)) {
    return out.size() >= PATH_MAX ? -ENAMETOOLONG : -EFAULT;
  }
  return 0;
}

// A host descriptor closed on scope exit.
struct ScopedFd {
  int fd = -1;
  ~ScopedFd() {
    if (fd >= 0) close(fd);
  }
};

bool hidden_fd(Process& p, int fd) {
  return p.files().emulator_fd(fd);
}

// The name /proc/self/fd/N gives a served file: /proc/<pid>/X, as Linux shows it.
std::string proc_name(Process& p, const ProcPath& pp) {
  switch (pp.entry) {
    case ProcEntry::kCpuinfo:
      return "/proc/cpuinfo";
    case ProcEntry::kCpuList:
      return "/sys/devices/system/cpu/" + pp.name;
    default:
      return "/proc/" + std::to_string(p.identity().pid) + "/" + pp.name;
  }
}

// The emulator's descriptors out of a dirent64 batch read from /proc/self/fd/: the
// records that stay, moved together; the new length.
size_t drop_host_fds(Process& p, uint8_t* buf, size_t len) {
  size_t in = 0, out = 0;
  while (in + 19 <= len) {
    const uint16_t reclen = get_field<uint16_t>(buf, in + 16);
    if (reclen == 0) break;
    const char* name = reinterpret_cast<const char*>(buf + in + 19);
    const bool drop = name[0] >= '0' && name[0] <= '9' && hidden_fd(p, std::atoi(name));
    if (!drop) {
      if (out != in) std::memmove(buf + out, buf + in, reclen);
      out += reclen;
    }
    in += reclen;
  }
  return out;
}

// getdents64 on the host; for /proc/self/fd/ without the emulator's descriptors (a batch
// that held only those is followed by the next, so 0 still means the end).
long host_getdents64(SyscallContext& c, int fd, uint8_t* buf, uint64_t count) {
  for (;;) {
    const long n = syscall(SYS_getdents64, fd, buf, count);
    if (n <= 0 || c.files.fd_dirs.count(fd) == 0) return n < 0 ? -errno : n;
    const size_t kept = drop_host_fds(c.p, buf, static_cast<size_t>(n));
    if (kept > 0) return static_cast<long>(kept);
  }
}

// --sandbox: a host path opened O_PATH beneath the roots (follow: the last component's
// symbolic link too); the descriptor or -errno.
int sandbox_lookup(Process& p, int dirfd, const std::string& path, bool follow) {
  return p.files().sandbox().open(dirfd, path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
}

// --sandbox: "/proc/self/fd/N" of a descriptor, for host calls that take a path.
std::string fd_path(int fd) {
  return "/proc/self/fd/" + std::to_string(fd);
}

// The accessible prefix of a guest buffer: -EFAULT when none of a non-empty one is.
int64_t buffer_len(Process& p, uint64_t va, uint64_t len, bool write) {
  const uint8_t need = kPageMapped | (write ? kPageWrite : kPageRead);
  const uint64_t ok = p.mem().accessible_with(va, len, need);
  if (len > 0 && ok == 0) return -EFAULT;
  if (write) p.mem().will_write(va, ok);
  return static_cast<int64_t>(ok);
}

int64_t after_write(SyscallContext& c, int64_t r) {
  // With SIGPIPE ignored on the host, a broken pipe comes back as EPIPE; the guest
  // gets the signal a kernel would send.
  if (r == -EPIPE) {
    GuestSiginfo si;
    si.signo = SIGPIPE;
    si.code = kSiUser;
    si.pid = c.p.identity().pid;
    si.uid = static_cast<int>(getuid());
    c.sched.signal_thread(c.sched.tid(), si);  // to the running thread
  }
  if (r == -EINTR) c.interrupted = true;
  return r;
}

int64_t after_read(SyscallContext& c, int64_t r) {
  if (r == -EINTR) c.interrupted = true;
  return r;
}

// /proc/self/mem serves the guest's memory, never the emulator's: the offset is the guest
// address, a transfer stops at the first page the guest does not map (EIO if that is the
// first byte), as Linux's mem_rw does through access_remote_vm with FOLL_FORCE:
//   - only user pages: the emulator's GDT and boot stub above the user range are no
//     mapping of the guest's (Linux has nothing there, or nothing past TASK_SIZE);
//   - a read reaches any mapped page, PROT_NONE included (FOLL_FORCE with VM_MAYREAD);
//   - a write ignores the protections of a private mapping (FOLL_FORCE breaks copy-on-write)
//     but not of a shared one (check_vma_flags: no forced write to a shared mapping that
//     is not writable).
uint64_t* self_mem_pos(SyscallContext& c, uint64_t fd) {
  auto it = c.files.self_mem.find(fd_arg(fd));
  return it == c.files.self_mem.end() ? nullptr : &it->second;
}

// The guest bytes from `pos` that /proc/self/mem may move (at most `len`).
uint64_t self_mem_span(Process& p, uint64_t pos, uint64_t len, bool write) {
  const uint64_t top = p.vm().layout().system_page;
  if (pos >= top) return 0;
  len = std::min(len, top - pos);
  AddressSpace& m = p.mem();
  uint64_t n = m.accessible_with(pos, len, kPageMapped);
  if (!write) return n;
  // Stop at the first shared page that is not writable.
  constexpr uint64_t kPage = AddressSpace::kPageSize;
  for (uint64_t at = pos & ~(kPage - 1); at < pos + n; at += kPage) {
    const uint8_t f = m.flags(at);
    if ((f & kPageShared) && !(f & kPageWrite)) return at > pos ? at - pos : 0;
  }
  return n;
}

int64_t self_mem_io(SyscallContext& c, uint64_t pos, uint64_t buf, uint64_t len, bool write) {
  AddressSpace& m = c.p.mem();
  const int64_t n = buffer_len(c.p, buf, len, !write);
  if (n <= 0) return n;
  const uint64_t avail = self_mem_span(c.p, pos, static_cast<uint64_t>(n), write);
  if (avail == 0) return -EIO;
  if (write) m.will_write(pos, avail);
  m.copy(write ? pos : buf, write ? buf : pos, avail);
  return static_cast<int64_t>(avail);
}

// i386 guests: replace each dirent64 record's 64-bit d_off by a small cookie (see
// KernelState::dir_cookies).
void cookie_offsets(SyscallContext& c, int fd, uint8_t* buf, size_t len) {
  if (c.abi.wide) return;
  std::vector<int64_t>& table = c.files.dir_cookies[fd];
  size_t pos = 0;
  while (pos + 19 <= len) {
    const uint16_t reclen = get_field<uint16_t>(buf, pos + 16);
    if (reclen == 0) break;
    table.push_back(get_field<int64_t>(buf, pos + 8));
    put_field<int64_t>(buf, pos + 8, static_cast<int64_t>(table.size()));
    pos += reclen;
  }
}

}  // namespace

int64_t read_guest_iovecs(SyscallContext& c, uint64_t va, uint64_t count,
                          std::vector<GuestIovec>& out) {
  if (count > IOV_MAX) return -EINVAL;
  const bool wide = c.abi.wide;
  const size_t entry = wide ? 16 : 8;
  out.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint8_t raw[16];
    if (!c.user.read(va + i * entry, raw, entry)) return -EFAULT;
    out[i] = {get_ulong(raw, 0, wide), get_ulong(raw, wide ? 8 : 4, wide)};
    if (get_long(raw, wide ? 8 : 4, wide) < 0) return -EINVAL;
  }
  return 0;
}

int64_t gather_iov(SyscallContext& c, uint64_t va, uint64_t count, bool write,
                   std::vector<iovec>& out) {
  std::vector<GuestIovec> g;
  if (const int64_t r = read_guest_iovecs(c, va, count, g); r < 0) return r;
  out.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (g[i].len > 0 && c.user.ptr(g[i].base, g[i].len, write) == nullptr) return -EFAULT;
    out[i].iov_base = g[i].len > 0 ? c.p.mem().host(g[i].base) : nullptr;
    out[i].iov_len = g[i].len;
  }
  return 0;
}

int64_t sys_read(SyscallContext& c) {
  if (uint64_t* pos = self_mem_pos(c, c.a[0])) {
    const int64_t r = self_mem_io(c, *pos, c.a[1], c.a[2], false);
    if (r > 0) *pos += static_cast<uint64_t>(r);
    return r;
  }
  if (is_signalfd(c.p, fd_arg(c.a[0]))) return after_read(c, signalfd_read(c));
  if (is_virtual_timerfd(c.p, fd_arg(c.a[0]))) return after_read(c, timerfd_read(c));
  const int64_t n = buffer_len(c.p, c.a[1], c.a[2], true);
  if (n < 0) return n;
  return after_read(c, host_result(read(fd_arg(c.a[0]), c.p.mem().host(c.a[1]), n)));
}

int64_t sys_write(SyscallContext& c) {
  if (uint64_t* pos = self_mem_pos(c, c.a[0])) {
    const int64_t r = self_mem_io(c, *pos, c.a[1], c.a[2], true);
    if (r > 0) *pos += static_cast<uint64_t>(r);
    return r;
  }
  const int64_t n = buffer_len(c.p, c.a[1], c.a[2], false);
  if (n < 0) return n;
  return after_write(c, host_result(write(fd_arg(c.a[0]), c.p.mem().host(c.a[1]), n)));
}

int64_t sys_readv(SyscallContext& c) {
  std::vector<iovec> iov;
  if (const int64_t r = gather_iov(c, c.a[1], c.a[2], true, iov); r < 0) return r;
  return after_read(c,
                    host_result(readv(fd_arg(c.a[0]), iov.data(), static_cast<int>(iov.size()))));
}

int64_t sys_writev(SyscallContext& c) {
  std::vector<iovec> iov;
  if (const int64_t r = gather_iov(c, c.a[1], c.a[2], false, iov); r < 0) return r;
  return after_write(c,
                     host_result(writev(fd_arg(c.a[0]), iov.data(), static_cast<int>(iov.size()))));
}

int64_t sys_pread64(SyscallContext& c) {
  if (self_mem_pos(c, c.a[0]) != nullptr) return self_mem_io(c, c.a[3], c.a[1], c.a[2], false);
  const int64_t n = buffer_len(c.p, c.a[1], c.a[2], true);
  if (n < 0) return n;
  return after_read(
      c, host_result(pread(fd_arg(c.a[0]), c.p.mem().host(c.a[1]), n, static_cast<off_t>(c.a[3]))));
}

int64_t sys_pwrite64(SyscallContext& c) {
  if (self_mem_pos(c, c.a[0]) != nullptr) return self_mem_io(c, c.a[3], c.a[1], c.a[2], true);
  const int64_t n = buffer_len(c.p, c.a[1], c.a[2], false);
  if (n < 0) return n;
  return after_write(c, host_result(pwrite(fd_arg(c.a[0]), c.p.mem().host(c.a[1]), n,
                                           static_cast<off_t>(c.a[3]))));
}

int64_t sys_pread64_i386(SyscallContext& c) {
  c.a[3] = (c.a[3] & 0xFFFFFFFFu) | (c.a[4] << 32);
  return sys_pread64(c);
}

int64_t sys_pwrite64_i386(SyscallContext& c) {
  c.a[3] = (c.a[3] & 0xFFFFFFFFu) | (c.a[4] << 32);
  return sys_pwrite64(c);
}

int64_t sys_openat(SyscallContext& c) {
  std::string path;
  if (const int r = path_arg(c, c.a[1], path); r < 0) return r;
  const int dirfd = fd_arg(c.a[0]), flags = static_cast<int>(c.a[2]);
  const GuestLookup l = look_up(c.p, dirfd, path, !(flags & O_NOFOLLOW));
  if (l.refusal < 0) return l.refusal;
  GuestFiles& k = c.files;
  switch (l.proc.entry) {
    case ProcEntry::kMem: {
      const int fd = open("/dev/null", (flags & O_ACCMODE) | (flags & O_CLOEXEC));
      if (fd < 0) return -errno;
      k.self_mem[fd] = 0;
      k.fd_names[fd] = proc_name(c.p, l.proc);
      return fd;
    }
    case ProcEntry::kFdDir:
    case ProcEntry::kFd:
    case ProcEntry::kFdInfo: {
      // The host's directory, listed without the emulator's descriptors; fd/N reopens the
      // guest's descriptor N (the emulator's were refused by look_up).
      const std::string host = l.proc.entry == ProcEntry::kFdDir ? "/proc/self/" + l.proc.name
                               : l.proc.entry == ProcEntry::kFd
                                   ? fd_path(l.proc.fd)
                                   : "/proc/self/fdinfo/" + std::to_string(l.proc.fd);
      const int fd = open(host.c_str(), flags, static_cast<mode_t>(c.a[3]));
      if (fd < 0) return -errno;
      // The listing stays filtered when its descriptor is reopened too.
      if (l.proc.entry == ProcEntry::kFdDir ||
          (l.proc.entry == ProcEntry::kFd && k.fd_dirs.count(l.proc.fd) != 0)) {
        k.fd_dirs.insert(fd);
      }
      return fd;
    }
    case ProcEntry::kExe:
      if ((flags & O_NOFOLLOW) && !(flags & O_PATH)) return -ELOOP;  // a symbolic link
      break;
    default: {
      const int g = open_generated(c.p, l.proc.entry, flags);
      if (g >= 0) k.fd_names[g] = proc_name(c.p, l.proc);
      if (g != kNotGenerated) return g;
    }
  }
  if (c.files.sandbox().active()) {
    return after_read(c, c.files.sandbox().open(dirfd, l.host, flags, static_cast<mode_t>(c.a[3])));
  }
  return after_read(c,
                    host_result(openat(dirfd, l.host.c_str(), flags, static_cast<mode_t>(c.a[3]))));
}

int64_t sys_open(SyscallContext& c) {
  c.a[3] = c.a[2];
  c.a[2] = c.a[1];
  c.a[1] = c.a[0];
  c.a[0] = static_cast<uint64_t>(AT_FDCWD);
  return sys_openat(c);
}

int64_t sys_creat(SyscallContext& c) {
  c.a[2] = c.a[1];
  c.a[1] = O_CREAT | O_WRONLY | O_TRUNC;
  return sys_open(c);
}

int64_t sys_close(SyscallContext& c) {
  c.files.closed(fd_arg(c.a[0]));
  return host_result(close(fd_arg(c.a[0])));
}

namespace {
// lseek on an i386 guest's directory: map a cookie back to the host offset.
off_t dir_offset(SyscallContext& c, int fd, off_t off, int whence) {
  if (c.abi.wide || whence != SEEK_SET || off <= 0) return off;
  auto it = c.files.dir_cookies.find(fd);
  if (it == c.files.dir_cookies.end()) return off;
  const std::vector<int64_t>& table = it->second;
  if (static_cast<uint64_t>(off) > table.size()) return off;
  return static_cast<off_t>(table[static_cast<size_t>(off) - 1]);
}
}  // namespace

// lseek on /proc/self/mem: SEEK_SET and SEEK_CUR move the address (Linux mem_lseek).
static int64_t self_mem_seek(uint64_t& pos, int64_t off, int whence) {
  if (whence == SEEK_SET) {
    pos = static_cast<uint64_t>(off);
  } else if (whence == SEEK_CUR) {
    pos += static_cast<uint64_t>(off);
  } else {
    return -EINVAL;
  }
  return static_cast<int64_t>(pos);
}

int64_t sys_lseek(SyscallContext& c) {
  if (uint64_t* pos = self_mem_pos(c, c.a[0])) {
    const int64_t off = c.abi.wide ? static_cast<int64_t>(c.a[1]) : static_cast<uint32_t>(c.a[1]);
    return self_mem_seek(*pos, off, static_cast<int>(c.a[2]));
  }
  off_t off = c.abi.wide ? static_cast<off_t>(c.a[1]) : static_cast<int32_t>(c.a[1]);
  off = dir_offset(c, fd_arg(c.a[0]), off, static_cast<int>(c.a[2]));
  const int64_t r = host_result(lseek(fd_arg(c.a[0]), off, static_cast<int>(c.a[2])));
  if (!c.abi.wide && r > 0x7FFFFFFF) return -EOVERFLOW;
  return r;
}

int64_t sys_llseek(SyscallContext& c) {
  off_t off = static_cast<off_t>(((c.a[1] & 0xFFFFFFFFu) << 32) | (c.a[2] & 0xFFFFFFFFu));
  if (uint64_t* pos = self_mem_pos(c, c.a[0])) {
    const int64_t r = self_mem_seek(*pos, off, static_cast<int>(c.a[4]));
    if (r < 0) return r;
    return c.user.put(c.a[3], r) ? 0 : -EFAULT;
  }
  off = dir_offset(c, fd_arg(c.a[0]), off, static_cast<int>(c.a[4]));
  const off_t r = lseek(fd_arg(c.a[0]), off, static_cast<int>(c.a[4]));
  if (r < 0) return -errno;
  // A directory position is reported as the cookie of the last record returned.
  int64_t v = r;
  if (auto it = c.files.dir_cookies.find(fd_arg(c.a[0])); it != c.files.dir_cookies.end()) {
    for (size_t i = 0; i < it->second.size(); ++i) {
      if (it->second[i] == r) v = static_cast<int64_t>(i + 1);
    }
  }
  return c.user.put(c.a[3], v) ? 0 : -EFAULT;
}

int64_t sys_faccessat2(SyscallContext& c) {
  std::string path;
  if (const int r = path_arg(c, c.a[1], path); r < 0) return r;
  const int flags = static_cast<int>(c.a[3]);
  const GuestLookup l = look_up(c.p, fd_arg(c.a[0]), path, !(flags & AT_SYMLINK_NOFOLLOW));
  if (l.refusal < 0) return l.refusal;
  path = l.host;
  if (c.files.sandbox().active()) {
    ScopedFd f{sandbox_lookup(c.p, fd_arg(c.a[0]), path, !(flags & AT_SYMLINK_NOFOLLOW))};
    if (f.fd < 0) return f.fd;
    return host_result(syscall(SYS_faccessat2, AT_FDCWD, fd_path(f.fd).c_str(),
                               static_cast<int>(c.a[2]), flags & AT_EACCESS));
  }
  return host_result(
      syscall(SYS_faccessat2, fd_arg(c.a[0]), path.c_str(), static_cast<int>(c.a[2]), flags));
}

int64_t sys_faccessat(SyscallContext& c) {
  c.a[3] = 0;
  return sys_faccessat2(c);
}

int64_t sys_access(SyscallContext& c) {
  c.a[2] = c.a[1];
  c.a[1] = c.a[0];
  c.a[0] = static_cast<uint64_t>(AT_FDCWD);
  c.a[3] = 0;
  return sys_faccessat2(c);
}

int64_t sys_readlinkat(SyscallContext& c) {
  std::string path;
  if (const int r = path_arg(c, c.a[1], path); r < 0) return r;
  const int64_t size = static_cast<int32_t>(c.a[3]);
  if (size <= 0) return -EINVAL;
  uint8_t* buf = c.user.ptr(c.a[2], static_cast<uint64_t>(size), true);
  if (buf == nullptr) return -EFAULT;
  const GuestLookup l = look_up(c.p, fd_arg(c.a[0]), path, false);
  if (l.refusal < 0) return l.refusal;
  std::string target;
  if (l.proc.entry == ProcEntry::kExe) {
    target = c.p.identity().exe_path;
  } else if (l.proc.entry == ProcEntry::kFd) {
    // /proc/self/fd/N: what the guest's descriptor N names, as the guest sees it.
    const int n = l.proc.fd;
    if (auto it = c.files.fd_names.find(n); it != c.files.fd_names.end()) {
      target = it->second;
    } else {
      char host[PATH_MAX];
      const ssize_t len = readlink(fd_path(n).c_str(), host, sizeof host);
      if (len < 0) return -errno;
      target = c.files.paths().guest_view(std::string(host, static_cast<size_t>(len)));
    }
  }
  if (!target.empty()) {
    const size_t len = std::min<size_t>(target.size(), static_cast<size_t>(size));
    std::memcpy(buf, target.data(), len);
    return static_cast<int64_t>(len);
  }
  path = l.host;
  if (c.files.sandbox().active()) {
    ScopedFd f{sandbox_lookup(c.p, fd_arg(c.a[0]), path, false)};
    if (f.fd < 0) return f.fd;
    return host_result(
        readlinkat(f.fd, "", reinterpret_cast<char*>(buf), static_cast<size_t>(size)));
  }
  return host_result(readlinkat(fd_arg(c.a[0]), path.c_str(), reinterpret_cast<char*>(buf),
                                static_cast<size_t>(size)));
}

int64_t sys_readlink(SyscallContext& c) {
  c.a[3] = c.a[2];
  c.a[2] = c.a[1];
  c.a[1] = c.a[0];
  c.a[0] = static_cast<uint64_t>(AT_FDCWD);
  return sys_readlinkat(c);
}

int64_t sys_getcwd(SyscallContext& c) {
  char buf[PATH_MAX];
  if (getcwd(buf, sizeof buf) == nullptr) return -errno;
  const size_t n = std::strlen(buf) + 1;
  if (n > c.a[1]) return -ERANGE;
  return c.user.write(c.a[0], buf, n) ? static_cast<int64_t>(n) : -EFAULT;
}

int64_t sys_chdir(SyscallContext& c) {
  std::string path;
  if (const int r = path_arg(c, c.a[0], path); r < 0) return r;
  if (const int r = look_up(c.p, AT_FDCWD, path, true).refusal; r < 0) return r;
  if (c.files.sandbox().active()) {
    ScopedFd f{c.files.sandbox().open(AT_FDCWD, path, O_PATH | O_DIRECTORY | O_CLOEXEC)};
    if (f.fd < 0) return f.fd;
    return host_result(fchdir(f.fd));
  }
  return host_result(chdir(path.c_str()));
}

int64_t sys_fchdir(SyscallContext& c) {
  return host_result(fchdir(fd_arg(c.a[0])));
}

int64_t sys_getdents64(SyscallContext& c) {
  uint8_t* buf = c.user.ptr(c.a[1], c.a[2], true);
  if (buf == nullptr) return -EFAULT;
  const long n = host_getdents64(c, fd_arg(c.a[0]), buf, c.a[2]);
  if (n < 0) return n;
  cookie_offsets(c, fd_arg(c.a[0]), buf, static_cast<size_t>(n));
  return n;
}

int64_t sys_getdents(SyscallContext& c) {
  const uint64_t count = c.a[2];
  uint8_t* out = c.user.ptr(c.a[1], count, true);
  if (out == nullptr) return -EFAULT;
  if (c.abi.wide && c.files.fd_dirs.count(fd_arg(c.a[0])) == 0) {
    return host_result(syscall(SYS_getdents, fd_arg(c.a[0]), out, count));
  }
  // struct linux_dirent: d_ino, d_off (longs), d_reclen, d_name, NUL, d_type last (here for
  // i386, and for x86-64's /proc/self/fd/, whose listing is filtered). Its records are never
  // larger than dirent64's, so one host batch always fits.
  const size_t w = c.abi.wide ? 8 : 4;
  std::vector<uint8_t> tmp(count);
  const long n = host_getdents64(c, fd_arg(c.a[0]), tmp.data(), count);
  if (n < 0) return n;
  size_t in = 0, o = 0;
  while (in < static_cast<size_t>(n)) {
    const uint64_t ino = get_field<uint64_t>(tmp.data(), in);
    std::vector<int64_t>& table = c.files.dir_cookies[fd_arg(c.a[0])];
    table.push_back(get_field<int64_t>(tmp.data(), in + 8));
    const int64_t off =
        c.abi.wide ? get_field<int64_t>(tmp.data(), in + 8) : static_cast<int64_t>(table.size());
    const uint16_t reclen = get_field<uint16_t>(tmp.data(), in + 16);
    const uint8_t type = tmp[in + 18];
    const char* name = reinterpret_cast<const char*>(tmp.data() + in + 19);
    const size_t len = std::strlen(name);
    const size_t rec = (2 * w + 2 + len + 2 + w - 1) & ~(w - 1);
    if (o + rec > count) break;
    std::memset(out + o, 0, rec);
    if (c.abi.wide) {
      put_field<uint64_t>(out, o, ino);
      put_field<int64_t>(out, o + 8, off);
    } else {
      put_field<uint32_t>(out, o, static_cast<uint32_t>(ino));
      put_field<uint32_t>(out, o + 4, static_cast<uint32_t>(off));
    }
    put_field<uint16_t>(out, o + 2 * w, static_cast<uint16_t>(rec));
    std::memcpy(out + o + 2 * w + 2, name, len);
    out[o + rec - 1] = type;
    o += rec;
    in += reclen;
  }
  return static_cast<int64_t>(o);
}

namespace {

// What the host gets for a name that a call acts on inside a directory (create, remove,
// rename, link): under the sandbox, the directory opened beneath a root and the last
// component (Sandbox::parent); without it, the guest's own directory descriptor and path.
struct AtName {
  ScopedFd opened;
  int dir = AT_FDCWD;
  std::string name;
};

int at_name(SyscallContext& c, int dirfd, const std::string& path, AtName& n) {
  if (!c.files.sandbox().active()) {
    n.dir = dirfd;
    n.name = path;
    return 0;
  }
  if (const int r = c.files.sandbox().parent(dirfd, path, &n.opened.fd, n.name); r < 0) return r;
  n.dir = n.opened.fd;
  return 0;
}

}  // namespace

int64_t sys_unlinkat(SyscallContext& c) {
  std::string path;
  if (const int r = path_arg(c, c.a[1], path); r < 0) return r;
  AtName n;
  if (const int r = at_name(c, fd_arg(c.a[0]), path, n); r < 0) return r;
  return host_result(unlinkat(n.dir, n.name.c_str(), static_cast<int>(c.a[2])));
}

int64_t sys_unlink(SyscallContext& c) {
  c.a[1] = c.a[0];
  c.a[0] = static_cast<uint64_t>(AT_FDCWD);
  c.a[2] = 0;
  return sys_unlinkat(c);
}

int64_t sys_rmdir(SyscallContext& c) {
  c.a[1] = c.a[0];
  c.a[0] = static_cast<uint64_t>(AT_FDCWD);
  c.a[2] = AT_REMOVEDIR;
  return sys_unlinkat(c);
}

int64_t sys_renameat2(SyscallContext& c) {
  std::string from, to;
  if (const int r = path_arg(c, c.a[1], from); r < 0) return r;
  if (const int r = path_arg(c, c.a[3], to); r < 0) return r;
  AtName f, t;
  if (const int r = at_name(c, fd_arg(c.a[0]), from, f); r < 0) return r;
  if (const int r = at_name(c, fd_arg(c.a[2]), to, t); r < 0) return r;
  return host_result(syscall(SYS_renameat2, f.dir, f.name.c_str(), t.dir, t.name.c_str(),
                             static_cast<unsigned>(c.a[4])));
}

int64_t sys_renameat(SyscallContext& c) {
  c.a[4] = 0;
  return sys_renameat2(c);
}

int64_t sys_rename(SyscallContext& c) {
  c.a[3] = c.a[1];
  c.a[1] = c.a[0];
  c.a[0] = c.a[2] = static_cast<uint64_t>(AT_FDCWD);
  c.a[4] = 0;
  return sys_renameat2(c);
}

int64_t sys_mkdirat(SyscallContext& c) {
  std::string path;
  if (const int r = path_arg(c, c.a[1], path); r < 0) return r;
  AtName n;
  if (const int r = at_name(c, fd_arg(c.a[0]), path, n); r < 0) return r;
  return host_result(mkdirat(n.dir, n.name.c_str(), static_cast<mode_t>(c.a[2])));
}

int64_t sys_mkdir(SyscallContext& c) {
  c.a[2] = c.a[1];
  c.a[1] = c.a[0];
  c.a[0] = static_cast<uint64_t>(AT_FDCWD);
  return sys_mkdirat(c);
}

namespace {

// struct flock in the guest's layout: i386 32-bit offsets, i386 flock64, x86-64 native.
enum class FlockLayout { I386, I386_64, Native64 };

bool read_flock(SyscallContext& c, uint64_t va, FlockLayout l, struct flock& f) {
  uint8_t raw[32];
  const size_t size = l == FlockLayout::I386 ? 16 : l == FlockLayout::I386_64 ? 24 : 32;
  if (!c.user.read(va, raw, size)) return false;
  std::memset(&f, 0, sizeof f);
  f.l_type = get_field<int16_t>(raw, 0);
  f.l_whence = get_field<int16_t>(raw, 2);
  switch (l) {
    case FlockLayout::I386:
      f.l_start = get_field<int32_t>(raw, 4);
      f.l_len = get_field<int32_t>(raw, 8);
      f.l_pid = get_field<int32_t>(raw, 12);
      break;
    case FlockLayout::I386_64:
      f.l_start = get_field<int64_t>(raw, 4);
      f.l_len = get_field<int64_t>(raw, 12);
      f.l_pid = get_field<int32_t>(raw, 20);
      break;
    case FlockLayout::Native64:
      f.l_start = get_field<int64_t>(raw, 8);
      f.l_len = get_field<int64_t>(raw, 16);
      f.l_pid = get_field<int32_t>(raw, 24);
      break;
  }
  return true;
}

bool write_flock(SyscallContext& c, uint64_t va, FlockLayout l, const struct flock& f) {
  uint8_t raw[32] = {};
  put_field<int16_t>(raw, 0, f.l_type);
  put_field<int16_t>(raw, 2, f.l_whence);
  size_t size = 32;
  switch (l) {
    case FlockLayout::I386:
      put_field<int32_t>(raw, 4, static_cast<int32_t>(f.l_start));
      put_field<int32_t>(raw, 8, static_cast<int32_t>(f.l_len));
      put_field<int32_t>(raw, 12, f.l_pid);
      size = 16;
      break;
    case FlockLayout::I386_64:
      put_field<int64_t>(raw, 4, f.l_start);
      put_field<int64_t>(raw, 12, f.l_len);
      put_field<int32_t>(raw, 20, f.l_pid);
      size = 24;
      break;
    case FlockLayout::Native64:
      put_field<int64_t>(raw, 8, f.l_start);
      put_field<int64_t>(raw, 16, f.l_len);
      put_field<int32_t>(raw, 24, f.l_pid);
      break;
  }
  return c.user.write(va, raw, size);
}

// A new descriptor for the file of `from`: what /proc/self/fd/ knows of `from` (a filtered
// listing, a generated file's name) goes with it, and what it knew of `to` is gone.
int64_t after_dup(SyscallContext& c, int from, int64_t to) {
  if (to >= 0) c.files.duplicated(from, static_cast<int>(to));
  return to;
}

int64_t fcntl_common(SyscallContext& c, bool is64call) {
  const int fd = fd_arg(c.a[0]);
  const int cmd = static_cast<int>(c.a[1]);
  constexpr int kGetlk64 = 12, kSetlk64 = 13, kSetlkw64 = 14;
  FlockLayout layout = c.abi.wide ? FlockLayout::Native64 : FlockLayout::I386;
  int host_cmd = cmd;
  if (!c.abi.wide && is64call && (cmd == kGetlk64 || cmd == kSetlk64 || cmd == kSetlkw64)) {
    layout = FlockLayout::I386_64;
    host_cmd = cmd == kGetlk64 ? F_GETLK : cmd == kSetlk64 ? F_SETLK : F_SETLKW;
  }
  switch (host_cmd) {
    case F_DUPFD:
    case F_DUPFD_CLOEXEC:
      return after_dup(c, fd, host_result(fcntl(fd, host_cmd, static_cast<long>(c.a[2]))));
    case F_GETFD:
    case F_SETFD:
    case F_GETFL:
    case F_SETFL:
    case F_GETOWN:
    case F_SETOWN:
    case F_GETPIPE_SZ:
    case F_SETPIPE_SZ:
    case F_ADD_SEALS:
    case F_GET_SEALS:
      return host_result(fcntl(fd, host_cmd, static_cast<long>(c.a[2])));
    case F_GETLK:
    case F_SETLK:
    case F_SETLKW: {
      struct flock f;
      if (!read_flock(c, c.a[2], layout, f)) return -EFAULT;
      const int r = fcntl(fd, host_cmd, &f);
      if (r < 0) return after_read(c, -errno);
      if (host_cmd == F_GETLK && !write_flock(c, c.a[2], layout, f)) return -EFAULT;
      return r;
    }
    default:
      return -EINVAL;
  }
}

}  // namespace

int64_t sys_fcntl(SyscallContext& c) {
  return fcntl_common(c, c.abi.wide);
}
int64_t sys_fcntl64(SyscallContext& c) {
  return fcntl_common(c, true);
}

int64_t sys_dup(SyscallContext& c) {
  return after_dup(c, fd_arg(c.a[0]), host_result(dup(fd_arg(c.a[0]))));
}
int64_t sys_dup2(SyscallContext& c) {
  return after_dup(c, fd_arg(c.a[0]), host_result(dup2(fd_arg(c.a[0]), fd_arg(c.a[1]))));
}
int64_t sys_dup3(SyscallContext& c) {
  return after_dup(c, fd_arg(c.a[0]),
                   host_result(dup3(fd_arg(c.a[0]), fd_arg(c.a[1]), static_cast<int>(c.a[2]))));
}

int64_t sys_pipe2(SyscallContext& c) {
  int fds[2];
  if (c.user.ptr(c.a[0], sizeof fds, true) == nullptr) return -EFAULT;
  if (pipe2(fds, static_cast<int>(c.a[1])) != 0) return -errno;
  c.user.write(c.a[0], fds, sizeof fds);
  return 0;
}

int64_t sys_pipe(SyscallContext& c) {
  c.a[1] = 0;
  return sys_pipe2(c);
}

int64_t sys_ioctl(SyscallContext& c) {
  const int fd = fd_arg(c.a[0]);
  const unsigned long req = static_cast<uint32_t>(c.a[1]);
  // The terminal requests static programs make; the structures have the same layout
  // on both ABIs (struct termios is the kernel's 36-byte one).
  size_t size = 0;
  bool out = false;
  switch (req) {
    case TCGETS:
      size = 36;
      out = true;
      break;
    case TCSETS:
    case TCSETSW:
    case TCSETSF:
      size = 36;
      break;
    case TIOCGWINSZ:
      size = sizeof(winsize);
      out = true;
      break;
    case TIOCSWINSZ:
      size = sizeof(winsize);
      break;
    case TIOCGPGRP:
      size = sizeof(int);
      out = true;
      break;
    case TIOCSPGRP:
      size = sizeof(int);
      break;
    case FIONREAD:
      size = sizeof(int);
      out = true;
      break;
    case FIONBIO:
      size = sizeof(int);
      break;
    case FIOCLEX:
    case FIONCLEX:
    case TCFLSH:
    case TCXONC:
    case TCSBRK:
      return host_result(ioctl(fd, req, static_cast<unsigned long>(c.a[2])));
    default:
      return -ENOTTY;
  }
  uint8_t* p = c.user.ptr(c.a[2], size, out);
  if (p == nullptr) return -EFAULT;
  return after_read(c, host_result(ioctl(fd, req, p)));
}

int64_t sys_umask(SyscallContext& c) {
  return umask(static_cast<mode_t>(c.a[0]));
}
int64_t sys_fsync(SyscallContext& c) {
  return host_result(fsync(fd_arg(c.a[0])));
}

// fadvise64: advice about the host file, passed on (posix_fadvise returns the error).
int64_t sys_fadvise64(SyscallContext& c) {
  return -posix_fadvise(fd_arg(c.a[0]), static_cast<off_t>(c.a[1]), static_cast<off_t>(c.a[2]),
                        static_cast<int>(c.a[3]));
}
// i386: the offset in two registers, then a 32-bit length (fadvise64) or a 64-bit one in
// two registers (fadvise64_64).
int64_t sys_fadvise64_i386(SyscallContext& c) {
  c.a[1] = (c.a[1] & 0xFFFFFFFFu) | (c.a[2] << 32);
  c.a[2] = c.a[3];
  c.a[3] = c.a[4];
  return sys_fadvise64(c);
}
int64_t sys_fadvise64_64_i386(SyscallContext& c) {
  c.a[1] = (c.a[1] & 0xFFFFFFFFu) | (c.a[2] << 32);
  c.a[2] = (c.a[3] & 0xFFFFFFFFu) | (c.a[4] << 32);
  c.a[3] = c.a[5];
  return sys_fadvise64(c);
}

int64_t sys_ftruncate(SyscallContext& c) {
  const off_t len = c.abi.wide ? static_cast<off_t>(c.a[1]) : static_cast<int32_t>(c.a[1]);
  return host_result(ftruncate(fd_arg(c.a[0]), len));
}

int64_t sys_ftruncate64_i386(SyscallContext& c) {
  const off_t len = static_cast<off_t>((c.a[1] & 0xFFFFFFFFu) | (c.a[2] << 32));
  return host_result(ftruncate(fd_arg(c.a[0]), len));
}

int64_t sys_chmod(SyscallContext& c) {
  std::string path;
  if (const int r = path_arg(c, c.a[0], path); r < 0) return r;
  if (const int r = look_up(c.p, AT_FDCWD, path, true).refusal; r < 0) return r;
  if (c.files.sandbox().active()) {
    ScopedFd f{sandbox_lookup(c.p, AT_FDCWD, path, true)};
    if (f.fd < 0) return f.fd;
    return host_result(chmod(fd_path(f.fd).c_str(), static_cast<mode_t>(c.a[1])));
  }
  return host_result(chmod(path.c_str(), static_cast<mode_t>(c.a[1])));
}

int64_t sys_fchmod(SyscallContext& c) {
  return host_result(fchmod(fd_arg(c.a[0]), static_cast<mode_t>(c.a[1])));
}

int64_t sys_symlink(SyscallContext& c) {
  std::string target, path;
  if (const int r = path_arg(c, c.a[0], target); r < 0) return r;
  if (const int r = path_arg(c, c.a[1], path); r < 0) return r;
  // The link's text is only data: under the sandbox every lookup through it stays beneath
  // the roots.
  AtName n;
  if (const int r = at_name(c, AT_FDCWD, path, n); r < 0) return r;
  return host_result(symlinkat(target.c_str(), n.dir, n.name.c_str()));
}

int64_t sys_link(SyscallContext& c) {
  std::string from, to;
  if (const int r = path_arg(c, c.a[0], from); r < 0) return r;
  if (const int r = path_arg(c, c.a[1], to); r < 0) return r;
  AtName f, t;
  if (const int r = at_name(c, AT_FDCWD, from, f); r < 0) return r;
  if (const int r = at_name(c, AT_FDCWD, to, t); r < 0) return r;
  return host_result(linkat(f.dir, f.name.c_str(), t.dir, t.name.c_str(), 0));
}

}  // namespace padlock::emu
