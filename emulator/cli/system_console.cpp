#include "emulator/cli/system_console.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <string_view>

namespace padlock::cli {

namespace {

// Lines of the console shown when a boot fails: the kernel's last messages or the init's.
constexpr size_t kTailLines = 40;
// How long QEMU has to shut down after the signal is passed on (its handler asks the main
// loop for a shutdown, and the models' library writes --trace and --check at exit); then
// SIGKILL, so that the command ends within a second.
constexpr auto kShutdownGrace = std::chrono::milliseconds(700);
constexpr int kEndingSignals[] = {SIGINT, SIGTERM, SIGHUP};

int g_signal_pipe = -1;

void on_signal(int sig) {
  const int saved = errno;
  const unsigned char s = static_cast<unsigned char>(sig);
  [[maybe_unused]] const ssize_t n = write(g_signal_pipe, &s, 1);
  errno = saved;
}

// Removes what a terminal would act on: SeaBIOS's ESC c (reset) and ESC [?7l (line wrap
// off), any CSI or OSC sequence and other control characters; keeps text, tabs, newlines,
// and (for the whole console) carriage returns and backspaces.
class EscapeFilter {
 public:
  void feed(char c, std::string& out) {
    const auto u = static_cast<unsigned char>(c);
    switch (state_) {
      case State::Text:
        if (u == 0x1b)
          state_ = State::Esc;
        else if (u >= 0x20 || c == '\n' || c == '\t' || c == '\r' || c == '\b')
          out += c;
        return;
      case State::Esc:
        state_ = c == '['   ? State::Csi
                 : c == ']' ? State::Osc
                 : (c == '(' || c == ')' || c == '*' || c == '+' || c == '#' || c == '%')
                     ? State::EscArg
                     : State::Text;
        return;
      case State::Csi:  // parameters and intermediates up to a final byte 0x40-0x7e
        if (u >= 0x40 && u <= 0x7e) state_ = State::Text;
        return;
      case State::Osc:  // up to BEL, or ESC \ (through State::Esc)
        if (u == 0x07) state_ = State::Text;
        if (u == 0x1b) state_ = State::Esc;
        return;
      case State::EscArg:
        state_ = State::Text;
        return;
    }
  }

 private:
  enum class State { Text, Esc, Csi, Osc, EscArg } state_ = State::Text;
};

// The test init's result lines (tests/system/init.sh, afalg_check.c) and the crypto
// manager's failures ("alg: ... test failed"), with or without the kernel's timestamp.
// A result line can start after a firmware line whose end the UART lost when the kernel
// reset it ("Booting from ROM..PADLOCK-KERNEL ..."): it counts from its tag, and the
// part is what is printed. Empty when the line is not a result.
std::string_view result_part(std::string_view line) {
  for (std::string_view tag : {std::string_view("PADLOCK-"), std::string_view("AFALG ")}) {
    const size_t at = line.find(tag);
    if (at != std::string_view::npos) return line.substr(at);
  }
  std::string_view text = line;
  if (text.starts_with("[")) {
    const size_t close = text.find("] ");
    if (close != std::string_view::npos) text.remove_prefix(close + 2);
  }
  return text.starts_with("alg: ") ? line : std::string_view();
}

class Console {
 public:
  Console(const ConsoleOptions& o, FILE* out) : o_(o), out_(out) {}

  void feed(const char* data, size_t n) {
    std::string clean;
    for (size_t i = 0; i < n; ++i) filter_.feed(data[i], clean);
    if (o_.whole) {
      std::fwrite(clean.data(), 1, clean.size(), out_);
      std::fflush(out_);
    }
    for (char c : clean) {
      if (c == '\n') {
        end_line();
      } else if (c != '\r') {
        line_ += c;
      }
    }
  }

  void finish() {
    if (!line_.empty()) end_line();
  }

  bool done() const { return done_; }
  bool any_result() const { return results_ > 0; }
  const std::deque<std::string>& tail() const { return tail_; }

 private:
  void end_line() {
    const std::string_view result = result_part(line_);
    if (!result.empty()) {
      ++results_;
      if (result == "PADLOCK-DONE") done_ = true;
      if (!o_.whole) {
        std::fprintf(out_, "%.*s\n", static_cast<int>(result.size()), result.data());
        std::fflush(out_);
      }
    }
    tail_.push_back(std::move(line_));
    if (tail_.size() > kTailLines) tail_.pop_front();
    line_.clear();
  }

  const ConsoleOptions& o_;
  FILE* out_;
  EscapeFilter filter_;
  std::string line_;
  std::deque<std::string> tail_;
  size_t results_ = 0;
  bool done_ = false;
};

// SIGINT, SIGTERM and SIGHUP write their number to a pipe the wait polls; one inherited
// as ignored (nohup, a background job) stays ignored.
bool catch_ending_signals(int pipe_write) {
  g_signal_pipe = pipe_write;
  for (int sig : kEndingSignals) {
    struct sigaction cur {};
    if (sigaction(sig, nullptr, &cur) == 0 && cur.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, nullptr) != 0) return false;
  }
  return true;
}

}  // namespace

int run_qemu(const std::vector<std::string>& argv, const ConsoleOptions& o, FILE* out, FILE* err) {
  int console[2], signals[2];
  if (pipe2(console, O_CLOEXEC) != 0 || pipe2(signals, O_CLOEXEC | O_NONBLOCK) != 0 ||
      !catch_ending_signals(signals[1])) {
    std::fprintf(err, "padlock-emu: system: cannot set up QEMU's console: %s\n",
                 std::strerror(errno));
    return 1;
  }
  std::fflush(out);
  std::fflush(err);
  const pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(err, "padlock-emu: system: cannot start QEMU: %s\n", std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    // Only --console is interactive: otherwise QEMU leaves the terminal's modes alone, and
    // a terminal's ^C reaches both processes as SIGINT.
    const int null = o.whole ? -1 : open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    dup2(console[1], 1);
    std::vector<char*> cargv;
    for (const std::string& s : argv) cargv.push_back(const_cast<char*>(s.c_str()));
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    std::fprintf(stderr, "padlock-emu: system: cannot run %s: %s\n", cargv[0],
                 std::strerror(errno));
    _exit(127);
  }
  close(console[1]);
  Console text(o, out);
  int got = 0;
  bool killed = false;
  std::chrono::steady_clock::time_point deadline;
  char buf[4096];
  for (;;) {
    int timeout = -1;
    if (got != 0 && !killed) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      timeout = static_cast<int>(std::max<long>(0, left.count()));
    }
    pollfd fds[2] = {{console[0], POLLIN, 0}, {signals[0], POLLIN, 0}};
    const int ready = poll(fds, 2, timeout);
    if (ready < 0 && errno != EINTR) break;
    unsigned char s = 0;
    while (read(signals[0], &s, 1) == 1) {
      if (got == 0) {
        got = s;
        kill(pid, got);
        deadline = std::chrono::steady_clock::now() + kShutdownGrace;
      }
    }
    if (got != 0 && !killed && std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      killed = true;
    }
    if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP)) != 0) {
      const ssize_t n = read(console[0], buf, sizeof buf);
      if (n > 0) {
        text.feed(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        break;  // QEMU has ended (or closed its console)
      }
    }
  }
  text.finish();
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  close(console[0]);
  std::fflush(out);
  if (got != 0) {
    // As `run` (emulator/cli/main.cpp): the command ends by the signal that ended it.
    std::fflush(err);
    signal(got, SIG_DFL);
    raise(got);
    return 128 + got;
  }
  const bool exited = WIFEXITED(status);
  const int code = exited ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::string why;
  if (!exited)
    why = std::string("QEMU was killed by ") + strsignal(WTERMSIG(status));
  else if (code != 0)
    why = "QEMU exited with status " + std::to_string(code);
  else if (o.expect_done && !text.done())
    why = "the test init did not finish (no PADLOCK-DONE)";
  else if (!o.whole && !text.any_result())
    why = "the console printed no result lines (PADLOCK-*; --console shows all of it)";
  if (why.empty()) return 0;
  if (!o.whole) {
    std::fprintf(err, "padlock-emu: system: %s; the console's last %zu lines:\n", why.c_str(),
                 text.tail().size());
    for (const std::string& line : text.tail()) std::fprintf(err, "  %s\n", line.c_str());
  } else {
    std::fprintf(err, "padlock-emu: system: %s\n", why.c_str());
  }
  return code != 0 ? code : 1;
}

}  // namespace padlock::cli
