// Which of the files served for the guest a path names (docs/reliability.md, "Escape
// classes"). The answer comes from what the host kernel resolves the path to, not from its
// spelling: the directory part is opened O_PATH on the host (from the dirfd or the working
// directory, through ".", "..", repeated slashes and every symbolic link, as the host would
// walk it), and that directory is identified by its file system (procfs, sysfs) and by
// where it sits below the procfs root (its inode 1). The last component is then a name in a
// known directory, or a symbolic link followed by the same rules (up to Linux's 40). So
// /proc//self/mem, /proc/self/./mem, "self/mem" after chdir("/proc"), a link to
// /proc/self/mem and /proc/<pid>/task/<tid>/mem all name the guest's memory.
//
// The lookup only classifies: it never hands the guest a host object. A path that names no
// served entry goes on as given (the host's file, or the sandbox's lookup of it).
#pragma once

#include <string>

namespace padlock::emu {

class Process;

enum class ProcEntry {
  kNone,     // not served: the call goes on as given
  kMem,      // /proc/<pid>/mem: the guest's memory
  kMaps,     // /proc/<pid>/maps: the guest's mappings
  kAuxv,     // /proc/<pid>/auxv: the guest's auxiliary vector
  kCmdline,  // /proc/<pid>/cmdline: the guest's argv
  kEnviron,  // /proc/<pid>/environ: the guest's environment
  kStat,     // /proc/<pid>/stat: the host's, without the emulator's addresses
  kExe,      // /proc/<pid>/exe: the guest program
  kFdDir,    // /proc/<pid>/fd or fdinfo: listed without the emulator's descriptors
  kFd,       // /proc/<pid>/fd/N (number in `fd`)
  kFdInfo,   // /proc/<pid>/fdinfo/N
  kCpuinfo,  // /proc/cpuinfo: the modelled chip
  kCpuList,  // /sys/devices/system/cpu/{online,possible,present}: one CPU
  // The emulator's own state (smaps, pagemap, map_files, syscall, stack ...) or another
  // emulator process's memory and descriptors: EACCES, as Linux refuses them to a
  // process without ptrace access.
  kRefused,
};

struct ProcPath {
  ProcEntry entry = ProcEntry::kNone;
  int fd = -1;       // kFd, kFdInfo: the descriptor number
  std::string name;  // the entry below /proc/<pid>/ ("maps", "fd/3"), for /proc/self/fd/N
};

// `path` (a host path: after -L's mapping) relative to `dirfd` (AT_FDCWD: the working
// directory). `follow`: a symbolic link in the last component is followed (open without
// O_NOFOLLOW, stat, access, chdir, execve), not for lstat, readlink and O_NOFOLLOW.
ProcPath lookup_proc(Process& p, int dirfd, const std::string& path, bool follow);

// A guest path looked up by a system call: the served entry it names, the host path the
// call uses otherwise (-L's mapping; the guest program for /proc/<pid>/exe), and the
// call's answer when the entry is out of the guest's reach (0: none): ENOENT for the
// emulator's own descriptors under fd/ and fdinfo/ (the guest has no such descriptor),
// EACCES for kRefused (which the stat calls may still look at, as on Linux).
struct GuestLookup {
  ProcPath proc;
  std::string host;
  int refusal = 0;
};
GuestLookup look_up(Process& p, int dirfd, const std::string& guest_path, bool follow);

}  // namespace padlock::emu
