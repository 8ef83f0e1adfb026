// The address-space policy (emulator/linux/vm/address_space_policy.*) on its own, over a
// page table with no CPU: where mmap places a mapping, the errno values mmap(2), munmap(2),
// mprotect(2), brk(2) and mremap(2) document, the break's growth and shrink, mremap's moves,
// the names /proc/self/maps shows and what the process is told (VmHost).
#include "emulator/linux/vm/address_space_policy.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace padlock::emu::test {
namespace {

constexpr uint64_t kPage = AddressSpace::kPageSize;
// mmap(2)'s flag values (x86, both ABIs).
constexpr uint64_t kShared = 0x01, kPrivate = 0x02, kFixed = 0x10, kAnon = 0x20, k32Bit = 0x40,
                   kFixedNoreplace = 0x100000;
constexpr uint64_t kMaymove = 1, kMremapFixed = 2;  // mremap(2)
constexpr uint64_t kRw = PROT_READ | PROT_WRITE;

struct Call {
  char what;  // 'd' drop_code, 'c' memory_changed, 'f' file_mapped, 'u' unmapped
  uint64_t va, len;
  bool operator==(const Call& o) const { return what == o.what && va == o.va && len == o.len; }
};

class RecordingHost : public VmHost {
 public:
  void drop_code(uint64_t va, uint64_t len) override { calls.push_back({'d', va, len}); }
  void memory_changed(uint64_t va, uint64_t len) override { calls.push_back({'c', va, len}); }
  void file_mapped(int, uint64_t va, uint64_t offset) override {
    calls.push_back({'f', va, offset});
  }
  void unmapped(uint64_t va, uint64_t len) override { calls.push_back({'u', va, len}); }
  size_t count(char what) const {
    size_t n = 0;
    for (const Call& c : calls) n += c.what == what;
    return n;
  }
  std::vector<Call> calls;
};

// An i386 process's layout as Process::load_program makes it (3 GiB split, 8 MiB stack,
// 128 MiB gap, mmap_min_addr 0x10000), its break at 0x08100000.
class AddressSpacePolicyTest : public ::testing::Test {
 protected:
  explicit AddressSpacePolicyTest(VmConfig config = {}) : vm(mem, host, paths, config) {
    MemoryLayout& l = vm.layout();
    l.system_page = 0xFFFFE000;
    l.stack_top = 0xC0000000;
    l.stack_size = 8 << 20;
    l.mmap_top = l.stack_top - l.stack_size - (128 << 20);
    l.mmap_floor = 0x10000;
    l.brk_start = l.brk = kBrk;
  }
  int64_t anon(uint64_t addr, uint64_t len, uint64_t prot = kRw, uint64_t flags = 0) {
    return vm.mmap(addr, len, prot, kPrivate | kAnon | flags, -1, 0);
  }
  bool readable(uint64_t va) { return mem.translate(va, 1, Access::Read) != nullptr; }
  bool writable(uint64_t va) { return mem.translate(va, 1, Access::Write) != nullptr; }

  static constexpr uint64_t kBrk = 0x08100000;
  AddressSpace mem{false};
  RecordingHost host;
  GuestPaths paths;
  AddressSpacePolicy vm;
};

// Linux's top-down allocator: the highest free range below mmap_base, page-rounded.
TEST_F(AddressSpacePolicyTest, MmapPlacesTopDownBelowTheMmapTopInWholePages) {
  const uint64_t top = vm.layout().mmap_top;
  EXPECT_EQ(anon(0, 5000), static_cast<int64_t>(top - 2 * kPage));
  EXPECT_EQ(anon(0, 1), static_cast<int64_t>(top - 3 * kPage));
  EXPECT_TRUE(writable(top - 2 * kPage + 5000));  // the rest of the last page is mapped
  EXPECT_EQ(mem.mapped_bytes(), 3 * kPage);
  EXPECT_EQ(mem.host(top - kPage)[kPage - 1], 0);  // anonymous memory reads as zeros
  // A free, aligned hint is taken; a busy or unaligned one is only a hint.
  EXPECT_EQ(anon(0x20000000, kPage), 0x20000000);
  EXPECT_EQ(anon(0x20000000, kPage), static_cast<int64_t>(top - 4 * kPage));
  EXPECT_EQ(anon(0x30000800, kPage), static_cast<int64_t>(top - 5 * kPage));
  // MAP_32BIT: the first 2 GiB, from 1 GiB up (arch/x86/kernel/sys_x86_64.c).
  const int64_t low = anon(0, kPage, kRw, k32Bit);
  EXPECT_GE(low, 0x40000000);
  EXPECT_LT(low, 0x80000000);
  EXPECT_EQ(host.count('c'), 6u);  // each new mapping flushes the TLB
}

TEST_F(AddressSpacePolicyTest, MmapErrorsAreLinuxs) {
  EXPECT_EQ(anon(0, 0), -EINVAL);                                         // length 0
  EXPECT_EQ(vm.mmap(0, kPage, kRw, kPrivate | kAnon, -1, 100), -EINVAL);  // offset
  EXPECT_EQ(vm.mmap(0, kPage, kRw, kAnon, -1, 0), -EINVAL);  // neither SHARED nor PRIVATE
  EXPECT_EQ(anon(0x20000800, kPage, kRw, kFixed), -EINVAL);  // a fixed address unaligned
  EXPECT_EQ(anon(0, ~uint64_t{0}), -ENOMEM);                 // no room for the length
  // Past TASK_SIZE (the system pages): ENOMEM.
  EXPECT_EQ(anon(0xFFFFE000, kPage, kRw, kFixed), -ENOMEM);
  ASSERT_EQ(anon(0x20000000, 2 * kPage, kRw, kFixed), 0x20000000);
  EXPECT_EQ(anon(0x20001000, 2 * kPage, kRw, kFixedNoreplace), -EEXIST);
  EXPECT_EQ(vm.mmap(0, kPage, PROT_READ, kPrivate, 1000, 0), -EBADF);  // not open
  const int dir = open("/", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  EXPECT_EQ(vm.mmap(0, kPage, PROT_READ, kPrivate, dir, 0), -ENODEV);
  close(dir);
  EXPECT_EQ(mem.mapped_bytes(), 2 * kPage);  // nothing else was mapped
}

TEST_F(AddressSpacePolicyTest, MapFixedReplacesAndDropsTheCodeThatWasThere) {
  ASSERT_EQ(anon(0x20000000, 2 * kPage, PROT_READ | PROT_EXEC, kFixed), 0x20000000);
  EXPECT_EQ(host.count('d'), 0u);  // fresh pages held no code
  mem.host(0x20000000)[0] = 0xC3;
  ASSERT_EQ(anon(0x20000000, kPage, kRw, kFixed), 0x20000000);
  EXPECT_EQ(mem.host(0x20000000)[0], 0);
  EXPECT_EQ(host.count('d'), 1u);
  EXPECT_TRUE(host.calls[host.calls.size() - 2] == (Call{'d', 0x20000000, kPage}));
  EXPECT_EQ(mem.flags(0x20001000) & 7, kPageRead | kPageExec);  // the rest stays
}

// READ_IMPLIES_EXEC (an i386 program without PT_GNU_STACK): readable pages are executable.
TEST_F(AddressSpacePolicyTest, ReadDoesNotImplyExecByDefault) {
  ASSERT_EQ(anon(0x20000000, kPage, PROT_READ, kFixed), 0x20000000);
  EXPECT_EQ(mem.flags(0x20000000) & 7, kPageRead);
  ASSERT_EQ(anon(0x20001000, kPage, PROT_WRITE, kFixed), 0x20001000);
  EXPECT_EQ(mem.flags(0x20001000) & 7, kPageRead | kPageWrite);  // x86: write implies read
}

class ReadImpliesExecTest : public AddressSpacePolicyTest {
 protected:
  ReadImpliesExecTest() : AddressSpacePolicyTest(VmConfig{0, true}) {}
};

TEST_F(ReadImpliesExecTest, ReadablePagesAreExecutable) {
  ASSERT_EQ(anon(0x20000000, kPage, PROT_READ, kFixed), 0x20000000);
  EXPECT_EQ(mem.flags(0x20000000) & 7, kPageRead | kPageExec);
  ASSERT_EQ(anon(0x20001000, kPage, PROT_NONE, kFixed), 0x20001000);
  EXPECT_EQ(mem.flags(0x20001000) & 7, 0);
}

// --max-memory as RLIMIT_AS: may_expand_vm counts only the bytes a call adds.
class MaxMemoryTest : public AddressSpacePolicyTest {
 protected:
  MaxMemoryTest() : AddressSpacePolicyTest(VmConfig{4 * kPage, false}) {}
};

TEST_F(MaxMemoryTest, MappingsPastTheCapFailWithEnomem) {
  ASSERT_EQ(anon(0x20000000, 3 * kPage, kRw, kFixed), 0x20000000);
  EXPECT_EQ(anon(0, 2 * kPage), -ENOMEM);
  EXPECT_EQ(anon(0x20000000, 3 * kPage, kRw, kFixed), 0x20000000);  // adds nothing
  EXPECT_EQ(vm.mremap(0x20000000, 3 * kPage, 5 * kPage, kMaymove, 0), -ENOMEM);
  EXPECT_EQ(vm.brk(kBrk + 2 * kPage), static_cast<int64_t>(kBrk));  // refused: the old break
  EXPECT_GT(anon(0, kPage), 0);
  EXPECT_EQ(mem.mapped_bytes(), 4 * kPage);
}

TEST_F(AddressSpacePolicyTest, FileMappingsCopyOrShareTheFileAndNameIt) {
  char path[] = "/tmp/padlock-vm-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> bytes(6000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  // MAP_PRIVATE at offset 4096: the file's bytes from there, zeros past its end.
  const int64_t va = vm.mmap(0, 2 * kPage, PROT_READ | PROT_EXEC, kPrivate, fd, kPage);
  ASSERT_GT(va, 0);
  const uint8_t* p = mem.host(static_cast<uint64_t>(va));
  EXPECT_EQ(std::memcmp(p, bytes.data() + kPage, 6000 - kPage), 0);
  EXPECT_EQ(p[6000 - kPage], 0);
  EXPECT_EQ(p[2 * kPage - 1], 0);
  EXPECT_FALSE(writable(static_cast<uint64_t>(va)));
  uint64_t offset = 0, until = 0;
  const MapNames::Name* n = vm.map_names().at(static_cast<uint64_t>(va) + kPage, &offset, &until);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->path, path);
  EXPECT_EQ(offset, 2 * kPage);
  EXPECT_EQ(until, static_cast<uint64_t>(va) + 2 * kPage);
  EXPECT_TRUE(host.calls.back() == (Call{'f', static_cast<uint64_t>(va), kPage}));
  // MAP_SHARED: a store reaches the file.
  const int64_t sh = vm.mmap(0, kPage, kRw, kShared, fd, 0);
  ASSERT_GT(sh, 0);
  mem.host(static_cast<uint64_t>(sh))[3] = 0xAB;
  uint8_t b = 0;
  ASSERT_EQ(pread(fd, &b, 1, 3), 1);
  EXPECT_EQ(b, 0xAB);
  EXPECT_EQ(host.count('f'), 1u);  // only code is announced to the observers
  close(fd);
  unlink(path);
}

TEST_F(AddressSpacePolicyTest, MunmapUnmapsForgetsNamesAndTellsTheObservers) {
  EXPECT_EQ(vm.munmap(0x20000800, kPage), -EINVAL);
  EXPECT_EQ(vm.munmap(0x20000000, 0), -EINVAL);
  EXPECT_EQ(vm.munmap(0xFFFFE000, kPage), -EINVAL);  // the system pages
  EXPECT_EQ(vm.munmap(0x20000000, kPage), 0);        // nothing there: fine
  ASSERT_EQ(anon(0x20000000, 3 * kPage, kRw, kFixed), 0x20000000);
  vm.map_names().set(0x20000000, 3 * kPage, MapNames::Name{"/lib/x", 0, 1, 2});
  EXPECT_EQ(vm.munmap(0x20001000, 1), 0);  // the length rounds up to a page
  EXPECT_TRUE(readable(0x20000000));
  EXPECT_FALSE(readable(0x20001000));
  EXPECT_TRUE(readable(0x20002000));
  uint64_t offset = 0, until = 0;
  EXPECT_EQ(vm.map_names().at(0x20001000, &offset, &until), nullptr);
  ASSERT_NE(vm.map_names().at(0x20002000, &offset, &until), nullptr);
  EXPECT_EQ(offset, 2 * kPage);
  EXPECT_TRUE(host.calls.back() == (Call{'u', 0x20001000, kPage}));
  EXPECT_EQ(host.count('d'), 0u);  // no executable pages: no code to drop
  ASSERT_EQ(anon(0x30000000, kPage, PROT_READ | PROT_EXEC, kFixed), 0x30000000);
  EXPECT_EQ(vm.munmap(0x30000000, kPage), 0);
  EXPECT_EQ(host.count('d'), 1u);
}

TEST_F(AddressSpacePolicyTest, MprotectChangesAccessAndFailsAsLinuxDoes) {
  ASSERT_EQ(anon(0x20000000, 2 * kPage, kRw, kFixed), 0x20000000);
  EXPECT_EQ(vm.mprotect(0x20000001, kPage, PROT_READ), -EINVAL);
  EXPECT_EQ(vm.mprotect(0x20000000, kPage, 0x10), -EINVAL);           // an unknown bit
  EXPECT_EQ(vm.mprotect(0x20000000, 3 * kPage, PROT_READ), -ENOMEM);  // a hole at the end
  EXPECT_TRUE(writable(0x20000000));                                  // ... and nothing changed
  EXPECT_EQ(vm.mprotect(0x20000000, 0, PROT_NONE), 0);
  EXPECT_EQ(vm.mprotect(0x20000000, kPage, PROT_READ), 0);
  EXPECT_TRUE(readable(0x20000000));
  EXPECT_FALSE(writable(0x20000000));
  EXPECT_TRUE(writable(0x20001000));
  EXPECT_EQ(vm.mprotect(0x20001000, kPage, PROT_NONE), 0);
  EXPECT_FALSE(readable(0x20001000));
  EXPECT_EQ(mem.mapped_bytes(), 2 * kPage);  // PROT_NONE pages stay mapped
  // A refused call changes nothing: code translated from the pages stays.
  ASSERT_EQ(anon(0x30000000, kPage, PROT_READ | PROT_EXEC, kFixed), 0x30000000);
  EXPECT_EQ(vm.mprotect(0x30000000, 2 * kPage, PROT_READ), -ENOMEM);
  EXPECT_EQ(host.count('d'), 0u);
  EXPECT_EQ(vm.mprotect(0x30000000, kPage, PROT_READ), 0);
  EXPECT_EQ(host.count('d'), 1u);
}

// brk(2): the system call returns the new break, or the current one when it cannot move.
TEST_F(AddressSpacePolicyTest, BrkGrowsShrinksAndRegrowsWithZeros) {
  EXPECT_EQ(vm.brk(0), static_cast<int64_t>(kBrk));  // below the start: where it is
  EXPECT_EQ(vm.brk(kBrk + 5000), static_cast<int64_t>(kBrk + 5000));
  EXPECT_EQ(vm.layout().brk, kBrk + 5000);
  EXPECT_TRUE(writable(kBrk + 2 * kPage - 1));  // whole pages
  EXPECT_FALSE(readable(kBrk + 2 * kPage));
  std::memset(mem.host(kBrk), 0x5A, 2 * kPage);
  EXPECT_EQ(vm.brk(kBrk + 100), static_cast<int64_t>(kBrk + 100));
  EXPECT_TRUE(readable(kBrk));
  EXPECT_FALSE(readable(kBrk + kPage));
  EXPECT_EQ(mem.host(kBrk)[99], 0x5A);  // the page still under the break keeps its bytes
  EXPECT_EQ(vm.brk(kBrk + 2 * kPage), static_cast<int64_t>(kBrk + 2 * kPage));
  EXPECT_EQ(mem.host(kBrk + kPage)[0], 0);  // grown again: zeros, as fresh pages
  EXPECT_EQ(mem.host(kBrk + 2 * kPage - 1)[0], 0);
  // A mapping in the way: the break stays.
  ASSERT_EQ(anon(kBrk + 3 * kPage, kPage, kRw, kFixed), static_cast<int64_t>(kBrk + 3 * kPage));
  EXPECT_EQ(vm.brk(kBrk + 4 * kPage), static_cast<int64_t>(kBrk + 2 * kPage));
  EXPECT_EQ(vm.brk(vm.layout().mmap_top + kPage), static_cast<int64_t>(kBrk + 2 * kPage));
  EXPECT_EQ(vm.brk(kBrk + 3 * kPage), static_cast<int64_t>(kBrk + 3 * kPage));
}

// mremap(2): grow in place when the pages after are free, else move with MREMAP_MAYMOVE;
// ENOMEM without it; EINVAL for bad flags and overlapping MREMAP_FIXED; EFAULT for an old
// range that is not mapped.
TEST_F(AddressSpacePolicyTest, MremapGrowsInPlaceMovesOrFails) {
  constexpr uint64_t a = 0x20000000;
  ASSERT_EQ(anon(a, kPage, PROT_READ, kFixed), static_cast<int64_t>(a));
  vm.map_names().set(a, kPage, MapNames::Name{"/lib/y", 0, 1, 2});
  EXPECT_EQ(vm.mremap(a, kPage, 2 * kPage, 0, 0), static_cast<int64_t>(a));
  EXPECT_EQ(mem.flags(a + kPage) & 7, kPageRead);  // the old pages' protection
  ASSERT_EQ(anon(a + 2 * kPage, kPage, kRw, kFixed), static_cast<int64_t>(a + 2 * kPage));
  EXPECT_EQ(vm.mremap(a, 2 * kPage, 3 * kPage, 0, 0), -ENOMEM);
  mem.host(a)[7] = 0x77;  // (the host side is writable)
  const int64_t moved = vm.mremap(a, 2 * kPage, 3 * kPage, kMaymove, 0);
  ASSERT_GT(moved, 0);
  const uint64_t m = static_cast<uint64_t>(moved);
  EXPECT_NE(m, a);
  EXPECT_EQ(mem.host(m)[7], 0x77);
  EXPECT_FALSE(readable(a));
  EXPECT_TRUE(readable(m + 2 * kPage));
  EXPECT_FALSE(writable(m));
  uint64_t offset = 0, until = 0;
  EXPECT_EQ(vm.map_names().at(a, &offset, &until), nullptr);
  const MapNames::Name* n = vm.map_names().at(m, &offset, &until);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->path, "/lib/y");
  // Errors.
  EXPECT_EQ(vm.mremap(m + 1, kPage, kPage, 0, 0), -EINVAL);
  EXPECT_EQ(vm.mremap(m, kPage, 0, 0, 0), -EINVAL);
  EXPECT_EQ(vm.mremap(m, kPage, kPage, 8, 0), -EINVAL);
  EXPECT_EQ(vm.mremap(m, kPage, kPage, kMremapFixed, 0x30000000), -EINVAL);
  EXPECT_EQ(vm.mremap(m, 2 * kPage, 2 * kPage, kMaymove | kMremapFixed, m + kPage), -EINVAL);
  EXPECT_EQ(vm.mremap(a, kPage, 2 * kPage, kMaymove, 0), -EFAULT);
  // MREMAP_FIXED: to exactly there, replacing what was mapped.
  EXPECT_EQ(vm.mremap(m, kPage, kPage, kMaymove | kMremapFixed, a + 2 * kPage),
            static_cast<int64_t>(a + 2 * kPage));
  EXPECT_EQ(mem.host(a + 2 * kPage)[7], 0x77);
  EXPECT_FALSE(writable(a + 2 * kPage));
  // Shrinking stays in place and unmaps the tail.
  EXPECT_EQ(vm.mremap(m + kPage, 2 * kPage, kPage, 0, 0), static_cast<int64_t>(m + kPage));
  EXPECT_TRUE(readable(m + kPage));
  EXPECT_FALSE(readable(m + 2 * kPage));
}

}  // namespace
}  // namespace padlock::emu::test
