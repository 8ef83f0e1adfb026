// Two parts of our Unicorn patch seen from the embedder (docs/emulator.md, "Unicorn"): a
// stop asked for before the emulation begins or while it runs (uc_emu_stop_pending), and REP MOVS /
// REP STOS run whole after one callback (UC_CTL_REP_STRING), in both targets.
#include <gtest/gtest.h>
#include <unicorn/unicorn.h>

#include <chrono>
#include <cstdint>
#include <vector>

namespace {

constexpr uint64_t kCode = 0x10000, kData = 0x20000;

struct Engine {
  uc_engine* uc = nullptr;
  Engine(uc_mode mode, const std::vector<uint8_t>& code) {
    EXPECT_EQ(uc_open(UC_ARCH_X86, mode, &uc), UC_ERR_OK);
    uc_mem_map(uc, kCode, 0x1000, UC_PROT_ALL);
    uc_mem_map(uc, kData, 0x2000, UC_PROT_READ | UC_PROT_WRITE);
    uc_mem_write(uc, kCode, code.data(), code.size());
  }
  ~Engine() { uc_close(uc); }
  uint64_t reg(int id) const {
    uint64_t v = 0;
    uc_reg_read(uc, id, &v);
    return v;
  }
  void set(int id, uint64_t v) { uc_reg_write(uc, id, &v); }
};

// Seconds uc_emu_start takes, with a timeout of 0.3 s as a bound.
double timed_start(Engine& e) {
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(uc_emu_start(e.uc, kCode, 0, 300000 /* us */, 0), UC_ERR_OK);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(UnicornPatch, PendingStopHoldsForTheNextStart) {
  // jmp $: runs until stopped. A plain uc_emu_stop before the start is lost (the start
  // resets the request); a pending one stops each start until it is cleared.
  Engine e(UC_MODE_32, {0xEB, 0xFE});
  EXPECT_EQ(uc_emu_stop(e.uc), UC_ERR_OK);
  EXPECT_GE(timed_start(e), 0.25);
  uc_emu_stop_pending(e.uc, true);
  for (int i = 0; i < 2; ++i) {
    EXPECT_LT(timed_start(e), 0.2);
    EXPECT_EQ(e.reg(UC_X86_REG_EIP), kCode);
  }
  uc_emu_stop_pending(e.uc, false);
  EXPECT_GE(timed_start(e), 0.25);
}

// A code hook that moves the PC once (Unicorn then leaves the block and goes on: its
// "quit" request) and sets the pending stop, as a host signal's handler does. A signal
// that lands while Unicorn's loop takes the quit request has its uc_emu_stop undone by
// that step (it resets the stop and exit requests); only the pending stop is left.
void quit_with_pending_stop(uc_engine* uc, uint64_t address, uint32_t, void* data) {
  auto& done = *static_cast<bool*>(data);
  if (done) return;
  done = true;
  uc_reg_write(uc, UC_X86_REG_EIP, &address);
  uc_emu_stop_pending(uc, true);
}

TEST(UnicornPatch, PendingStopHoldsThroughAQuitInTheRun) {
  Engine e(UC_MODE_32, {0xEB, 0xFE});
  bool done = false;
  uc_hook h;
  ASSERT_EQ(uc_hook_add(e.uc, &h, UC_HOOK_CODE, reinterpret_cast<void*>(quit_with_pending_stop),
                        &done, 1, 0),
            UC_ERR_OK);
  EXPECT_LT(timed_start(e), 0.2);
  EXPECT_TRUE(done);
  EXPECT_EQ(e.reg(UC_X86_REG_EIP), kCode);
  uc_emu_stop_pending(e.uc, false);
}

struct RepCalls {
  int calls = 0;
  uint64_t pc = 0, count = 0, rsi = 0, rdi = 0;
};

void on_rep(uc_engine*, uint64_t pc, uint64_t count, uint64_t rsi, uint64_t rdi, void* data) {
  auto& r = *static_cast<RepCalls*>(data);
  ++r.calls;
  r.pc = pc;
  r.count = count;
  r.rsi = rsi;
  r.rdi = rdi;
}

struct Blocks {
  int at_rep = 0;
};

void on_block(uc_engine*, uint64_t address, uint32_t, void* data) {
  if (address == kCode + 2) ++static_cast<Blocks*>(data)->at_rep;
}

// nop; nop; rep movsd (F3 A5) or rep stosb (F3 AA), run up to the end of the code.
void run_rep(uc_mode mode, uint8_t opcode, bool loop) {
  Engine e(mode, {0x90, 0x90, 0xF3, opcode});
  RepCalls calls;
  Blocks blocks;
  uc_hook h;
  uc_hook_add(e.uc, &h, UC_HOOK_BLOCK, reinterpret_cast<void*>(on_block), &blocks, 1, 0);
  if (loop) ASSERT_EQ(uc_ctl_rep_string(e.uc, &on_rep, &calls), UC_ERR_OK);
  std::vector<uint8_t> src(0x400);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  uc_mem_write(e.uc, kData, src.data(), src.size());
  const bool movs = opcode == 0xA5;
  const uint64_t n = 100, size = movs ? 4 : 1;
  e.set(UC_X86_REG_ESI, kData);
  e.set(UC_X86_REG_EDI, kData + 0x800);
  e.set(UC_X86_REG_ECX, n);
  e.set(UC_X86_REG_EAX, 0x5A);
  ASSERT_EQ(uc_emu_start(e.uc, kCode, kCode + 4, 0, 0), UC_ERR_OK);
  EXPECT_EQ(e.reg(UC_X86_REG_ECX), 0u);
  EXPECT_EQ(e.reg(UC_X86_REG_EDI), kData + 0x800 + n * size);
  std::vector<uint8_t> dst(n * size);
  uc_mem_read(e.uc, kData + 0x800, dst.data(), dst.size());
  for (size_t i = 0; i < dst.size(); ++i) {
    ASSERT_EQ(dst[i], movs ? src[i] : 0x5A) << i;
  }
  if (loop) {
    // One call, before the loop, with the registers there; no block runs at the
    // instruction itself (QEMU's way starts one per element and one more).
    EXPECT_EQ(calls.calls, 1);
    EXPECT_EQ(calls.pc, kCode + 2);
    EXPECT_EQ(calls.count, n);
    EXPECT_EQ(calls.rsi, kData);
    EXPECT_EQ(calls.rdi, kData + 0x800);
    EXPECT_EQ(blocks.at_rep, 0);
  } else {
    EXPECT_EQ(blocks.at_rep, static_cast<int>(n));  // after the first element, in the block before
  }
}

TEST(UnicornPatch, RepMovsAndStosRunWholeAfterOneCallback) {
  for (uc_mode mode : {UC_MODE_32, UC_MODE_64}) {
    for (uint8_t opcode : {uint8_t{0xA5}, uint8_t{0xAA}}) {
      run_rep(mode, opcode, true);
      run_rep(mode, opcode, false);
    }
  }
}

}  // namespace
