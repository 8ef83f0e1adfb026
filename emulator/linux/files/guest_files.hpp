// The process's files and sockets as its system calls see them: the emulator's own
// descriptors, which are never the guest's (docs/reliability.md, "The emulator's
// descriptors are not the guest's"); what Linux keeps per open file that the host's
// descriptor lacks (i386 directory cookies, timerfds on the virtual clock, signalfd masks,
// /proc/self/mem offsets, the names of stand-in files); and where a guest path leads
// (-L/--sysroot, --sandbox DIR, --net).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "emulator/linux/guest_paths.hpp"
#include "emulator/linux/sandbox.hpp"
#include "emulator/time/virtual_time.hpp"

namespace padlock::emu {

// A timerfd on the virtual clock (syscall/timerfd.cpp): its clock, next expiry and
// interval (virtual cycles; kNever: disarmed) and the expirations not yet read.
struct VirtualTimerfd {
  int clock = 0;
  uint64_t deadline = VirtualTime::kNever;
  uint64_t interval = 0;
  uint64_t interval_ns = 0;
  uint64_t ticks = 0;
};

class GuestFiles {
 public:
  GuestFiles(const GuestPaths& paths, const Sandbox& sandbox) : paths_(paths), sandbox_(sandbox) {}

  // One of the emulator's own descriptors (host_fds): never the guest's.
  bool emulator_fd(int fd) const { return host_fds.count(fd) != 0; }
  const GuestPaths& paths() const { return paths_; }   // -L/--sysroot lookups
  const Sandbox& sandbox() const { return sandbox_; }  // --sandbox DIR, --net

  // close: what was known of `fd` is gone.
  void closed(int fd);
  // dup, dup2, dup3, F_DUPFD: `to` is a new descriptor for the file of `from`. The
  // /proc/self/fd/ listing's filter, a stand-in's name, a timerfd and a signalfd's mask go
  // with it (the last two shared, as the duplicates share Linux's file); what was known
  // of `to` is gone.
  void duplicated(int from, int to);

  // i386 directory offsets: the host's 64-bit ext4 hash cookies do not fit the 32-bit
  // d_off of a 32-bit process (Linux gives compat tasks 32-bit hashes), so i386 guests see
  // small cookies (index + 1) that lseek maps back, per descriptor.
  std::unordered_map<int, std::vector<int64_t>> dir_cookies;
  // Timerfds on the virtual clock (timing on; syscall/timerfd.cpp), by descriptor; shared
  // by a descriptor's duplicates.
  std::unordered_map<int, std::shared_ptr<VirtualTimerfd>> timerfds;
  // signalfd's signal mask, by descriptor (syscall/signalfd.cpp); the duplicates of a
  // signalfd (dup, dup2, dup3, F_DUPFD) share it, as they share Linux's file.
  std::unordered_map<int, std::shared_ptr<uint64_t>> signalfd_mask;
  // Descriptors of /proc/self/mem (a host descriptor on /dev/null, to own the number) and
  // their file offsets, which are guest addresses (syscall/file.cpp).
  std::unordered_map<int, uint64_t> self_mem;
  // The emulator's own descriptors (its output files, Unicorn's): open, close-on-exec, when
  // the guest started. /proc/self/fd/ leaves them out (syscall/file.cpp).
  std::unordered_set<int> host_fds;
  // Descriptors on the host's /proc/self/fd/ directory, whose listing is filtered.
  std::unordered_set<int> fd_dirs;
  // What /proc/self/fd/N names for descriptors whose host file is a stand-in
  // (/proc/self/mem's /dev/null, the generated /proc files' memory files).
  std::unordered_map<int, std::string> fd_names;

 private:
  const GuestPaths& paths_;
  const Sandbox& sandbox_;
};

}  // namespace padlock::emu
