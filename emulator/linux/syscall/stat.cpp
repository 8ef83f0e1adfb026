// stat-family system calls, converted to the guest ABI's struct stat / stat64 / statx.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <string>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/proc_lookup.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

enum class StatLayout { X86_64, I386Stat64, I386Old };

// --sandbox: `path` (after -L) opened O_PATH beneath the roots, so that the call can act on
// the descriptor (AT_EMPTY_PATH); the descriptor or -errno. Without a sandbox, or for a
// call on a descriptor, -1 and the call goes ahead as given.
struct SandboxedPath {
  int fd = -1;
  SandboxedPath(Process& p, int dirfd, const std::string& path, int at_flags) {
    if (!p.files().sandbox().active() || path.empty()) return;
    fd = p.files().sandbox().open(
        dirfd, path, O_PATH | O_CLOEXEC | ((at_flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0));
    if (fd < 0) error = fd;
  }
  ~SandboxedPath() {
    if (fd >= 0) close(fd);
  }
  int error = 0;
};

int64_t stat_common(SyscallContext& c, int dirfd, uint64_t path_va, uint64_t buf_va, int flags,
                    StatLayout layout) {
  std::string path;
  if (path_va != 0 || !(flags & AT_EMPTY_PATH)) {
    if (!c.user.read_cstring(path_va, path, PATH_MAX)) return -EFAULT;
  }
  const GuestLookup l = look_up(c.p, dirfd, path, !(flags & AT_SYMLINK_NOFOLLOW));
  if (l.refusal == -ENOENT) return l.refusal;  // the emulator's descriptors
  path = l.host;                               // -L/--sysroot; /proc/self/exe: the program
  const SandboxedPath sp(c.p, dirfd, path, flags);
  if (sp.error < 0) return sp.error;
  struct stat st;
  const int r = sp.fd >= 0 ? fstatat(sp.fd, "", &st, AT_EMPTY_PATH)
                           : fstatat(dirfd, path.c_str(), &st, flags);
  if (r != 0) return -errno;
  uint8_t out[kStatSizeX86_64];
  size_t size = 0;
  switch (layout) {
    case StatLayout::X86_64:
      encode_stat_x86_64(out, st);
      size = kStatSizeX86_64;
      break;
    case StatLayout::I386Stat64:
      encode_stat64_i386(out, st);
      size = kStat64SizeI386;
      break;
    case StatLayout::I386Old:
      if (!encode_stat_i386(out, st)) return -EOVERFLOW;
      size = kStatSizeI386;
      break;
  }
  return c.user.write(buf_va, out, size) ? 0 : -EFAULT;
}

StatLayout native(const SyscallContext& c) {
  return c.abi.wide ? StatLayout::X86_64 : StatLayout::I386Old;
}

int fd_arg(uint64_t v) {
  return static_cast<int32_t>(v);
}

}  // namespace

int64_t sys_stat(SyscallContext& c) {
  return stat_common(c, AT_FDCWD, c.a[0], c.a[1], 0, native(c));
}
int64_t sys_lstat(SyscallContext& c) {
  return stat_common(c, AT_FDCWD, c.a[0], c.a[1], AT_SYMLINK_NOFOLLOW, native(c));
}
int64_t sys_fstat(SyscallContext& c) {
  return stat_common(c, fd_arg(c.a[0]), 0, c.a[1], AT_EMPTY_PATH, native(c));
}
int64_t sys_newfstatat(SyscallContext& c) {
  return stat_common(c, fd_arg(c.a[0]), c.a[1], c.a[2], static_cast<int>(c.a[3]),
                     StatLayout::X86_64);
}
int64_t sys_stat64(SyscallContext& c) {
  return stat_common(c, AT_FDCWD, c.a[0], c.a[1], 0, StatLayout::I386Stat64);
}
int64_t sys_lstat64(SyscallContext& c) {
  return stat_common(c, AT_FDCWD, c.a[0], c.a[1], AT_SYMLINK_NOFOLLOW, StatLayout::I386Stat64);
}
int64_t sys_fstat64(SyscallContext& c) {
  return stat_common(c, fd_arg(c.a[0]), 0, c.a[1], AT_EMPTY_PATH, StatLayout::I386Stat64);
}
int64_t sys_fstatat64(SyscallContext& c) {
  return stat_common(c, fd_arg(c.a[0]), c.a[1], c.a[2], static_cast<int>(c.a[3]),
                     StatLayout::I386Stat64);
}

int64_t sys_statx(SyscallContext& c) {
  // struct statx has the same 256-byte layout on every ABI.
  std::string path;
  const int flags = static_cast<int>(c.a[2]);
  if (c.a[1] != 0 || !(flags & AT_EMPTY_PATH)) {
    if (!c.user.read_cstring(c.a[1], path, PATH_MAX)) return -EFAULT;
  }
  const GuestLookup l = look_up(c.p, fd_arg(c.a[0]), path, !(flags & AT_SYMLINK_NOFOLLOW));
  if (l.refusal == -ENOENT) return l.refusal;  // the emulator's descriptors
  path = l.host;                               // -L/--sysroot; /proc/self/exe: the program
  uint8_t* buf = c.user.ptr(c.a[4], 256, true);
  if (buf == nullptr) return -EFAULT;
  const SandboxedPath sp(c.p, fd_arg(c.a[0]), path, flags);
  if (sp.error < 0) return sp.error;
  if (sp.fd >= 0) {
    return host_result(syscall(SYS_statx, sp.fd, "", (flags & ~AT_SYMLINK_NOFOLLOW) | AT_EMPTY_PATH,
                               static_cast<unsigned>(c.a[3]), buf));
  }
  return host_result(
      syscall(SYS_statx, fd_arg(c.a[0]), path.c_str(), flags, static_cast<unsigned>(c.a[3]), buf));
}

}  // namespace padlock::emu

// --- statfs ------------------------------------------------------------------------------

namespace padlock::emu {

namespace {

// The host's struct statfs in the guest's layout: x86-64's is the host's own; i386 has the
// 84-byte struct statfs64 (statfs64, fstatfs64: 64-bit counts, packed to 4 bytes) and the
// 64-bit-free struct statfs (statfs, fstatfs: EOVERFLOW when a count needs more than 32
// bits), as Linux's compat layer fills them (fs/statfs.c).
enum class StatfsLayout { X86_64, I386_64, I386_32 };

int64_t put_statfs(SyscallContext& c, const struct statfs& s, uint64_t buf, StatfsLayout l) {
  if (l == StatfsLayout::X86_64) return c.user.write(buf, &s, sizeof s) ? 0 : -EFAULT;
  const bool wide = l == StatfsLayout::I386_64;
  const uint64_t counts[5] = {s.f_blocks, s.f_bfree, s.f_bavail, s.f_files, s.f_ffree};
  uint8_t out[84] = {};
  size_t at = 0;
  const auto put32 = [&](uint64_t v) {
    const uint32_t w = static_cast<uint32_t>(v);
    std::memcpy(out + at, &w, 4);
    at += 4;
  };
  put32(static_cast<uint64_t>(s.f_type));
  put32(static_cast<uint64_t>(s.f_bsize));
  for (const uint64_t v : counts) {
    if (wide) {
      std::memcpy(out + at, &v, 8);
      at += 8;
    } else {
      if (v > 0xFFFFFFFFu && v != ~uint64_t{0}) return -EOVERFLOW;
      put32(v);
    }
  }
  std::memcpy(out + at, &s.f_fsid, 8);
  at += 8;
  put32(static_cast<uint64_t>(s.f_namelen));
  put32(static_cast<uint64_t>(s.f_frsize));
  put32(static_cast<uint64_t>(s.f_flags));
  at += 16;  // f_spare
  return c.user.write(buf, out, at) ? 0 : -EFAULT;
}

int64_t statfs_path(SyscallContext& c, uint64_t path_va, uint64_t buf, StatfsLayout l) {
  std::string path;
  if (!c.user.read_cstring(path_va, path, PATH_MAX)) return -EFAULT;
  struct statfs s {};
  const GuestLookup found = look_up(c.p, AT_FDCWD, path, true);
  if (found.refusal == -ENOENT) return found.refusal;
  path = found.host;
  const SandboxedPath sp(c.p, AT_FDCWD, path, 0);
  if (sp.error < 0) return sp.error;
  if ((sp.fd >= 0 ? fstatfs(sp.fd, &s) : statfs(path.c_str(), &s)) != 0) return -errno;
  return put_statfs(c, s, buf, l);
}

int64_t statfs_fd(SyscallContext& c, uint64_t fd, uint64_t buf, StatfsLayout l) {
  struct statfs s {};
  if (fstatfs(static_cast<int32_t>(fd), &s) != 0) return -errno;
  return put_statfs(c, s, buf, l);
}

// statfs64's size argument: 84, or 88 (the unpacked size some callers pass).
bool statfs64_size(uint64_t sz) {
  return sz == 84 || sz == 88;
}

}  // namespace

int64_t sys_statfs(SyscallContext& c) {
  return statfs_path(c, c.a[0], c.a[1], c.abi.wide ? StatfsLayout::X86_64 : StatfsLayout::I386_32);
}
int64_t sys_fstatfs(SyscallContext& c) {
  return statfs_fd(c, c.a[0], c.a[1], c.abi.wide ? StatfsLayout::X86_64 : StatfsLayout::I386_32);
}
int64_t sys_statfs64(SyscallContext& c) {
  return statfs64_size(c.a[1]) ? statfs_path(c, c.a[0], c.a[2], StatfsLayout::I386_64) : -EINVAL;
}
int64_t sys_fstatfs64(SyscallContext& c) {
  return statfs64_size(c.a[1]) ? statfs_fd(c, c.a[0], c.a[2], StatfsLayout::I386_64) : -EINVAL;
}

}  // namespace padlock::emu
