// execve: the new image runs under padlock-emu too, with the same options. The emulator
// checks what Linux checks before the point of no return (the file exists and may be
// executed, it is an ELF program this CPU model can run or a #! script, whose interpreter
// is looked up the same way, up to four levels as Linux allows), then replaces itself with
// `padlock-emu run OPTIONS -0 ARGV0 -- PROGRAM ARGS` in the guest's environment. So a
// script, or an i386 program that starts an x86-64 one (on a model with long mode), runs
// as on Linux; descriptors without FD_CLOEXEC stay open, as the host's execve keeps them.
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/proc_lookup.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/signal/host_signals.hpp"
#include "emulator/linux/syscall/syscalls.hpp"
#include "emulator/loader/elf_loader.hpp"
#include "emulator/observe/debug_log.hpp"
#include "emulator/observe/trace/run_observers.hpp"

namespace padlock::emu {

namespace {

constexpr int kMaxInterpreters = 4;  // Linux's BINPRM_MAX_RECURSION
constexpr size_t kMaxStrings = 1 << 16;

// A NULL-terminated array of guest string pointers; 0 or -errno.
int64_t read_strings(SyscallContext& c, uint64_t va, std::vector<std::string>& out) {
  if (va == 0) return 0;
  const uint64_t word = c.abi.wide ? 8 : 4;
  for (size_t i = 0; i < kMaxStrings; ++i) {
    uint8_t raw[8] = {};
    if (!c.user.read(va + i * word, raw, word)) return -EFAULT;
    const uint64_t p = get_ulong(raw, 0, c.abi.wide);
    if (p == 0) return 0;
    std::string s;
    if (!c.user.read_cstring(p, s, 128 * 1024)) return -EFAULT;
    out.push_back(std::move(s));
  }
  return -E2BIG;
}

// Whether guest path `path` reaches padlock-emu's own program file: /proc/self/exe (the
// host's magic link names the emulator), /proc/<pid>/exe, /proc/thread-self/exe, a link to
// any of them, or any other spelling. The guest's /proc/self/exe is the guest program, so
// that is what runs (docs/emulator.md, "What the guest sees"). Compared by device and
// inode, not by name: the host's own lookup cannot miss a spelling.
bool names_the_emulator(Process& p, const std::string& path) {
  struct stat own {
  }, target{};
  return stat("/proc/self/exe", &own) == 0 &&
         stat(p.files().paths().resolve(path).c_str(), &target) == 0 &&
         own.st_dev == target.st_dev && own.st_ino == target.st_ino;
}

// What the file at guest path `path` is: 0 for an ELF program this model runs, 1 for a
// #! script (interpreter and optional argument filled in), or -errno.
int64_t inspect(Process& p, const std::string& path, std::string& interp, std::string& arg) {
  const GuestLookup l = look_up(p, AT_FDCWD, path, true);
  if (l.refusal < 0) return l.refusal;
  std::string host = l.host;
  if (p.files().sandbox().active()) {
    // --sandbox: the program and its interpreters must lie beneath the roots; from here on
    // the checks use the file the sandbox found.
    const int sfd = p.files().sandbox().open(AT_FDCWD, host, O_PATH | O_CLOEXEC);
    if (sfd < 0) return sfd;
    char real[PATH_MAX];
    const std::string link = "/proc/self/fd/" + std::to_string(sfd);
    const ssize_t len = readlink(link.c_str(), real, sizeof real - 1);
    close(sfd);
    if (len <= 0) return -EACCES;
    host.assign(real, static_cast<size_t>(len));
  }
  struct stat st {};
  if (stat(host.c_str(), &st) != 0) return -errno;
  if (!S_ISREG(st.st_mode)) return -EACCES;
  if (access(host.c_str(), X_OK) != 0) return -errno;
  const int fd = open(host.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  char head[256] = {};
  const ssize_t n = read(fd, head, sizeof head - 1);
  close(fd);
  if (n < 0) return -EIO;
  if (n >= 2 && head[0] == '#' && head[1] == '!') {
    // binfmt_script: the interpreter, then at most one argument, up to the line's end.
    std::string line(head + 2, static_cast<size_t>(n) - 2);
    line = line.substr(0, line.find('\n'));
    const auto blank = [](char ch) { return ch == ' ' || ch == '\t'; };
    size_t i = 0;
    while (i < line.size() && blank(line[i])) ++i;
    size_t j = i;
    while (j < line.size() && !blank(line[j])) ++j;
    interp = line.substr(i, j - i);
    while (j < line.size() && blank(line[j])) ++j;
    size_t end = line.size();
    while (end > j && blank(line[end - 1])) --end;
    arg = line.substr(j, end - j);
    return interp.empty() ? -ENOEXEC : 1;
  }
  if (n < 20 || std::memcmp(head, ELFMAG, SELFMAG) != 0) return -ENOEXEC;
  const bool is64 = head[EI_CLASS] == ELFCLASS64;
  uint16_t machine = 0;
  std::memcpy(&machine, head + 18, 2);
  if (machine != (is64 ? EM_X86_64 : EM_386)) return -ENOEXEC;
  // Refused before the point of no return, as Linux's load_elf_phdrs does.
  uint16_t phentsize = 0, phnum = 0;
  std::memcpy(&phentsize, head + (is64 ? 54 : 42), 2);
  std::memcpy(&phnum, head + (is64 ? 56 : 44), 2);
  if (program_header_table_error(is64, phentsize, phnum) != nullptr) return -ENOEXEC;
  if (is64 && !p.options().cpu->long_mode) return -ENOEXEC;  // no long mode on this chip
  return 0;
}

std::string number(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// `padlock-emu run` with this process's options.
std::vector<std::string> run_arguments(Process& p) {
  const RunOptions& o = p.options();
  std::vector<std::string> a = {"run",
                                "--cpu",
                                o.cpu->name,
                                "--seed",
                                std::to_string(o.seed),
                                "--errata",
                                o.errata ? "on" : "off",
                                "--timing",
                                o.timing ? "on" : "off",
                                "--memory",
                                o.direct_memory ? "direct" : "tlb",
                                "--chip-check",
                                o.chip_check == ChipCheck::Fault  ? "ud"
                                : o.chip_check == ChipCheck::Warn ? "warn"
                                                                  : "off"};
  if (o.mhz > 0) a.insert(a.end(), {"--mhz", number(o.mhz)});
  if (o.irq_hz >= 0) a.insert(a.end(), {"--irq-hz", number(o.irq_hz)});
  if (o.quantum_us != RunOptions{}.quantum_us)
    a.insert(a.end(), {"--quantum", number(o.quantum_us)});
  if (o.strace) a.push_back("--strace");
  if (o.stats) a.push_back("--stats");
  if (o.icount) a.push_back("--icount");
  if (o.cache_x86) a.push_back("--cache-x86");
  // The new image stays in the sandbox and under the memory cap.
  if (p.files().sandbox().active()) a.insert(a.end(), {"--sandbox", p.files().sandbox().dir()});
  if (o.net) a.push_back("--net");
  if (o.max_memory != 0) a.insert(a.end(), {"--max-memory", std::to_string(o.max_memory)});
  // --max-time: the new image gets what is left of the run's time.
  if (o.max_time > 0) a.insert(a.end(), {"--max-time", number(p.host_stop().seconds_left())});
  // The new image writes files of its own: FILE.PID (a forked child's already are).
  const auto file = [&](const char* opt, const std::string& f) {
    if (f.empty()) return;
    const std::string suffix = "." + std::to_string(p.identity().pid);
    const bool has =
        f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0;
    a.insert(a.end(), {opt, has ? f : f + suffix});
  };
  file("--trace", o.trace_file);
  file("--chrome-trace", o.chrome_trace_file);
  file("--profile", o.profile_file);
  if (o.check != CheckMode::Off)
    a.push_back(o.check == CheckMode::Error ? "--check=error" : "--check=warn");
  file("--check-jsonl", o.check_jsonl_file);
  file("--check-sarif", o.check_sarif_file);
  file("--mix", o.mix_file);
  if (o.debug_log != 0) a.insert(a.end(), {"-d", debug_items_text(o.debug_log)});
  file("-D", o.debug_log_file);
  if (!o.sysroot.empty()) a.insert(a.end(), {"-L", o.sysroot});
  return a;
}

}  // namespace

int64_t sys_execve(SyscallContext& c) {
  std::string path;
  if (!c.user.read_cstring(c.a[0], path, PATH_MAX)) return -EFAULT;
  std::vector<std::string> argv, envp;
  if (const int64_t r = read_strings(c, c.a[1], argv); r < 0) return r;
  if (const int64_t r = read_strings(c, c.a[2], envp); r < 0) return r;
  if (path.empty()) return -ENOENT;
  if (argv.empty()) argv.push_back("");  // Linux passes an empty argv as it is; keep one
  // #! scripts: the interpreter runs with [interp, arg, script, argv[1]...].
  std::string program = path;
  for (int depth = 0;; ++depth) {
    std::string interp, arg;
    // The program, and each #! interpreter, named as /proc/self/exe: the guest program.
    if (names_the_emulator(c.p, program)) program = c.p.identity().exe_path;
    const int64_t kind = inspect(c.p, program, interp, arg);
    if (kind < 0) return kind;
    if (kind == 0) break;
    if (depth == kMaxInterpreters) return -ELOOP;
    std::vector<std::string> next = {interp};
    if (!arg.empty()) next.push_back(arg);
    next.push_back(program);
    next.insert(next.end(), argv.begin() + 1, argv.end());
    argv = std::move(next);
    program = interp;
  }
  if (c.p.identity().emulator_path.empty()) {
    std::fprintf(c.p.options().log,
                 "padlock-emu: execve: no padlock-emu program to run %s under; the guest gets "
                 "ENOEXEC\n",
                 program.c_str());
    return -ENOEXEC;
  }
  std::vector<std::string> args = {c.p.identity().emulator_path};
  for (std::string& s : run_arguments(c.p)) args.push_back(std::move(s));
  args.insert(args.end(), {"-0", argv[0], "--", program});
  args.insert(args.end(), argv.begin() + 1, argv.end());
  std::vector<char*> host_argv, host_envp;
  for (std::string& s : args) host_argv.push_back(s.data());
  host_argv.push_back(nullptr);
  for (std::string& s : envp) host_envp.push_back(s.data());
  host_envp.push_back(nullptr);

  // The point of no return: the host takes the guest's ignored signals along (the new
  // emulator starts its guest with them ignored, as exec keeps SIG_IGN) and nothing else.
  // The old image's threads end: their robust lists are walked.
  c.futexes.exit_all_robust_lists(c.p.kernel().robust_list);
  c.p.finish_observers();
  std::fflush(nullptr);
  host_signals_restore();
  for (int sig = 1; sig <= kNumSignals; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP && c.p.signals().action[sig].handler == kSigIgn) {
      signal(sig, SIG_IGN);
    }
  }
  execve(host_argv[0], host_argv.data(), host_envp.data());
  const int err = errno;
  host_signals_init(c.p);
  for (int sig = 1; sig <= kNumSignals; ++sig) host_signal_update(c.p, sig);
  return -err;
}

}  // namespace padlock::emu
