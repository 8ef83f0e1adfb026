// Guest file names to host file names, as qemu-user's -L does: an absolute guest path
// names a file inside the sysroot when one exists there, and the host's file otherwise.
// Relative paths (and paths relative to a directory descriptor) are the host's. The
// program's own /proc/self/exe is the guest program.
#pragma once

#include <string>

namespace padlock::emu {

class GuestPaths {
 public:
  GuestPaths() = default;
  // `sysroot` empty: the host root. Otherwise a directory (made absolute here).
  explicit GuestPaths(const std::string& sysroot);

  const std::string& sysroot() const { return sysroot_; }

  // The host file for a guest path that is looked up (open, stat, access, readlink, the
  // program interpreter). Paths that create or remove files are not mapped (qemu-user
  // does the same), so a guest never writes into the sysroot by accident.
  std::string resolve(const std::string& guest_path) const;

  // The guest's view of a host path that came from resolve(): inside the sysroot the
  // sysroot prefix is dropped, so /proc/self/exe reads back as the guest would see it.
  std::string guest_view(const std::string& host_path) const;

  // Does `resolve(guest_path)` land inside the sysroot?
  bool in_sysroot(const std::string& guest_path) const;

 private:
  std::string sysroot_;  // absolute, no trailing slash; empty for the host root
};

}  // namespace padlock::emu
