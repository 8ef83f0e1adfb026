// libFuzzer target: the --trace reader behind `trace summary` and `trace diff`
// (emulator/tools/trace_file.hpp, json_value.hpp) on any file: it reads the file or gives
// a one-line reason, and a file it reads can be summarized.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "emulator/tools/trace_file.hpp"
#include "emulator/tools/trace_summary.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/padlock-fuzz-trace-" + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  padlock::emu::trace::TraceFile t;
  std::string error;
  if (padlock::emu::trace::read_trace(path, t, error)) {
    FILE* out = std::fopen("/dev/null", "w");
    padlock::emu::trace::print_summary(out, t, padlock::emu::trace::summarize(t));
    std::fclose(out);
  } else if (error.empty() || error.find('\n') != std::string::npos) {
    __builtin_trap();  // the reason is one line
  }
  return 0;
}
