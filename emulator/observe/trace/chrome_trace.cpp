#include "emulator/observe/trace/chrome_trace.hpp"

#include "emulator/observe/trace/json_text.hpp"
#include "emulator/observe/trace/jsonl_trace.hpp"

namespace padlock::emu::trace {

namespace {
// The guide's four units are always listed; the later ones once they have run.
constexpr size_t kGuideUnits = 4;
}  // namespace

ChromeTrace::ChromeTrace(FILE* out, const RunInfo& run, uint64_t max_bytes)
    : out_(out), run_(run), cap_(max_bytes) {
  ev_.reserve(512);
  std::fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":", out_);
  ev_.assign(1, '{');  // not = "{": GCC 12 warns falsely (-Wrestrict, PR 105329)
  json_key(ev_, "program");
  json_string(ev_, run.program);
  json_run_settings(ev_, run);
  json_key(ev_, "time_axis");
  json_string(ev_, "virtual: cycles / mhz");
  ev_ += "}";
  std::fwrite(ev_.data(), 1, ev_.size(), out_);
  std::fputs(",\"traceEvents\":[\n", out_);
  cap_.take_always(ev_.size() + 64);  // with the text around it

  ev_ = "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":";
  json_string(ev_, run.program + " on " + run.cpu);
  ev_ += "}}";
  emit();
  ev_ = "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"guest\"}}";
  emit();
}

void ChromeTrace::emit() {
  const size_t n = ev_.size() + 2;
  if (closing_) {
    cap_.take_always(n);
  } else if (!cap_.take(n)) {
    return;
  }
  if (!first_) std::fputs(",\n", out_);
  first_ = false;
  std::fwrite(ev_.data(), 1, ev_.size(), out_);
}

void ChromeTrace::event_begin(const char* name, const char* cat, const char* ph, uint64_t ts) {
  ev_.assign(1, '{');  // (see above)
  json_key(ev_, "name");
  json_string(ev_, name);
  if (cat != nullptr) {
    json_key(ev_, "cat");
    json_string(ev_, cat);
  }
  json_key(ev_, "ph");
  json_string(ev_, ph);
  json_key(ev_, "ts");
  json_micros(ev_, ts, run_.mhz);
  json_key(ev_, "pid");
  ev_ += '1';
  json_key(ev_, "tid");
  ev_ += '1';
}

void ChromeTrace::padlock(const PadlockEvent& ev, const std::string& fn) {
  const isa::InsnInfo& info = ev.d.info();
  const Outcome& o = ev.outcome;
  event_begin(info.guide_name, "padlock", "X", ev.cycle);
  json_key(ev_, "dur");
  json_micros(ev_, ev.end - ev.cycle, run_.mhz);
  json_key(ev_, "args");
  ev_ += '{';
  json_key(ev_, "seq");
  json_u64(ev_, ev.seq);
  json_key(ev_, "pc");
  json_hex(ev_, ev.pc, ev.guest64 ? 16 : 8);
  json_key(ev_, "fn");
  json_string(ev_, fn);
  json_key(ev_, "unit");
  json_string(ev_, isa::unit_name(info.unit));
  json_key(ev_, "cycles");
  json_u64(ev_, o.cycles);
  json_key(ev_, "bytes");
  json_u64(ev_, o.bytes);
  json_key(ev_, "status");
  json_string(ev_, status_name(o.status));
  json_key(ev_, "key_reloaded");
  json_bool(ev_, o.key_reloaded);
  if (o.has_cw) {
    json_key(ev_, "cw");
    json_hex(ev_, o.cw.raw, 8);
  }
  ev_ += "}}";
  emit();

  const size_t u = static_cast<size_t>(info.unit);
  unit_cycles_[u] += o.cycles;
  unit_bytes_[u] += o.bytes;
  const struct {
    const char* name;
    const uint64_t* per_unit;
  } series[] = {{"padlock cycles", unit_cycles_}, {"padlock bytes", unit_bytes_}};
  for (const auto& s : series) {
    event_begin(s.name, nullptr, "C", ev.end);
    json_key(ev_, "args");
    ev_ += '{';
    for (size_t i = 0; i < isa::kUnitCount; ++i) {
      if (i >= kGuideUnits && unit_cycles_[i] == 0 && unit_bytes_[i] == 0) continue;
      json_key(ev_, isa::unit_name(static_cast<isa::Unit>(i)));
      json_u64(ev_, s.per_unit[i]);
    }
    ev_ += "}}";
    emit();
  }
}

void ChromeTrace::syscall(const char* name, uint64_t nr, int64_t result, uint64_t t0, uint64_t t1) {
  char fallback[32];
  if (name == nullptr) {
    std::snprintf(fallback, sizeof fallback, "syscall_%llu", static_cast<unsigned long long>(nr));
    name = fallback;
  }
  event_begin(name, "syscall", "X", t0);
  json_key(ev_, "dur");
  json_micros(ev_, t1 - t0, run_.mhz);
  json_key(ev_, "args");
  ev_ += '{';
  json_key(ev_, "nr");
  json_u64(ev_, nr);
  json_key(ev_, "result");
  json_i64(ev_, result);
  ev_ += "}}";
  emit();
}

void ChromeTrace::finish(const RunEnd& e) {
  // An instant event marks the exit, so the axis extends to the end of the run.
  event_begin(e.signaled ? "killed by signal" : "exit", "process", "i", e.cycle);
  json_key(ev_, "s");
  json_string(ev_, "p");
  json_key(ev_, "args");
  ev_ += '{';
  json_key(ev_, e.signaled ? "signal" : "exit_code");
  json_i64(ev_, e.signaled ? e.signal : e.exit_code);
  if (cap_.dropped() != 0) {
    json_key(ev_, "dropped");
    json_u64(ev_, cap_.dropped());
  }
  ev_ += "}}";
  closing_ = true;
  emit();
  std::fputs("\n]}\n", out_);
}

}  // namespace padlock::emu::trace
