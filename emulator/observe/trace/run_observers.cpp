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

std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

}  // namespace

std::unique_ptr<RunObservers> RunObservers::create(const RunOptions& opts, double mhz, bool guest64,
                                                   GuestMemory& mem) {
  if (opts.trace_file.empty() && opts.chrome_trace_file.empty() && opts.profile_file.empty() &&
      opts.check == CheckMode::Off && opts.mix_file.empty() && opts.debug_log == 0) {
    return nullptr;
  }
  return std::unique_ptr<RunObservers>(new RunObservers(opts, mhz, guest64, mem));
}

RunObservers::RunObservers(const RunOptions& opts, double mhz, bool guest64, GuestMemory& mem)
    : opts_(opts), guest64_(guest64), filter_(opts.trace_select, mhz), events_(guest64) {
  // Absolute, as the objects' paths are (real_path): debug files are looked up under it.
  if (!opts.sysroot.empty()) objects_.set_sysroot(real_path(opts.sysroot));
  trace::RunInfo run;
  run.program = profile::base_name(opts.program);
  run.guest64 = guest64;
  run.cpu = opts.cpu->name;
  run.mhz = mhz;
  run.seed = opts.seed;
  run.errata = opts.errata;
  const uint64_t cap = opts.trace_select.max_bytes;
  if (!opts.trace_file.empty()) {
    trace_file_ = std::make_unique<OutputFile>(opts.trace_file, "trace");
    trace_ = std::make_unique<trace::JsonlTrace>(trace_file_->stream(), run, cap);
  }
  if (!opts.chrome_trace_file.empty()) {
    chrome_file_ = std::make_unique<OutputFile>(opts.chrome_trace_file, "Chrome trace");
    chrome_ = std::make_unique<trace::ChromeTrace>(chrome_file_->stream(), run, cap);
  }
  if (!opts.profile_file.empty()) {
    profile_file_ = std::make_unique<OutputFile>(opts.profile_file, "profile");
    profiler_ = std::make_unique<profile::Profiler>(objects_);
  }
  if (opts.check != CheckMode::Off) {
    if (!opts.check_jsonl_file.empty()) {
      check_jsonl_file_ = std::make_unique<OutputFile>(opts.check_jsonl_file, "check JSON Lines");
    }
    if (!opts.check_sarif_file.empty()) {
      check_sarif_file_ = std::make_unique<OutputFile>(opts.check_sarif_file, "check SARIF");
    }
    lookup_ = std::make_unique<check::ObjectSourceLookup>(objects_);
    checker_ = std::make_unique<check::Checker>(*opts.cpu, guest64, lookup_.get());
  }
  if (!opts.mix_file.empty()) {
    mix_file_ = std::make_unique<OutputFile>(opts.mix_file, "instruction mix");
    mix_ = std::make_unique<mix::InstructionMix>(objects_, mem, guest64);
  }
  if (opts.debug_log != 0) {
    if (!opts.debug_log_file.empty()) {
      debug_file_ = std::make_unique<OutputFile>(opts.debug_log_file, "log");
    }
    debug_ = std::make_unique<DebugLog>(debug_file_ ? debug_file_->stream() : opts.log,
                                        opts.debug_log, mem, objects_, guest64);
  }
}

RunObservers::~RunObservers() = default;

void RunObservers::cap_reached(const char* option, const std::string& path, uint64_t seq,
                               uint64_t cycle) {
  std::fprintf(opts_.log,
               "padlock-emu: %s %s reached --trace-max %llu bytes at PadLock instruction #%llu "
               "(cycle %llu); later records are left out, and the file is closed validly at "
               "exit\n",
               option, path.c_str(), static_cast<unsigned long long>(opts_.trace_select.max_bytes),
               static_cast<unsigned long long>(seq), static_cast<unsigned long long>(cycle));
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
  if (mix_) mix_->on_padlock(r);
  if (debug_ && debug_->has(kLogPadlock)) debug_->on_padlock(r);
  if (!trace_ && !chrome_ && !profiler_) return;
  trace::PadlockEvent& ev = events_.build(r);
  ev.thread = thread_;
  const Outcome& o = r.outcome;
  if (profiler_) {
    profiler_->on_padlock(ev.pc, ev.cycle, ev.end, o.cycles, o.bytes, o.key_reloaded,
                          o.status == Status::Interrupted);
  }
  if (trace_ || chrome_) {
    ev.fn = objects_.function_at(ev.pc);
    const std::string& fn = objects_.function(ev.fn).name;
    if (!filter_.padlock(r.decoded.id, ev.pc, fn, ev.cycle)) return;
    if (trace_full_) {
      trace_->cap().left_out();
    } else if (trace_) {
      trace::capture_results(ev, mem);
      if (!trace_->record(ev, fn)) {
        trace_full_ = true;
        cap_reached("--trace", opts_.trace_file, ev.seq, ev.cycle);
      }
    }
    if (chrome_full_) {
      chrome_->cap().left_out();
    } else if (chrome_) {
      chrome_->padlock(ev, fn);
      if (chrome_->cap().full()) {
        chrome_full_ = true;
        cap_reached("--chrome-trace", opts_.chrome_trace_file, ev.seq, ev.cycle);
      }
    }
  }
}

void RunObservers::syscall(const char* name, uint64_t nr, int64_t result, uint64_t t0,
                           uint64_t t1) {
  if (!chrome_ || !filter_.syscall(t0)) return;
  if (chrome_full_)
    chrome_->cap().left_out();
  else
    chrome_->syscall(name, nr, result, t0, t1);
}

void RunObservers::finish(uint64_t now, const RunResult& result) {
  if (finished_) return;
  finished_ = true;
  trace::RunEnd end;
  end.cycle = now;
  end.signaled = result.signaled;
  end.exit_code = result.exit_code;
  end.signal = result.signal;
  if (trace_) trace_->end(end, events_.count(), events_.padlock_cycles());
  if (chrome_) chrome_->finish(end);
  std::string cmd;
  for (const std::string& a : opts_.argv) {
    if (!cmd.empty()) cmd += ' ';
    cmd += a;
  }
  if (profiler_) {
    profiler_->finish(now);
    profiler_->write(profile_file_->stream(), cmd, "padlock-emu");
  }
  if (checker_) {
    checker_->finish();
    check::ReportInfo info{opts_.program, opts_.cpu->name};
    check::write_text(opts_.log, checker_->findings());
    if (check_jsonl_file_) {
      check::write_jsonl(check_jsonl_file_->stream(), checker_->findings(), info);
    }
    if (check_sarif_file_) {
      check::write_sarif(check_sarif_file_->stream(), checker_->findings(), info);
    }
  }
  if (mix_) mix_->write(mix_file_->stream(), cmd);
  if (debug_) std::fflush(debug_->file());
  debug_.reset();
  const struct {
    OutputFile* file;
    const std::string& path;
  } outputs[] = {{trace_file_.get(), opts_.trace_file},
                 {chrome_file_.get(), opts_.chrome_trace_file},
                 {profile_file_.get(), opts_.profile_file},
                 {check_jsonl_file_.get(), opts_.check_jsonl_file},
                 {check_sarif_file_.get(), opts_.check_sarif_file},
                 {mix_file_.get(), opts_.mix_file},
                 {debug_file_.get(), opts_.debug_log_file}};
  for (const auto& o : outputs) {
    if (o.file != nullptr && !o.file->close()) {
      std::fprintf(opts_.log, "padlock-emu: error writing '%s': %s\n", o.path.c_str(),
                   std::strerror(errno));
    }
  }
  const struct {
    const trace::SizeCap* cap;
    const std::string& path;
  } capped[] = {{trace_ ? &trace_->cap() : nullptr, opts_.trace_file},
                {chrome_ ? &chrome_->cap() : nullptr, opts_.chrome_trace_file}};
  for (const auto& c : capped) {
    if (c.cap == nullptr || c.cap->dropped() == 0) continue;
    std::fprintf(opts_.log, "padlock-emu: %s: %llu events left out by --trace-max\n",
                 c.path.c_str(), static_cast<unsigned long long>(c.cap->dropped()));
  }
}

}  // namespace padlock::emu

namespace padlock::emu {

bool RunObservers::check_failed() const {
  return checker_ && opts_.check == CheckMode::Error && checker_->has_error();
}

}  // namespace padlock::emu
