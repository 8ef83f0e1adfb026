// The profiler on hand-made block sequences: self costs per block and per PadLock
// instruction, the shadow stack's call edges with inclusive costs, and the callgrind text.
#include "emulator/observe/profile/profiler.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace padlock::emu::profile {
namespace {

// main [0x1000,0x1040), f [0x1040,0x1080), g [0x1080,0x1100) at bias 0.
ObjectMap three_functions() {
  ObjectMap m;
  m.add({{0x1000, 0x1000, 0x100, true}},
        {{0x1000, 0x40, "main"}, {0x1040, 0x40, "f"}, {0x1080, 0x80, "g"}}, "/bin/prog", 0);
  return m;
}

BlockInfo block(uint64_t addr, uint32_t size, uint32_t insns, BlockExit exit = BlockExit::Other,
                uint16_t exit_offset = 0) {
  BlockInfo b;
  b.address = addr;
  b.size = size;
  b.insns = insns;
  b.exit = exit;
  b.exit_offset = exit_offset;
  return b;
}

std::string callgrind(const Profiler& p) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  p.write(f, "prog arg", "padlock-emu test");
  std::fclose(f);
  std::string s(buf, len);
  std::free(buf);
  return s;
}

// The text between "fn=NAME\n" and the next blank line.
std::string function_block(const std::string& text, const std::string& name) {
  size_t at = text.find("\nfn=" + name + "\n");
  if (at == std::string::npos) return "";
  ++at;
  const size_t end = text.find("\n\n", at);
  return text.substr(at, end == std::string::npos ? end : end + 1 - at);
}

TEST(Profiler, SelfCostsCallEdgeAndPadlockAttribution) {
  const ObjectMap m = three_functions();
  Profiler p(m);
  p.on_block(block(0x1000, 0x10, 4, BlockExit::Call, 0xc), 0);  // main: ... call f
  p.on_block(block(0x1040, 0x8, 2), 4);                         // f
  p.on_padlock(0x1046, 6, 106, 100, 64, true, false);           // REP XCRYPT in f: 100 cycles
  p.on_block(block(0x1048, 0x8, 3, BlockExit::Ret, 7), 106);    // f: ... ret
  p.on_block(block(0x1010, 0x10, 5), 109);                      // main after the call
  p.finish(114);
  EXPECT_EQ(p.max_depth(), 1u);

  const std::string text = callgrind(p);
  // Header that callgrind_annotate needs; the events in order.
  EXPECT_NE(text.find("positions: instr\n"), std::string::npos);
  EXPECT_NE(text.find("events: Cyc Ir PLIns PLCyc PLBytes PLReload PLIntr\n"), std::string::npos);
  // Totals: 114 cycles, 14 instructions, one PadLock instruction of 100 cycles, 64 bytes.
  EXPECT_NE(text.find("summary: 114 14 1 100 64 1 0\n"), std::string::npos);
  EXPECT_NE(text.find("totals: 114 14 1 100 64 1 0\n"), std::string::npos);

  const std::string main_fn = function_block(text, "main");
  // Block costs: 4 cycles / 4 insns, then 5 / 5 (finish at 114).
  EXPECT_NE(main_fn.find("0x1000 4 4\n"), std::string::npos) << main_fn;
  EXPECT_NE(main_fn.find("0x1010 5 5\n"), std::string::npos) << main_fn;
  // The call at 0x100c to f: once, inclusive 105 cycles (4..109), 5 instructions and the
  // PadLock instruction.
  EXPECT_NE(main_fn.find("cfn=f\ncalls=1 0x1040\n0x100c 105 5 1 100 64 1\n"), std::string::npos)
      << main_fn;

  const std::string f_fn = function_block(text, "f");
  // f's first block ran from 4 to 106 minus the 100 PadLock cycles booked at 0x1046.
  EXPECT_NE(f_fn.find("0x1040 2 2\n"), std::string::npos) << f_fn;
  EXPECT_NE(f_fn.find("0x1046 100 0 1 100 64 1\n"), std::string::npos) << f_fn;
  EXPECT_NE(f_fn.find("0x1048 3 3\n"), std::string::npos) << f_fn;
}

TEST(Profiler, OverlappedPadlockCyclesKeepTheClockConsistent) {
  // §3.3: integer code may run while ACE works; the clock moves by 80 of the 100 cycles
  // charged. Cyc follows the clock, PLCyc the charged cycles.
  const ObjectMap m = three_functions();
  Profiler p(m);
  p.on_block(block(0x1040, 0x8, 2), 0);
  p.on_padlock(0x1046, 2, 82, 100, 32, false, true);
  p.on_block(block(0x1048, 0x8, 3), 82);
  p.finish(85);
  const std::string text = callgrind(p);
  EXPECT_NE(text.find("summary: 85 5 1 100 32 0 1\n"), std::string::npos) << text;
  EXPECT_NE(function_block(text, "f").find("0x1040 2 2\n0x1046 80 0 1 100 32 0 1\n0x1048 3 3\n"),
            std::string::npos)
      << text;
}

TEST(Profiler, ReturnPastFramesPopsThemAll) {
  // main calls f, f calls g, g "returns" straight to main's return address (longjmp-like):
  // both frames close there.
  const ObjectMap m = three_functions();
  Profiler p(m);
  p.on_block(block(0x1000, 0x10, 1, BlockExit::Call, 0xc), 0);  // main -> f, returns to 0x1010
  p.on_block(block(0x1040, 0x10, 1, BlockExit::Call, 0xb), 1);  // f -> g, returns to 0x1050
  p.on_block(block(0x1080, 0x10, 1, BlockExit::Ret, 0xf), 2);   // g: ret
  p.on_block(block(0x1010, 0x10, 1), 3);                        // lands in main
  EXPECT_EQ(p.max_depth(), 2u);
  p.finish(4);
  const std::string text = callgrind(p);
  EXPECT_NE(function_block(text, "main").find("cfn=f\ncalls=1 0x1040\n0x100c 2 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(function_block(text, "f").find("cfn=g\ncalls=1 0x1080\n0x104b 1 1\n"),
            std::string::npos)
      << text;
}

TEST(Profiler, RecursionAndAnUnmatchedReturn) {
  const ObjectMap m = three_functions();
  Profiler p(m);
  // g's blocks: E (entry), R (the recursive call), X (return), H (a RET to a trampoline
  // outside every object, as a signal handler's return does).
  p.on_block(block(0x1000, 0x10, 1, BlockExit::Call, 0xc), 0);  // main -> g (ret 0x1010)
  p.on_block(block(0x1080, 0x8, 1), 1);                         // E: frame 1 opens
  p.on_block(block(0x1088, 0x8, 1, BlockExit::Call, 2), 2);     // R: g -> g (ret 0x1090)
  p.on_block(block(0x1080, 0x8, 1), 3);                         // E: frame 2 opens
  p.on_block(block(0x10c0, 0x8, 1, BlockExit::Ret, 4), 4);      // H: ret to 0x500000
  p.on_block(block(0x500000, 0x10, 1), 5);                      // nobody expects it: no pop
  p.on_block(block(0x1090, 0x8, 1, BlockExit::Ret, 4), 6);      // X (inner g): ret
  p.on_block(block(0x1090, 0x8, 1, BlockExit::Ret, 4), 7);      // X (outer g): frame 2 closes
  p.on_block(block(0x1010, 0x10, 1), 8);                        // main: frame 1 closes
  p.finish(9);
  EXPECT_EQ(p.max_depth(), 2u);
  const std::string text = callgrind(p);
  EXPECT_NE(function_block(text, "main").find("cfn=g\ncalls=1 0x1080\n0x100c 7 7\n"),
            std::string::npos)
      << text;
  EXPECT_NE(function_block(text, "g").find("cfn=g\ncalls=1 0x1080\n0x108a 4 4\n"),
            std::string::npos)
      << text;
  // X ran twice: 2 instructions, 2 cycles at 0x1090.
  EXPECT_NE(function_block(text, "g").find("0x1090 2 2\n"), std::string::npos) << text;
}

TEST(Profiler, CodeOutsideObjectsIsAnonymous) {
  const ObjectMap m = three_functions();
  Profiler p(m);
  p.on_block(block(0x500000, 0x10, 3), 0);
  p.finish(3);
  const std::string text = callgrind(p);
  EXPECT_NE(text.find("ob=(anonymous)\nfl=???\nfn=??? (anonymous)\n0x500000 3 3\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace padlock::emu::profile
