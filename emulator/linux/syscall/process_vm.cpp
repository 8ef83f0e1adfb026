// process_vm_readv and process_vm_writev on the guest itself: guest memory only, with the
// checks and partial results of Linux's mm/process_vm_access.c (process_vm_rw,
// process_vm_rw_core). The remote side is pinned without FOLL_FORCE, so the guest's own
// page protections apply on both sides, and the emulator's system pages above the user
// range are no mapping of the guest's. Another process's memory is not offered: a guest's
// children run in their own emulators, whose host memory is not their guest memory
// (docs/reliability.md, "The guest cannot reach the emulator's pages").
#include <signal.h>
#include <sys/uio.h>

#include <algorithm>
#include <vector>

#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

constexpr uint64_t kPage = AddressSpace::kPageSize;
using Segment = GuestIovec;

// The guest bytes from `va` (at most `len`) whose pages the guest maps with `need`, below
// the system pages.
uint64_t guest_span(Process& p, uint64_t va, uint64_t len, uint8_t need) {
  const uint64_t top = p.vm().layout().system_page;
  if (va >= top) return 0;
  return p.mem().accessible_with(va, std::min(len, top - va), kPageMapped | need);
}

int64_t process_vm_rw(SyscallContext& c, bool write) {
  const int32_t pid = static_cast<int32_t>(c.a[0]);
  if (c.a[5] != 0) return -EINVAL;
  std::vector<Segment> local, remote;
  if (const int64_t r = read_guest_iovecs(c, c.a[1], c.a[2], local); r < 0) return r;
  if (std::all_of(local.begin(), local.end(), [](const Segment& s) { return s.len == 0; })) {
    return 0;
  }
  if (const int64_t r = read_guest_iovecs(c, c.a[3], c.a[4], remote); r < 0) return r;
  if (std::all_of(remote.begin(), remote.end(), [](const Segment& s) { return s.len == 0; })) {
    return 0;
  }
  if (pid != c.p.identity().pid) {
    // find_get_task_by_vpid, then mm_access: no such process, or not this one.
    return pid > 0 && kill(pid, 0) == 0 ? -EPERM : -ESRCH;
  }
  // Local and remote bytes move page by page; the first page the remote side cannot reach
  // ends the transfer (pin_user_pages_remote), as does the first local byte that cannot be
  // reached (copy_page_to_iter's short copy): the bytes moved so far, or EFAULT for none.
  const uint8_t remote_need = write ? kPageWrite : kPageRead;
  const uint8_t local_need = write ? kPageRead : kPageWrite;
  size_t li = 0;
  uint64_t loff = 0, moved = 0;
  for (const Segment& r : remote) {
    for (uint64_t done = 0; done < r.len;) {
      const uint64_t at = r.base + done;
      const uint64_t page_left = std::min(r.len - done, kPage - (at & (kPage - 1)));
      if (guest_span(c.p, at, page_left, remote_need) != page_left) {
        return moved > 0 ? static_cast<int64_t>(moved) : -EFAULT;
      }
      for (uint64_t in_page = 0; in_page < page_left;) {
        while (li < local.size() && loff == local[li].len) {
          ++li;
          loff = 0;
        }
        if (li == local.size()) return static_cast<int64_t>(moved);
        const uint64_t lva = local[li].base + loff;
        const uint64_t want = std::min(page_left - in_page, local[li].len - loff);
        const uint64_t n = guest_span(c.p, lva, want, local_need);
        const uint64_t src = write ? lva : at + in_page;
        const uint64_t dst = write ? at + in_page : lva;
        if (n > 0) {
          c.p.mem().will_write(dst, n);
          c.p.mem().copy(dst, src, n);
        }
        moved += n;
        if (n < want) return moved > 0 ? static_cast<int64_t>(moved) : -EFAULT;
        in_page += n;
        loff += n;
      }
      done += page_left;
    }
  }
  return static_cast<int64_t>(moved);
}

}  // namespace

int64_t sys_process_vm_readv(SyscallContext& c) {
  return process_vm_rw(c, false);
}

int64_t sys_process_vm_writev(SyscallContext& c) {
  return process_vm_rw(c, true);
}

}  // namespace padlock::emu
