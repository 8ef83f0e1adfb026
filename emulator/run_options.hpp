// What one run of a guest program needs: the program, its arguments and environment,
// the CPU model and the user's switches. Filled by the CLI (or a test, or Python).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "models/cpu_model.hpp"

namespace padlock::emu {

struct RunOptions {
  std::string program;            // path of the ELF file to run
  std::vector<std::string> argv;  // argv[0] first (normally the program as given)
  std::vector<std::string> envp;  // NAME=VALUE strings
  const CpuModel* cpu = nullptr;  // required
  double mhz = 0;                 // 0: the model's default_mhz
  uint64_t seed = 0;              // RNG bits and AT_RANDOM
  bool errata = true;             // apply the model's errata (--errata)
  bool strace = false;            // log every system call (--strace)
  bool stats = false;             // summary on exit (--stats)
  bool icount = false;            // count guest instructions from the start (--icount)
  FILE* log = stderr;             // where strace, diagnostics and stats go
};

// How the guest ended.
struct RunResult {
  bool signaled = false;  // killed by `signal` (default action of a fatal signal)
  int exit_code = 0;      // exit status when !signaled
  int signal = 0;
  bool core = false;  // the signal's default action dumps core
};

}  // namespace padlock::emu
