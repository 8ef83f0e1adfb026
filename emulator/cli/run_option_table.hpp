// The options of `padlock-emu run`, one declaration each: every spelling, how it takes its
// value, its help entry and what it sets. cli.cpp's parser and `run --help` both walk this
// table, so an option cannot be parsed without being documented, or the reverse.
#pragma once

#include <span>
#include <string>

#include "emulator/cli/cli.hpp"

namespace padlock::cli {

enum class Takes {
  Flag,         // the spelling alone: --strace
  Value,        // --cpu NAME, --cpu=NAME, -d ITEMS
  EqualsValue,  // only --check=MODE (a bare --check is its own row, a Flag)
  Final,        // --help, --version: the rest of the line is not parsed
};

struct RunOption {
  // Every spelling, nullptr-terminated; the first is the one `Invocation::given` records
  // (the PADLOCK_EMU_* defaults ask whether it was given).
  const char* spellings[3];
  Takes takes;
  // A one-letter spelling whose value may follow it directly (-EVAR=1, -Lsysroot), as
  // qemu-user's.
  bool attached;
  // The help entry: its first column, then its lines ('\n'-separated; {models} and
  // {aliases} name the CPU models). A row without a label shares the entry above it.
  const char* label;
  const char* help;
  void (*apply)(Invocation& inv, const std::string& value);
};

std::span<const RunOption> run_options();

}  // namespace padlock::cli
