// --trace and --check in system mode (docs/system.md): the execution core's records go to
// the same JSON Lines trace writer and the same checker as in user mode (emulator/observe/),
// chosen by the environment `padlock-emu system` sets for QEMU. The kernel's PadLock code
// sits in modules at addresses only the guest knows, and the guest reports them on its
// console once a module is loaded (kernel_symbols.hpp): so the names come when QEMU exits,
// the checker's at its finish() and the trace's by one pass over the written file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "emulator/observe/check/checker.hpp"
#include "emulator/observe/padlock_record.hpp"
#include "emulator/observe/trace/jsonl_trace.hpp"
#include "emulator/observe/trace/padlock_event.hpp"
#include "emulator/system/kernel_symbols.hpp"
#include "models/cpu_model.hpp"

namespace padlock::emu {

struct SystemObserverOptions {
  std::string trace_file;        // PADLOCK_SYSTEM_TRACE: --trace FILE
  bool check = false;            // PADLOCK_SYSTEM_CHECK=1: --check (findings on stderr at exit)
  std::string check_jsonl_file;  // PADLOCK_SYSTEM_CHECK_JSONL: --check-jsonl FILE
  std::string check_sarif_file;  // PADLOCK_SYSTEM_CHECK_SARIF: --check-sarif FILE
  std::string kernel;            // PADLOCK_SYSTEM_KERNEL: the trace's "program"
  // PADLOCK_SYSTEM_CONSOLE: the console log QEMU writes (its PADLOCK-SECTION lines), and
  // PADLOCK_SYSTEM_MODULES: the modules' .ko files, ':'-separated.
  std::string console_log;
  std::vector<std::string> modules;
  static SystemObserverOptions from_env();
  bool any() const { return !trace_file.empty() || check; }
};

// One per QEMU process, shared by its virtual CPUs (one lock around each record).
class SystemObservers final : public PadlockListener {
 public:
  // Opens the trace file; throws std::runtime_error with a one-line reason when it cannot.
  SystemObservers(const SystemObserverOptions& opts, const CpuModel& cpu, double mhz, uint64_t seed,
                  bool guest64);
  ~SystemObservers() override;

  void on_padlock(const PadlockRecord& r, GuestMemory& mem) override;
  // When QEMU exits: the trace's end record at `now`, the module names in the trace and the
  // findings, and the findings on stderr (and in the --check-jsonl and --check-sarif files).
  void finish(uint64_t now);

 private:
  // The trace file again with each record's function and module (trace_file_ is closed).
  void name_trace_functions();

  SystemObserverOptions opts_;
  std::mutex lock_;
  FILE* trace_file_ = nullptr;
  std::unique_ptr<trace::JsonlTrace> trace_;
  KernelSymbols symbols_;
  std::unique_ptr<check::Checker> checker_;
  std::string cpu_name_;
  trace::EventBuilder events_;
  bool finished_ = false;
};

}  // namespace padlock::emu
