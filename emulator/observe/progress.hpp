// The progress line (--progress, PADLOCK_EMU_PROGRESS; docs/debugging.md): on a terminal,
// a run that lasts longer than a couple of seconds shows one status line on stderr,
// redrawn twice a second and erased at the end: modelled time, guest instructions (when
// they are counted), PadLock bytes, and the host's rate. Never when stderr is not a TTY.
//
// A thread draws it. It only reads word-sized counters that the run loop and generated
// code write (relaxed atomic loads: a value may be a few blocks old), so the guest pays
// nothing for it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "emulator/observe/stats.hpp"
#include "emulator/options/run_options.hpp"

namespace padlock::emu {

class ProgressLine {
 public:
  // Draws only if `enabled` and stderr is a terminal. `clock` is the virtual clock's cell
  // in cycles at `mhz` (VirtualTime::clock_cell); all four outlive the line.
  ProgressLine(const RunOptions& options, const Stats& stats, const uint64_t* clock, double mhz,
               bool enabled);
  ~ProgressLine();  // stops drawing and erases the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // The text of the line (also for tests): what the counters say after `host_s` seconds.
  static std::string format(double modelled_s, bool timing, uint64_t insns, bool insns_counted,
                            uint64_t padlock_bytes, double host_s);

 private:
  void draw(double host_s);

  const RunOptions& options_;
  const Stats& stats_;
  const uint64_t* clock_;
  double mhz_;
  int fd_ = -1;  // a duplicate of stderr
  std::thread thread_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  bool drawn_ = false;
};

}  // namespace padlock::emu
