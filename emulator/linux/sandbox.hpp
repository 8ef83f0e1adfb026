// --sandbox DIR (docs/reliability.md, "Sandbox"): the guest's file access is confined to DIR
// and the sysroot (-L). Every path a guest names is opened by the host kernel beneath one
// of those roots with openat2: under DIR with RESOLVE_BENEATH (a "..", an absolute symbolic
// link or a link that climbs out fails), under the sysroot with RESOLVE_IN_ROOT (its
// absolute links are the sysroot's own, as the dynamic loader expects), and never through
// a /proc magic link. The check and the use are one kernel lookup, so a rename during the
// open cannot slip a path out. A path under neither root fails with EACCES, except a few
// harmless devices (/dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom).
// Socket addresses are checked as paths are (socket_address); the network and abstract
// names need --net.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <string>

namespace padlock::emu {

// A socket address made safe for the host by Sandbox::socket_address.
struct SandboxedAddress {
  sockaddr_un un{};
  socklen_t len = 0;
  int fd = -1;  // the directory or socket file `un` names through /proc/self/fd
  SandboxedAddress() = default;
  SandboxedAddress(const SandboxedAddress&) = delete;
  SandboxedAddress& operator=(const SandboxedAddress&) = delete;
  ~SandboxedAddress();
};

class Sandbox {
 public:
  Sandbox() = default;  // inactive: every path is the host's
  // `dir`: the directory the guest may use; `sysroot`: -L's directory (may be empty).
  // Throws LoadError when `dir` cannot be opened.
  Sandbox(const std::string& dir, const std::string& sysroot, bool net);
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;
  Sandbox(Sandbox&& o) noexcept;
  Sandbox& operator=(Sandbox&& o) noexcept;

  bool active() const { return nroots_ > 0; }
  bool net() const { return net_; }
  const std::string& dir() const { return dir_; }

  // openat(dirfd, path, flags, mode) confined to the roots: a host descriptor or -errno
  // (-EACCES when the path leaves them). `path` is a host path (after -L's mapping).
  int open(int dirfd, const std::string& path, int flags, mode_t mode = 0) const;
  // For a call that acts on a name inside a directory (create, remove, rename, link): the
  // directory opened O_PATH beneath a root (`*dir`, the caller closes it) and the last
  // component (`leaf`, never "." or ".."); 0 or -errno.
  int parent(int dirfd, const std::string& path, int* dir, std::string& leaf) const;
  // Is the host directory `path` (absolute) inside a root?
  bool contains(const std::string& path) const;
  // The socket address `a` (`len` bytes) of bind (`binds`), connect, sendto or sendmsg:
  //  - an AF_UNIX path is looked up beneath the roots as a path is: bind's socket file is
  //    made in a directory opened beneath a root, the others reach a socket file opened
  //    O_PATH beneath one; `out` then names it through /proc/self/fd (1 is returned);
  //  - an unnamed AF_UNIX address (autobind) and AF_UNSPEC reach nothing: 0, use `a`;
  //  - an abstract AF_UNIX name or any other family: 0 with --net, else -EACCES.
  // Or -errno.
  int socket_address(const sockaddr* a, socklen_t len, bool binds, SandboxedAddress& out) const;

 private:
  struct Root {
    std::string path;  // absolute, no trailing slash
    int fd = -1;       // O_PATH directory
    bool in_root = false;
  };
  // The root that holds `abs` (an absolute path) and the rest of the path below it.
  const Root* root_for(const std::string& abs, std::string& rel) const;
  // The absolute form of `path` relative to `dirfd` (AT_FDCWD: the working directory); false
  // when dirfd names nothing with a path.
  static bool absolute(int dirfd, const std::string& path, std::string& out);

  std::string dir_;
  Root roots_[2];
  int nroots_ = 0;
  bool net_ = false;
};

}  // namespace padlock::emu
