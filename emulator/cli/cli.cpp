#include "emulator/cli/cli.hpp"

#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "emulator/cli/run_option_table.hpp"
#include "emulator/options/option_checks.hpp"
#include "models/cpu_model.hpp"

namespace padlock::cli {

namespace {

using emu::check_clock;
using emu::cpu_by_name;
using emu::cpu_names;
using emu::parse_memory;
using emu::parse_mhz;
using emu::parse_on_off;
using emu::parse_seed;

const char* kDefaultCpu = "esther";

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

// The row of kRunOptions that argument `a` names, and the spelling it matched.
const RunOption* find_option(const std::string& a, const char*& spelling) {
  const std::string name = a.substr(0, a.find('='));
  for (const RunOption& o : run_options()) {
    for (const char* s : o.spellings) {
      if (s == nullptr) break;
      const size_t n = std::strlen(s);
      const bool is_long = n > 2 && s[1] == '-';
      bool match = false;
      switch (o.takes) {
        case Takes::Flag:
        case Takes::Final:
          match = a == s;
          break;
        case Takes::Value:
          match = is_long ? name == s
                          : a == s || (o.attached && a.size() > n && a.compare(0, n, s) == 0);
          break;
        case Takes::EqualsValue:
          match = is_long && name == s && a.size() > n;
          break;
      }
      if (match) {
        spelling = s;
        return &o;
      }
    }
  }
  return nullptr;
}

// Options of `run` (run_option_table.cpp); returns the index of PROGRAM.
size_t parse_run(const std::vector<std::string>& args, size_t i, Invocation& inv) {
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return i + 1;
    if (a.empty() || a[0] != '-' || a == "-") return i;
    const char* spelling = nullptr;
    const RunOption* o = find_option(a, spelling);
    if (o == nullptr) throw UsageError("unknown option '" + a + "' (see 'padlock-emu run --help')");
    inv.given.insert(o->spellings[0]);
    std::string v;
    if (o->takes == Takes::Value || o->takes == Takes::EqualsValue) {
      // As given: "--opt=value", "-Lvalue" (attached) or "--opt value".
      const size_t n = std::strlen(spelling);
      if (n > 2 && spelling[1] == '-' && a.size() > n) {
        v = a.substr(n + 1);
      } else if (a.size() > n) {
        v = a.substr(n);
      } else if (i + 1 < args.size()) {
        v = args[++i];
      } else {
        throw UsageError("option '" + std::string(spelling) + "' needs a value");
      }
    }
    o->apply(inv, v);
    if (o->takes == Takes::Final) return args.size();
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
    o.progress = parse_on_off("PADLOCK_EMU_PROGRESS", v);
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

namespace {

// One help entry: the label in a 16-column field, or on its own line when longer; each
// help line indented to column 19.
void print_entry(FILE* out, const char* label, std::string_view help) {
  constexpr int kLabelWidth = 16;
  const bool own_line = std::strlen(label) > kLabelWidth;
  std::fprintf(out, own_line ? "  %s\n" : "  %-16s ", label);
  bool first = true;
  while (!help.empty()) {
    const size_t nl = std::min(help.find('\n'), help.size());
    std::fprintf(out, "%*s%.*s\n", first && !own_line ? 0 : kLabelWidth + 3, "",
                 static_cast<int>(nl), help.data());
    help.remove_prefix(std::min(nl + 1, help.size()));
    first = false;
  }
}

std::string replace_all(std::string s, std::string_view from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

}  // namespace

void print_run_usage(FILE* out) {
  std::string aliases;
  const std::string names = cpu_names(&aliases);
  std::fputs(
      "usage: padlock-emu run [OPTIONS] PROGRAM [ARGS...]\n"
      "\n"
      "options (environment variable in brackets):\n",
      out);
  for (const RunOption& o : run_options()) {
    if (o.label == nullptr) continue;  // documented with the entry above
    print_entry(out, o.label,
                replace_all(replace_all(o.help, "{models}", names), "{aliases}", aliases));
  }
  std::fputs(
      "\n"
      "qemu-user spellings: -cpu, -seed, -strace, -0, -E, -U, -L, -g, -d, -D.\n"
      "The guest's stdin, stdout and stderr are the emulator's; the exit status is the\n"
      "guest's (99 with --check=error and an error finding). A guest killed by a signal\n"
      "kills the emulator with the same signal; SIGINT, SIGTERM or SIGHUP from outside\n"
      "end the guest the same way, after the profile, traces and --stats are written.\n",
      out);
}

}  // namespace padlock::cli
