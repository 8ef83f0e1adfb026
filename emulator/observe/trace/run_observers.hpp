// What watches a run for --trace, --chrome-trace, --profile, --check, --mix and -d: the
// guest's objects and symbols, the profiler, the trace writers, the PadLock checker, the
// instruction mix and the debug log. The Process calls it from its hooks with one line each
// (`if (obs_) obs_->...`); when none of these options is given there is no RunObservers and
// the hooks cost one pointer test.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "emulator/cpu/block_cache.hpp"
#include "emulator/observe/check/checker.hpp"
#include "emulator/observe/check/source_lookup.hpp"
#include "emulator/observe/debug_log.hpp"
#include "emulator/observe/mix/instruction_mix.hpp"
#include "emulator/observe/output_file.hpp"
#include "emulator/observe/padlock_record.hpp"
#include "emulator/observe/profile/object_map.hpp"
#include "emulator/observe/profile/profiler.hpp"
#include "emulator/observe/trace/chrome_trace.hpp"
#include "emulator/observe/trace/jsonl_trace.hpp"
#include "emulator/observe/trace/padlock_event.hpp"
#include "emulator/observe/trace/trace_filter.hpp"
#include "emulator/options/run_options.hpp"

namespace padlock::emu {

class RunObservers final : public PadlockListener {
 public:
  // nullptr when the options ask for none of them. Opens the output files; throws
  // LoadError with a one-line reason when one cannot be created.
  static std::unique_ptr<RunObservers> create(const RunOptions& opts, double mhz, bool guest64,
                                              GuestMemory& mem);
  ~RunObservers() override;
  RunObservers(const RunObservers&) = delete;
  RunObservers& operator=(const RunObservers&) = delete;

  // The profiler and the instruction mix need every block from the first one on.
  bool wants_blocks() const {
    return profiler_ != nullptr || mix_ != nullptr ||
           (debug_ && debug_->has(kLogInAsm | kLogExec | kLogCpu));
  }
  // -d exec and cpu read each block's registers before it runs: the block hook must run
  // on every block (no inline costs, no block log).
  bool wants_every_block() const { return debug_ && debug_->has(kLogExec | kLogCpu); }
  // on_block_log's `now` is read (the profiler's block times); else any value will do.
  bool wants_block_times() const { return profiler_ != nullptr; }
  // The instruction mix alone needs the blocks, and only how often each ran: generated
  // code can count them (mix::InstructionMix::counter) instead of logging them.
  mix::InstructionMix* block_counter() const {
    const bool others =
        profiler_ != nullptr || (debug_ && debug_->has(kLogInAsm | kLogExec | kLogCpu));
    return others ? nullptr : mix_.get();
  }
  // -d / -D (null when no -d item is given).
  DebugLog* debug_log() const { return debug_.get(); }

  // An ELF image (program, interpreter) loaded at `bias`.
  void object_loaded(const std::string& host_path, uint64_t bias);
  // A guest mmap of descriptor `fd` at `va` from file offset `offset` (shared objects).
  void file_mapped(int fd, uint64_t va, uint64_t offset);
  void unmapped(uint64_t va, uint64_t len);

  // Hot path (profiling only): a block starts at virtual time `now`.
  void on_block(const BlockInfo& b, uint64_t now) {
    if (profiler_) profiler_->on_block(b, now);
    if (mix_) mix_->on_block(b);
    if (debug_) debug_->on_block(b);
  }
  // A batch of Unicorn's block log (profile::Profiler::on_block_log).
  void on_block_log(const uint64_t* begin, const uint64_t* end, const BlockInfo* const* blocks,
                    size_t nblocks, uint64_t now) {
    if (profiler_) profiler_->on_block_log(begin, end, blocks, nblocks, now);
    if (mix_) mix_->on_block_log(begin, end, blocks, nblocks);
    if (debug_) debug_->on_new_blocks(blocks, nblocks);
  }

  // One PadLock instruction, from the execution core (emulator/exec/core.hpp).
  void on_padlock(const PadlockRecord& r, GuestMemory& mem) override;
  // The guest thread that runs from now on (creation order; emulator/linux/threads/scheduler.hpp).
  void set_thread(int index) { thread_ = index; }

  // A system call from t0 to t1 (virtual time).
  void syscall(const char* name, uint64_t nr, int64_t result, uint64_t t0, uint64_t t1);

  // At exit: writes the profile and the checker's report and closes the files. Safe to
  // call from the run loop of a guest ended by a host signal (SIGINT, SIGTERM, SIGHUP):
  // nothing is left half written.
  void finish(uint64_t now, const RunResult& result);
  // --check=error and an error-severity finding (valid after finish).
  bool check_failed() const;

  const check::Checker* checker() const { return checker_.get(); }

  const profile::ObjectMap& objects() const { return objects_; }

 private:
  RunObservers(const RunOptions& opts, double mhz, bool guest64, GuestMemory& mem);
  // The first time a trace file reaches --trace-max: one line on the log.
  void cap_reached(const char* option, const std::string& path, uint64_t seq, uint64_t cycle);

  const RunOptions& opts_;
  bool guest64_;
  profile::ObjectMap objects_;
  std::unique_ptr<profile::Profiler> profiler_;
  // Every output file (gzip when its name ends in .gz: output_file.hpp).
  std::unique_ptr<OutputFile> trace_file_, chrome_file_, profile_file_, mix_file_, debug_file_,
      check_jsonl_file_, check_sarif_file_;
  std::unique_ptr<mix::InstructionMix> mix_;
  std::unique_ptr<DebugLog> debug_;  // to -D's file, else the run's log
  std::unique_ptr<trace::JsonlTrace> trace_;
  std::unique_ptr<trace::ChromeTrace> chrome_;
  trace::TraceFilter filter_;
  bool trace_full_ = false, chrome_full_ = false;  // --trace-max reached (said once)
  std::unique_ptr<check::ObjectSourceLookup> lookup_;
  std::unique_ptr<check::Checker> checker_;

  trace::EventBuilder events_;
  int thread_ = -1;  // set_thread; -1 while the process has one thread
  bool finished_ = false;
};

}  // namespace padlock::emu
