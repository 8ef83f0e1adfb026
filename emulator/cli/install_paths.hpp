// Where an installed or a built padlock-emu finds what it needs besides itself: system
// mode's library and scripts, the man page. Installed, they sit around the binary as
// `cmake --install` and the wheel lay them out (bin/, lib/, share/); in a build tree the
// paths CMake compiled in apply (docs/python.md, "Installing").
#pragma once

#include <string>
#include <vector>

namespace padlock::cli {

// The directory of the running binary (/proc/self/exe), "" if unknown.
std::string self_dir();

// The first of `candidates` that exists, "" when none does.
std::string first_existing(const std::vector<std::string>& candidates);

}  // namespace padlock::cli
