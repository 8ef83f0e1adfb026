#include "emulator/linux/host_stop/run_deadline.hpp"

#include <pthread.h>
#include <signal.h>

namespace padlock::emu {

void RunDeadline::start(Clock::time_point at, std::function<void()> action) {
  cancel();
  at_ = at;
  action_ = std::move(action);
  shared_ = std::make_shared<Shared>();
  // Host signals are the run loop's: the watchdog thread starts with all of them blocked,
  // so none is handled here (host_signals.cpp blocks a handled one in the thread it ran in).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  thread_ = std::thread([s = shared_, at, fn = action_] {
    std::unique_lock<std::mutex> lock(s->m);
    if (!s->cv.wait_until(lock, at, [&] { return s->cancelled; })) fn();
  });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void RunDeadline::cancel() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(shared_->m);
    shared_->cancelled = true;
  }
  shared_->cv.notify_one();
  thread_.join();
}

void RunDeadline::restart_in_child() {
  if (!thread_.joinable()) return;
  thread_.detach();  // the parent's thread: nothing to join in this process
  shared_.reset();   // its lock may have been held at the fork: never touched again
  start(at_, action_);
}

}  // namespace padlock::emu
