// libFuzzer target: the --trace reader behind `trace summary` and `trace diff`
// (emulator/trace_reader/trace_file.hpp; lines parsed by nlohmann-json) on any file: it reads the
// file or gives a one-line reason, and a file it reads can be summarized. The reader takes a path:
// the input goes to one memory file, rewritten for each input (a file on disk cost a truncate and a
// writeback per input, most of the time of a run).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "emulator/trace_reader/trace_file.hpp"
#include "emulator/trace_reader/trace_summary.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("fuzz-trace", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0) abort();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) abort();
  padlock::emu::trace::TraceFile t;
  std::string error;
  if (padlock::emu::trace::read_trace(path, t, error)) {
    static FILE* const out = std::fopen("/dev/null", "w");
    padlock::emu::trace::print_summary(out, t, padlock::emu::trace::summarize(t));
  } else if (error.empty() || error.find('\n') != std::string::npos) {
    __builtin_trap();  // the reason is one line
  }
  return 0;
}
