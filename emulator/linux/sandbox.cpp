#include "emulator/linux/sandbox.hpp"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

#include "emulator/loader/elf_view.hpp"

namespace padlock::emu {

namespace {

// Devices that reach nothing of the host's but are part of every C library's world.
constexpr std::string_view kDevices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                         "/dev/urandom"};

// The directory's absolute path without a trailing slash; empty if it cannot be resolved.
std::string real_dir(const std::string& path) {
  char real[PATH_MAX];
  if (realpath(path.c_str(), real) == nullptr) return "";
  std::string s = real;
  if (s == "/") s.clear();  // the host root: every path is below ""
  return s;
}

}  // namespace

Sandbox::Sandbox(const std::string& dir, const std::string& sysroot, bool net) : net_(net) {
  const int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw LoadError("--sandbox '" + dir + "': " + std::strerror(errno));
  const std::string real = real_dir(dir);
  dir_ = real.empty() ? "/" : real;
  roots_[nroots_++] = Root{real, fd, false};
  if (!sysroot.empty()) {
    const std::string s = real_dir(sysroot);
    const int sfd = ::open(sysroot.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0) throw LoadError("sysroot '" + sysroot + "': " + std::strerror(errno));
    roots_[nroots_++] = Root{s, sfd, true};
  }
}

Sandbox::~Sandbox() {
  for (int i = 0; i < nroots_; ++i) ::close(roots_[i].fd);
}

Sandbox::Sandbox(Sandbox&& o) noexcept {
  *this = std::move(o);
}

Sandbox& Sandbox::operator=(Sandbox&& o) noexcept {
  if (this != &o) {
    for (int i = 0; i < nroots_; ++i) ::close(roots_[i].fd);
    dir_ = std::move(o.dir_);
    for (int i = 0; i < o.nroots_; ++i) roots_[i] = std::move(o.roots_[i]);
    nroots_ = std::exchange(o.nroots_, 0);
    net_ = o.net_;
  }
  return *this;
}

bool Sandbox::absolute(int dirfd, const std::string& path, std::string& out) {
  if (!path.empty() && path[0] == '/') {
    out = path;
    return true;
  }
  char base[PATH_MAX];
  if (dirfd == AT_FDCWD) {
    if (getcwd(base, sizeof base) == nullptr) return false;
  } else {
    char link[64];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    const ssize_t n = readlink(link, base, sizeof base - 1);
    if (n <= 0 || base[0] != '/') return false;  // a pipe, a socket, an anonymous file
    base[n] = '\0';
  }
  out = base;
  if (out == "/") out.clear();
  out += "/" + path;
  return true;
}

const Sandbox::Root* Sandbox::root_for(const std::string& abs, std::string& rel) const {
  for (int i = 0; i < nroots_; ++i) {
    const std::string& r = roots_[i].path;
    if (abs.compare(0, r.size(), r) != 0) continue;
    if (abs.size() > r.size() && abs[r.size()] != '/') continue;  // /a/bc is not below /a/b
    // The rest below the root ("." for the root itself).
    const size_t from = std::min(abs.size(), r.size() + 1);
    rel.assign(abs, from, std::string::npos);
    if (rel.empty()) rel.push_back('.');
    return &roots_[i];
  }
  return nullptr;
}

bool Sandbox::contains(const std::string& path) const {
  std::string rel;
  return root_for(path, rel) != nullptr;
}

int Sandbox::open(int dirfd, const std::string& path, int flags, mode_t mode) const {
  if (path.empty()) return -ENOENT;
  std::string abs, rel;
  if (!absolute(dirfd, path, abs)) return -EACCES;
  const Root* root = root_for(abs, rel);
  if (root == nullptr) {
    for (std::string_view d : kDevices) {
      if (abs == d) {
        const int fd = ::open(abs.c_str(), flags & ~(O_CREAT | O_TMPFILE), mode);
        return fd >= 0 ? fd : -errno;
      }
    }
    return -EACCES;
  }
  open_how how{};
  how.flags = static_cast<uint64_t>(flags);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = RESOLVE_NO_MAGICLINKS | (root->in_root ? RESOLVE_IN_ROOT : RESOLVE_BENEATH);
  for (int attempt = 0;; ++attempt) {
    const long fd = syscall(SYS_openat2, root->fd, rel.c_str(), &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    // EAGAIN: a rename raced with a ".." in the lookup (the kernel refuses to guess).
    if (errno == EAGAIN && attempt < 16) continue;
    // EXDEV: the lookup left the root ("..", an absolute or climbing symbolic link);
    // ELOOP with RESOLVE_NO_MAGICLINKS: a /proc magic link.
    return errno == EXDEV ? -EACCES : -errno;
  }
}

int Sandbox::parent(int dirfd, const std::string& path, int* dir, std::string& leaf) const {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.rfind('/');
  // The directory part: "." for a bare name, "/" for a name in the root.
  std::string head =
      slash == std::string::npos ? std::string(1, '.') : p.substr(0, std::max<size_t>(slash, 1));
  leaf = slash == std::string::npos ? p : p.substr(slash + 1);
  if (leaf.empty() || leaf == "." || leaf == "..") return -EACCES;
  const int fd = open(dirfd, head, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fd;
  *dir = fd;
  return 0;
}

SandboxedAddress::~SandboxedAddress() {
  if (fd >= 0) ::close(fd);
}

int Sandbox::socket_address(const sockaddr* a, socklen_t len, bool binds,
                            SandboxedAddress& out) const {
  if (len < sizeof(sa_family_t)) return 0;  // the host answers EINVAL
  if (a->sa_family == AF_UNSPEC) return 0;
  if (a->sa_family != AF_UNIX) return net_ ? 0 : -EACCES;
  const size_t off = offsetof(sockaddr_un, sun_path);
  if (len <= off) return 0;  // unnamed: autobind, or the host's EINVAL
  const auto* un = reinterpret_cast<const sockaddr_un*>(a);
  const size_t room = std::min<size_t>(len - off, sizeof un->sun_path);
  if (un->sun_path[0] == '\0') return net_ ? 0 : -EACCES;  // an abstract name
  const std::string path(un->sun_path, strnlen(un->sun_path, room));
  std::string name;
  if (binds) {
    std::string leaf;
    if (const int r = parent(AT_FDCWD, path, &out.fd, leaf); r < 0) return r;
    name = "/proc/self/fd/" + std::to_string(out.fd) + "/" + leaf;
  } else {
    out.fd = open(AT_FDCWD, path, O_PATH | O_CLOEXEC);
    if (out.fd < 0) return out.fd;
    name = "/proc/self/fd/" + std::to_string(out.fd);
  }
  if (name.size() >= sizeof out.un.sun_path) return -ENAMETOOLONG;
  out.un.sun_family = AF_UNIX;
  std::memcpy(out.un.sun_path, name.c_str(), name.size() + 1);
  out.len = static_cast<socklen_t>(off + name.size() + 1);
  return 1;
}

}  // namespace padlock::emu
