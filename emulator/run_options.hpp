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
  // Timing (docs/timing.md). --timing off: host clocks, no per-block costs.
  bool timing = true;
  double irq_hz = -1;      // --irq-hz: periodic interrupts per second; < 0: default 250
  bool cache_x86 = false;  // --cache-x86: apply the cache model to x86 memory operands
  // --memory direct|tlb: 32-bit guests' loads and stores address guest memory directly
  // (emulator/memory/direct_memory.hpp) or through Unicorn's softmmu TLB. x86-64: always the TLB.
  bool direct_memory = true;
  // --trace, --chrome-trace, --profile: output files (empty: off). docs/profiling.md.
  std::string trace_file, chrome_trace_file, profile_file;
  // -L/--sysroot: absolute guest paths resolve inside this directory first (qemu-user's
  // -L); empty: the host root. The program interpreter (PT_INTERP) is looked up there.
  std::string sysroot;
  // --max-time: the guest is stopped after this many seconds of host time (0: no limit);
  // checked while it runs code, not while it blocks in a host system call.
  double max_time = 0;
  FILE* log = stderr;  // where strace, diagnostics and stats go
};

// How the guest ended.
struct RunResult {
  bool signaled = false;  // killed by `signal` (default action of a fatal signal)
  int exit_code = 0;      // exit status when !signaled
  int signal = 0;
  bool core = false;  // the signal's default action dumps core
};

}  // namespace padlock::emu
