#include "guest_harness.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>

#include "emulator/linux/process.hpp"
#include "emulator/loader/elf_loader.hpp"
#include "models/cpu_model.hpp"

namespace padlock::emu::test {

namespace {

// Shared by every test process (ctest runs each test on its own): executables are named
// by a hash of their source and flags, and written under a temporary name, then renamed.
std::string cache_dir() {
  static std::string dir = [] {
    const std::string d = "/tmp/padlock-emu-test-guests-" + std::to_string(getuid());
    mkdir(d.c_str(), 0700);
    return d;
  }();
  return dir;
}

std::string read_all(int fd) {
  std::string s;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  return s;
}

}  // namespace

std::string build_guest(const std::string& source, Arch arch, const std::string& extra_flags) {
  static std::map<std::string, std::string> cache;
  const std::string key = std::string(arch_name(arch)) + "|" + extra_flags + "|" + source;
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const std::string final_path =
      cache_dir() + "/g" + std::to_string(std::hash<std::string>{}(key)&0xFFFFFFFFFFFFull);
  if (access(final_path.c_str(), X_OK) == 0) {
    cache[key] = final_path;
    return final_path;
  }
  const std::string base = final_path + ".tmp" + std::to_string(getpid());
  {
    FILE* f = std::fopen((base + ".c").c_str(), "w");
    if (f == nullptr) return "";
    std::fputs(source.c_str(), f);
    std::fclose(f);
  }
  const std::string cmd = std::string("gcc ") + (arch == Arch::I386 ? "-m32 " : "-m64 ") +
                          extra_flags + " -w -o " + base + " " + base + ".c > " + base +
                          ".log 2>&1";
  if (std::system(cmd.c_str()) == 0 && std::rename(base.c_str(), final_path.c_str()) == 0) {
    std::remove((base + ".c").c_str());
    std::remove((base + ".log").c_str());
    cache[key] = final_path;
    return final_path;
  }
  // No toolchain for this architecture: skip. A compile error in a test's own source:
  // fail loudly with gcc's message.
  static std::map<Arch, bool> toolchain;
  if (!toolchain.count(arch)) {
    const std::string probe =
        cache_dir() + "/probe_" + arch_name(arch) + "_" + std::to_string(getpid());
    const std::string pcmd = "printf 'int main(void){return 0;}' > " + probe + ".c && gcc " +
                             (arch == Arch::I386 ? "-m32" : "-m64") + " -static -o " + probe + " " +
                             probe + ".c > /dev/null 2>&1";
    toolchain[arch] = std::system(pcmd.c_str()) == 0;
  }
  if (!toolchain[arch]) {
    cache[key] = "";
    return "";
  }
  std::string log;
  if (FILE* f = std::fopen((base + ".log").c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) log.append(buf, n);
    std::fclose(f);
  }
  throw std::runtime_error("guest does not compile:\n" + log);
}

GuestRun run_guest(const std::string& program, const std::vector<std::string>& args,
                   const char* cpu, bool strace, uint64_t seed, const std::vector<std::string>& env,
                   const std::string& sysroot) {
  GuestRun r;
  int out_pipe[2], err_pipe[2], res_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0 || pipe(res_pipe) != 0) {
    r.load_error = true;
    r.error = "pipe failed";
    return r;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    close(res_pipe[0]);
    RunOptions o;
    o.program = program;
    o.argv.push_back(program);
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.envp = env;
    o.seed = seed;
    o.strace = strace;
    o.sysroot = sysroot;
    o.log = stderr;
    // Result record: kind (0 ok, 1 load error), exited code, signaled, signal, message.
    std::string rec;
    try {
      ElfFile probe = ElfFile::read(program);
      o.cpu = find_cpu_model(cpu != nullptr ? cpu : (probe.is64 ? "nano" : "esther"));
      Process p(o);
      const RunResult res = p.run();
      std::fflush(stdout);
      std::fflush(stderr);
      rec = "0 " + std::to_string(res.exit_code) + " " + std::to_string(res.signaled ? 1 : 0) +
            " " + std::to_string(res.signal) + " ";
    } catch (const std::exception& e) {
      rec = std::string("1 0 0 0 ") + e.what();
    }
    ssize_t w = write(res_pipe[1], rec.data(), rec.size());
    (void)w;
    _exit(0);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(res_pipe[1]);
  // Drain both pipes (a guest may write more than a pipe buffer to either).
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, 60000) <= 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  const std::string rec = read_all(res_pipe[0]);
  close(res_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  int kind = 1, code = 0, signaled = 0, sig = 0, consumed = 0;
  if (std::sscanf(rec.c_str(), "%d %d %d %d %n", &kind, &code, &signaled, &sig, &consumed) >= 4) {
    r.load_error = kind == 1;
    r.error = rec.substr(static_cast<size_t>(consumed));
    r.result.exit_code = code;
    r.result.signaled = signaled != 0;
    r.result.signal = sig;
  } else {
    r.load_error = true;
    r.error = "the test child died (status " + std::to_string(status) + ")";
  }
  return r;
}

std::string field(const std::string& out, const std::string& key) {
  const std::string k = key + "=";
  size_t pos = 0;
  while (pos < out.size()) {
    const size_t eol = out.find('\n', pos);
    const std::string line =
        out.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    if (line.compare(0, k.size(), k) == 0) return line.substr(k.size());
    if (eol == std::string::npos) break;
    pos = eol + 1;
  }
  return "<missing " + key + ">";
}

}  // namespace padlock::emu::test
