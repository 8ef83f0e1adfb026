// What one run of a guest program needs: the program, its arguments and environment,
// the CPU model and the user's switches. Filled by the CLI (or a test, or Python).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "models/cpu_model.hpp"

namespace padlock::emu {

// --chip-check: an instruction whose CPUID feature the model lacks raises #UD (Fault, the
// default, as on the chip), is reported once and runs (Warn), or runs (Off).
enum class ChipCheck : uint8_t { Fault, Warn, Off };

// --check (docs/checker.md): off, report findings, or also fail the run on an error.
enum class CheckMode : uint8_t { Off, Warn, Error };
// -d items (emulator/observe/debug_log.hpp, docs/debugging.md).
enum DebugItem : unsigned {
  kLogInAsm = 1u << 0,
  kLogCpu = 1u << 1,
  kLogExec = 1u << 2,
  kLogPadlock = 1u << 3,
  kLogSyscall = 1u << 4,
};

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
  bool progress = true;           // --progress: the status line, on a terminal only
  bool icount = false;            // count guest instructions from the start (--icount)
  // Timing (docs/timing.md). --timing off: host clocks, no per-block costs.
  bool timing = true;
  double irq_hz = -1;  // --irq-hz: periodic interrupts per second; < 0: default 250
  // --quantum: a guest thread's time slice in virtual microseconds
  // (emulator/linux/threads/scheduler.hpp).
  double quantum_us = 1000;
  bool cache_x86 = false;  // --cache-x86: apply the cache model to x86 memory operands
  // --memory direct|tlb: the guest's loads and stores address guest memory directly
  // (emulator/memory/direct_memory.hpp) or through Unicorn's softmmu TLB.
  bool direct_memory = true;
  ChipCheck chip_check = ChipCheck::Fault;  // emulator/cpu/chip_check.hpp
  // --trace, --chrome-trace, --profile: output files (empty: off; ".gz": gzip).
  // docs/profiling.md.
  std::string trace_file, chrome_trace_file, profile_file;
  // --check[=warn|error], --check-jsonl FILE, --check-sarif FILE (docs/checker.md).
  CheckMode check = CheckMode::Off;
  std::string check_jsonl_file, check_sarif_file;
  // -d ITEMS (DebugItem bits) and -D FILE (empty: `log`).
  unsigned debug_log = 0;
  std::string debug_log_file;
  // --mix FILE: executed instructions by opcode, in total and per function (SDE's -mix).
  std::string mix_file;
  // What the two trace files keep (--trace-max, --trace-insn, --trace-range, --trace-fn,
  // --trace-window; docs/profiling.md "Long runs"). The profile is never filtered.
  struct TraceSelection {
    uint64_t max_bytes = 0;    // per file, counted before compression; 0: no cap
    uint32_t insn_mask = ~0u;  // bit i: the instruction with isa::InsnId i
    bool syscalls = true;      // system-call events (--chrome-trace)
    // PCs kept: in one of the [lo, hi) ranges or in one of the named functions; both
    // empty: every PC.
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    std::vector<std::string> functions;
    // Virtual-time window [from, to): each end in cycles, or in seconds when *_seconds.
    double from = 0, to = -1;  // to < 0: open
    bool from_seconds = false, to_seconds = false;
  } trace_select;
  // -L/--sysroot: absolute guest paths resolve inside this directory first (qemu-user's
  // -L); empty: the host root. The program interpreter (PT_INTERP) is looked up there.
  std::string sysroot;
  // -g/--gdb PORT: wait for gdb on 127.0.0.1:PORT before the first instruction (0: any free
  // port, named on `log`); < 0: no gdb stub. docs/debugging.md.
  int gdb_port = -1;
  // --max-time: the guest is stopped after this many seconds of host time (0: no limit);
  // checked while it runs code, not while it blocks in a host system call.
  double max_time = 0;
  // --sandbox DIR: guest file access confined to DIR and the sysroot (emulator/linux/
  // sandbox.hpp); empty: none. --net: sockets allowed in the sandbox.
  std::string sandbox;
  bool net = false;
  // --max-memory: guest mappings (mmap, brk, mremap) beyond this many bytes fail with
  // ENOMEM; 0: no cap.
  uint64_t max_memory = 0;
  FILE* log = stderr;  // where strace, diagnostics and stats go
  // Run inside another program (the Python module): host signals at SIG_DFL keep their
  // host action, and SIGINT is the embedder's (emulator/linux/signal/host_signals.hpp).
  bool embedded = false;
};

// The exit status when the guest ran an instruction the emulator does not model
// (sysexits.h EX_UNAVAILABLE; docs/fidelity/gmi.md).
inline constexpr int kNotModelledExit = 69;

// How the guest ended.
struct RunResult {
  bool signaled = false;  // killed by `signal` (default action of a fatal signal)
  int exit_code = 0;      // exit status when !signaled
  int signal = 0;
  bool core = false;         // the signal's default action dumps core
  bool check_error = false;  // --check=error and the checker found an error
};

}  // namespace padlock::emu
