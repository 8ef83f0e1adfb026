#include "emulator/observe/trace/run_observers.hpp"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "emulator/loader/elf_loader.hpp"
#include "emulator/observe/check/report.hpp"
#include "emulator/observe/trace/result_digest.hpp"

namespace padlock::emu {

namespace {

FILE* open_output(const std::string& path, const char* what) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    throw LoadError(std::string("cannot write the ") + what + " '" + path +
                    "': " + std::strerror(errno));
  }
  static constexpr size_t kBuffer = 1 << 20;
  std::setvbuf(f, nullptr, _IOFBF, kBuffer);
  return f;
}

std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

}  // namespace

std::unique_ptr<RunObservers> RunObservers::create(const RunOptions& opts, double mhz,
                                                   bool guest64) {
  if (opts.trace_file.empty() && opts.chrome_trace_file.empty() && opts.profile_file.empty() &&
      opts.check == CheckMode::Off) {
    return nullptr;
  }
  return std::unique_ptr<RunObservers>(new RunObservers(opts, mhz, guest64));
}

RunObservers::RunObservers(const RunOptions& opts, double mhz, bool guest64)
    : opts_(opts), guest64_(guest64) {
  trace::RunInfo run;
  run.program = profile::base_name(opts.program);
  run.guest64 = guest64;
  run.cpu = opts.cpu->name;
  run.mhz = mhz;
  run.seed = opts.seed;
  run.errata = opts.errata;
  try {
    if (!opts.trace_file.empty()) {
      trace_file_ = open_output(opts.trace_file, "trace");
      trace_ = std::make_unique<trace::JsonlTrace>(trace_file_, run);
    }
    if (!opts.chrome_trace_file.empty()) {
      chrome_file_ = open_output(opts.chrome_trace_file, "Chrome trace");
      chrome_ = std::make_unique<trace::ChromeTrace>(chrome_file_, run);
    }
    if (!opts.profile_file.empty()) {
      profile_file_ = open_output(opts.profile_file, "profile");
      profiler_ = std::make_unique<profile::Profiler>(objects_);
    }
    if (opts.check != CheckMode::Off) {
      if (!opts.check_jsonl_file.empty()) {
        check_jsonl_file_ = open_output(opts.check_jsonl_file, "check JSON Lines");
      }
      if (!opts.check_sarif_file.empty()) {
        check_sarif_file_ = open_output(opts.check_sarif_file, "check SARIF");
      }
      lookup_ = std::make_unique<check::ObjectSourceLookup>(objects_);
      checker_ = std::make_unique<check::Checker>(*opts.cpu, guest64, lookup_.get());
    }
  } catch (...) {
    for (FILE* f :
         {trace_file_, chrome_file_, profile_file_, check_jsonl_file_, check_sarif_file_}) {
      if (f != nullptr) std::fclose(f);
    }
    throw;
  }
}

RunObservers::~RunObservers() {
  for (FILE* f : {trace_file_, chrome_file_, profile_file_, check_jsonl_file_, check_sarif_file_}) {
    if (f != nullptr) std::fclose(f);
  }
}

void RunObservers::object_loaded(const std::string& host_path, uint64_t bias) {
  const std::string path = real_path(host_path);
  objects_.add(path, path, bias);
}

void RunObservers::file_mapped(int fd, uint64_t va, uint64_t offset) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char target[PATH_MAX];
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return;
  const std::string path(target, static_cast<size_t>(n));
  objects_.file_mapped(path, path, va, offset);
}

void RunObservers::unmapped(uint64_t va, uint64_t len) {
  objects_.unmapped(va, len);
}

void RunObservers::on_padlock(const PadlockRecord& r, GuestMemory& mem) {
  if (checker_) checker_->on_padlock(r, mem);
  if (!trace_ && !chrome_ && !profiler_) return;
  trace::PadlockEvent& ev = ev_;
  ev = trace::PadlockEvent{};
  ev.seq = seq_++;
  ev.cycle = r.start;
  ev.end = r.end;
  ev.pc = r.pc;
  ev.d = r.decoded;
  ev.guest64 = guest64_;
  std::memcpy(ev.in, r.before.gpr, sizeof ev.in);
  std::memcpy(ev.out, r.after.gpr, sizeof ev.out);
  ev.eflags30_in = r.before.eflags30();
  ev.eflags30_out = r.after.eflags30();
  ev.outcome = r.outcome;
  const Outcome& o = r.outcome;
  ev.restarted = have_prev_ && prev_pc_ == r.pc && prev_status_ != Status::Completed;
  have_prev_ = true;
  prev_pc_ = r.pc;
  prev_status_ = o.status;
  padlock_cycles_ += o.cycles;

  if (profiler_) {
    profiler_->on_padlock(ev.pc, ev.cycle, ev.end, o.cycles, o.bytes, o.key_reloaded,
                          o.status == Status::Interrupted);
  }
  if (trace_ || chrome_) {
    ev.fn = objects_.function_at(ev.pc);
    const std::string& fn = objects_.function(ev.fn).name;
    if (trace_) {
      trace::capture_results(ev, mem);
      trace_->record(ev, fn);
    }
    if (chrome_) chrome_->padlock(ev, fn);
  }
}

void RunObservers::syscall(const char* name, uint64_t nr, int64_t result, uint64_t t0,
                           uint64_t t1) {
  if (chrome_) chrome_->syscall(name, nr, result, t0, t1);
}

void RunObservers::finish(uint64_t now, const RunResult& result) {
  if (finished_) return;
  finished_ = true;
  trace::RunEnd end;
  end.cycle = now;
  end.signaled = result.signaled;
  end.exit_code = result.exit_code;
  end.signal = result.signal;
  if (trace_) trace_->end(end, seq_, padlock_cycles_);
  if (chrome_) chrome_->finish(end);
  if (profiler_) {
    profiler_->finish(now);
    std::string cmd;
    for (const std::string& a : opts_.argv) {
      if (!cmd.empty()) cmd += ' ';
      cmd += a;
    }
    profiler_->write(profile_file_, cmd, "padlock-emu");
  }
  if (checker_) {
    checker_->finish();
    check::ReportInfo info{opts_.program, opts_.cpu->name};
    check::write_text(opts_.log, checker_->findings());
    if (check_jsonl_file_) check::write_jsonl(check_jsonl_file_, checker_->findings(), info);
    if (check_sarif_file_) check::write_sarif(check_sarif_file_, checker_->findings(), info);
  }
  for (FILE** f :
       {&trace_file_, &chrome_file_, &profile_file_, &check_jsonl_file_, &check_sarif_file_}) {
    if (*f != nullptr) std::fclose(*f);
    *f = nullptr;
  }
}

}  // namespace padlock::emu

namespace padlock::emu {

bool RunObservers::check_failed() const {
  return checker_ && opts_.check == CheckMode::Error && checker_->has_error();
}

}  // namespace padlock::emu
