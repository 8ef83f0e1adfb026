#include "guest_run.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "emulator/linux/process.hpp"
#include "sigint_guard.hpp"

namespace padlock::python {

namespace {

std::mutex g_run_mutex;

int memfd(const char* name) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("memfd_create failed for ") + name);
  return fd;
}

std::string slurp(int fd) {
  std::string s;
  if (lseek(fd, 0, SEEK_SET) < 0) return s;
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  return s;
}

std::set<int> open_fds() {
  std::set<int> fds;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return fds;
  const int self = dirfd(d);
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const int fd = std::atoi(e->d_name);
    if (fd != self) fds.insert(fd);
  }
  closedir(d);
  return fds;
}

// Descriptors 0..2 pointed at memory files for the run; restored on scope exit.
class StdioRedirect {
 public:
  StdioRedirect(int in, int out, int err) {
    std::fflush(nullptr);
    const int targets[3] = {in, out, err};
    for (int fd = 0; fd < 3; ++fd) {
      saved_[fd] = fcntl(fd, F_DUPFD_CLOEXEC, 3);  // -1: it was closed
      dup2(targets[fd], fd);
    }
  }
  ~StdioRedirect() {
    std::fflush(nullptr);
    for (int fd = 0; fd < 3; ++fd) {
      if (saved_[fd] >= 0) {
        dup2(saved_[fd], fd);
        close(saved_[fd]);
      } else {
        close(fd);
      }
    }
  }
  bool is_saved(int fd) const { return fd == saved_[0] || fd == saved_[1] || fd == saved_[2]; }

 private:
  int saved_[3] = {-1, -1, -1};
};

}  // namespace

GuestRunOutput run_guest(const emu::RunOptions& opts_in, const std::string& stdin_data,
                         double timeout_s) {
  std::lock_guard<std::mutex> lock(g_run_mutex);
  GuestRunOutput r;
  const int in = memfd("padlock-emu-stdin"), out = memfd("padlock-emu-stdout"),
            err = memfd("padlock-emu-stderr");
  struct Closer {
    int a, b, c;
    ~Closer() {
      close(a);
      close(b);
      close(c);
    }
  } closer{in, out, err};
  for (size_t done = 0; done < stdin_data.size();) {
    const ssize_t n = write(in, stdin_data.data() + done, stdin_data.size() - done);
    if (n <= 0) throw std::runtime_error("cannot write the guest's stdin");
    done += static_cast<size_t>(n);
  }
  lseek(in, 0, SEEK_SET);

  char* log_buf = nullptr;
  size_t log_len = 0;
  FILE* log = open_memstream(&log_buf, &log_len);
  if (log == nullptr) throw std::runtime_error("open_memstream failed");
  emu::RunOptions opts = opts_in;
  opts.log = log;
  opts.embedded = true;
  r.mhz = opts.mhz > 0 ? opts.mhz : opts.cpu->default_mhz.value;

  const std::set<int> before = open_fds();
  std::exception_ptr failure;
  {
    StdioRedirect redirect(in, out, err);
    try {
      emu::Process p(opts);
      // Wall-clock timeout: a watchdog asks the run loop to end the guest (SIGKILL). It
      // repeats the request because a stop that arrives between two emulation slices is
      // lost; the loop checks the flag before each slice.
      std::mutex m;
      std::condition_variable cv;
      bool done = false;
      std::thread watchdog;
      if (timeout_s > 0) {
        watchdog = std::thread([&] {
          std::unique_lock<std::mutex> lk(m);
          const auto deadline =
              std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
          if (cv.wait_until(lk, deadline, [&] { return done; })) return;
          r.timed_out = true;
          while (!done) {
            p.host_stop().kill();
            cv.wait_for(lk, std::chrono::milliseconds(20), [&] { return done; });
          }
        });
      }
      try {
        SigintGuard sigint([](void* t) { static_cast<emu::Process*>(t)->host_stop().kill(); }, &p);
        r.result = p.run();
      } catch (...) {
        failure = std::current_exception();
      }
      r.interrupted = SigintGuard::take_interrupted();
      if (watchdog.joinable()) {
        {
          std::lock_guard<std::mutex> lk(m);
          done = true;
        }
        cv.notify_all();
        watchdog.join();
      }
      r.stats = p.stats();
      r.cycles = p.vtime().now();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
    // The guest's descriptors die with it, as at exit.
    for (int fd : open_fds()) {
      if (fd > 2 && !before.count(fd) && !redirect.is_saved(fd) && fd != in && fd != out &&
          fd != err) {
        close(fd);
      }
    }
  }
  std::fclose(log);
  r.log.assign(log_buf != nullptr ? log_buf : "", log_len);
  std::free(log_buf);
  r.out = slurp(out);
  r.err = slurp(err);
  if (failure) std::rethrow_exception(failure);
  return r;
}

}  // namespace padlock::python
