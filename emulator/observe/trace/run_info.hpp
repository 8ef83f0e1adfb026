// What identifies a run in the trace files: the program (by file name only, so traces do
// not depend on the build directory), the CPU model and the switches that change results.
#pragma once

#include <cstdint>
#include <string>

namespace padlock::emu::trace {

struct RunInfo {
  std::string program;  // last path component of PROGRAM
  bool guest64 = false;
  std::string cpu;  // CpuModel::name
  double mhz = 0;
  uint64_t seed = 0;
  bool errata = true;
};

// How the guest ended (RunResult in words), for the end record.
struct RunEnd {
  uint64_t cycle = 0;  // virtual time at exit
  bool signaled = false;
  int exit_code = 0;
  int signal = 0;
};

}  // namespace padlock::emu::trace
