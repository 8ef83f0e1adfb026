// What watches a run for --trace, --chrome-trace, --profile and --check: the guest's objects
// and symbols, the profiler, the trace writers and the PadLock checker. The Process calls it from
// its hooks with one line each (`if (obs_) obs_->...`); when none of the three options is given
// there is no RunObservers and the hooks cost one pointer test.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "emulator/cpu/block_cache.hpp"
#include "emulator/observe/check/checker.hpp"
#include "emulator/observe/check/source_lookup.hpp"
#include "emulator/observe/padlock_record.hpp"
#include "emulator/observe/profile/object_map.hpp"
#include "emulator/observe/profile/profiler.hpp"
#include "emulator/observe/trace/chrome_trace.hpp"
#include "emulator/observe/trace/jsonl_trace.hpp"
#include "emulator/observe/trace/padlock_event.hpp"
#include "emulator/run_options.hpp"

namespace padlock::emu {

class RunObservers final : public PadlockListener {
 public:
  // nullptr when the options ask for none of them. Opens the output files; throws
  // LoadError with a one-line reason when one cannot be created.
  static std::unique_ptr<RunObservers> create(const RunOptions& opts, double mhz, bool guest64);
  ~RunObservers() override;
  RunObservers(const RunObservers&) = delete;
  RunObservers& operator=(const RunObservers&) = delete;

  // The profiler needs every block from the first one on.
  bool wants_blocks() const { return profiler_ != nullptr; }

  // An ELF image (program, interpreter) loaded at `bias`.
  void object_loaded(const std::string& host_path, uint64_t bias);
  // A guest mmap of descriptor `fd` at `va` from file offset `offset` (shared objects).
  void file_mapped(int fd, uint64_t va, uint64_t offset);
  void unmapped(uint64_t va, uint64_t len);

  // Hot path (profiling only): a block starts at virtual time `now`.
  void on_block(const BlockInfo& b, uint64_t now) {
    if (profiler_) profiler_->on_block(b, now);
  }
  // A batch of Unicorn's block log (profile::Profiler::on_block_log).
  void on_block_log(const uint64_t* begin, const uint64_t* end, const BlockInfo* const* blocks,
                    size_t nblocks, uint64_t now) {
    if (profiler_) profiler_->on_block_log(begin, end, blocks, nblocks, now);
  }

  // One PadLock instruction, from the execution core (emulator/padlock/core.hpp).
  void on_padlock(const PadlockRecord& r, GuestMemory& mem) override;

  // A system call from t0 to t1 (virtual time).
  void syscall(const char* name, uint64_t nr, int64_t result, uint64_t t0, uint64_t t1);

  // At exit: writes the profile and the checker's report and closes the files.
  void finish(uint64_t now, const RunResult& result);
  // --check=error and an error-severity finding (valid after finish).
  bool check_failed() const;

  const check::Checker* checker() const { return checker_.get(); }

  const profile::ObjectMap& objects() const { return objects_; }

 private:
  RunObservers(const RunOptions& opts, double mhz, bool guest64);

  const RunOptions& opts_;
  bool guest64_;
  profile::ObjectMap objects_;
  std::unique_ptr<profile::Profiler> profiler_;
  FILE* trace_file_ = nullptr;
  FILE* chrome_file_ = nullptr;
  FILE* profile_file_ = nullptr;
  std::unique_ptr<trace::JsonlTrace> trace_;
  std::unique_ptr<trace::ChromeTrace> chrome_;
  std::unique_ptr<check::ObjectSourceLookup> lookup_;
  std::unique_ptr<check::Checker> checker_;
  FILE* check_jsonl_file_ = nullptr;
  FILE* check_sarif_file_ = nullptr;

  // What the next instruction's record needs to know.
  trace::PadlockEvent ev_;
  uint64_t seq_ = 0;
  uint64_t padlock_cycles_ = 0;
  bool have_prev_ = false;
  uint64_t prev_pc_ = 0;
  Status prev_status_ = Status::Completed;
  bool finished_ = false;
};

}  // namespace padlock::emu
