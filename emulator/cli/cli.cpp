#include "emulator/cli/cli.hpp"

#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "emulator/observe/debug_log.hpp"
#include "emulator/observe/output_file.hpp"
#include "emulator/observe/trace/trace_filter.hpp"
#include "emulator/options/option_checks.hpp"
#include "models/cpu_model.hpp"

namespace padlock::cli {

namespace {

using emu::check_clock;
using emu::cpu_by_name;
using emu::cpu_names;
using emu::parse_memory;
using emu::parse_mhz;
using emu::parse_port;
using emu::parse_seed;

const char* kDefaultCpu = "esther";

// --trace-max below this could not hold a file's first and last records.
constexpr uint64_t kMinTraceMax = 4096;

// qemu-user's single-dash spellings of the options both have.
constexpr struct {
  const char* qemu;
  const char* ours;
} kQemuSpellings[] = {{"-cpu", "--cpu"}, {"-seed", "--seed"}, {"-strace", "--strace"}};

bool parse_on_off(const char* what, const std::string& v, const char* where) {
  if (v == "on") return true;
  if (v == "off") return false;
  throw UsageError(std::string(what) + " expects on or off, got '" + v + "'" + where);
}

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

bool is_directory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A switch in the environment (PADLOCK_EMU_STRACE): 1/on/yes/true or 0/off/no/false
// (any case); unset or empty is off; anything else is a usage error.
bool env_switch(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return false;
  static constexpr const char* kOn[] = {"1", "on", "yes", "true"};
  static constexpr const char* kOff[] = {"0", "off", "no", "false"};
  for (const char* w : kOn) {
    if (strcasecmp(v, w) == 0) return true;
  }
  for (const char* w : kOff) {
    if (strcasecmp(v, w) == 0) return false;
  }
  throw UsageError(std::string("invalid value '") + v + "' of " + name +
                   ": expected 1, on, yes, true, 0, off, no or false");
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

// Options of `run`; returns the index of PROGRAM.
size_t parse_run(const std::vector<std::string>& args, size_t i, Invocation& inv) {
  emu::RunOptions& o = inv.run;
  auto value = [&](const std::string& opt, size_t& k, std::string& out) {
    const std::string& a = args[k];  // as given: "--opt=value" or "--opt value"
    const size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      out = a.substr(eq + 1);
      return;
    }
    if (k + 1 >= args.size()) throw UsageError("option '" + opt + "' needs a value");
    out = args[++k];
  };
  for (; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "--") return i + 1;
    if (a.empty() || a[0] != '-' || a == "-") return i;
    for (const auto& q : kQemuSpellings) {
      if (a == q.qemu) a = q.ours;
    }
    const std::string name = a.substr(0, a.find('='));
    inv.given.insert(name);
    std::string v;
    if (name == "--cpu") {
      value(name, i, v);
      o.cpu = cpu_by_name(v, "");
    } else if (name == "--mhz") {
      value(name, i, v);
      o.mhz = parse_mhz(v, "");
    } else if (name == "--seed") {
      value(name, i, v);
      o.seed = parse_seed(v, "");
    } else if (name == "--errata") {
      value(name, i, v);
      if (v == "on")
        o.errata = true;
      else if (v == "off")
        o.errata = false;
      else
        throw UsageError("--errata expects on or off, got '" + v + "'");
    } else if (name == "--progress") {
      value(name, i, v);
      o.progress = parse_on_off("--progress", v, "");
    } else if (name == "--timing") {
      value(name, i, v);
      if (v == "on")
        o.timing = true;
      else if (v == "off")
        o.timing = false;
      else
        throw UsageError("--timing expects on or off, got '" + v + "'");
    } else if (name == "--irq-hz") {
      value(name, i, v);
      o.irq_hz = emu::parse_irq_hz(v);
    } else if (name == "--quantum") {
      value(name, i, v);
      char* end = nullptr;
      errno = 0;
      const double us = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || errno != 0 || !(us > 0) || us > 1e9)
        throw UsageError("invalid time slice '" + v +
                         "': expected microseconds > 0, e.g. --quantum 1000");
      o.quantum_us = us;
    } else if (name == "--max-time") {
      value(name, i, v);
      char* end = nullptr;
      errno = 0;
      const double t = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || errno != 0 || !(t > 0) || t > 1e7)
        throw UsageError("invalid time '" + v + "': expected seconds > 0, e.g. --max-time 60");
      o.max_time = t;
    } else if (name == "--max-memory") {
      value(name, i, v);
      o.max_memory = emu::parse_max_memory(v);
    } else if (name == "--sandbox") {
      value(name, i, v);
      if (v.empty()) throw UsageError("option '--sandbox' needs a directory");
      o.sandbox = v;
    } else if (a == "--net") {
      o.net = true;
    } else if (a == "--cache-x86") {
      o.cache_x86 = true;
    } else if (name == "--chip-check") {
      value(name, i, v);
      if (v == "ud")
        o.chip_check = emu::ChipCheck::Fault;
      else if (v == "warn")
        o.chip_check = emu::ChipCheck::Warn;
      else if (v == "off")
        o.chip_check = emu::ChipCheck::Off;
      else
        throw UsageError("--chip-check expects ud, warn or off, got '" + v + "'");
    } else if (name == "--memory") {
      value(name, i, v);
      o.direct_memory = parse_memory(v, "");
    } else if (a.rfind("-E", 0) == 0 || a.rfind("-U", 0) == 0) {
      // As qemu-user's -E and -U: a comma-separated list, attached or the next argument.
      const std::string opt = a.substr(0, 2);
      if (a.size() == 2)
        value(opt, i, v);
      else
        v = a.substr(2);
      for (const std::string& e : split_commas(v)) (opt == "-E" ? set_env : unset_env)(o.envp, e);
    } else if (a == "-0" || name == "--argv0") {
      value(a == "-0" ? a : name, i, v);
      inv.argv0 = v;
      inv.has_argv0 = true;
    } else if (a == "-L" || name == "--sysroot") {
      value(a == "-L" ? a : name, i, v);
      o.sysroot = v;
    } else if (a.rfind("-L", 0) == 0 && a.size() > 2) {
      inv.given.insert("-L");
      o.sysroot = a.substr(2);
    } else if (a == "--strace") {
      o.strace = true;
    } else if (a == "--stats") {
      o.stats = true;
    } else if (a == "--icount") {
      o.icount = true;
    } else if (name == "--trace" || name == "--chrome-trace" || name == "--profile") {
      value(name, i, v);
      if (v.empty()) throw UsageError("option '" + name + "' needs a file name");
      (name == "--trace"     ? o.trace_file
       : name == "--profile" ? o.profile_file
                             : o.chrome_trace_file) = v;
    } else if (name == "--trace-max") {
      value(name, i, v);
      if (!emu::parse_size(v, o.trace_select.max_bytes) ||
          o.trace_select.max_bytes < kMinTraceMax) {
        throw UsageError("--trace-max expects a size of at least 4K (e.g. 100M, 2G), got '" + v +
                         "'");
      }
      inv.trace_selected = true;
    } else if (name == "--trace-insn") {
      value(name, i, v);
      std::string error;
      if (!emu::trace::parse_trace_kinds(v, o.trace_select.insn_mask, o.trace_select.syscalls,
                                         error)) {
        throw UsageError(error);
      }
      inv.trace_selected = true;
    } else if (name == "--trace-range") {
      value(name, i, v);
      o.trace_select.ranges.push_back(parse_range(v));
      inv.trace_selected = true;
    } else if (name == "--trace-fn") {
      value(name, i, v);
      for (const std::string& f : split_commas(v)) {
        if (f.empty()) throw UsageError("--trace-fn expects function names, got '" + v + "'");
        o.trace_select.functions.push_back(f);
      }
      inv.trace_selected = true;
    } else if (name == "--trace-window") {
      value(name, i, v);
      parse_window(v, o.trace_select);
      inv.trace_selected = true;
    } else if (a == "--check") {  // the value is optional: only --check=MODE takes one
      o.check = emu::CheckMode::Warn;
    } else if (name == "--check") {
      value(name, i, v);
      o.check = emu::parse_check(v);
    } else if (name == "--check-jsonl") {
      value(name, i, v);
      o.check_jsonl_file = v;
      if (o.check == emu::CheckMode::Off) o.check = emu::CheckMode::Warn;
    } else if (name == "--check-sarif") {
      value(name, i, v);
      o.check_sarif_file = v;
      if (o.check == emu::CheckMode::Off) o.check = emu::CheckMode::Warn;
    } else if (a == "-d") {
      value(a, i, v);
      try {
        o.debug_log |= emu::parse_debug_items(v);
      } catch (const std::invalid_argument& e) {
        throw UsageError("unknown -d item '" + std::string(e.what()) +
                         "'; known: " + emu::debug_item_names());
      }
    } else if (a == "-D") {
      value(a, i, v);
      o.debug_log_file = v;
    } else if (name == "--mix") {
      value(name, i, v);
      o.mix_file = v;
    } else if (a == "-g" || name == "--gdb") {
      value(a == "-g" ? a : name, i, v);
      o.gdb_port = parse_port(v);
    } else if (a == "--help" || a == "-h") {
      inv.help_for_run = true;
      return args.size();
    } else if (a == "--version" || a == "-V") {
      inv.command = Command::Version;
      return args.size();
    } else {
      throw UsageError("unknown option '" + a + "' (see 'padlock-emu run --help')");
    }
  }
  return i;
}

}  // namespace

Invocation parse(const std::vector<std::string>& args, char** environ) {
  Invocation inv;
  if (args.empty()) throw UsageError("missing command (see 'padlock-emu --help')");
  const std::string& cmd = args[0];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    inv.command = Command::Help;
    if (cmd == "help" && args.size() > 1 && args[1] == "run") inv.help_for_run = true;
    return inv;
  }
  if (cmd == "--version" || cmd == "-V" || cmd == "version") {
    inv.command = Command::Version;
    return inv;
  }
  if (cmd == "--man") {
    inv.command = Command::Man;
    return inv;
  }
  if (cmd == "cpus") {
    inv.command = Command::Cpus;
    for (size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "--verbose" || args[i] == "-v")
        inv.verbose = true;
      else if (args[i] == "--x86")
        inv.x86 = true;
      else if (args[i] == "--help" || args[i] == "-h")
        inv.command = Command::Help;
      else
        throw UsageError("cpus: unknown argument '" + args[i] + "'");
    }
    return inv;
  }
  if (cmd == "trace") {
    inv.command = Command::Trace;
    inv.trace_args.assign(args.begin() + 1, args.end());
    return inv;
  }
  if (cmd == "system") {
    inv.command = Command::System;
    inv.system_args.assign(args.begin() + 1, args.end());
    return inv;
  }
  if (cmd != "run") {
    throw UsageError("unknown command '" + cmd +
                     "' (commands: run, cpus, trace, system; see --help)");
  }
  inv.command = Command::Run;
  emu::RunOptions& o = inv.run;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) o.envp.emplace_back(*e);
  const size_t prog = parse_run(args, 1, inv);
  if (inv.help_for_run || inv.command == Command::Version) {
    if (inv.help_for_run) inv.command = Command::Help;
    return inv;
  }
  // Environment defaults for what the command line left out: a variable is read (and
  // can be wrong) only when its option is not given.
  auto from_env = [&](const char* option, const char* var) -> const char* {
    if (inv.given.count(option) != 0) return nullptr;
    const char* v = std::getenv(var);
    return v != nullptr && *v != '\0' ? v : nullptr;
  };
  if (o.cpu == nullptr) {
    const char* env_cpu = from_env("--cpu", "PADLOCK_EMU_CPU");
    o.cpu = cpu_by_name(env_cpu != nullptr ? env_cpu : kDefaultCpu,
                        env_cpu != nullptr ? " (from PADLOCK_EMU_CPU)" : "");
  }
  if (const char* v = from_env("--mhz", "PADLOCK_EMU_MHZ")) {
    o.mhz = parse_mhz(v, " (from PADLOCK_EMU_MHZ)");
  }
  if (const char* v = from_env("--seed", "PADLOCK_EMU_SEED")) {
    o.seed = parse_seed(v, " (from PADLOCK_EMU_SEED)");
  }
  if (inv.given.count("--strace") == 0) o.strace = env_switch("PADLOCK_EMU_STRACE");
  if (inv.given.count("-L") == 0 && inv.given.count("--sysroot") == 0) {
    if (const char* v = std::getenv("PADLOCK_EMU_SYSROOT"); v != nullptr) o.sysroot = v;
  }
  if (const char* v = from_env("--progress", "PADLOCK_EMU_PROGRESS")) {
    o.progress = parse_on_off("PADLOCK_EMU_PROGRESS", v, "");
  }
  if (const char* v = from_env("--memory", "PADLOCK_EMU_MEMORY")) {
    o.direct_memory = parse_memory(v, " (from PADLOCK_EMU_MEMORY)");
  }
  if (inv.given.count("--irq-hz") != 0 && !o.timing) {
    throw UsageError(
        "--irq-hz has no effect with --timing off (the fast functional mode has no "
        "interrupts)");
  }
  if (inv.trace_selected && o.trace_file.empty() && o.chrome_trace_file.empty()) {
    throw UsageError(
        "--trace-max, --trace-insn, --trace-range, --trace-fn and --trace-window "
        "select what --trace and --chrome-trace keep; give one of them");
  }
  if (prog >= args.size()) throw UsageError("run: missing PROGRAM (see 'padlock-emu run --help')");
  if (!o.sysroot.empty()) emu::check_sysroot(o.sysroot);
  if (!o.sandbox.empty() && !is_directory(o.sandbox)) {
    throw UsageError("--sandbox '" + o.sandbox + "' is not a directory");
  }
  if (o.net && o.sandbox.empty()) {
    throw UsageError("--net allows sockets in a --sandbox; without one they are allowed anyway");
  }
  // The guest's memory cap defaults to the host's address-space limit, as a process under
  // that limit would meet it.
  if (inv.given.count("--max-memory") == 0) {
    rlimit as{};
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) o.max_memory = as.rlim_cur;
  }
  check_clock(o);
  o.program = args[prog];
  o.argv.assign(args.begin() + static_cast<long>(prog), args.end());
  if (inv.has_argv0) o.argv[0] = inv.argv0;
  return inv;
}

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: padlock-emu run [OPTIONS] PROGRAM [ARGS...]\n"
               "       padlock-emu cpus [--verbose] [--x86]\n"
               "       padlock-emu trace summary FILE | trace diff [--ignore F,...] A B\n"
               "       padlock-emu system [--cpu NAME] --kernel VMLINUZ | --debian-kernel ARCH\n"
               "       padlock-emu --help | --version | --man\n"
               "\n"
               "Runs a Linux i386 or x86-64 program on an emulated VIA processor:\n"
               "ordinary x86 code runs under Unicorn, PadLock instructions (XSTORE, REP\n"
               "XCRYPT*, REP XSHA*, REP MONTMUL) go to cycle-counted models of the chip.\n"
               "\n"
               "commands:\n"
               "  run     run PROGRAM (see 'padlock-emu run --help')\n"
               "  cpus    list the CPU models, their PadLock units and steppings\n"
               "          (--verbose: every constant with its source; --x86: every\n"
               "          measured x86 instruction cost with its source)\n"
               "  trace   summarize a --trace file, or find where two of them diverge\n"
               "  system  boot a kernel on QEMU with a modelled VIA CPU (docs/system.md)\n");
}

void print_run_usage(FILE* out) {
  std::string aliases;
  const std::string names = cpu_names(&aliases);
  std::fprintf(out,
               "usage: padlock-emu run [OPTIONS] PROGRAM [ARGS...]\n"
               "\n"
               "options (environment variable in brackets):\n"
               "  --cpu NAME       CPU model [PADLOCK_EMU_CPU]; default esther. Models:\n"
               "                   %s;\n"
               "                   aliases %s\n"
               "  --mhz N          core clock in MHz [PADLOCK_EMU_MHZ]; default: the model's;\n"
               "                   at least 1, and enough that interrupts take at most half\n"
               "                   of it (1.2 at the default --irq-hz)\n"
               "  --seed N         seed of the RNG, AT_RANDOM and getrandom [PADLOCK_EMU_SEED];\n"
               "                   default 0\n"
               "  --errata on|off  apply the model's errata (Esther stepping 8 CTR); default on\n"
               "  --timing on|off  on (default): the guest's clocks, sleeps and timers run on\n"
               "                   the modelled chip's cycle counter at --mhz (x86 blocks,\n"
               "                   PadLock clocks, caches); off: fast functional mode, host\n"
               "                   clocks, no interrupts (docs/timing.md)\n"
               "  --progress on|off\n"
               "                   on a terminal, a status line on stderr after 2 s: modelled\n"
               "                   time, instructions (if counted), PadLock bytes, host rate;\n"
               "                   default on; never when stderr is not a terminal\n"
               "                   [PADLOCK_EMU_PROGRESS]\n"
               "  --irq-hz HZ      periodic interrupts in virtual time (jitter from --seed);\n"
               "                   each clears EFLAGS[30]; default 250, 0 = none\n"
               "  --quantum US     a guest thread's time slice in virtual microseconds; the\n"
               "                   scheduler switches threads only at slice ends and blocking\n"
               "                   calls, so runs are reproducible (default 1000)\n"
               "  --cache-x86      also run ordinary loads/stores through the cache model\n"
               "                   (slow; PadLock data streams always use it)\n"
               "  --chip-check ud|warn|off\n"
               "                   an instruction whose CPUID feature the model lacks (SSE2 on\n"
               "                   a Nehemiah): ud (default) raises #UD (SIGILL) as the chip\n"
               "                   does; warn reports it once and runs it; off runs it\n"
               "  --memory direct|tlb\n"
               "                   how translated code reaches guest memory: direct (default;\n"
               "                   as qemu-user) or Unicorn's softmmu TLB (slower)\n"
               "                   [PADLOCK_EMU_MEMORY]\n"
               "  -L DIR, --sysroot DIR\n"
               "                   look absolute guest paths up in DIR first, as qemu-user's\n"
               "                   -L (for dynamically linked programs: the i386 sysroot of\n"
               "                   scripts/make-sysroot.sh) [PADLOCK_EMU_SYSROOT]; default: /\n"
               "  -E VAR=VALUE[,VAR=VALUE...]\n"
               "                   set variables in the guest's environment\n"
               "  -U VAR[,VAR...]  remove variables from the guest's environment\n"
               "  -0 ARGV0, --argv0 ARGV0\n"
               "                   the guest's argv[0] (default: PROGRAM as given)\n"
               "  --strace         log every system call and its result to stderr\n"
               "                   [PADLOCK_EMU_STRACE=1|0]\n"
               "  --stats          on exit, print PadLock instructions by kind with bytes and\n"
               "                   cycles, and diagnostics counts, to stderr\n"
               "  --icount         count guest instructions from the start (virtual clock)\n"
               "  --trace FILE     one JSON line per PadLock instruction (traces/README.md)\n"
               "  --chrome-trace FILE\n"
               "                   Trace Event JSON for Perfetto / chrome://tracing: PadLock\n"
               "                   instructions and system calls on the virtual-time axis\n"
               "  --profile FILE   callgrind-format profile (callgrind_annotate, KCachegrind):\n"
               "                   cycles, instructions and PadLock bytes per function, with\n"
               "                   calls; with --timing off it implies --icount\n"
               "                   (docs/profiling.md). A FILE ending in .gz is gzip-compressed.\n"
               "  --trace-max SIZE cap each trace file at SIZE bytes (before compression; K, M,\n"
               "                   G: e.g. 100M); later records are left out, with a message\n"
               "  --trace-insn KINDS\n"
               "                   keep only these kinds: rng, ace, phe, pmm, an instruction\n"
               "                   (xcryptcbc, xsha1, xstore ...), syscall; comma-separated\n"
               "  --trace-range LO-HI, --trace-fn NAME[,NAME...]\n"
               "                   keep only instructions at these addresses or in these\n"
               "                   functions (repeatable)\n"
               "  --trace-window FROM:TO\n"
               "                   keep only this stretch of virtual time: cycles, or times\n"
               "                   with ns, us, ms, s (e.g. 1ms:2ms, 5000:)\n"
               "  --check[=warn|error]\n"
               "                   the PadLock checker: report misuse (stale key or control\n"
               "                   word, undefined cases, overlaps, errata exposure) on\n"
               "                   stderr at exit; error: exit status 99 if an error-severity\n"
               "                   finding occurred (docs/checker.md)\n"
               "  --check-jsonl FILE, --check-sarif FILE\n"
               "                   also write the findings as JSON Lines / SARIF 2.1.0\n"
               "                   (imply --check)\n"
               "  -d ITEMS         log, comma-separated: in_asm (each block's disassembly once),\n"
               "                   exec (each executed block), cpu (registers before each\n"
               "                   executed block), padlock (each PadLock instruction),\n"
               "                   syscall (as --strace); to stderr or -D (docs/debugging.md)\n"
               "  -D FILE          write the -d log to FILE\n"
               "  --mix FILE       executed instructions by opcode (x86 and PadLock), in total\n"
               "                   and per function, as SDE's -mix (docs/debugging.md)\n"
               "  -g PORT, --gdb PORT\n"
               "                   wait for gdb on 127.0.0.1:PORT before the first instruction\n"
               "                   (gdb: target remote :PORT); 0 picks a free port and names it\n"
               "                   (docs/debugging.md)\n"
               "  --max-time S     stop the guest after S seconds of host time, with status\n"
               "                   124 (while it runs code, not while it blocks in a call)\n"
               "  --max-memory SIZE\n"
               "                   cap the guest's mappings (mmap, brk, mremap) at SIZE (K, M,\n"
               "                   G); beyond it they fail with ENOMEM; default: the host's\n"
               "                   RLIMIT_AS, if any\n"
               "  --sandbox DIR    confine the guest's file access to DIR and the sysroot:\n"
               "                   paths that leave them fail with EACCES; no sockets\n"
               "                   (docs/reliability.md)\n"
               "  --net            with --sandbox: allow sockets\n"
               "  -h, --help       this text;  -V, --version  the version\n"
               "\n"
               "qemu-user spellings: -cpu, -seed, -strace, -0, -E, -U, -L, -g, -d, -D.\n"
               "The guest's stdin, stdout and stderr are the emulator's; the exit status is the\n"
               "guest's (99 with --check=error and an error finding). A guest killed by a signal\n"
               "kills the emulator with the same signal; SIGINT, SIGTERM or SIGHUP from outside\n"
               "end the guest the same way, after the profile, traces and --stats are written.\n",
               names.c_str(), aliases.c_str());
}

}  // namespace padlock::cli
