#include "emulator/linux/proc_lookup.hpp"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "emulator/linux/process.hpp"

namespace padlock::emu {

namespace {

constexpr int kMaxLinks = 40;      // Linux's MAXSYMLINKS
constexpr ino_t kProcRootIno = 1;  // fs/proc/root.c: PROC_ROOT_INO
constexpr int kMaxProcDepth = 4;   // <pid>/task/<tid>/fd

struct HostFd {
  int fd = -1;
  ~HostFd() {
    if (fd >= 0) close(fd);
  }
  void reset(int f) {
    if (fd >= 0) close(fd);
    fd = f;
  }
};

// What a host directory is to the guest.
enum class Dir {
  kOther,
  kProcRoot,       // a procfs root (/proc)
  kOwnPid,         // this process's /proc/<pid> or /proc/<pid>/task/<tid>
  kOwnFd,          // ... /fd
  kOwnFdInfo,      // ... /fdinfo
  kOwnMapFiles,    // ... /map_files
  kOtherEmulator,  // the same directories of another padlock-emu process
  kSysCpu,         // /sys/devices/system/cpu
};

bool numeric(std::string_view s) {
  if (s.empty() || s.size() > 10) return false;
  for (const char ch : s) {
    if (ch < '0' || ch > '9') return false;
  }
  return true;
}

// The host path the kernel gives descriptor `fd` (d_path), split into components.
std::vector<std::string> components_of(int fd) {
  char link[64], buf[PATH_MAX];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, buf, sizeof buf - 1);
  std::vector<std::string> out;
  if (n <= 0) return out;
  std::string_view s(buf, static_cast<size_t>(n));
  while (!s.empty()) {
    const size_t slash = s.find('/');
    const std::string_view part = s.substr(0, slash);
    if (!part.empty()) out.emplace_back(part);
    if (slash == std::string_view::npos) break;
    s.remove_prefix(slash + 1);
  }
  return out;
}

// Is host process `pid` a padlock-emu process (its executable is this one's)?
bool is_emulator(long pid) {
  struct stat self {
  }, other{};
  const std::string exe = "/proc/" + std::to_string(pid) + "/exe";
  return stat("/proc/self/exe", &self) == 0 && stat(exe.c_str(), &other) == 0 &&
         self.st_dev == other.st_dev && self.st_ino == other.st_ino;
}

// How many levels below a procfs root the directory `fd` is (0: the root itself), up to
// kMaxProcDepth; -1 when deeper.
int proc_depth(int fd) {
  HostFd at;
  int cur = fd;
  for (int depth = 0; depth <= kMaxProcDepth; ++depth) {
    struct stat st {};
    if (fstat(cur, &st) != 0) return -1;
    if (st.st_ino == kProcRootIno) return depth;
    const int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (up < 0) return -1;
    at.reset(up);
    cur = up;
  }
  return -1;
}

Dir classify_dir(Process& p, int fd) {
  struct statfs sf {};
  if (fstatfs(fd, &sf) != 0) return Dir::kOther;
  if (sf.f_type == SYSFS_MAGIC) {
    const std::vector<std::string> c = components_of(fd);
    const size_t n = c.size();
    return n >= 3 && c[n - 3] == "devices" && c[n - 2] == "system" && c[n - 1] == "cpu"
               ? Dir::kSysCpu
               : Dir::kOther;
  }
  if (sf.f_type != PROC_SUPER_MAGIC) return Dir::kOther;
  const int depth = proc_depth(fd);
  if (depth == 0) return Dir::kProcRoot;
  if (depth < 0) return Dir::kOther;
  const std::vector<std::string> all = components_of(fd);
  if (all.size() < static_cast<size_t>(depth)) return Dir::kOther;
  // The path below the procfs root: <pid>, <pid>/X, <pid>/task/<tid>, <pid>/task/<tid>/X.
  const std::vector<std::string> rel(all.end() - depth, all.end());
  if (!numeric(rel[0])) return Dir::kOther;
  std::string_view sub;
  if (depth == 1 || (depth == 3 && rel[1] == "task" && numeric(rel[2]))) {
    sub = "";
  } else if (depth == 2) {
    sub = rel[1];
  } else if (depth == 4 && rel[1] == "task" && numeric(rel[2])) {
    sub = rel[3];
  } else {
    return Dir::kOther;
  }
  const long pid = std::strtol(rel[0].c_str(), nullptr, 10);
  const bool own = pid == p.identity().pid;
  if (!own) {
    if (sub != "" && sub != "fd" && sub != "fdinfo" && sub != "map_files") return Dir::kOther;
    return is_emulator(pid) ? Dir::kOtherEmulator : Dir::kOther;
  }
  if (sub.empty()) return Dir::kOwnPid;
  if (sub == "fd") return Dir::kOwnFd;
  if (sub == "fdinfo") return Dir::kOwnFdInfo;
  if (sub == "map_files") return Dir::kOwnMapFiles;
  return Dir::kOther;
}

struct Leaf {
  std::string_view name;
  ProcEntry entry;
};

// The entries of the guest's own /proc/<pid>/ that are served or refused; the others are
// the host's (status, limits, mounts ...: nothing of the emulator's address space).
constexpr Leaf kOwnLeaves[] = {
    {"mem", ProcEntry::kMem},
    {"maps", ProcEntry::kMaps},
    {"auxv", ProcEntry::kAuxv},
    {"cmdline", ProcEntry::kCmdline},
    {"environ", ProcEntry::kEnviron},
    {"stat", ProcEntry::kStat},
    {"exe", ProcEntry::kExe},
    {"fd", ProcEntry::kFdDir},
    {"fdinfo", ProcEntry::kFdDir},
    {"smaps", ProcEntry::kRefused},
    {"smaps_rollup", ProcEntry::kRefused},
    {"numa_maps", ProcEntry::kRefused},
    {"pagemap", ProcEntry::kRefused},
    {"map_files", ProcEntry::kRefused},
    {"syscall", ProcEntry::kRefused},
    {"stack", ProcEntry::kRefused},
};

// Another emulator's memory and descriptors (a guest's parent or child): refused.
constexpr std::string_view kOtherEmulatorLeaves[] = {
    "mem",       "maps",    "smaps", "smaps_rollup", "numa_maps", "pagemap",
    "map_files", "syscall", "stack", "fd",           "fdinfo",    "auxv",
    "environ",   "cwd",     "root",  "exe",          "stat",      "cmdline"};

// The entry `leaf` names in a directory of kind `d` (kNone: not served there).
ProcPath entry_in(Dir d, const std::string& leaf) {
  ProcPath r;
  switch (d) {
    case Dir::kOwnPid:
      for (const Leaf& l : kOwnLeaves) {
        if (leaf == l.name) {
          r.entry = l.entry;
          r.name = leaf;
        }
      }
      break;
    case Dir::kOwnFd:
    case Dir::kOwnFdInfo:
      if (numeric(leaf)) {
        r.entry = d == Dir::kOwnFd ? ProcEntry::kFd : ProcEntry::kFdInfo;
        const long n = std::strtol(leaf.c_str(), nullptr, 10);
        r.fd = n > INT_MAX ? INT_MAX : static_cast<int>(n);
        r.name = (d == Dir::kOwnFd ? "fd/" : "fdinfo/") + leaf;
      }
      break;
    case Dir::kOwnMapFiles:
      r.entry = ProcEntry::kRefused;
      break;
    case Dir::kOtherEmulator:
      for (std::string_view l : kOtherEmulatorLeaves) {
        if (leaf == l) r.entry = ProcEntry::kRefused;
      }
      if (numeric(leaf)) r.entry = ProcEntry::kRefused;  // in its fd/, fdinfo/
      break;
    case Dir::kProcRoot:
      if (leaf == "cpuinfo") {
        r.entry = ProcEntry::kCpuinfo;
        r.name = leaf;
      }
      break;
    case Dir::kSysCpu:
      if (leaf == "online" || leaf == "possible" || leaf == "present") {
        r.entry = ProcEntry::kCpuList;
        r.name = leaf;
      }
      break;
    case Dir::kOther:
      break;
  }
  return r;
}

// `path` split into its directory part ("." when none) and last component, trailing
// slashes dropped ("/" stays "/" with an empty leaf).
void split(const std::string& path, std::string& dir, std::string& leaf) {
  size_t end = path.size();
  while (end > 1 && path[end - 1] == '/') --end;
  const size_t slash = path.rfind('/', end - 1);
  if (slash == std::string::npos) {
    dir = ".";
    leaf = path.substr(0, end);
    return;
  }
  dir = slash == 0 ? "/" : path.substr(0, slash);
  leaf = path.substr(slash + 1, end - slash - 1);
}

}  // namespace

ProcPath lookup_proc(Process& p, int dirfd, const std::string& path, bool follow) {
  if (path.empty()) return {};
  std::string cur = path, dir, leaf;
  HostFd base;  // the directory a relative link target is looked up from
  int at = dirfd;
  for (int links = 0; links <= kMaxLinks; ++links) {
    split(cur, dir, leaf);
    if (leaf.empty() || leaf == "." || leaf == "..") {
      // The path names a directory itself: only the descriptor listings matter.
      HostFd d{openat(at, cur.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)};
      if (d.fd < 0) return {};
      const Dir k = classify_dir(p, d.fd);
      ProcPath r;
      if (k == Dir::kOwnFd || k == Dir::kOwnFdInfo) r.entry = ProcEntry::kFdDir;
      if (k == Dir::kOwnMapFiles || k == Dir::kOtherEmulator) r.entry = ProcEntry::kRefused;
      r.name = k == Dir::kOwnFdInfo ? "fdinfo" : "fd";
      return r;
    }
    HostFd parent{openat(at, dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)};
    if (parent.fd < 0) return {};
    const Dir k = classify_dir(p, parent.fd);
    ProcPath r = entry_in(k, leaf);
    if (r.entry != ProcEntry::kNone || !follow) return r;
    // Not served by its name: follow a symbolic link in the last component as the host
    // would (in procfs only /proc/self and /proc/thread-self; its other links are magic).
    if (k != Dir::kOther && !(k == Dir::kProcRoot && (leaf == "self" || leaf == "thread-self"))) {
      return r;
    }
    struct stat st {};
    if (fstatat(parent.fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode)) {
      return r;
    }
    char target[PATH_MAX];
    const ssize_t n = readlinkat(parent.fd, leaf.c_str(), target, sizeof target - 1);
    if (n <= 0) return r;
    cur.assign(target, static_cast<size_t>(n));
    if (cur[0] == '/') {
      at = AT_FDCWD;
    } else {
      base.reset(parent.fd);
      parent.fd = -1;
      at = base.fd;
    }
  }
  return {};  // too many links: the host call answers ELOOP
}

GuestLookup look_up(Process& p, int dirfd, const std::string& guest_path, bool follow) {
  GuestLookup l;
  l.host = p.files().paths().resolve(guest_path);
  l.proc = lookup_proc(p, dirfd, l.host, follow);
  switch (l.proc.entry) {
    case ProcEntry::kExe:
      // Followed, the link is the guest program; not followed (lstat, readlink), a link.
      if (follow) l.host = p.files().paths().resolve(p.identity().exe_path);
      break;
    case ProcEntry::kFd:
    case ProcEntry::kFdInfo:
      if (p.files().emulator_fd(l.proc.fd)) l.refusal = -ENOENT;
      break;
    case ProcEntry::kRefused:
      l.refusal = -EACCES;
      break;
    default:
      break;
  }
  return l;
}

}  // namespace padlock::emu
