// padlock-emu: the command-line entry point.
#include <capstone/capstone.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "emulator/cli/cli.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/loader/elf_loader.hpp"

#ifndef PADLOCK_EMU_VERSION
#define PADLOCK_EMU_VERSION "0"
#endif

int main(int argc, char** argv) {
  using namespace padlock;
  std::vector<std::string> args(argv + 1, argv + argc);
  cli::Invocation inv;
  try {
    inv = cli::parse(args, environ);
  } catch (const cli::UsageError& e) {
    std::fprintf(stderr, "padlock-emu: %s\n", e.what());
    return 2;
  }
  switch (inv.command) {
    case cli::Command::Help:
      if (inv.help_for_run)
        cli::print_run_usage(stdout);
      else
        cli::print_usage(stdout);
      return 0;
    case cli::Command::Version: {
      unsigned uc_major = 0, uc_minor = 0;
      int cs_major = 0, cs_minor = 0;
      uc_version(&uc_major, &uc_minor);
      cs_version(&cs_major, &cs_minor);
      // The patch level is the header's: the library is built from the same patched
      // sources (cmake/PadlockUnicorn.cmake).
      std::printf("padlock-emu %s (Unicorn %u.%u.%d with padlock-emu's patch, Capstone %d.%d)\n",
                  PADLOCK_EMU_VERSION, uc_major, uc_minor, UC_API_PATCH, cs_major, cs_minor);
      return 0;
    }
    case cli::Command::Man:
      return cli::show_man_page(stderr);
    case cli::Command::Cpus:
      cli::print_cpus(stdout, inv.verbose, inv.x86);
      return 0;
    case cli::Command::Trace:
      return cli::run_trace_command(inv.trace_args, stdout, stderr);
    case cli::Command::System:
      return cli::run_system_command(inv.system_args, stdout, stderr);
    case cli::Command::Run:
      break;
  }
  emu::RunResult result;
  try {
    emu::Process process(inv.run);
    result = process.run();
  } catch (const emu::LoadError& e) {
    std::fprintf(stderr, "padlock-emu: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "padlock-emu: out of host memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "padlock-emu: internal error: %s\n", e.what());
    return 1;
  }
  std::fflush(stdout);
  if (result.signaled) emu::end_like_guest(result);
  // --check=error: an error-severity finding fails the run (docs/checker.md).
  constexpr int kCheckErrorExit = 99;
  return result.check_error ? kCheckErrorExit : result.exit_code;
}
