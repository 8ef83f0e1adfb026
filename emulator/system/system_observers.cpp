#include "emulator/system/system_observers.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "emulator/observe/check/report.hpp"
#include "emulator/observe/trace/json_text.hpp"
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
  o.check_jsonl_file = env("PADLOCK_SYSTEM_CHECK_JSONL");
  o.check_sarif_file = env("PADLOCK_SYSTEM_CHECK_SARIF");
  o.kernel = env("PADLOCK_SYSTEM_KERNEL");
  o.console_log = env("PADLOCK_SYSTEM_CONSOLE");
  const std::string modules = env("PADLOCK_SYSTEM_MODULES");
  for (size_t at = 0; at < modules.size();) {
    const size_t colon = std::min(modules.find(':', at), modules.size());
    if (colon > at) o.modules.push_back(modules.substr(at, colon - at));
    at = colon + 1;
  }
  return o;
}

// A checker's report file (--check-jsonl, --check-sarif) with `write`'s text.
template <typename Write>
void write_report(const std::string& path, Write write) {
  if (path.empty()) return;
  FILE* f = std::fopen(path.c_str(), "w");
  if (f != nullptr) write(f);
  if (f == nullptr || std::fclose(f) != 0) {
    std::fprintf(stderr, "padlock-emu: error writing '%s': %s\n", path.c_str(),
                 std::strerror(errno));
  }
}

SystemObservers::SystemObservers(const SystemObserverOptions& opts, const CpuModel& cpu, double mhz,
                                 uint64_t seed, bool guest64)
    : opts_(opts), cpu_name_(cpu.name), events_(guest64) {
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
  // The modules are named when the run ends; until then the checker's stack scan finds no
  // code (KernelSymbols knows no module yet), so a finding's backtrace is its PC.
  if (opts.check) checker_ = std::make_unique<check::Checker>(cpu, guest64, &symbols_);
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
  if (!opts_.console_log.empty())
    symbols_.add_modules_from_console(opts_.console_log, opts_.modules);
  if (trace_) {
    trace::RunEnd end;
    end.cycle = now;
    trace_->end(end, events_.count(), events_.padlock_cycles());
    trace_.reset();
    std::fclose(trace_file_);
    trace_file_ = nullptr;
    if (!symbols_.empty()) name_trace_functions();
  }
  if (checker_) {
    checker_->finish();
    const std::vector<check::Finding>& findings = checker_->findings();
    check::write_text(stderr, findings);
    const size_t slash = opts_.kernel.rfind('/');
    const check::ReportInfo info{opts_.kernel.substr(slash == std::string::npos ? 0 : slash + 1),
                                 cpu_name_};
    write_report(opts_.check_jsonl_file, [&](FILE* f) { check::write_jsonl(f, findings, info); });
    write_report(opts_.check_sarif_file, [&](FILE* f) { check::write_sarif(f, findings, info); });
  }
}

// Each record was written with kNoFunction right after its pc ("pc":"0x…","fn":"??? …"):
// where a module's function holds the pc, its name and the module's replace it.
void SystemObservers::name_trace_functions() {
  const std::string& path = opts_.trace_file;
  // Only a regular file is written again (not --trace /dev/stdout or a pipe).
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  const std::string named = path + ".names";
  std::ifstream in(path);
  FILE* out = std::fopen(named.c_str(), "w");
  if (!in || out == nullptr) {
    if (out != nullptr) std::fclose(out);
    std::fprintf(stderr, "padlock-emu: cannot name the functions in '%s': %s\n", path.c_str(),
                 std::strerror(errno));
    return;
  }
  const std::string pc_key = "\"pc\":\"";
  const std::string fn_field = std::string(",\"fn\":\"") + kNoFunction + "\"";
  std::string line, fn;
  while (std::getline(in, line)) {
    const size_t pc = line.find(pc_key);
    const size_t end = pc == std::string::npos ? pc : line.find('"', pc + pc_key.size());
    KernelLocation where;
    if (end != std::string::npos && line.compare(end + 1, fn_field.size(), fn_field) == 0 &&
        symbols_.resolve(std::strtoull(line.c_str() + pc + pc_key.size(), nullptr, 16), where)) {
      fn.clear();
      trace::json_key(fn, "fn");
      trace::json_string(fn, where.function);
      trace::json_key(fn, "module");
      trace::json_string(fn, where.object);
      line.replace(end + 1, fn_field.size(), "," + fn);
    }
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), out);
  }
  if (std::fclose(out) != 0 || std::rename(named.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "padlock-emu: cannot name the functions in '%s': %s\n", path.c_str(),
                 std::strerror(errno));
    std::remove(named.c_str());
  }
}

}  // namespace padlock::emu
