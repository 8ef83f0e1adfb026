// REP XSTORE: ECX/EDI/EAX updates, stores past the request, waiting for generation,
// timing, faults and interrupts (guide §2.1, §2.3, §1.7).
#include <gtest/gtest.h>

#include "rng_test_util.hpp"

namespace padlock::test {
namespace {

constexpr uint64_t kBuf = RngBench::kBuf;

// §2.1 "REP Count": ECX random bytes are stored contiguously; ECX = 0 and EDI advanced by
// the count at the end; EAX[31:5] is the status word.
TEST(RepXstore, StoresEcxBytesContiguously_S2_1) {
  for (unsigned edx = 0; edx < 4; ++edx) {
    SCOPED_TRACE(edx);
    RngBench b("esther-c5j");
    b.reset();
    b.fill_memory(kBuf, 200, 0xAA);
    const Outcome o = b.rep_xstore(edx, 100);
    ASSERT_EQ(o.status, Status::Completed);
    EXPECT_EQ(b.s[Gpr::CX], 0u);
    EXPECT_EQ(b.s[Gpr::DI], kBuf + 100);
    EXPECT_EQ(b.s[Gpr::AX] & ~0x1Full, 0x40u) << "EAX[31:5] = MSR[31:5]";
    EXPECT_EQ(o.bytes, 100u);
    // Random bytes, none of the 4-byte stores' zero fill left inside the request: count
    // zero bytes; among 100 random bytes a handful at most (fixed seed).
    const auto mem = b.bytes(kBuf, 100);
    size_t zeros = 0;
    for (uint8_t v : mem) zeros += v == 0;
    EXPECT_LT(zeros, 6u);
  }
}

// §2.1: "on the last iteration, REP XSTORE may store up to seven bytes to memory beyond the
// last random byte requested"; the number of stores depends on EDX (one or two).
TEST(RepXstore, StoresPastTheRequestByEdx_S2_1) {
  struct Case {
    unsigned edx;
    uint64_t count;
    size_t written;     // bytes from kBuf the last store(s) reach
    size_t zeros_from;  // first zero-filled byte past the request (== written if none)
  };
  const Case cases[] = {
      {0, 1, 8, 8},  // two 4-byte stores of 8 random bytes: 7 bytes past the request
      {0, 9, 16, 16}, {1, 1, 4, 4},  // one store of 4 random bytes: 3 past
      {2, 1, 4, 2},                  // [r r 0 0]: one random byte past, then zeros
      {2, 3, 6, 4},                  // stores at +0 and +2: [r r r r 0 0]
      {3, 1, 4, 1},                  // [r 0 0 0]
      {3, 5, 8, 5},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "edx " << c.edx << " count " << c.count);
    RngBench b("nehemiah-c5p");
    b.reset();
    b.fill();
    b.fill_memory(kBuf, 32, 0xAA);
    const Outcome o = b.rep_xstore(c.edx, c.count);
    ASSERT_EQ(o.status, Status::Completed);
    EXPECT_EQ(b.s[Gpr::DI], kBuf + c.count);
    EXPECT_EQ(b.s[Gpr::CX], 0u);
    const auto mem = b.bytes(kBuf, 32);
    for (size_t i = c.zeros_from; i < c.written; ++i) EXPECT_EQ(mem[i], 0) << i;
    for (size_t i = c.written; i < 32; ++i) EXPECT_EQ(mem[i], 0xAA) << i;
    if (c.zeros_from > c.count) {
      // The surplus random bytes are written (not all of them can still be 0xAA).
      bool changed = false;
      for (size_t i = c.count; i < c.zeros_from; ++i) changed |= mem[i] != 0xAA;
      EXPECT_TRUE(changed);
    }
  }
}

// §2.3: "If a single internal XSTORE can satisfy the requested count, and enough bits are in
// the hardware buffers, add 7 clocks."
TEST(RepXstore, SingleInternalXstoreAddsSevenClocks_S2_3) {
  const uint64_t xstore_clocks[4] = {55, 310, 200, 120};
  const uint64_t max_count[4] = {8, 4, 2, 1};
  for (unsigned edx = 0; edx < 4; ++edx) {
    for (uint64_t count = 1; count <= max_count[edx]; ++count) {
      RngBench b("esther-c5j");
      b.reset();
      b.fill();
      const Outcome o = b.rep_xstore(edx, count);
      EXPECT_EQ(o.cycles, xstore_clocks[edx] + 7) << edx << " " << count;
      EXPECT_EQ(o.int_cycles, o.cycles);
    }
  }
}

// §2.3: with data in all four buffers, REP XSTORE of 32 bytes at EDX = 0 runs four internal
// XSTOREs back to back: 7 + 4 * 55 clocks (the buffers hold 32 bytes).
TEST(RepXstore, BackToBackFromFullBuffers_S2_3) {
  RngBench b("esther-c5j");
  b.reset();
  b.fill();
  const Outcome o = b.rep_xstore(0, 32);
  EXPECT_EQ(o.cycles, 7u + 4 * 55);
  EXPECT_EQ(b.msr() & 0x1F, 0u) << "§2.2 Esther BCNT: all four buffers taken";
}

// §2.1 note, §2.3: with no data, REP XSTORE waits for the generator (internal XSTOREs that
// find no data, ~30 clocks each) and then runs at the generation speed.
TEST(RepXstore, WaitsForGeneration_S2_3) {
  RngBench b("esther-c5j");
  b.reset(msr_value(2, 0, /*rbts=*/true));  // raw: deterministic 64 bits per buffer
  const double clocks_per_buffer = 64 * b.env.mhz * 1e6 / 190e6;
  const Outcome o = b.rep_xstore(0, 8);
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(b.s[Gpr::CX], 0u);
  // Polls are 30 clocks; the store happens at the first poll after the buffer is full.
  EXPECT_GE(o.cycles, 7 + clocks_per_buffer + 55);
  EXPECT_LE(o.cycles, 7 + clocks_per_buffer + 30 + 55);
  EXPECT_EQ((o.cycles - 7 - 55) % 30, 0u);
}

// §2.1 "REP Prefix": ECX and EDI by address size (CX/DI with 67h in 32-bit code).
TEST(RepXstore, SixteenBitAddressSize_S2_1) {
  RngBench b("nehemiah-c5p");
  b.mem.map(0, 0x10000);
  b.reset();
  b.fill();
  b.s[Gpr::DX] = 0;
  b.s[Gpr::CX] = 0xABCD0010;  // CX = 16
  b.s[Gpr::DI] = 0x55550100;  // DI = 0x100
  const Outcome o = b.run(rep_xstore16());
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(b.s[Gpr::CX], 0xABCD0000u);
  EXPECT_EQ(b.s[Gpr::DI], 0x55550110u);
  EXPECT_EQ(o.bytes, 16u);
}

// Our choice for §2.1's undefined EAX[4:0] in the REP case: the random bytes counted by the
// last internal XSTORE (0 if none), reported as a diagnostic.
TEST(RepXstore, ByteCountFieldChoice_S2_1) {
  RngBench b("esther-c5j");
  b.reset();
  b.fill();
  b.rep_xstore(0, 13);  // 8 + 5
  EXPECT_EQ(b.s[Gpr::AX] & 0x1F, 5u);
  EXPECT_TRUE(b.diag.saw(Diag::RngRepByteCount));
  b.rep_xstore(0, 0);
  EXPECT_EQ(b.s[Gpr::AX], 0x40u);
}

// ECX = 0: nothing stored, nothing probed; EAX gets the status word (§2.1 "when the
// instruction completes ... EAX contains a copy of the current status word").
TEST(RepXstore, ZeroCountStoresNothing_S2_1) {
  RngBench b("esther-c5j");
  b.reset();
  b.fill();
  const Outcome o = b.rep_xstore(0, 0, 0x7000000);  // unmapped: not touched
  EXPECT_EQ(o.status, Status::Completed);
  EXPECT_EQ(o.bytes, 0u);
  EXPECT_EQ(o.cycles, 7u);
  EXPECT_EQ(b.s[Gpr::DI], 0x7000000u);
  EXPECT_EQ(b.msr() & 0x1F, 0x0Fu) << "no buffer taken";
}

// §1.7, §2.1: a page fault in the middle leaves ECX, EDI and EAX reflecting the completed
// internal XSTOREs, so that re-executing resumes.
TEST(RepXstore, PageFaultMidwayResumes_S1_7_S2_1) {
  RngBench b("esther-c5j");
  b.mem.map(0x400000, 0x1000);  // 0x401000 unmapped at first
  b.reset();
  b.fill();
  const uint64_t start = 0x401000 - 64;
  const Outcome o = b.rep_xstore(0, 128, start);
  ASSERT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
  EXPECT_EQ(o.fault.address, 0x401000u);
  EXPECT_TRUE(o.fault.write);
  EXPECT_EQ(b.s[Gpr::CX], 64u);
  EXPECT_EQ(b.s[Gpr::DI], 0x401000u);
  EXPECT_EQ(b.s[Gpr::AX], 0x40u | 8);
  EXPECT_EQ(o.bytes, 64u);
  // The "handler" maps the page and the instruction runs again.
  b.mem.map(0x401000, 0x1000);
  const Outcome again = b.run(rep_xstore32());
  ASSERT_EQ(again.status, Status::Completed);
  EXPECT_EQ(b.s[Gpr::CX], 0u);
  EXPECT_EQ(b.s[Gpr::DI], start + 128);
  EXPECT_EQ(again.bytes, 64u);
}

// §2.1 "REP XSTORE execution is interruptible", §1.7: stop between internal XSTOREs with
// ECX/EDI/EAX updated; re-executing resumes; the bytes form one contiguous string.
TEST(RepXstore, InterruptAndResume_S2_1_S1_7) {
  RngBench b("nehemiah-c5p");
  b.reset();
  const uint64_t total = 4096;
  b.s[Gpr::DX] = 0;
  b.s[Gpr::CX] = total;
  b.s[Gpr::DI] = kBuf;
  int interrupts = 0;
  uint64_t stored = 0;
  for (;;) {
    b.env.interrupt_at = b.env.now + 200'000;  // an interrupt every 200k cycles
    const Outcome o = b.run(rep_xstore32());
    stored += o.bytes;
    EXPECT_EQ(b.s[Gpr::CX] + (b.s[Gpr::DI] - kBuf), total) << "ECX and EDI agree";
    if (o.status == Status::Completed) break;
    ASSERT_EQ(o.status, Status::Interrupted);
    EXPECT_GT(o.bytes, 0u) << "progress before an interrupt";
    EXPECT_GE(b.env.now, b.env.interrupt_at) << "stopped at or after the interrupt";
    EXPECT_LT(b.env.now, b.env.interrupt_at + 30 + 55) << "at the next interruptible point";
    ++interrupts;
    ASSERT_LT(interrupts, 10000);
  }
  EXPECT_GT(interrupts, 2);
  EXPECT_EQ(stored, total);
  EXPECT_EQ(b.s[Gpr::CX], 0u);
  EXPECT_EQ(b.s[Gpr::DI], kBuf + total);
}

// §1.7: an interrupt already pending still lets one internal XSTORE complete.
TEST(RepXstore, PendingInterruptAfterFirstStore_S1_7) {
  RngBench b("esther-c5j");
  b.reset();
  b.fill();
  b.env.interrupt_at = b.env.now;
  const Outcome o = b.rep_xstore(0, 64);
  EXPECT_EQ(o.status, Status::Interrupted);
  EXPECT_EQ(b.s[Gpr::CX], 56u);
  EXPECT_EQ(b.s[Gpr::DI], kBuf + 8);
  EXPECT_EQ(b.s[Gpr::AX], 0x40u | 8);
}

}  // namespace
}  // namespace padlock::test
