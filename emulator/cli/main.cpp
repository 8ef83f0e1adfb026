// padlock-emu: the command-line entry point.
#include <capstone/capstone.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "emulator/cli/cli.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/loader/elf_loader.hpp"

#ifndef PADLOCK_EMU_VERSION
#define PADLOCK_EMU_VERSION "0"
#endif

namespace {

// End the way qemu-user does when the guest dies by a signal: after flushing, kill
// ourselves with the same signal (no core file), so the parent sees the signal and a
// shell reports 128+N.
[[noreturn]] void die_by_signal(int sig) {
  std::fflush(stdout);
  std::fflush(stderr);
  struct rlimit none = {0, 0};
  setrlimit(RLIMIT_CORE, &none);
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  _exit(128 + sig);  // the signal's default action does not terminate (cannot happen)
}

}  // namespace

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
  } catch (const std::exception& e) {
    std::fprintf(stderr, "padlock-emu: internal error: %s\n", e.what());
    return 1;
  }
  std::fflush(stdout);
  if (result.signaled) die_by_signal(result.signal);
  return result.exit_code;
}
