// SIGINT (Ctrl-C, KeyboardInterrupt's signal) while the guest runs: Python's own handler
// only sets a flag that the interpreter checks between bytecodes, which never run while the
// guest does. While a guard lives, its handler takes SIGINT, stops the guest through
// `stop(target)` (async-signal-safe: an atomic flag and uc_emu_stop) and remembers it; the
// binding then hands the signal back to Python (interrupt_python), whose handler raises
// KeyboardInterrupt. SIG_IGN and SIG_DFL keep their meaning: no guard is installed.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <csignal>

namespace padlock::python {

class SigintGuard {
 public:
  using Stop = void (*)(void* target);

  SigintGuard(Stop stop, void* target) {
    interrupted().store(false);
    struct sigaction cur {};
    sigaction(SIGINT, nullptr, &cur);
    if (cur.sa_handler == SIG_IGN || cur.sa_handler == SIG_DFL) return;
    stop_fn().store(stop);
    target_ptr().store(target);
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &saved_);
    active_ = true;
  }
  ~SigintGuard() {
    if (!active_) return;
    sigaction(SIGINT, &saved_, nullptr);
    target_ptr().store(nullptr);
  }
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;

  // Whether SIGINT arrived since the last guard was made (and forget it).
  static bool take_interrupted() { return interrupted().exchange(false); }

  // Python's SIGINT handler runs now: KeyboardInterrupt by default (thrown as
  // error_already_set); a handler of the program's own runs and the binding goes on.
  static void interrupt_python() {
    PyErr_SetInterrupt();
    if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
  }

 private:
  static std::atomic<bool>& interrupted() {
    static std::atomic<bool> v{false};
    return v;
  }
  static std::atomic<Stop>& stop_fn() {
    static std::atomic<Stop> v{nullptr};
    return v;
  }
  static std::atomic<void*>& target_ptr() {
    static std::atomic<void*> v{nullptr};
    return v;
  }
  static void on_sigint(int) {
    interrupted().store(true);
    void* t = target_ptr().load();
    if (Stop s = stop_fn().load(); s != nullptr && t != nullptr) s(t);
  }

  struct sigaction saved_ {};
  bool active_ = false;
};

}  // namespace padlock::python
