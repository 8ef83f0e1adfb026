// `padlock-emu system` runs QEMU as its child and reads the guest's console from a pipe:
// it shows the test init's result lines (or the whole console with --console), the
// console's tail when the boot fails, never a terminal escape sequence from the firmware,
// and it ends QEMU cleanly on SIGINT, SIGTERM and SIGHUP (docs/system.md, "Output").
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace padlock::cli {

struct ConsoleOptions {
  bool whole = false;        // --console: every line of the console
  bool expect_done = false;  // --debian-kernel: the test init ends with PADLOCK-DONE
};

// Starts QEMU (argv[0] is its path) and waits for it; returns the exit status for main, or
// ends this process by the signal that interrupted it once QEMU has ended.
int run_qemu(const std::vector<std::string>& argv, const ConsoleOptions& o, FILE* out, FILE* err);

}  // namespace padlock::cli
