// The --trace writer's cost per record: our JsonlTrace (hand-written JSON text into one
// reused buffer, emulator/observe/trace/jsonl_trace.hpp) beside nlohmann-json writing the
// same line. nlohmann's side only copies a record already built and sets three members
// before dump(): a lower bound on building each record from scratch. Prints ns per record
// for both in one run, the measurement behind keeping the hand-written writer on the hot
// path (docs/profiling.md, "--trace").
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "emulator/observe/trace/jsonl_trace.hpp"

using namespace padlock;
using namespace padlock::emu::trace;

namespace {

constexpr int kRecords = 200000;

PadlockEvent cbc_event(uint64_t seq) {
  PadlockEvent ev;
  ev.seq = seq;
  ev.cycle = 1000 + seq * 300;
  ev.end = ev.cycle + 234;
  ev.pc = 0x8049eae;
  ev.d.status = isa::DecodeStatus::Ok;
  ev.d.id = isa::InsnId::XcryptCbc;
  ev.d.length = 4;
  ev.d.addr_size = 32;
  const uint64_t in[8] = {0x1000, 4, 0x2000, 0x3000, 0, 0, 0x4000, 0x5000};
  std::memcpy(ev.in, in, sizeof in);
  std::memcpy(ev.out, in, sizeof in);
  ev.out[1] = 0;
  ev.outcome.cycles = 234;
  ev.outcome.bytes = 64;
  ev.outcome.blocks = 4;
  ev.outcome.has_cw = true;
  ev.outcome.cw.raw = 10 | 1u << 7;
  return ev;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main() {
  FILE* sink = std::fopen("/dev/null", "w");
  const RunInfo run{"bench", false, "esther-c5j", 1600, 1, false};

  // One line from our writer, the template of nlohmann's records.
  char* buf = nullptr;
  size_t len = 0;
  FILE* mem = open_memstream(&buf, &len);
  {
    JsonlTrace one(mem, run);
    one.record(cbc_event(0), "padlock_xcrypt_cbc");
  }
  std::fclose(mem);
  const std::string text(buf, len);
  std::free(buf);
  const std::string insn_line = text.substr(text.find('\n') + 1);
  const nlohmann::ordered_json model = nlohmann::ordered_json::parse(insn_line);

  JsonlTrace ours(sink, run);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kRecords; ++i) ours.record(cbc_event(i), "padlock_xcrypt_cbc");
  const double ours_s = seconds_since(t0);

  std::string line;
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kRecords; ++i) {
    const PadlockEvent ev = cbc_event(i);
    nlohmann::ordered_json r = model;
    r["seq"] = ev.seq;
    r["cycle"] = ev.cycle;
    r["cycles"] = ev.outcome.cycles;
    line = r.dump();
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), sink);
  }
  const double lib_s = seconds_since(t0);
  std::fclose(sink);
  std::printf("trace record (%zu bytes), ns per record:\n", insn_line.size());
  std::printf("  JsonlTrace (ours)        %8.0f\n", ours_s * 1e9 / kRecords);
  std::printf("  nlohmann-json (at least) %8.0f\n", lib_s * 1e9 / kRecords);
  std::printf("  ratio                    %8.2fx\n", lib_s / ours_s);
  return 0;
}
