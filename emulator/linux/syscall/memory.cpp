// Memory system calls: brk, mmap/mmap2, munmap, mprotect, mremap (the address-space
// policy, emulator/linux/vm/address_space_policy.hpp, decides them), madvise, msync, mlock.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {
constexpr uint64_t kPage = AddressSpace::kPageSize;
using vm::aligned;
using vm::page_up;
}  // namespace

// --- system-call entry points ---------------------------------------------------------

int64_t sys_brk(SyscallContext& c) {
  return c.vm.brk(c.a[0]);
}

int64_t sys_mmap(SyscallContext& c) {
  return c.vm.mmap(c.a[0], c.a[1], c.a[2], c.a[3], static_cast<int>(c.a[4]), c.a[5]);
}

int64_t sys_mmap2(SyscallContext& c) {
  return c.vm.mmap(c.a[0], c.a[1], c.a[2], c.a[3], static_cast<int>(c.a[4]), c.a[5] * kPage);
}

int64_t sys_old_mmap(SyscallContext& c) {
  uint32_t args[6];
  if (!c.user.read(c.a[0], args, sizeof args)) return -EFAULT;
  // The descriptor is in memory, out of the dispatcher's sight (Process::dispatch_syscall).
  if (c.files.emulator_fd(static_cast<int32_t>(args[4]))) return -EBADF;
  return c.vm.mmap(args[0], args[1], args[2], args[3], static_cast<int32_t>(args[4]), args[5]);
}

int64_t sys_munmap(SyscallContext& c) {
  return c.vm.munmap(c.a[0], c.a[1]);
}
int64_t sys_mprotect(SyscallContext& c) {
  return c.vm.mprotect(c.a[0], c.a[1], c.a[2]);
}
int64_t sys_mremap(SyscallContext& c) {
  return c.vm.mremap(c.a[0], c.a[1], c.a[2], c.a[3], c.a[4]);
}

int64_t sys_madvise(SyscallContext& c) {
  const uint64_t addr = c.a[0], len = page_up(c.a[1]);
  if (!aligned(addr)) return -EINVAL;
  if (len == 0) return 0;
  if (!c.p.mem().range_mapped(addr, len)) return -ENOMEM;
  // MADV_DONTNEED and MADV_FREE discard anonymous contents (reads then see zeros);
  // the other advice changes nothing we model.
  if (c.a[2] == MADV_DONTNEED || c.a[2] == MADV_FREE) {
    c.vm.invalidate_code(addr, len);  // code that ran there is gone too
    if (madvise(c.p.mem().host(addr), len, MADV_DONTNEED) != 0) return -errno;
  }
  return 0;
}

int64_t sys_msync(SyscallContext& c) {
  const uint64_t addr = c.a[0], len = page_up(c.a[1]);
  if (!aligned(addr)) return -EINVAL;
  if (!c.p.mem().range_mapped(addr, len)) return -ENOMEM;
  if (c.p.mem().range_has(addr, len, kPageShared)) {
    return host_result(msync(c.p.mem().host(addr), len, static_cast<int>(c.a[2])));
  }
  return 0;
}

int64_t sys_mlock(SyscallContext& c) {
  const uint64_t addr = c.a[0] & ~(kPage - 1);
  const uint64_t len = page_up(c.a[1] + (c.a[0] - addr));
  return c.p.mem().range_mapped(addr, len) || len == 0 ? 0 : -ENOMEM;
}

}  // namespace padlock::emu
