#include "emulator/linux/guest_paths.hpp"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

namespace padlock::emu {

GuestPaths::GuestPaths(const std::string& sysroot) {
  if (sysroot.empty()) return;
  char real[PATH_MAX];
  sysroot_ = realpath(sysroot.c_str(), real) != nullptr ? real : sysroot;
  while (sysroot_.size() > 1 && sysroot_.back() == '/') sysroot_.pop_back();
  if (sysroot_ == "/") sysroot_.clear();  // "/" is the host root itself
}

bool GuestPaths::in_sysroot(const std::string& guest_path) const {
  if (sysroot_.empty() || guest_path.empty() || guest_path[0] != '/') return false;
  // qemu-user's rule (util/path.c): the sysroot's file wins when it exists, following
  // symbolic links; a dangling link inside the sysroot falls back to the host's file.
  return access((sysroot_ + guest_path).c_str(), F_OK) == 0;
}

std::string GuestPaths::resolve(const std::string& guest_path) const {
  return in_sysroot(guest_path) ? sysroot_ + guest_path : guest_path;
}

std::string GuestPaths::guest_view(const std::string& host_path) const {
  if (sysroot_.empty() || host_path.compare(0, sysroot_.size(), sysroot_) != 0) return host_path;
  if (host_path.size() == sysroot_.size()) return "/";
  if (host_path[sysroot_.size()] != '/') return host_path;
  return host_path.substr(sysroot_.size());
}

}  // namespace padlock::emu
