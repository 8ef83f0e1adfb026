// libFuzzer target: sequences of path and descriptor system calls of a sandboxed i386
// process (emulator/linux/syscall/file.cpp, stat.cpp, socket.cpp; the lookup of served
// /proc files, emulator/linux/proc_lookup.cpp; the descriptor check of the dispatcher).
// Paths are built from components that cover the /proc spellings (self, thread-self, the
// pid, task/<tid>, ".", "..", repeated slashes), links made beforehand (to /proc/self/mem,
// to /proc/self, out of the sandbox) and the files of the sandbox; descriptors are the
// ones the calls returned, AT_FDCWD, and the emulator's own (an output file standing for
// --trace, the sandbox's roots, libFuzzer's). The oracle, after every call:
//   - the emulator's output file is still open at its number, with its inode, mode, size
//     and bytes unchanged;
//   - the directory outside the sandbox has its one file, with its mode and bytes;
//   - the emulator's system pages (GDT, boot stub) keep their bytes;
//   - bytes a read gave the guest never hold the outside file's marker or the output
//     file's, and a read of /proc/self/mem gives the guest's memory at that address.
// Input: 8-byte records: the call (byte 0), two descriptor selectors (bytes 1, 2), a path
// (bytes 3..5: components and slashes), flags (byte 6), a second path (byte 7).
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"
#include "fuzz/exit_program.hpp"
#include "models/cpu_model.hpp"

using namespace padlock;
using padlock::emu::kAbiI386;
using padlock::emu::Process;
using padlock::emu::SyscallContext;

namespace {

constexpr uint64_t kPage = emu::AddressSpace::kPageSize;
constexpr char kOutsideMarker[] = "OUTSIDE-THE-SANDBOX";
constexpr char kOutputMarker[] = "EMULATOR-OUTPUT";
constexpr uint64_t kScratch = 0x10000000;  // guest pages for paths and buffers
constexpr uint64_t kPathA = kScratch, kPathB = kScratch + 0x1000, kBuf = kScratch + 0x2000;
constexpr uint64_t kBufLen = 256;

// The entries of the directory open at `fd` but "." and "..", each given to f(name, type),
// read with getdents64 into a buffer on the stack: opendir's 32 KiB buffer, fresh memory
// under ASan's quarantine at every call, was a third of the target's time.
template <class F>
void for_each_entry(int fd, F f) {
  alignas(8) char buf[4096];
  for (ssize_t n; (n = getdents64(fd, buf, sizeof buf)) > 0;) {
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const dirent64*>(buf + at);
      at += e->d_reclen;
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        f(e->d_name, e->d_type);
      }
    }
  }
}

// Removes what the directory open at `fd` holds, without following links.
void empty_dir(int fd) {
  for (bool again = true; again;) {  // again from the start: removal moves the offsets
    again = false;
    lseek(fd, 0, SEEK_SET);
    for_each_entry(fd, [&](const char* name, unsigned char type) {
      if (type == DT_UNKNOWN) {
        struct stat st {};
        if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) type = DT_DIR;
      }
      if (type == DT_DIR) {
        const int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) abort();
        empty_dir(sub);
        close(sub);
      }
      if (unlinkat(fd, name, type == DT_DIR ? AT_REMOVEDIR : 0) != 0) abort();
      again = true;
    });
  }
}

void put_file(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0 || write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) abort();
  fchmod(fd, mode);
  close(fd);
}

struct Rig {
  std::string top, box, out;
  emu::RunOptions opts;
  std::unique_ptr<Process> p;
  int output = -1;  // stands for --trace: the emulator's, close-on-exec
  struct stat output_st {};
  std::vector<uint8_t> system_pages;
  std::vector<std::string> words;  // path components
  std::vector<int> emulator_fds;

  Rig() {
    // On tmpfs where there is one: the per-input reset makes and removes inodes, which ext4
    // does at many times the cost (its search past recently deleted inodes).
    top = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    top += "/fuzz-path-syscalls-XXXXXX";
    if (mkdtemp(top.data()) == nullptr) abort();
    static std::string remove_at_exit;
    remove_at_exit = top;
    std::atexit([] {
      nftw(
          remove_at_exit.c_str(),
          [](const char* path, const struct stat*, int, FTW*) { return remove(path); }, 16,
          FTW_DEPTH | FTW_PHYS);
    });
    box = top + "/box";
    out = top + "/out";
    mkdir(box.c_str(), 0755);
    mkdir(out.c_str(), 0755);
    put_file(out + "/host", kOutsideMarker, 0644);
    mkdir((box + "/d").c_str(), 0755);
    put_file(box + "/f", "inside", 0644);
    reset();
    output = open((top + "/trace").c_str(), O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0644);
    if (output < 0 || write(output, kOutputMarker, sizeof kOutputMarker) < 0) abort();
    fstat(output, &output_st);
    if (chdir(box.c_str()) != 0) abort();
    opts.program = padlock::fuzz::exit_program();
    opts.argv = {"fuzz"};
    opts.cpu = find_cpu_model("esther-c5j");
    opts.progress = false;
    opts.sandbox = box;
    p = std::make_unique<Process>(opts);
    // Every descriptor open now is the emulator's (libFuzzer's too), as Process::run
    // records them; 0-2 are left out of the selectors instead.
    DIR* d = opendir("/proc/self/fd");
    while (const dirent* e = readdir(d)) {
      if (e->d_name[0] != '.' && std::atoi(e->d_name) != dirfd(d)) {
        p->files().host_fds.insert(std::atoi(e->d_name));
      }
    }
    closedir(d);
    p->files().host_fds.erase(0);
    p->files().host_fds.erase(1);
    p->files().host_fds.erase(2);
    // Named by number only among these and the guest's own: a descriptor libFuzzer opens
    // later (its symbolizer's pipes) is not the emulator's, and a guest that closed it
    // would stop the fuzzer.
    emulator_fds.assign(p->files().host_fds.begin(), p->files().host_fds.end());
    if (p->vm().mmap(kScratch, 3 * kPage, 3, 0x22 /* MAP_PRIVATE|MAP_ANONYMOUS */ | 0x10, -1, 0) !=
        static_cast<int64_t>(kScratch)) {
      abort();
    }
    const uint64_t sys = p->vm().layout().system_page;
    system_pages.assign(p->mem().host(sys), p->mem().host(sys) + 2 * kPage);
    const std::string pid = std::to_string(getpid());
    words = {"proc",      "self",    "thread-self", pid,       "task",     "mem",
             "maps",      "auxv",    "exe",         "fd",      "fdinfo",   std::to_string(output),
             "nothing",   ".",       "..",          "",        "link-mem", "link-self",
             "link-out",  "link-up", "d",           "f",       "cwd",      "root",
             "map_files", "smaps",   "cmdline",     "stat",    "environ",  "out",
             "host",      "box",     "new",         "cpuinfo", "sys",      "devices",
             "system",    "cpu",     "online",      "trace"};
  }

  // The sandbox as it was: emptied (a call may have replaced a link by a directory, the
  // file by a directory, or left new entries) and filled again, so that every input starts
  // from the same tree. The box itself stays: the sandbox holds its root open. After an
  // input whose calls could not change the tree (tree_changed false) only the cwd is reset.
  void reset(bool tree_changed = true) const {
    if (chdir(box.c_str()) != 0) abort();
    if (!tree_changed) return;
    const int fd = open(box.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    // Its mode too: a chmod of "." changes it, and a set-group-ID bit there would pass on
    // to the directory made below.
    if (fd < 0 || fchmod(fd, 0755) != 0) abort();
    empty_dir(fd);
    close(fd);
    mkdir((box + "/d").c_str(), 0755);
    put_file(box + "/f", "inside", 0644);
    const std::pair<std::string, std::string> links[] = {{"/proc/self/mem", "link-mem"},
                                                         {"/proc/self", "link-self"},
                                                         {out + "/host", "link-out"},
                                                         {"../out/host", "link-up"}};
    for (const auto& [target, name] : links) {
      if (symlink(target.c_str(), (box + "/" + name).c_str()) != 0) abort();
    }
  }

  // A path from three bytes: up to five components, a leading slash, doubled slashes.
  std::string path(uint8_t a, uint8_t b, uint8_t c) const {
    std::string s = (a & 1) ? "/" : "";
    if ((a & 6) == 6) s = top.substr(1) + "/", s.insert(0, "/");  // the fuzz tree's root
    const uint8_t picks[4] = {b, c, static_cast<uint8_t>(a >> 3), static_cast<uint8_t>(b ^ c)};
    const int n = 1 + (c >> 6);
    for (int i = 0; i < n; ++i) {
      if (i > 0) s += ((a >> 7) && i == 1) ? "//" : "/";
      s += words[picks[i] % words.size()];
    }
    return s;
  }

  template <class What>
  void check(const What& what) const {
    struct stat st {};
    struct stat named {};
    if (fstat(output, &st) != 0 || st.st_ino != output_st.st_ino ||
        st.st_mode != output_st.st_mode || st.st_size != output_st.st_size || st.st_nlink != 1 ||
        stat((top + "/trace").c_str(), &named) != 0 || named.st_ino != output_st.st_ino) {
      std::fprintf(stderr, "after %s: the emulator's output file changed\n", what().c_str());
      abort();
    }
    char b[sizeof kOutputMarker] = {};
    if (pread(output, b, sizeof b, 0) != static_cast<ssize_t>(sizeof b) ||
        std::memcmp(b, kOutputMarker, sizeof b) != 0) {
      std::fprintf(stderr, "after %s: the emulator's output bytes changed\n", what().c_str());
      abort();
    }
    struct stat hs {};
    char hb[64] = {};
    const int h = open((out + "/host").c_str(), O_RDONLY | O_CLOEXEC);
    const ssize_t hn = h >= 0 ? read(h, hb, sizeof hb) : -1;
    if (h >= 0) close(h);
    if (stat((out + "/host").c_str(), &hs) != 0 || (hs.st_mode & 07777) != 0644 ||
        hn != static_cast<ssize_t>(sizeof kOutsideMarker - 1) ||
        std::memcmp(hb, kOutsideMarker, sizeof kOutsideMarker - 1) != 0) {
      std::fprintf(stderr, "after %s: the file outside the sandbox changed\n", what().c_str());
      abort();
    }
    int entries = 0;
    const int d = open(out.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d >= 0) for_each_entry(d, [&](const char*, unsigned char) { ++entries; });
    if (d >= 0) close(d);
    if (entries != 1) {
      std::fprintf(stderr, "after %s: a file appeared outside the sandbox\n", what().c_str());
      abort();
    }
    if (std::memcmp(p->mem().host(p->vm().layout().system_page), system_pages.data(),
                    system_pages.size()) != 0) {
      std::fprintf(stderr, "after %s: the emulator's system pages changed\n", what().c_str());
      abort();
    }
  }
};

// The guest's read of `n` bytes at kBuf: no marker of the host's; from /proc/self/mem at
// `addr`, the guest's bytes there.
template <class What>
void check_read(Process& p, int64_t n, bool self_mem, uint64_t addr, const What& what) {
  if (n <= 0) return;
  const char* got = reinterpret_cast<const char*>(p.mem().host(kBuf));
  const std::string_view s(got, static_cast<size_t>(n));
  if (s.find(kOutsideMarker) != s.npos || s.find(kOutputMarker) != s.npos) {
    std::fprintf(stderr, "after %s: the guest read a host file\n", what().c_str());
    abort();
  }
  // (A read whose source overlaps the buffer has changed what it read.)
  if (self_mem && (addr + static_cast<uint64_t>(n) <= kBuf || addr >= kBuf + kBufLen)) {
    if (std::memcmp(p.mem().host(addr), got, static_cast<size_t>(n)) != 0) {
      std::fprintf(stderr, "after %s: /proc/self/mem gave other bytes than memory\n",
                   what().c_str());
      abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Rig rig;
  Process& p = *rig.p;
  std::vector<int> fds;  // what the calls returned
  bool tree_changed = false;
  const auto pick_fd = [&](uint8_t sel) -> int {
    switch (sel % 4) {
      case 0:
        return AT_FDCWD;
      case 1:
        return fds.empty() ? AT_FDCWD : fds[(sel >> 2) % fds.size()];
      case 2:
        return rig.output;
      default:  // another of the emulator's (the sandbox's roots, libFuzzer's own)
        return rig.emulator_fds[(sel >> 2) % rig.emulator_fds.size()];
    }
  };
  for (size_t at = 0; at + 8 <= size; at += 8) {
    const uint8_t* r = data + at;
    const std::string pa = rig.path(r[3], r[4], r[5]);
    const std::string pb = rig.path(r[7], r[5], r[4]);
    p.user().write(kPathA, pa.c_str(), pa.size() + 1);
    p.user().write(kPathB, pb.c_str(), pb.size() + 1);
    const int fd1 = pick_fd(r[1]), fd2 = pick_fd(r[2]);
    static const int kOpenFlags[] = {O_RDONLY,
                                     O_RDWR,
                                     O_WRONLY | O_CREAT | O_TRUNC,
                                     O_PATH,
                                     O_RDONLY | O_DIRECTORY,
                                     O_RDONLY | O_NOFOLLOW,
                                     O_RDWR | O_CREAT,
                                     O_WRONLY | O_APPEND};
    const uint64_t addr = r[6] & 1 ? kPathA : p.vm().layout().system_page + (r[6] >> 1) * 32;
    // i386 numbers (emulator/linux/i386/syscall_names.inc).
    struct Call {
      uint64_t nr;
      uint64_t a[6];
    };
    const uint32_t ufd1 = static_cast<uint32_t>(fd1), ufd2 = static_cast<uint32_t>(fd2);
    const Call calls[] = {
        {295, {ufd1, kPathA, static_cast<uint64_t>(kOpenFlags[r[6] % 8]), 0644}},  // openat
        {3, {ufd1, kBuf, kBufLen}},                                                // read
        {180, {ufd1, kBuf, kBufLen, addr & 0xFFFFFFFF, addr >> 32}},               // pread64
        {4, {ufd1, kPathA, pa.size()}},                                            // write
        {181, {ufd1, kPathA, pa.size(), addr & 0xFFFFFFFF, addr >> 32}},           // pwrite64
        {94, {ufd1, 06777}},                                                       // fchmod
        {41, {ufd1}},                                                              // dup
        {63, {ufd1, ufd2}},                                                        // dup2
        {6, {ufd1}},                                                               // close
        {195, {kPathA, kBuf}},                                                     // stat64
        {196, {kPathA, kBuf}},                                                     // lstat64
        {85, {kPathA, kBuf, kBufLen}},                                             // readlink
        {12, {kPathA}},                                                            // chdir
        {133, {ufd1}},                                                             // fchdir
        {39, {kPathA, 0755}},                                                      // mkdir
        {10, {kPathA}},                                                            // unlink
        {38, {kPathA, kPathB}},                                                    // rename
        {83, {kPathB, kPathA}},                                                    // symlink
        {15, {kPathA, 06777}},                                                     // chmod
        {220, {ufd1, kBuf, kBufLen}},                                              // getdents64
        {33, {kPathA, 0}},                                                         // access
        {383, {ufd1, kPathA, 0, 0x7FF, kBuf}},                                     // statx
        {19, {ufd1, r[6] & 1 ? 0u : 0xFFFFE000u, 0}},                              // lseek
        {9, {kPathA, kPathB}},                                                     // link
        {55, {ufd1, 1 /* F_GETFD */, 0}},                                          // fcntl
        {93, {ufd1, 0}},                                                           // ftruncate
    };
    const Call& call = calls[r[0] % (sizeof calls / sizeof calls[0])];
    // The calls that can change the box's tree or a file in it, whatever they return (a
    // refused call may have acted first): the input's end must rebuild the tree.
    static constexpr uint64_t kChangesTree[] = {4, 181, 94, 39, 10, 38, 83, 15, 9, 93};
    tree_changed |= std::find(std::begin(kChangesTree), std::end(kChangesTree), call.nr) !=
                        std::end(kChangesTree) ||
                    (call.nr == 295 && (call.a[2] & (O_CREAT | O_TRUNC)) != 0);
    SyscallContext c{p,        p.user(), p.vm(), p.scheduler(), p.scheduler().futexes(), p.files(),
                     kAbiI386, call.nr,  {}};
    std::memcpy(c.a, call.a, sizeof c.a);
    const emu::SyscallEntry& e = kAbiI386.table[call.nr];
    if (e.fn == nullptr) abort();  // every call above has a handler
    const bool self_mem = p.files().self_mem.count(fd1) != 0;
    const uint64_t mem_pos = self_mem ? p.files().self_mem[fd1] : 0;
    const int64_t res = emu::names_emulator_fd(p.files(), e, c.a) ? -EBADF : e.fn(c);
    // The call as words, made only for a report.
    const auto what = [&] {
      return std::string(e.name) + "(" + std::to_string(fd1) + ", " + pa + ")";
    };
    if (call.nr == 3) check_read(p, res, self_mem, mem_pos, what);
    if (call.nr == 180) check_read(p, res, self_mem, addr, what);
    if (res >= 0 && (call.nr == 295 || call.nr == 41 || call.nr == 63)) {
      fds.push_back(static_cast<int>(res));
    }
    rig.check(what);
  }
  // Every input starts from the same state: the descriptors closed, the cwd the box.
  for (const int fd : fds) {
    if (!p.files().emulator_fd(fd) && fd > 2) {
      SyscallContext c{p,
                       p.user(),
                       p.vm(),
                       p.scheduler(),
                       p.scheduler().futexes(),
                       p.files(),
                       kAbiI386,
                       6,
                       {static_cast<uint32_t>(fd)}};
      emu::sys_close(c);
    }
  }
  rig.reset(tree_changed);
  return 0;
}
