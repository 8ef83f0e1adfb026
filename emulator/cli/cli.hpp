// The padlock-emu command line: `run`, `cpus`, --help, --version. Parsing is separate from
// running so every usage error becomes one line and a non-zero status, never a crash.
#pragma once

#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulator/options/option_checks.hpp"
#include "emulator/options/run_options.hpp"

namespace padlock::cli {

// A one-line usage error (exit status 2); the option checks every entry point shares
// throw the same (emulator/options/option_checks.hpp).
using UsageError = emu::OptionError;

enum class Command { Help, Version, Man, Run, Cpus, Trace, System };

struct Invocation {
  Command command = Command::Help;
  bool help_for_run = false;  // `padlock-emu run --help`
  bool verbose = false;       // `cpus --verbose`
  bool x86 = false;           // `cpus --x86`
  emu::RunOptions run;
  std::set<std::string> given;  // run options on the command line ("--cpu", "-L", ...)
  bool trace_selected = false;  // a --trace-* selection option was given
  std::string argv0;            // -0/--argv0: the guest's argv[0]
  bool has_argv0 = false;
  std::vector<std::string> trace_args;   // `trace SUBCOMMAND ...` (trace_cmd.cpp)
  std::vector<std::string> system_args;  // `system ...` (system_cmd.cpp)
};

// argv without the program name; `environ` supplies PADLOCK_EMU_* defaults and the
// guest's environment. Throws UsageError.
Invocation parse(const std::vector<std::string>& args, char** environ);

void print_usage(FILE* out);
// --man: the man page of this binary's build tree or install (man -l), else `man padlock-emu`.
int show_man_page(FILE* err);
void print_run_usage(FILE* out);
void print_cpus(FILE* out, bool verbose, bool x86 = false);

// `padlock-emu trace summary FILE` / `trace diff [--ignore F,...] A B`; returns the exit
// status (diff: 0 same, 1 different; 2 usage or unreadable file).
// `padlock-emu system ...` (docs/system.md): execs QEMU; returns only on errors (2 usage).
int run_system_command(const std::vector<std::string>& args, FILE* out, FILE* err);

int run_trace_command(const std::vector<std::string>& args, FILE* out, FILE* err);

}  // namespace padlock::cli
