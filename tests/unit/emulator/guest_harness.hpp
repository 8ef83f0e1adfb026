// Small guest programs for the emulator tests: C (or C with inline asm) compiled at test
// time with the system gcc into static i386 / x86-64 executables (cached per source),
// run in a forked child under padlock::emu::Process with stdout/stderr captured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/options/run_options.hpp"

namespace padlock::emu::test {

enum class Arch { I386, X86_64 };

inline const char* arch_name(Arch a) {
  return a == Arch::I386 ? "i386" : "x86_64";
}

// Compiles `source` (C) for `arch` with `extra_flags` (default: -static -O1) and returns
// the path of the executable; an empty string if gcc cannot build static programs for
// `arch` at all (the test then skips); throws std::runtime_error with gcc's messages if
// the source does not compile. Results are cached by content in a temporary directory.
std::string build_guest(const std::string& source, Arch arch,
                        const std::string& extra_flags = "-static -O1");

struct GuestRun {
  bool load_error = false;  // the Process constructor threw LoadError
  std::string error;        // its message
  RunResult result;
  std::string out, err;  // captured stdout and stderr (stderr also gets the log)
};

// Runs `program` with `args` under `cpu` (default: esther for i386, nano for x86-64) in a
// child process; `sysroot` is -L/--sysroot (empty: the host root).
GuestRun run_guest(const std::string& program, const std::vector<std::string>& args = {},
                   const char* cpu = nullptr, bool strace = false, uint64_t seed = 0,
                   const std::vector<std::string>& env = {}, const std::string& sysroot = "");

// The default CPU model for an architecture's guests.
inline const char* default_cpu(Arch a) {
  return a == Arch::I386 ? "esther" : "nano";
}

// "key=value" lines of a guest's output.
std::string field(const std::string& out, const std::string& key);

}  // namespace padlock::emu::test
