#include "emulator/linux/files/guest_files.hpp"

namespace padlock::emu {

void GuestFiles::closed(int fd) {
  dir_cookies.erase(fd);
  timerfds.erase(fd);
  signalfd_mask.erase(fd);
  self_mem.erase(fd);
  fd_dirs.erase(fd);
  fd_names.erase(fd);
}

void GuestFiles::duplicated(int from, int to) {
  if (to == from) return;
  closed(to);
  if (fd_dirs.count(from) != 0) fd_dirs.insert(to);
  if (auto it = fd_names.find(from); it != fd_names.end()) fd_names[to] = it->second;
  if (auto it = timerfds.find(from); it != timerfds.end()) timerfds[to] = it->second;
  if (auto it = signalfd_mask.find(from); it != signalfd_mask.end()) signalfd_mask[to] = it->second;
}

}  // namespace padlock::emu
