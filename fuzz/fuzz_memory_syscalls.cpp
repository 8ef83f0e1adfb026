// libFuzzer target: sequences of the memory system calls (mmap, munmap, mprotect, mremap,
// brk: emulator/linux/syscall/memory.cpp) on an i386 process, in both memory modes (direct,
// where host protections mirror the guest's, and Unicorn's TLB). After every call:
//   - the two system pages at the top of the window (the GDT and the boot stub) are still
//     mapped with their protections (no guest call may reach them);
//   - no user page lies at or above them;
//   - at the end, the page table's count of mapped bytes equals a fresh count (--max-memory's
//     base), and unmapping what the calls made leaves the system pages alone;
//   - each page the call left readable reads on the host, and each writable one writes
//     (a host protection that disagrees with the guest's would crash here).
// Input: byte 0 bit 0 picks the memory mode; then 14-byte records: the call (byte 0 mod 5),
// an address and a length (4 bytes each, little-endian), protections (byte 9), flags
// (byte 10: MAP_FIXED, MAP_FIXED_NOREPLACE, MAP_SHARED or PRIVATE, MREMAP_MAYMOVE/FIXED) and a
// second address (bytes 11..13, pages); the length is shifted right by bits 3..7 of byte 0.
// Every input starts from an empty user address space.
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "emulator/linux/process.hpp"
#include "fuzz/exit_program.hpp"
#include "models/cpu_model.hpp"

using namespace padlock;
using padlock::emu::AddressSpace;
using padlock::emu::Process;

namespace {

constexpr uint64_t kPage = AddressSpace::kPageSize;

struct Rig {
  emu::RunOptions opts;
  std::unique_ptr<Process> p;
  uint8_t system_flags[2] = {};
  explicit Rig(bool direct) {
    opts.program = padlock::fuzz::exit_program();
    opts.argv = {"fuzz"};
    opts.cpu = find_cpu_model("esther-c5j");
    opts.direct_memory = direct;
    opts.progress = false;
    p = std::make_unique<Process>(opts);
    const uint64_t sys = p->vm().layout().system_page;
    system_flags[0] = p->mem().flags(sys);
    system_flags[1] = p->mem().flags(sys + kPage);
    // The program's image and stack go too: below the system pages, nothing is mapped.
    p->vm().munmap(0, sys);
  }
  // What the calls mapped (each successful mmap's and mremap's result, and the break's
  // range) is unmapped again, so that every input starts from the same empty space.
  std::vector<std::pair<uint64_t, uint64_t>> made;
  void wipe() {
    emu::MemoryLayout& l = p->vm().layout();
    made.emplace_back(l.brk_start, l.brk > l.brk_start ? l.brk - l.brk_start + kPage : 0);
    for (const auto& [va, len] : made) {
      const uint64_t lo = va & ~(kPage - 1), hi = std::min(va + len, l.system_page);
      if (hi > lo) p->vm().munmap(lo, hi - lo);
    }
    made.clear();
    l.brk = l.brk_start;
  }
};

uint32_t le32(const uint8_t* b) {
  return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
}

// The checks after each call, over [va, va + len) for the host accesses.
void check(Rig& r, uint64_t va, uint64_t len) {
  AddressSpace& m = r.p->mem();
  const uint64_t sys = r.p->vm().layout().system_page;
  if (m.flags(sys) != r.system_flags[0] || m.flags(sys + kPage) != r.system_flags[1]) {
    __builtin_trap();
  }
  if (m.mapped_in(sys, m.size() - sys) != 2 * kPage) __builtin_trap();
  va &= ~(kPage - 1);
  len = std::min<uint64_t>(len, 64 * kPage);  // enough to cross any run edge it made
  for (uint64_t a = va; a < va + len && a < sys; a += kPage) {
    const uint8_t f = m.flags(a);
    if (!(f & emu::kPageMapped)) continue;
    volatile uint8_t* h = m.host(a);
    if (f & emu::kPageRead) {
      const uint8_t v = *h;
      if (f & emu::kPageWrite) *h = v;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static Rig direct(true), tlb(false);
  Rig& r = (data[0] & 1) ? tlb : direct;
  Process& p = *r.p;
  for (size_t at = 1; at + 14 <= size; at += 14) {
    const uint8_t* rec = data + at;
    // Lengths shifted right by a fuzzed amount: mostly small, sometimes near 4 GiB.
    const uint64_t addr = le32(rec + 1), len = le32(rec + 5) >> ((rec[0] >> 3) & 31);
    const uint64_t prot = rec[9] & 7, fl = rec[10];
    const uint64_t addr2 = uint64_t(rec[11] | rec[12] << 8 | rec[13] << 16) * kPage;
    int64_t res = 0;
    uint64_t va = addr, span = len;
    switch (rec[0] % 5) {
      case 0: {
        uint64_t flags = MAP_ANONYMOUS | ((fl & 1) ? MAP_SHARED : MAP_PRIVATE);
        if (fl & 2) flags |= MAP_FIXED;
        if (fl & 4) flags |= MAP_FIXED_NOREPLACE;
        res = p.vm().mmap(addr, len, prot, flags, -1, 0);
        if (res >= 0 || res < -4095) {
          va = static_cast<uint64_t>(res) & 0xFFFFFFFFu;
          r.made.emplace_back(va, len);
        }
        break;
      }
      case 1:
        res = p.vm().munmap(addr, len);
        break;
      case 2:
        res = p.vm().mprotect(addr, len, prot);
        break;
      case 3:
        res = p.vm().mremap(addr, len, addr2 ^ (uint64_t(rec[9]) << 24), fl & 3, addr2);
        if (res >= 0 || res < -4095) {
          va = static_cast<uint64_t>(res) & 0xFFFFFFFFu;
          span = addr2 ^ (uint64_t(rec[9]) << 24);
          r.made.emplace_back(va, span);
        }
        break;
      case 4:
        res = p.vm().brk(p.vm().layout().brk_start + (addr & 0x0FFFFFFF));
        va = p.vm().layout().brk_start;
        span = addr & 0x0FFFFFFF;
        break;
    }
    check(r, va, span);
  }
  if (p.mem().mapped_bytes() != p.mem().mapped_in(0, p.mem().size())) __builtin_trap();
  r.wipe();
  if (p.mem().mapped_bytes() != 2 * kPage) __builtin_trap();
  return 0;
}
