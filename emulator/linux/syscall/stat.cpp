// stat-family system calls, converted to the guest ABI's struct stat / stat64 / statx.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

enum class StatLayout { X86_64, I386Stat64, I386Old };

int64_t stat_common(SyscallContext& c, int dirfd, uint64_t path_va, uint64_t buf_va, int flags,
                    StatLayout layout) {
  std::string path;
  if (path_va != 0 || !(flags & AT_EMPTY_PATH)) {
    if (!c.p.read_cstring(path_va, path, PATH_MAX)) return -EFAULT;
  }
  if (path == "/proc/self/exe") path = c.p.exe_path();
  path = c.p.paths().resolve(path);  // -L/--sysroot
  struct stat st;
  if (fstatat(dirfd, path.c_str(), &st, flags) != 0) return -errno;
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
  return c.p.write_user(buf_va, out, size) ? 0 : -EFAULT;
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
    if (!c.p.read_cstring(c.a[1], path, PATH_MAX)) return -EFAULT;
  }
  if (path == "/proc/self/exe") path = c.p.exe_path();
  path = c.p.paths().resolve(path);  // -L/--sysroot
  uint8_t* buf = c.p.user_ptr(c.a[4], 256, true);
  if (buf == nullptr) return -EFAULT;
  return host_result(
      syscall(SYS_statx, fd_arg(c.a[0]), path.c_str(), flags, static_cast<unsigned>(c.a[3]), buf));
}

}  // namespace padlock::emu
