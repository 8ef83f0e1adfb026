#include "emulator/system/system_observers.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "emulator/observe/check/report.hpp"
#include "emulator/observe/trace/result_digest.hpp"

namespace padlock::emu {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// The name the trace gives code without symbols, as user mode's object map does.
constexpr const char* kNoFunction = "??? (anonymous)";

}  // namespace

SystemObserverOptions SystemObserverOptions::from_env() {
  SystemObserverOptions o;
  o.trace_file = env("PADLOCK_SYSTEM_TRACE");
  o.check = env("PADLOCK_SYSTEM_CHECK") == "1";
  o.kernel = env("PADLOCK_SYSTEM_KERNEL");
  return o;
}

SystemObservers::SystemObservers(const SystemObserverOptions& opts, const CpuModel& cpu, double mhz,
                                 uint64_t seed, bool guest64)
    : events_(guest64) {
  if (!opts.trace_file.empty()) {
    trace_file_ = std::fopen(opts.trace_file.c_str(), "w");
    if (trace_file_ == nullptr) {
      throw std::runtime_error("cannot create trace '" + opts.trace_file +
                               "': " + std::strerror(errno));
    }
    trace::RunInfo run;
    const size_t slash = opts.kernel.rfind('/');
    run.program = slash == std::string::npos ? opts.kernel : opts.kernel.substr(slash + 1);
    run.guest64 = guest64;
    run.cpu = cpu.name;
    run.mhz = mhz;
    run.seed = seed;
    trace_ = std::make_unique<trace::JsonlTrace>(trace_file_, run);
  }
  if (opts.check) checker_ = std::make_unique<check::Checker>(cpu, guest64, nullptr);
}

SystemObservers::~SystemObservers() {
  if (trace_file_ != nullptr) std::fclose(trace_file_);
}

void SystemObservers::on_padlock(const PadlockRecord& r, GuestMemory& mem) {
  std::lock_guard<std::mutex> hold(lock_);
  if (finished_) return;
  if (checker_) checker_->on_padlock(r, mem);
  if (!trace_) return;
  trace::PadlockEvent& ev = events_.build(r);
  trace::capture_results(ev, mem);
  trace_->record(ev, kNoFunction);
}

void SystemObservers::finish(uint64_t now) {
  std::lock_guard<std::mutex> hold(lock_);
  if (finished_) return;
  finished_ = true;
  if (trace_) {
    trace::RunEnd end;
    end.cycle = now;
    trace_->end(end, events_.count(), events_.padlock_cycles());
    std::fflush(trace_file_);
  }
  if (checker_) {
    checker_->finish();
    check::write_text(stderr, checker_->findings());
  }
}

}  // namespace padlock::emu
