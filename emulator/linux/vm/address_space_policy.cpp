#include "emulator/linux/vm/address_space_policy.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <string>

namespace padlock::emu {

namespace {
using vm::aligned;
using vm::page_up;

constexpr uint64_t kMapShared = 0x01, kMapPrivate = 0x02, kMapSharedValidate = 0x03,
                   kMapFixed = 0x10, kMapAnonymous = 0x20, kMap32Bit = 0x40,
                   kMapFixedNoreplace = 0x100000;
constexpr uint64_t kMremapMaymove = 1, kMremapFixed = 2;
}  // namespace

uint8_t AddressSpacePolicy::prot_to_flags(uint64_t prot) const {
  uint8_t f = 0;
  if (prot & PROT_READ) f |= kPageRead;
  if (prot & PROT_WRITE) f |= kPageRead | kPageWrite;  // x86: write implies read
  if (prot & PROT_EXEC) f |= kPageRead | kPageExec;
  // READ_IMPLIES_EXEC for i386 programs without PT_GNU_STACK (as Linux does).
  if ((f & kPageRead) && config_.read_implies_exec) f |= kPageExec;
  return f;
}

void AddressSpacePolicy::invalidate_code(uint64_t va, uint64_t len) {
  if (mem_.may_hold_code(va, len)) host_.drop_code(va, len);
}

// The addresses a guest may map, unmap, protect or move: the window below the system pages
// (the GDT and the boot stub, Cpu::boot), as Linux's TASK_SIZE ends below the kernel's
// pages (0xFFFFE000 for an i386 program on x86-64). A guest that could unmap or remap them
// would pull the descriptor table out from under the emulated CPU.
bool AddressSpacePolicy::user_range(uint64_t va, uint64_t len) const {
  return mem_.in_window(va, len) && va + len <= layout_.system_page;
}

// --max-memory: would `adding` more bytes of mappings pass the cap? Linux's may_expand_vm
// refuses a mapping that would take the address space past RLIMIT_AS with ENOMEM.
bool AddressSpacePolicy::over_cap(uint64_t adding) const {
  return config_.max_memory != 0 && adding > 0 &&
         (adding > config_.max_memory || mem_.mapped_bytes() > config_.max_memory - adding);
}

int64_t AddressSpacePolicy::mmap(uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags, int fd,
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
    if (!user_range(addr, len)) return -ENOMEM;
    if ((flags & kMapFixedNoreplace) && !mem_.range_free(addr, len)) return -EEXIST;
    va = addr;
  } else {
    if (addr != 0 && aligned(addr) && mem_.range_free(addr, len)) {
      va = addr;
    } else if (flags & kMap32Bit) {
      va = mem_.find_free_below(len, 0x80000000ull, 0x40000000ull);
    } else {
      va = mem_.find_free_below(len, layout_.mmap_top, layout_.mmap_floor);
    }
    if (va == 0) return -ENOMEM;
  }
  if (config_.max_memory != 0 && over_cap(len - mem_.mapped_in(va, len))) {
    return -ENOMEM;
  }
  const uint8_t guest = prot_to_flags(prot);
  invalidate_code(va, len);
  if (shared && !anonymous) {
    const int r = mem_.map_shared_file(va, len, guest, fd, offset);
    if (r < 0) return r;
  } else {
    if (!mem_.map_anonymous(va, len, kPageRead | kPageWrite)) return -ENOMEM;
    if (!anonymous) {
      // MAP_PRIVATE of a file: a copy of its bytes (zero past the end of the file).
      uint64_t done = 0;
      while (done < len) {
        const ssize_t n =
            pread(fd, mem_.host(va + done), len - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
          const int err = errno;
          mem_.unmap(va, len);  // (fresh pages: nothing was translated from them)
          host_.memory_changed(va, len);
          return -err;
        }
        if (n == 0) break;
        done += static_cast<uint64_t>(n);
      }
    }
    mem_.protect(va, len, guest);
  }
  host_.memory_changed(va, len);
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
  if (!anonymous && (prot & PROT_EXEC)) host_.file_mapped(fd, va, offset);
  return static_cast<int64_t>(va);
}

int64_t AddressSpacePolicy::munmap(uint64_t addr, uint64_t len) {
  if (!aligned(addr) || len == 0) return -EINVAL;
  len = page_up(len);
  if (!user_range(addr, len)) return -EINVAL;
  invalidate_code(addr, len);
  mem_.unmap(addr, len);
  host_.memory_changed(addr, len);
  map_names_.clear(addr, len);
  host_.unmapped(addr, len);
  return 0;
}

int64_t AddressSpacePolicy::mprotect(uint64_t addr, uint64_t len, uint64_t prot) {
  if (!aligned(addr)) return -EINVAL;
  if (prot & ~uint64_t{PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWSDOWN | PROT_GROWSUP}) {
    return -EINVAL;
  }
  len = page_up(len);
  if (len == 0) return 0;
  if (!user_range(addr, len) || !mem_.range_mapped(addr, len)) return -ENOMEM;
  invalidate_code(addr, len);
  const int r = mem_.protect(addr, len, prot_to_flags(prot));
  if (r < 0) return r;
  host_.memory_changed(addr, len);
  return 0;
}

// How much of the heap a lowered break keeps on the host for its regrowth. glibc's malloc
// trims its heap when the top is free and grows it again on the next large request: a
// loop doing that faulted each page in anew (qemu-user keeps all of them, clearing on
// regrowth). The pages are inaccessible while the break is below them.
constexpr uint64_t kBrkKeptMax = 8ull << 20;

int64_t AddressSpacePolicy::brk(uint64_t addr) {
  MemoryLayout& l = layout_;
  if (addr < l.brk_start) return static_cast<int64_t>(l.brk);
  const uint64_t old_end = page_up(l.brk), new_end = page_up(addr);
  const uint8_t rw = prot_to_flags(PROT_READ | PROT_WRITE);
  if (new_end > old_end) {
    const uint64_t n = new_end - old_end;
    if (new_end > l.mmap_top || !mem_.range_free(old_end, n) || over_cap(n)) {
      return static_cast<int64_t>(l.brk);
    }
    // Kept pages are cleared in place, the rest mapped anew: both read as zeros.
    const uint64_t kept = std::clamp(l.brk_kept, old_end, new_end);
    if (!mem_.map_cleared(old_end, kept - old_end, rw)) return static_cast<int64_t>(l.brk);
    if (!mem_.map_anonymous(kept, new_end - kept, rw)) {
      mem_.unmap(old_end, kept - old_end);
      return static_cast<int64_t>(l.brk);
    }
    host_.memory_changed(old_end, n);
  } else if (new_end < old_end) {
    invalidate_code(new_end, old_end - new_end);
    // Up to kBrkKeptMax above the new break stay held, with what earlier shrinks kept;
    // held pages beyond that are released, unless the guest has mapped something there.
    const uint64_t top = std::max(old_end, l.brk_kept);
    const uint64_t kept = std::min(top, new_end + kBrkKeptMax);
    mem_.unmap_keep_pages(new_end, std::min(old_end, kept) - new_end);
    if (old_end > kept) mem_.unmap(kept, old_end - kept);
    const uint64_t above = std::max(old_end, kept);
    if (top > above && mem_.range_free(above, top - above)) mem_.unmap(above, top - above);
    l.brk_kept = kept;
    host_.memory_changed(new_end, old_end - new_end);
  }
  l.brk = addr;
  return static_cast<int64_t>(l.brk);
}

int64_t AddressSpacePolicy::mremap(uint64_t old_addr, uint64_t old_len, uint64_t new_len,
                                   uint64_t flags, uint64_t new_addr) {
  if (!aligned(old_addr) || new_len == 0 || (flags & ~uint64_t{7})) return -EINVAL;
  if ((flags & kMremapFixed) && !(flags & kMremapMaymove)) return -EINVAL;
  old_len = page_up(old_len);
  new_len = page_up(new_len);
  if (old_len == 0 || !user_range(old_addr, old_len) || !mem_.range_mapped(old_addr, old_len)) {
    return -EFAULT;
  }
  const uint8_t prot = mem_.flags(old_addr) & 7;
  if (new_len > old_len && over_cap(new_len - old_len)) return -ENOMEM;
  auto move_to = [&](uint64_t dst) -> int64_t {
    if (!mem_.map_anonymous(dst, new_len, kPageRead | kPageWrite)) return -ENOMEM;
    invalidate_code(old_addr, old_len);  // before its pages (and their flags) move
    mem_.move_pages(dst, old_addr, std::min(old_len, new_len));  // whatever the protections
    mem_.protect(dst, new_len, prot);
    mem_.unmap(old_addr, old_len);
    host_.memory_changed(old_addr, old_len);
    host_.memory_changed(dst, new_len);
    map_names_.move(old_addr, std::min(old_len, new_len), dst);
    return static_cast<int64_t>(dst);
  };
  if (flags & kMremapFixed) {
    if (!aligned(new_addr) || !user_range(new_addr, new_len)) return -EINVAL;
    if (new_addr < old_addr + old_len && old_addr < new_addr + new_len) return -EINVAL;
    invalidate_code(new_addr, new_len);
    mem_.unmap(new_addr, new_len);
    return move_to(new_addr);
  }
  if (new_len <= old_len) {
    if (new_len < old_len) {
      invalidate_code(old_addr + new_len, old_len - new_len);
      mem_.unmap(old_addr + new_len, old_len - new_len);
      host_.memory_changed(old_addr + new_len, old_len - new_len);
      map_names_.clear(old_addr + new_len, old_len - new_len);
    }
    return static_cast<int64_t>(old_addr);
  }
  const uint64_t tail = old_addr + old_len, grow = new_len - old_len;
  if (user_range(tail, grow) && mem_.range_free(tail, grow)) {
    if (!mem_.map_anonymous(tail, grow, kPageRead | kPageWrite)) return -ENOMEM;
    mem_.protect(tail, grow, prot);
    host_.memory_changed(tail, grow);
    return static_cast<int64_t>(old_addr);
  }
  if (!(flags & kMremapMaymove)) return -ENOMEM;
  const uint64_t dst = mem_.find_free_below(new_len, layout_.mmap_top, layout_.mmap_floor);
  if (dst == 0) return -ENOMEM;
  return move_to(dst);
}

}  // namespace padlock::emu
