// --max-time's watchdog: one host thread per run that sleeps until the deadline and then
// calls its action, which only sets flags and stops Unicorn (it runs beside the
// emulation). A flag rather than a clock read in the run loop or the models keeps host
// time off the hot path, and it reaches a PadLock REP in the middle of its data
// (ExecEnv::host_stop; docs/reliability.md, "Every run stoppable").
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace padlock::emu {

class RunDeadline {
 public:
  using Clock = std::chrono::steady_clock;

  RunDeadline() = default;
  RunDeadline(const RunDeadline&) = delete;
  RunDeadline& operator=(const RunDeadline&) = delete;
  ~RunDeadline() { cancel(); }

  void start(Clock::time_point at, std::function<void()> action);
  void cancel();  // the action does not run after this returns
  // Until the deadline (a millisecond at least, so a new image still starts a watchdog).
  double seconds_left() const {
    return std::max(1e-3, std::chrono::duration<double>(at_ - Clock::now()).count());
  }
  // In a forked child: the thread stayed in the parent. Forget it (it cannot be joined
  // here) and watch the same deadline with a new one.
  void restart_in_child();

 private:
  struct Shared {
    std::mutex m;
    std::condition_variable cv;
    bool cancelled = false;
  };
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
  Clock::time_point at_{};
  std::function<void()> action_;
};

}  // namespace padlock::emu
