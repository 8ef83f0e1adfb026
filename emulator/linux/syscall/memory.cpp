// Memory system calls: brk, mmap/mmap2, munmap, mprotect, mremap, madvise. They operate
// on our page table (AddressSpace); Unicorn learns of changes through TLB flushes.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"
#include "emulator/observe/trace/run_observers.hpp"

namespace padlock::emu {

namespace {
constexpr uint64_t kPage = AddressSpace::kPageSize;
uint64_t page_up(uint64_t v) {
  return (v + kPage - 1) & ~(kPage - 1);
}
bool aligned(uint64_t v) {
  return (v & (kPage - 1)) == 0;
}

constexpr uint64_t kMapShared = 0x01, kMapPrivate = 0x02, kMapSharedValidate = 0x03,
                   kMapFixed = 0x10, kMapAnonymous = 0x20, kMap32Bit = 0x40,
                   kMapFixedNoreplace = 0x100000;
constexpr uint64_t kMremapMaymove = 1, kMremapFixed = 2;
}  // namespace

uint8_t Process::prot_to_flags(uint64_t prot) const {
  uint8_t f = 0;
  if (prot & PROT_READ) f |= kPageRead;
  if (prot & PROT_WRITE) f |= kPageRead | kPageWrite;  // x86: write implies read
  if (prot & PROT_EXEC) f |= kPageRead | kPageExec;
  // READ_IMPLIES_EXEC for i386 programs without PT_GNU_STACK (as Linux does).
  if ((f & kPageRead) && !guest64_ && !elf_.has_gnu_stack) f |= kPageExec;
  return f;
}

void Process::invalidate_code(uint64_t va, uint64_t len) {
  if (!mem_->may_hold_code(va, len)) return;
  // Unicorn finds the start of the range through a code TLB fill, which must not fault
  // (it would stop the emulation); the TLB is flushed right after.
  tlb_.grant_all = true;
  uc_ctl_remove_cache(cpu_->uc(), va, va + len);
  tlb_.grant_all = false;
  mem_->unprotect_code(va, len);  // (its code is gone)
  uc_ctl_flush_tlb(cpu_->uc());
  blocks_->invalidate(va, len);
}

void Process::memory_changed(uint64_t, uint64_t) {
  uc_ctl_flush_tlb(cpu_->uc());
}

// The addresses a guest may map, unmap, protect or move: the window below the system pages
// (the GDT and the boot stub, Cpu::boot), as Linux's TASK_SIZE ends below the kernel's
// pages (0xFFFFE000 for an i386 program on x86-64). A guest that could unmap or remap them
// would pull the descriptor table out from under the emulated CPU.
static bool user_range(const AddressSpace& mem, const MemoryLayout& l, uint64_t va, uint64_t len) {
  return mem.in_window(va, len) && va + len <= l.system_page;
}

// --max-memory: would `adding` more bytes of mappings pass the cap? Linux's may_expand_vm
// refuses a mapping that would take the address space past RLIMIT_AS with ENOMEM.
static bool over_cap(const RunOptions& o, const AddressSpace& mem, uint64_t adding) {
  return o.max_memory != 0 && adding > 0 &&
         (adding > o.max_memory || mem.mapped_bytes() > o.max_memory - adding);
}

int64_t Process::do_mmap(uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags, int fd,
                         uint64_t offset) {
  const uint64_t type = flags & 3;
  if (len == 0 || !aligned(offset) ||
      (type != kMapShared && type != kMapPrivate && type != kMapSharedValidate)) {
    return -EINVAL;
  }
  if (page_up(len) < len) return -ENOMEM;
  len = page_up(len);
  const bool anonymous = (flags & kMapAnonymous) != 0;
  const bool shared = type != kMapPrivate;
  struct stat st {};
  if (!anonymous) {
    if (fstat(fd, &st) != 0) return -EBADF;
    if (S_ISDIR(st.st_mode)) return -ENODEV;
  }
  uint64_t va = 0;
  if (flags & (kMapFixed | kMapFixedNoreplace)) {
    if (!aligned(addr)) return -EINVAL;
    if (!user_range(*mem_, layout_, addr, len)) return -ENOMEM;
    if ((flags & kMapFixedNoreplace) && !mem_->range_free(addr, len)) return -EEXIST;
    va = addr;
  } else {
    if (addr != 0 && aligned(addr) && mem_->range_free(addr, len)) {
      va = addr;
    } else if (flags & kMap32Bit) {
      va = mem_->find_free_below(len, 0x80000000ull, 0x40000000ull);
    } else {
      va = mem_->find_free_below(len, layout_.mmap_top, layout_.mmap_floor);
    }
    if (va == 0) return -ENOMEM;
  }
  if (opts_.max_memory != 0 && over_cap(opts_, *mem_, len - mem_->mapped_in(va, len))) {
    return -ENOMEM;
  }
  const uint8_t guest = prot_to_flags(prot);
  invalidate_code(va, len);
  if (shared && !anonymous) {
    const int r = mem_->map_shared_file(va, len, guest, fd, offset);
    if (r < 0) return r;
  } else {
    if (!mem_->map_anonymous(va, len, kPageRead | kPageWrite)) return -ENOMEM;
    if (!anonymous) {
      // MAP_PRIVATE of a file: a copy of its bytes (zero past the end of the file).
      uint64_t done = 0;
      while (done < len) {
        const ssize_t n =
            pread(fd, mem_->host(va + done), len - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
          const int err = errno;
          mem_->unmap(va, len);  // (fresh pages: nothing was translated from them)
          memory_changed(va, len);
          return -err;
        }
        if (n == 0) break;
        done += static_cast<uint64_t>(n);
      }
    }
    mem_->protect(va, len, guest);
  }
  memory_changed(va, len);
  if (anonymous) {
    map_names_.clear(va, len);
  } else {
    // /proc/self/maps names the file as the guest sees it.
    char link[64], target[PATH_MAX];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, target, sizeof target - 1);
    MapNames::Name name;
    name.path = paths_.guest_view(n > 0 ? std::string(target, static_cast<size_t>(n)) : "");
    name.offset = offset;
    name.dev = st.st_dev;
    name.inode = st.st_ino;
    map_names_.set(va, len, name);
  }
  // ld.so maps shared objects' code this way: the profiler and trace learn their symbols.
  if (obs_ && !anonymous && (prot & PROT_EXEC)) obs_->file_mapped(fd, va, offset);
  return static_cast<int64_t>(va);
}

int64_t Process::do_munmap(uint64_t addr, uint64_t len) {
  if (!aligned(addr) || len == 0) return -EINVAL;
  len = page_up(len);
  if (!user_range(*mem_, layout_, addr, len)) return -EINVAL;
  invalidate_code(addr, len);
  mem_->unmap(addr, len);
  memory_changed(addr, len);
  map_names_.clear(addr, len);
  if (obs_) obs_->unmapped(addr, len);
  return 0;
}

int64_t Process::do_mprotect(uint64_t addr, uint64_t len, uint64_t prot) {
  if (!aligned(addr)) return -EINVAL;
  if (prot & ~uint64_t{PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWSDOWN | PROT_GROWSUP}) {
    return -EINVAL;
  }
  len = page_up(len);
  if (len == 0) return 0;
  if (!user_range(*mem_, layout_, addr, len) || !mem_->range_mapped(addr, len)) return -ENOMEM;
  invalidate_code(addr, len);
  const int r = mem_->protect(addr, len, prot_to_flags(prot));
  if (r < 0) return r;
  memory_changed(addr, len);
  return 0;
}

// How much of the heap a lowered break keeps on the host for its regrowth. glibc's malloc
// trims its heap when the top is free and grows it again on the next large request: a
// loop doing that faulted each page in anew (qemu-user keeps all of them, clearing on
// regrowth). The pages are inaccessible while the break is below them.
constexpr uint64_t kBrkKeptMax = 8ull << 20;

int64_t Process::do_brk(uint64_t addr) {
  MemoryLayout& l = layout_;
  if (addr < l.brk_start) return static_cast<int64_t>(l.brk);
  const uint64_t old_end = page_up(l.brk), new_end = page_up(addr);
  const uint8_t rw = prot_to_flags(PROT_READ | PROT_WRITE);
  if (new_end > old_end) {
    const uint64_t n = new_end - old_end;
    if (new_end > l.mmap_top || !mem_->range_free(old_end, n) || over_cap(opts_, *mem_, n)) {
      return static_cast<int64_t>(l.brk);
    }
    // Kept pages are cleared in place, the rest mapped anew: both read as zeros.
    const uint64_t kept = std::clamp(l.brk_kept, old_end, new_end);
    if (!mem_->map_cleared(old_end, kept - old_end, rw)) return static_cast<int64_t>(l.brk);
    if (!mem_->map_anonymous(kept, new_end - kept, rw)) {
      mem_->unmap(old_end, kept - old_end);
      return static_cast<int64_t>(l.brk);
    }
    memory_changed(old_end, n);
  } else if (new_end < old_end) {
    invalidate_code(new_end, old_end - new_end);
    // Up to kBrkKeptMax above the new break stay held, with what earlier shrinks kept;
    // held pages beyond that are released, unless the guest has mapped something there.
    const uint64_t top = std::max(old_end, l.brk_kept);
    const uint64_t kept = std::min(top, new_end + kBrkKeptMax);
    mem_->unmap_keep_pages(new_end, std::min(old_end, kept) - new_end);
    if (old_end > kept) mem_->unmap(kept, old_end - kept);
    const uint64_t above = std::max(old_end, kept);
    if (top > above && mem_->range_free(above, top - above)) mem_->unmap(above, top - above);
    l.brk_kept = kept;
    memory_changed(new_end, old_end - new_end);
  }
  l.brk = addr;
  return static_cast<int64_t>(l.brk);
}

int64_t Process::do_mremap(uint64_t old_addr, uint64_t old_len, uint64_t new_len, uint64_t flags,
                           uint64_t new_addr) {
  if (!aligned(old_addr) || new_len == 0 || (flags & ~uint64_t{7})) return -EINVAL;
  if ((flags & kMremapFixed) && !(flags & kMremapMaymove)) return -EINVAL;
  old_len = page_up(old_len);
  new_len = page_up(new_len);
  if (old_len == 0 || !user_range(*mem_, layout_, old_addr, old_len) ||
      !mem_->range_mapped(old_addr, old_len)) {
    return -EFAULT;
  }
  const uint8_t prot = mem_->flags(old_addr) & 7;
  if (new_len > old_len && over_cap(opts_, *mem_, new_len - old_len)) return -ENOMEM;
  auto move_to = [&](uint64_t dst) -> int64_t {
    if (!mem_->map_anonymous(dst, new_len, kPageRead | kPageWrite)) return -ENOMEM;
    invalidate_code(old_addr, old_len);  // before its pages (and their flags) move
    mem_->move_pages(dst, old_addr, std::min(old_len, new_len));  // whatever the protections
    mem_->protect(dst, new_len, prot);
    mem_->unmap(old_addr, old_len);
    memory_changed(old_addr, old_len);
    memory_changed(dst, new_len);
    map_names_.move(old_addr, std::min(old_len, new_len), dst);
    return static_cast<int64_t>(dst);
  };
  if (flags & kMremapFixed) {
    if (!aligned(new_addr) || !user_range(*mem_, layout_, new_addr, new_len)) return -EINVAL;
    if (new_addr < old_addr + old_len && old_addr < new_addr + new_len) return -EINVAL;
    invalidate_code(new_addr, new_len);
    mem_->unmap(new_addr, new_len);
    return move_to(new_addr);
  }
  if (new_len <= old_len) {
    if (new_len < old_len) {
      invalidate_code(old_addr + new_len, old_len - new_len);
      mem_->unmap(old_addr + new_len, old_len - new_len);
      memory_changed(old_addr + new_len, old_len - new_len);
      map_names_.clear(old_addr + new_len, old_len - new_len);
    }
    return static_cast<int64_t>(old_addr);
  }
  const uint64_t tail = old_addr + old_len, grow = new_len - old_len;
  if (user_range(*mem_, layout_, tail, grow) && mem_->range_free(tail, grow)) {
    if (!mem_->map_anonymous(tail, grow, kPageRead | kPageWrite)) return -ENOMEM;
    mem_->protect(tail, grow, prot);
    memory_changed(tail, grow);
    return static_cast<int64_t>(old_addr);
  }
  if (!(flags & kMremapMaymove)) return -ENOMEM;
  const uint64_t dst = mem_->find_free_below(new_len, layout_.mmap_top, layout_.mmap_floor);
  if (dst == 0) return -ENOMEM;
  return move_to(dst);
}

// --- system-call entry points ---------------------------------------------------------

int64_t sys_brk(SyscallContext& c) {
  return c.p.do_brk(c.a[0]);
}

int64_t sys_mmap(SyscallContext& c) {
  return c.p.do_mmap(c.a[0], c.a[1], c.a[2], c.a[3], static_cast<int>(c.a[4]), c.a[5]);
}

int64_t sys_mmap2(SyscallContext& c) {
  return c.p.do_mmap(c.a[0], c.a[1], c.a[2], c.a[3], static_cast<int>(c.a[4]), c.a[5] * kPage);
}

int64_t sys_old_mmap(SyscallContext& c) {
  uint32_t args[6];
  if (!c.p.read_user(c.a[0], args, sizeof args)) return -EFAULT;
  // The descriptor is in memory, out of the dispatcher's sight (Process::dispatch_syscall).
  if (c.p.emulator_fd(static_cast<int32_t>(args[4]))) return -EBADF;
  return c.p.do_mmap(args[0], args[1], args[2], args[3], static_cast<int32_t>(args[4]), args[5]);
}

int64_t sys_munmap(SyscallContext& c) {
  return c.p.do_munmap(c.a[0], c.a[1]);
}
int64_t sys_mprotect(SyscallContext& c) {
  return c.p.do_mprotect(c.a[0], c.a[1], c.a[2]);
}
int64_t sys_mremap(SyscallContext& c) {
  return c.p.do_mremap(c.a[0], c.a[1], c.a[2], c.a[3], c.a[4]);
}

int64_t sys_madvise(SyscallContext& c) {
  const uint64_t addr = c.a[0], len = page_up(c.a[1]);
  if (!aligned(addr)) return -EINVAL;
  if (len == 0) return 0;
  if (!c.p.mem().range_mapped(addr, len)) return -ENOMEM;
  // MADV_DONTNEED and MADV_FREE discard anonymous contents (reads then see zeros);
  // the other advice changes nothing we model.
  if (c.a[2] == MADV_DONTNEED || c.a[2] == MADV_FREE) {
    c.p.invalidate_code(addr, len);  // code that ran there is gone too
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
