// padlock_emu.run(): one guest program under padlock::emu::Process, in this process.
//
// The emulator gives the guest the host's descriptors (emulator/linux/syscall/file.cpp: "guest
// descriptors are host descriptors"), so the guest's stdin, stdout and stderr are
// redirected around the run: descriptors 0, 1 and 2 point at memory files (memfd) for the
// duration of Process::run() and are restored afterwards, and descriptors the guest opened
// and did not close are closed, as its exit would. The emulator's own messages (strace,
// diagnostics, the fatal-signal line, --stats) go to a separate log. One run at a time per
// process: the caller holds the GIL throughout, and a mutex guards the descriptors.
#pragma once

#include <cstdint>
#include <string>

#include "emulator/observe/stats.hpp"
#include "emulator/options/run_options.hpp"

namespace padlock::python {

struct GuestRunOutput {
  emu::RunResult result;
  bool timed_out = false;
  bool interrupted = false;   // SIGINT ended the guest (the caller raises KeyboardInterrupt)
  std::string out, err, log;  // guest stdout, guest stderr, emulator messages
  emu::Stats stats;
  uint64_t cycles = 0;  // virtual cycles at exit (Process::vtime())
  double mhz = 0;
};

// Runs opts.program. `timeout_s` > 0 kills the guest (SIGKILL) after that many seconds of
// wall time. Throws emu::LoadError when the program cannot be started.
GuestRunOutput run_guest(const emu::RunOptions& opts, const std::string& stdin_data,
                         double timeout_s);

}  // namespace padlock::python
