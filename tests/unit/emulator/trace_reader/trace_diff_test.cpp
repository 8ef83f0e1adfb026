// `trace diff`: the first differing instruction and field, ignoring what the user asks.
#include "emulator/trace_reader/trace_diff.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "emulator/trace_reader/trace_summary.hpp"

namespace padlock::emu::trace {
namespace {

const char* kRun = R"({"type":"run","schema":1,"program":"p","arch":"i386","cpu":"esther-c5j",)"
                   R"("mhz":1600,"seed":0,"errata":true})";

std::string insn(int seq, uint64_t cycle, uint64_t cycles, const char* ecx = "0x00000000",
                 const char* cpu = "esther-c5j") {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                R"({"type":"insn","seq":%d,"cycle":%llu,"pc":"0x08049000","fn":"main",)"
                R"("cpu":"%s","insn":"REP XSHA1","in":{"ecx":"0x00000003"},)"
                R"("out":{"ecx":"%s"},"status":"completed","bytes":3,"cycles":%llu,)"
                R"("key_reloaded":false,"diag":[]})",
                seq, static_cast<unsigned long long>(cycle), cpu, ecx,
                static_cast<unsigned long long>(cycles));
  return buf;
}

TraceFile load(const std::vector<std::string>& lines) {
  // CTest runs each test in its own process, in parallel: one file per process.
  const std::string path =
      testing::TempDir() + "/trace_diff_test." + std::to_string(::getpid()) + ".jsonl";
  {
    std::ofstream f(path);
    for (const std::string& l : lines) f << l << "\n";
  }
  TraceFile t;
  std::string err;
  EXPECT_TRUE(read_trace(path, t, err)) << err;
  return t;
}

TEST(TraceDiff, IdenticalTracesAreSame) {
  const TraceFile a = load({kRun, insn(0, 10, 252), insn(1, 300, 252)});
  EXPECT_TRUE(diff_traces(a, a).same());
}

TEST(TraceDiff, FirstDivergenceIsTheChangedInstructionAndField) {
  const TraceFile a = load({kRun, insn(0, 10, 252), insn(1, 300, 252), insn(2, 600, 252)});
  // Instruction 1 costs one cycle more; instruction 2 therefore starts one cycle later.
  const TraceFile b = load({kRun, insn(0, 10, 252), insn(1, 300, 253), insn(2, 601, 252)});
  const TraceDiff d = diff_traces(a, b);
  EXPECT_FALSE(d.same());
  EXPECT_TRUE(d.run.empty());
  ASSERT_TRUE(d.insn_differs);
  EXPECT_EQ(d.index, 1u);
  ASSERT_EQ(d.fields.size(), 1u);
  EXPECT_EQ(d.fields[0].path, "cycles");
  EXPECT_EQ(d.fields[0].a, "252");
  EXPECT_EQ(d.fields[0].b, "253");
  EXPECT_EQ(d.differing, 2u);
}

TEST(TraceDiff, NestedFieldsByDottedPathAndIgnore) {
  const TraceFile a = load({kRun, insn(0, 10, 252, "0x00000000")});
  const TraceFile b = load({kRun, insn(0, 10, 252, "0x00000001")});
  TraceDiff d = diff_traces(a, b);
  ASSERT_TRUE(d.insn_differs);
  ASSERT_EQ(d.fields.size(), 1u);
  EXPECT_EQ(d.fields[0].path, "out.ecx");
  EXPECT_TRUE(diff_traces(a, b, {"out"}).same());
  EXPECT_TRUE(diff_traces(a, b, {"out.ecx"}).same());
  EXPECT_FALSE(diff_traces(a, b, {"out.ec"}).same());  // a prefix of a name is not a path
}

TEST(TraceDiff, RunLineAndCountsAndEnd) {
  std::string other_run = kRun;
  other_run.replace(other_run.find("esther-c5j"), 10, "nano");
  // The per-record cpu is not compared (the run line is): only the run differs.
  const TraceFile a = load({kRun, insn(0, 10, 252)});
  const TraceFile b =
      load({other_run, insn(0, 10, 252, "0x00000000", "nano"), insn(1, 20, 5),
            R"({"type":"end","cycle":99,"instructions":2,"padlock_cycles":257,"exit_code":0})"});
  const TraceDiff d = diff_traces(a, b);
  ASSERT_EQ(d.run.size(), 1u);
  EXPECT_EQ(d.run[0].path, "cpu");
  EXPECT_FALSE(d.insn_differs);
  EXPECT_EQ(d.count_a, 1u);
  EXPECT_EQ(d.count_b, 2u);
  ASSERT_EQ(d.end.size(), 1u);  // A has no end record
  EXPECT_EQ(d.end[0].a, "(absent)");
}

TEST(TraceSummary, TotalsPerKindAndFunction) {
  std::string faulted = insn(2, 900, 40);
  faulted.replace(faulted.find("completed"), 9, "faulted");
  const TraceFile t = load({kRun, insn(0, 10, 252), insn(1, 300, 300), faulted});
  const TraceSummary s = summarize(t);
  ASSERT_EQ(s.by_kind.count("REP XSHA1"), 1u);
  const KindTotals& k = s.by_kind.at("REP XSHA1");
  EXPECT_EQ(k.count, 3u);
  EXPECT_EQ(k.bytes, 9u);
  EXPECT_EQ(k.cycles, 592u);
  EXPECT_EQ(k.faulted, 1u);
  EXPECT_EQ(s.by_function.at({"main", "REP XSHA1"}).count, 3u);
}

TEST(TraceFileRead, RejectsOtherFiles) {
  const std::string path =
      testing::TempDir() + "/not_a_trace." + std::to_string(::getpid()) + ".jsonl";
  {
    std::ofstream f(path);
    f << "{\"hello\":1}\n";
  }
  TraceFile t;
  std::string err;
  EXPECT_FALSE(read_trace(path, t, err));
  EXPECT_NE(err.find(":1:"), std::string::npos) << err;
  EXPECT_FALSE(read_trace("/nonexistent.jsonl", t, err));
}

}  // namespace
}  // namespace padlock::emu::trace
