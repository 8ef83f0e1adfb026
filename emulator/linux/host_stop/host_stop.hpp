// How the host ends a run from outside the guest (docs/reliability.md, "Every run
// stoppable"): a kill from another thread (padlock_emu.run's timeout, Python's SIGINT),
// --max-time's deadline and the host's signals. Each sets one flag, which a PadLock REP
// reads at its interrupt points (ExecEnv::host_stop), and stops the emulation; the run loop
// then ends the guest. Only atomics are shared with the other threads: no host clock is read
// on the hot path.
#pragma once

#include <atomic>
#include <functional>

#include "emulator/linux/host_stop/run_deadline.hpp"

namespace padlock::emu {

class HostStop {
 public:
  // `stop_cpu(keep_pending)` stops the emulation, from any thread; `keep_pending` keeps the
  // stop for a start that has not begun yet (docs/emulator.md, "Unicorn", the pending stop).
  explicit HostStop(std::function<void(bool keep_pending)> stop_cpu)
      : stop_cpu_(std::move(stop_cpu)) {}
  HostStop(const HostStop&) = delete;
  HostStop& operator=(const HostStop&) = delete;

  // From any thread: the guest dies by SIGKILL when the run loop next gets control. A kill
  // that arrives between two emulation slices may be missed by Unicorn: call it again until
  // the run has returned.
  void kill();
  bool killed() const { return killed_.load(); }
  // --max-time: the deadline passed.
  bool out_of_time() const { return out_of_time_.load(); }

  // --max-time: `seconds` of host time from now; at the deadline a watchdog thread sets the
  // flags and stops the emulation (keeping the stop pending).
  void start_deadline(double seconds);
  void cancel_deadline() { deadline_.cancel(); }  // the watchdog does nothing after this
  // Until the deadline, for the new image of an execve (a millisecond at least).
  double seconds_left() const { return deadline_.seconds_left(); }
  // In a forked child: the same deadline, watched by a thread of its own.
  void restart_in_child() { deadline_.restart_in_child(); }

  // The flag the units read. Set by kill, the deadline and the host's signals (their handler
  // stores into it directly); `rearm`, when the run loop has collected the signals, clears it
  // unless the run is ending.
  std::atomic<bool>& flag() { return flag_; }
  void rearm() { flag_.store(out_of_time_.load() || killed_.load()); }

 private:
  void on_deadline();  // on the watchdog's thread

  std::function<void(bool)> stop_cpu_;
  std::atomic<bool> killed_{false};
  std::atomic<bool> out_of_time_{false};
  std::atomic<bool> flag_{false};
  RunDeadline deadline_;  // last: its thread is joined before the rest goes
};

}  // namespace padlock::emu
