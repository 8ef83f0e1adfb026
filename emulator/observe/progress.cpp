#include "emulator/observe/progress.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

namespace padlock::emu {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kFirstDraw = std::chrono::seconds(2);  // short runs show nothing
constexpr auto kRedraw = std::chrono::milliseconds(500);
constexpr int kFirstFd = 900;  // out of the way of the guest's own descriptors

uint64_t load(const uint64_t& v) {
  return std::atomic_ref<const uint64_t>(v).load(std::memory_order_relaxed);
}

// 1234567 -> "1.23 M"
std::string si(double v) {
  static const char* const kPrefix[] = {"", " k", " M", " G", " T"};
  int i = 0;
  while (v >= 1000 && i < 4) {
    v /= 1000;
    ++i;
  }
  char b[32];
  std::snprintf(b, sizeof b, i == 0 ? "%.0f%s" : "%.2f%s", v, kPrefix[i]);
  return b;
}

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::string ProgressLine::format(double modelled_s, bool timing, uint64_t insns, bool insns_counted,
                                 uint64_t padlock_bytes, double host_s) {
  char b[256];
  std::string s = "padlock-emu: ";
  if (timing) {
    std::snprintf(b, sizeof b, "modelled %.3f s", modelled_s);
    s += b;
  } else {
    s += "timing off";
  }
  s += insns_counted ? ", " + si(static_cast<double>(insns)) + " insns" : "";
  s += ", PadLock " + si(static_cast<double>(padlock_bytes)) + "B";
  std::snprintf(b, sizeof b, ", host %.1f s", host_s);
  s += b;
  if (host_s > 0 && timing) {
    std::snprintf(b, sizeof b, " (%.3gx real time", modelled_s / host_s);
    s += b;
    s += insns_counted ? ", " + si(static_cast<double>(insns) / host_s) + " insns/s)" : ")";
  } else if (host_s > 0 && insns_counted) {
    s += " (" + si(static_cast<double>(insns) / host_s) + " insns/s)";
  }
  return s;
}

ProgressLine::ProgressLine(const RunOptions& options, const Stats& stats, const uint64_t* clock,
                           double mhz, bool enabled)
    : options_(options), stats_(stats), clock_(clock), mhz_(mhz) {
  if (!enabled || !isatty(STDERR_FILENO)) return;
  // Our own descriptor for the terminal: descriptors are the guest's too, and programs
  // close stderr on their way out (coreutils' close_stdout).
  fd_ = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, kFirstFd);
  if (fd_ < 0) return;
  const Clock::time_point start = Clock::now();
  thread_ = std::thread([this, start] {
    std::unique_lock<std::mutex> lk(m_);
    if (cv_.wait_until(lk, start + kFirstDraw, [this] { return done_; })) return;
    do {
      draw(std::chrono::duration<double>(Clock::now() - start).count());
    } while (!cv_.wait_for(lk, kRedraw, [this] { return done_; }));
  });
}

ProgressLine::~ProgressLine() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lk(m_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (drawn_) write_all(fd_, "\r\033[K");  // erase it: what follows starts at column 0
  close(fd_);
}

void ProgressLine::draw(double host_s) {
  uint64_t bytes = 0;
  for (const InsnStats& i : stats_.insn) bytes += load(i.bytes);
  const double modelled = static_cast<double>(load(*clock_)) / (mhz_ * 1e6);
  std::string line = "\r";
  line += format(modelled, options_.timing, load(stats_.guest_insns),
                 options_.icount || options_.stats, bytes, host_s);
  line += "\033[K";
  write_all(fd_, line);
  drawn_ = true;
}

}  // namespace padlock::emu
