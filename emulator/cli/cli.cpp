#include "emulator/cli/cli.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "models/cpu_model.hpp"

namespace padlock::cli {

namespace {

const char* kDefaultCpu = "esther";

std::string known_cpus() {
  std::string s;
  for (const CpuModel* m : all_cpu_models()) {
    if (!s.empty()) s += ", ";
    s += m->name;
  }
  return s + " (aliases: nehemiah, esther)";
}

const CpuModel* cpu_by_name(const std::string& name, const char* where) {
  const CpuModel* m = find_cpu_model(name);
  if (m == nullptr) {
    throw UsageError(std::string("unknown CPU model '") + name + "'" + where +
                     "; known: " + known_cpus());
  }
  return m;
}

double parse_mhz(const std::string& s, const char* where) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || errno != 0 || !std::isfinite(v) || v <= 0 || v > 100000) {
    throw UsageError("invalid clock '" + s + "'" + where +
                     ": expected a frequency in MHz, e.g. --mhz 1600");
  }
  return v;
}

// --memory: true for direct, false for tlb.
bool parse_memory(const std::string& s, const char* where) {
  if (s == "direct") return true;
  if (s == "tlb") return false;
  throw UsageError("--memory expects direct or tlb, got '" + s + "'" + where);
}

uint64_t parse_seed(const std::string& s, const char* where) {
  char* end = nullptr;
  errno = 0;
  if (s.empty() || s[0] == '-') {
    throw UsageError("invalid seed '" + s + "'" + where + ": expected an unsigned integer");
  }
  const unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (*end != '\0' || errno != 0) {
    throw UsageError("invalid seed '" + s + "'" + where + ": expected an unsigned integer");
  }
  return v;
}

bool is_directory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool truthy(const char* v) {
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0 && std::strcmp(v, "off") != 0 &&
         std::strcmp(v, "no") != 0;
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
    const std::string& a = args[k];
    const size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      out = a.substr(eq + 1);
      return;
    }
    if (k + 1 >= args.size()) throw UsageError("option '" + opt + "' needs a value");
    out = args[++k];
  };
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return i + 1;
    if (a.empty() || a[0] != '-' || a == "-") return i;
    const std::string name = a.substr(0, a.find('='));
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
      char* end = nullptr;
      errno = 0;
      const double hz = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || errno != 0 || !(hz >= 0) || hz > 1e7)
        throw UsageError("invalid interrupt rate '" + v + "': expected HZ >= 0, e.g. --irq-hz 250");
      o.irq_hz = hz;
    } else if (a == "--cache-x86") {
      o.cache_x86 = true;
    } else if (name == "--memory") {
      value(name, i, v);
      o.direct_memory = parse_memory(v, "");
    } else if (a == "-E") {
      value(a, i, v);
      set_env(o.envp, v);
    } else if (a.rfind("-E", 0) == 0 && a.size() > 2 && a[1] == 'E') {
      set_env(o.envp, a.substr(2));
    } else if (a == "-U") {
      value(a, i, v);
      unset_env(o.envp, v);
    } else if (a.rfind("-U", 0) == 0 && a.size() > 2 && a[1] == 'U') {
      unset_env(o.envp, a.substr(2));
    } else if (a == "-L" || name == "--sysroot") {
      value(a == "-L" ? a : name, i, v);
      o.sysroot = v;
    } else if (a.rfind("-L", 0) == 0 && a.size() > 2) {
      o.sysroot = a.substr(2);
    } else if (a == "--strace") {
      o.strace = true;
    } else if (a == "--stats") {
      o.stats = true;
    } else if (a == "--icount") {
      o.icount = true;
    } else if (name == "--trace") {
      value(name, i, v);
      o.trace_file = v;
    } else if (name == "--chrome-trace") {
      value(name, i, v);
      o.chrome_trace_file = v;
    } else if (name == "--profile") {
      value(name, i, v);
      o.profile_file = v;
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
  // Environment defaults first; the command line overrides them.
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) o.envp.emplace_back(*e);
  const char* env_cpu = std::getenv("PADLOCK_EMU_CPU");
  o.cpu = cpu_by_name(env_cpu != nullptr && *env_cpu ? env_cpu : kDefaultCpu,
                      env_cpu != nullptr && *env_cpu ? " (from PADLOCK_EMU_CPU)" : "");
  if (const char* v = std::getenv("PADLOCK_EMU_MHZ"); v != nullptr && *v) {
    o.mhz = parse_mhz(v, " (from PADLOCK_EMU_MHZ)");
  }
  if (const char* v = std::getenv("PADLOCK_EMU_SEED"); v != nullptr && *v) {
    o.seed = parse_seed(v, " (from PADLOCK_EMU_SEED)");
  }
  o.strace = truthy(std::getenv("PADLOCK_EMU_STRACE"));
  if (const char* v = std::getenv("PADLOCK_EMU_SYSROOT"); v != nullptr) o.sysroot = v;
  if (const char* v = std::getenv("PADLOCK_EMU_MEMORY"); v != nullptr && *v) {
    o.direct_memory = parse_memory(v, " (from PADLOCK_EMU_MEMORY)");
  }
  const size_t prog = parse_run(args, 1, inv);
  if (inv.help_for_run || inv.command == Command::Version) {
    if (inv.help_for_run) inv.command = Command::Help;
    return inv;
  }
  if (prog >= args.size()) throw UsageError("run: missing PROGRAM (see 'padlock-emu run --help')");
  if (!o.sysroot.empty() && !is_directory(o.sysroot)) {
    throw UsageError("sysroot '" + o.sysroot + "' is not a directory");
  }
  o.program = args[prog];
  o.argv.assign(args.begin() + static_cast<long>(prog), args.end());
  return inv;
}

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: padlock-emu run [OPTIONS] PROGRAM [ARGS...]\n"
               "       padlock-emu cpus [--verbose] [--x86]\n"
               "       padlock-emu trace summary FILE | trace diff [--ignore F,...] A B\n"
               "       padlock-emu system [--cpu NAME] --kernel VMLINUZ | --debian-kernel ARCH\n"
               "       padlock-emu --help | --version\n"
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
  std::fprintf(out,
               "usage: padlock-emu run [OPTIONS] PROGRAM [ARGS...]\n"
               "\n"
               "options (environment variable in brackets):\n"
               "  --cpu NAME       CPU model [PADLOCK_EMU_CPU]; default esther. Models:\n"
               "                   %s\n"
               "  --mhz N          core clock in MHz [PADLOCK_EMU_MHZ]; default: the model's\n"
               "  --seed N         seed of the RNG, AT_RANDOM and getrandom [PADLOCK_EMU_SEED];\n"
               "                   default 0\n"
               "  --errata on|off  apply the model's errata (Esther stepping 8 CTR); default on\n"
               "  --timing on|off  on (default): the guest's clocks, sleeps and timers run on\n"
               "                   the modelled chip's cycle counter at --mhz (x86 blocks,\n"
               "                   PadLock clocks, caches); off: fast functional mode, host\n"
               "                   clocks, no interrupts (docs/timing.md)\n"
               "  --irq-hz HZ      periodic interrupts in virtual time (jitter from --seed);\n"
               "                   each clears EFLAGS[30]; default 250, 0 = none\n"
               "  --cache-x86      also run ordinary loads/stores through the cache model\n"
               "                   (slow; PadLock data streams always use it)\n"
               "  --memory direct|tlb\n"
               "                   how translated code reaches guest memory: direct (default;\n"
               "                   i386 programs, as qemu-user) or Unicorn's softmmu TLB\n"
               "                   (slower; always for x86-64 programs) [PADLOCK_EMU_MEMORY]\n"
               "  -L DIR, --sysroot DIR\n"
               "                   look absolute guest paths up in DIR first, as qemu-user's\n"
               "                   -L (for dynamically linked programs: the i386 sysroot of\n"
               "                   scripts/make-sysroot.sh) [PADLOCK_EMU_SYSROOT]; default: /\n"
               "  -E VAR=VALUE     set VAR in the guest's environment\n"
               "  -U VAR           remove VAR from the guest's environment\n"
               "  --strace         log every system call and its result to stderr\n"
               "                   [PADLOCK_EMU_STRACE=1]\n"
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
               "                   (docs/profiling.md)\n"
               "  -h, --help       this text;  -V, --version  the version\n"
               "\n"
               "The guest's stdin, stdout and stderr are the emulator's; the exit status is the\n"
               "guest's. A guest killed by a signal kills the emulator with the same signal.\n",
               known_cpus().c_str());
}

}  // namespace padlock::cli
