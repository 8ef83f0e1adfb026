// libFuzzer target: the command line (emulator/cli/cli.hpp). The input is split at NUL
// bytes into arguments; parse() must accept them or throw UsageError, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "emulator/cli/cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.emplace_back();
    } else {
      args.back().push_back(static_cast<char>(data[i]));
    }
  }
  char* env[] = {nullptr};
  try {
    padlock::cli::Invocation inv = padlock::cli::parse(args, env);
    (void)inv;
  } catch (const padlock::cli::UsageError&) {
  }
  return 0;
}
