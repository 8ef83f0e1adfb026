#include "emulator/cli/run_option_table.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

#include "emulator/observe/debug_log.hpp"
#include "emulator/observe/output_file.hpp"
#include "emulator/observe/trace/trace_filter.hpp"
#include "emulator/options/option_checks.hpp"

namespace padlock::cli {

namespace {

// --trace-max below this could not hold a file's first and last records.
constexpr uint64_t kMinTraceMax = 4096;

// An address for --trace-range: decimal or 0x hexadecimal.
uint64_t parse_address(const std::string& s, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const unsigned long long v = std::strtoull(s.c_str(), &end, hex ? 16 : 10);
  if (s.empty() || s[0] == '-' || *end != '\0' || errno != 0) {
    throw UsageError("invalid address '" + s + "' in " + what);
  }
  return v;
}

// --trace-range LO-HI: [LO, HI).
std::pair<uint64_t, uint64_t> parse_range(const std::string& v) {
  const size_t dash = v.find('-');
  if (dash == std::string::npos) {
    throw UsageError("--trace-range expects LO-HI (e.g. 0x8049000-0x804a000), got '" + v + "'");
  }
  const uint64_t lo = parse_address(v.substr(0, dash), "--trace-range");
  const uint64_t hi = parse_address(v.substr(dash + 1), "--trace-range");
  if (hi <= lo) throw UsageError("--trace-range " + v + " is empty (HI must exceed LO)");
  return {lo, hi};
}

// One end of --trace-window: cycles, or a time with ns, us, ms or s.
void parse_time_point(const std::string& s, double& value, bool& seconds) {
  struct Unit {
    const char* suffix;
    double seconds;
  };
  static constexpr Unit kUnits[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  const std::string unit = end;
  if (s.empty() || end == s.c_str() || errno != 0 || !(v >= 0) || !std::isfinite(v)) {
    throw UsageError("invalid time '" + s + "' in --trace-window: cycles, or with ns, us, ms, s");
  }
  if (unit.empty()) {
    value = v;
    seconds = false;
    return;
  }
  for (const Unit& u : kUnits) {
    if (unit == u.suffix) {
      value = v * u.seconds;
      seconds = true;
      return;
    }
  }
  throw UsageError("invalid time '" + s + "' in --trace-window: cycles, or with ns, us, ms, s");
}

// --trace-window FROM:TO, either end may be empty.
void parse_window(const std::string& v, emu::RunOptions::TraceSelection& sel) {
  const size_t colon = v.find(':');
  if (colon == std::string::npos) {
    throw UsageError("--trace-window expects FROM:TO (e.g. 1ms:2ms, 5000:, :1s), got '" + v + "'");
  }
  const std::string from = v.substr(0, colon), to = v.substr(colon + 1);
  if (!from.empty()) parse_time_point(from, sel.from, sel.from_seconds);
  if (!to.empty()) parse_time_point(to, sel.to, sel.to_seconds);
}

// A positive number of `unit` at most `max`, else `message`.
double parse_positive(const std::string& v, double max, const std::string& message) {
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno != 0 || !(x > 0) || x > max) throw UsageError(message);
  return x;
}

// "A,B,C" -> {"A", "B", "C"}.
std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = std::min(s.find(',', start), s.size());
    out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

void set_env(std::vector<std::string>& env, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError("-E expects VAR=VALUE, got '" + assignment + "'");
  }
  const std::string name = assignment.substr(0, eq + 1);
  for (std::string& e : env) {
    if (e.compare(0, name.size(), name) == 0) {
      e = assignment;
      return;
    }
  }
  env.push_back(assignment);
}

void unset_env(std::vector<std::string>& env, const std::string& var) {
  if (var.empty() || var.find('=') != std::string::npos) {
    throw UsageError("-U expects a variable name, got '" + var + "'");
  }
  const std::string name = var + "=";
  std::erase_if(env, [&](const std::string& e) { return e.compare(0, name.size(), name) == 0; });
}

std::string file_name(const char* option, const std::string& v) {
  if (v.empty()) throw UsageError(std::string("option '") + option + "' needs a file name");
  return v;
}

// A --check-* output also turns the checker on.
void check_output(Invocation& inv, std::string& file, const std::string& v) {
  file = v;
  if (inv.run.check == emu::CheckMode::Off) inv.run.check = emu::CheckMode::Warn;
}

// Short names for the rows below.
using I = Invocation;
using S = const std::string&;
constexpr Takes kFlag = Takes::Flag, kValue = Takes::Value;

// The order is the help's.
constexpr RunOption kRunOptions[] = {
    {{"--cpu", "-cpu"},
     kValue,
     false,
     "--cpu NAME",
     "CPU model [PADLOCK_EMU_CPU]; default esther. Models:\n{models};\naliases {aliases}",
     [](I& i, S v) { i.run.cpu = emu::cpu_by_name(v, ""); }},
    {{"--mhz"},
     kValue,
     false,
     "--mhz N",
     "core clock in MHz [PADLOCK_EMU_MHZ]; default: the model's;\n"
     "at least 1, and enough that interrupts take at most half\n"
     "of it (1.2 at the default --irq-hz)",
     [](I& i, S v) { i.run.mhz = emu::parse_mhz(v, ""); }},
    {{"--seed", "-seed"},
     kValue,
     false,
     "--seed N",
     "seed of the RNG, AT_RANDOM and getrandom [PADLOCK_EMU_SEED];\ndefault 0",
     [](I& i, S v) { i.run.seed = emu::parse_seed(v, ""); }},
    {{"--errata"},
     kValue,
     false,
     "--errata on|off",
     "apply the model's errata (Esther stepping 8 CTR); default on",
     [](I& i, S v) { i.run.errata = emu::parse_on_off("--errata", v); }},
    {{"--timing"},
     kValue,
     false,
     "--timing on|off",
     "on (default): the guest's clocks, sleeps and timers run on\n"
     "the modelled chip's cycle counter at --mhz (x86 blocks,\n"
     "PadLock clocks, caches); off: fast functional mode, host\n"
     "clocks, no interrupts (docs/timing.md)",
     [](I& i, S v) { i.run.timing = emu::parse_on_off("--timing", v); }},
    {{"--progress"},
     kValue,
     false,
     "--progress on|off",
     "on a terminal, a status line on stderr after 2 s: modelled\n"
     "time, instructions (if counted), PadLock bytes, host rate;\n"
     "default on; never when stderr is not a terminal\n"
     "[PADLOCK_EMU_PROGRESS]",
     [](I& i, S v) { i.run.progress = emu::parse_on_off("--progress", v); }},
    {{"--irq-hz"},
     kValue,
     false,
     "--irq-hz HZ",
     "periodic interrupts in virtual time (jitter from --seed);\n"
     "each clears EFLAGS[30]; default 250, 0 = none",
     [](I& i, S v) { i.run.irq_hz = emu::parse_irq_hz(v); }},
    {{"--quantum"},
     kValue,
     false,
     "--quantum US",
     "a guest thread's time slice in virtual microseconds; the\n"
     "scheduler switches threads only at slice ends and blocking\n"
     "calls, so runs are reproducible (default 1000)",
     [](I& i, S v) {
       i.run.quantum_us = parse_positive(
           v, 1e9,
           "invalid time slice '" + v + "': expected microseconds > 0, e.g. --quantum 1000");
     }},
    {{"--cache-x86"},
     kFlag,
     false,
     "--cache-x86",
     "also run ordinary loads/stores through the cache model\n"
     "(slow; PadLock data streams always use it)",
     [](I& i, S) { i.run.cache_x86 = true; }},
    {{"--chip-check"},
     kValue,
     false,
     "--chip-check ud|warn|off",
     "an instruction whose CPUID feature the model lacks (SSE2 on\n"
     "a Nehemiah): ud (default) raises #UD (SIGILL) as the chip\n"
     "does; warn reports it once and runs it; off runs it",
     [](I& i, S v) {
       static constexpr std::pair<const char*, emu::ChipCheck> kModes[] = {
           {"ud", emu::ChipCheck::Fault},
           {"warn", emu::ChipCheck::Warn},
           {"off", emu::ChipCheck::Off}};
       for (const auto& [word, mode] : kModes) {
         if (v == word) {
           i.run.chip_check = mode;
           return;
         }
       }
       throw UsageError("--chip-check expects ud, warn or off, got '" + v + "'");
     }},
    {{"--memory"},
     kValue,
     false,
     "--memory direct|tlb",
     "how translated code reaches guest memory: direct (default;\n"
     "as qemu-user) or Unicorn's softmmu TLB (slower)\n"
     "[PADLOCK_EMU_MEMORY]",
     [](I& i, S v) { i.run.direct_memory = emu::parse_memory(v, ""); }},
    {{"-L", "--sysroot"},
     kValue,
     true,
     "-L DIR, --sysroot DIR",
     "look absolute guest paths up in DIR first, as qemu-user's\n"
     "-L (for dynamically linked programs: the i386 sysroot of\n"
     "scripts/make-sysroot.sh) [PADLOCK_EMU_SYSROOT]; default: /",
     [](I& i, S v) { i.run.sysroot = v; }},
    // As qemu-user's -E and -U: a comma-separated list, attached or the next argument.
    {{"-E"},
     kValue,
     true,
     "-E VAR=VALUE[,VAR=VALUE...]",
     "set variables in the guest's environment",
     [](I& i, S v) {
       for (const std::string& e : split_commas(v)) set_env(i.run.envp, e);
     }},
    {{"-U"},
     kValue,
     true,
     "-U VAR[,VAR...]",
     "remove variables from the guest's environment",
     [](I& i, S v) {
       for (const std::string& e : split_commas(v)) unset_env(i.run.envp, e);
     }},
    {{"-0", "--argv0"},
     kValue,
     false,
     "-0 ARGV0, --argv0 ARGV0",
     "the guest's argv[0] (default: PROGRAM as given)",
     [](I& i, S v) {
       i.argv0 = v;
       i.has_argv0 = true;
     }},
    {{"--strace", "-strace"},
     kFlag,
     false,
     "--strace",
     "log every system call and its result to stderr\n[PADLOCK_EMU_STRACE=1|0]",
     [](I& i, S) { i.run.strace = true; }},
    {{"--stats"},
     kFlag,
     false,
     "--stats",
     "on exit, print PadLock instructions by kind with bytes and\n"
     "cycles, and diagnostics counts, to stderr",
     [](I& i, S) { i.run.stats = true; }},
    {{"--icount"},
     kFlag,
     false,
     "--icount",
     "count guest instructions from the start (virtual clock)",
     [](I& i, S) { i.run.icount = true; }},
    {{"--trace"},
     kValue,
     false,
     "--trace FILE",
     "one JSON line per PadLock instruction (traces/README.md)",
     [](I& i, S v) { i.run.trace_file = file_name("--trace", v); }},
    {{"--chrome-trace"},
     kValue,
     false,
     "--chrome-trace FILE",
     "Trace Event JSON for Perfetto / chrome://tracing: PadLock\n"
     "instructions and system calls on the virtual-time axis",
     [](I& i, S v) { i.run.chrome_trace_file = file_name("--chrome-trace", v); }},
    {{"--profile"},
     kValue,
     false,
     "--profile FILE",
     "callgrind-format profile (callgrind_annotate, KCachegrind):\n"
     "cycles, instructions and PadLock bytes per function, with\n"
     "calls; with --timing off it implies --icount\n"
     "(docs/profiling.md). A FILE ending in .gz is gzip-compressed.",
     [](I& i, S v) { i.run.profile_file = file_name("--profile", v); }},
    {{"--trace-max"},
     kValue,
     false,
     "--trace-max SIZE",
     "cap each trace file at SIZE bytes (before compression; K, M,\n"
     "G: e.g. 100M); later records are left out, with a message",
     [](I& i, S v) {
       if (!emu::parse_size(v, i.run.trace_select.max_bytes) ||
           i.run.trace_select.max_bytes < kMinTraceMax) {
         throw UsageError("--trace-max expects a size of at least 4K (e.g. 100M, 2G), got '" + v +
                          "'");
       }
       i.trace_selected = true;
     }},
    {{"--trace-insn"},
     kValue,
     false,
     "--trace-insn KINDS",
     "keep only these kinds: rng, ace, phe, pmm, an instruction\n"
     "(xcryptcbc, xsha1, xstore ...), syscall; comma-separated",
     [](I& i, S v) {
       std::string error;
       emu::RunOptions::TraceSelection& sel = i.run.trace_select;
       if (!emu::trace::parse_trace_kinds(v, sel.insn_mask, sel.syscalls, error)) {
         throw UsageError(error);
       }
       i.trace_selected = true;
     }},
    {{"--trace-range"},
     kValue,
     false,
     "--trace-range LO-HI, --trace-fn NAME[,NAME...]",
     "keep only instructions at these addresses or in these\n"
     "functions (repeatable)",
     [](I& i, S v) {
       i.run.trace_select.ranges.push_back(parse_range(v));
       i.trace_selected = true;
     }},
    {{"--trace-fn"},
     kValue,
     false,
     nullptr,
     nullptr,
     [](I& i, S v) {
       for (const std::string& f : split_commas(v)) {
         if (f.empty()) throw UsageError("--trace-fn expects function names, got '" + v + "'");
         i.run.trace_select.functions.push_back(f);
       }
       i.trace_selected = true;
     }},
    {{"--trace-window"},
     kValue,
     false,
     "--trace-window FROM:TO",
     "keep only this stretch of virtual time: cycles, or times\n"
     "with ns, us, ms, s (e.g. 1ms:2ms, 5000:)",
     [](I& i, S v) {
       parse_window(v, i.run.trace_select);
       i.trace_selected = true;
     }},
    {{"--check"},
     kFlag,
     false,
     "--check[=warn|error]",
     "the PadLock checker: report misuse (stale key or control\n"
     "word, undefined cases, overlaps, errata exposure) on\n"
     "stderr at exit; error: exit status 99 if an error-severity\n"
     "finding occurred (docs/checker.md)",
     [](I& i, S) { i.run.check = emu::CheckMode::Warn; }},
    {{"--check"},
     Takes::EqualsValue,
     false,
     nullptr,
     nullptr,
     [](I& i, S v) { i.run.check = emu::parse_check(v); }},
    {{"--check-jsonl"},
     kValue,
     false,
     "--check-jsonl FILE, --check-sarif FILE",
     "also write the findings as JSON Lines / SARIF 2.1.0\n(imply --check)",
     [](I& i, S v) { check_output(i, i.run.check_jsonl_file, v); }},
    {{"--check-sarif"},
     kValue,
     false,
     nullptr,
     nullptr,
     [](I& i, S v) { check_output(i, i.run.check_sarif_file, v); }},
    {{"-d"},
     kValue,
     false,
     "-d ITEMS",
     "log, comma-separated: in_asm (each block's disassembly once),\n"
     "exec (each executed block), cpu (registers before each\n"
     "executed block), padlock (each PadLock instruction),\n"
     "syscall (as --strace); to stderr or -D (docs/debugging.md)",
     [](I& i, S v) {
       try {
         i.run.debug_log |= emu::parse_debug_items(v);
       } catch (const std::invalid_argument& e) {
         throw UsageError("unknown -d item '" + std::string(e.what()) +
                          "'; known: " + emu::debug_item_names());
       }
     }},
    {{"-D"},
     kValue,
     false,
     "-D FILE",
     "write the -d log to FILE",
     [](I& i, S v) { i.run.debug_log_file = v; }},
    {{"--mix"},
     kValue,
     false,
     "--mix FILE",
     "executed instructions by opcode (x86 and PadLock), in total\n"
     "and per function, as SDE's -mix (docs/debugging.md)",
     [](I& i, S v) { i.run.mix_file = v; }},
    {{"-g", "--gdb"},
     kValue,
     false,
     "-g PORT, --gdb PORT",
     "wait for gdb on 127.0.0.1:PORT before the first instruction\n"
     "(gdb: target remote :PORT); 0 picks a free port and names it\n"
     "(docs/debugging.md)",
     [](I& i, S v) { i.run.gdb_port = emu::parse_port(v); }},
    {{"--max-time"},
     kValue,
     false,
     "--max-time S",
     "stop the guest after S seconds of host time, with status\n"
     "124 (while it runs code, not while it blocks in a call)",
     [](I& i, S v) {
       i.run.max_time = parse_positive(
           v, 1e7, "invalid time '" + v + "': expected seconds > 0, e.g. --max-time 60");
     }},
    {{"--max-memory"},
     kValue,
     false,
     "--max-memory SIZE",
     "cap the guest's mappings (mmap, brk, mremap) at SIZE (K, M,\n"
     "G); beyond it they fail with ENOMEM; default: the host's\n"
     "RLIMIT_AS, if any",
     [](I& i, S v) { i.run.max_memory = emu::parse_max_memory(v); }},
    {{"--sandbox"},
     kValue,
     false,
     "--sandbox DIR",
     "confine the guest's file access to DIR and the sysroot:\n"
     "paths that leave them fail with EACCES; no sockets\n"
     "(docs/reliability.md)",
     [](I& i, S v) {
       if (v.empty()) throw UsageError("option '--sandbox' needs a directory");
       i.run.sandbox = v;
     }},
    {{"--net"},
     kFlag,
     false,
     "--net",
     "with --sandbox: allow sockets",
     [](I& i, S) { i.run.net = true; }},
    {{"-h", "--help"},
     Takes::Final,
     false,
     "-h, --help",
     "this text;  -V, --version  the version",
     [](I& i, S) { i.help_for_run = true; }},
    {{"-V", "--version"},
     Takes::Final,
     false,
     nullptr,
     nullptr,
     [](I& i, S) { i.command = Command::Version; }},
};

}  // namespace

std::span<const RunOption> run_options() {
  return kRunOptions;
}

}  // namespace padlock::cli
