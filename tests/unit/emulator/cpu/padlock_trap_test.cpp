// The trap host that Process and the harness Machine share (emulator/exec/padlock_call.*):
// one PadLock instruction decoded at the PC, run by the core and written back, with the PC
// to go on at; CPUID and RDTSC from the CPU model and the virtual clock.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "emulator/cpu/cpu_features.hpp"
#include "emulator/exec/padlock_call.hpp"
#include "models/cpu_model.hpp"

namespace padlock::emu {
namespace {

constexpr uint64_t kPage = AddressSpace::kPageSize;
constexpr uint64_t kCode = 0x100000, kData = 0x200000, kUnmapped = 0x300000;
constexpr uint64_t kKey = kData, kIn = kData + 0x100, kOut = kData + 0x200, kCw = kData + 0x400;

// FIPS-197 Appendix C.1: AES-128.
constexpr uint8_t kAesKey[16] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};
constexpr uint8_t kPlain[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
constexpr uint8_t kCipher[16] = {0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                                 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};

class PadlockTrapTest : public ::testing::Test {
 protected:
  PadlockTrapTest() {
    EXPECT_TRUE(mem.map_anonymous(kCode, kPage, kPageRead | kPageExec));
    EXPECT_TRUE(mem.map_anonymous(kData, kPage, kPageRead | kPageWrite));
    std::memcpy(mem.host(kKey), kAesKey, 16);
    std::memcpy(mem.host(kIn), kPlain, 16);
    // §3.2 control word: ROUND = 10, hardware key expansion, encrypt, 128-bit key.
    const uint32_t cw = 10;
    std::memcpy(mem.host(kCw), &cw, 4);
    cpu.set_reg(UC_X86_REG_ESI, kIn);
    cpu.set_reg(UC_X86_REG_EDI, kOut);
    cpu.set_reg(UC_X86_REG_EBX, kKey);
    cpu.set_reg(UC_X86_REG_EDX, kCw);
    cpu.set_reg(UC_X86_REG_ECX, 1);
  }
  void code(std::initializer_list<uint8_t> bytes) {
    std::memcpy(mem.host(kCode), bytes.begin(), bytes.size());
    cpu.set_pc(kCode);
  }

  const CpuModel& model = *find_cpu_model("esther");
  Padlock units{model};
  Stats stats;
  VirtualTime clock{[] {
    VirtualTimeConfig c;
    c.irq_hz = 0;
    return c;
  }()};
  PadlockCore core{units, clock, stats, nullptr, PadlockTiming{}};
  AddressSpace mem{false};
  Cpu cpu{false, unicorn_cpu_model(units), mem};
  PadlockTrap trap{cpu, mem, units, core, clock};
};

// REP XCRYPTECB (F3 0F A7 C8, §3.1): one block, the FIPS-197 ciphertext; ECX 0, ESI and EDI
// advanced; the guest goes on after the instruction's four bytes; EFLAGS[30] set (§1.8).
TEST_F(PadlockTrapTest, RepXcryptEcbRunsAndGoesOnAfterIt) {
  code({0xF3, 0x0F, 0xA7, 0xC8});
  PadlockCall c;
  const PadlockRecord* r = trap.run(c, nullptr, false, VirtualTime::kNever);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->outcome.status, Status::Completed);
  EXPECT_EQ(PadlockTrap::next_pc(c, *r), kCode + 4);
  EXPECT_EQ(std::memcmp(mem.host(kOut), kCipher, 16), 0);
  EXPECT_EQ(cpu.reg(UC_X86_REG_ECX), 0u);
  EXPECT_EQ(cpu.reg(UC_X86_REG_ESI), kIn + 16);
  EXPECT_EQ(cpu.reg(UC_X86_REG_EDI), kOut + 16);
  EXPECT_TRUE(r->after.eflags30());
}

// The decoded row kept for the PC (DecodeMemo) holds only while the bytes there are the
// same: a five-byte instruction (a DS override, ignored, §3.1) rewritten in its last byte
// from REP XCRYPTECB to REP XCRYPTCBC at the same PC is decoded again.
TEST_F(PadlockTrapTest, AnInstructionRewrittenAtThePcIsDecodedAgain) {
  code({0x3E, 0xF3, 0x0F, 0xA7, 0xC8});
  PadlockCall c;
  const PadlockRecord* r = trap.run(c, nullptr, false, VirtualTime::kNever);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->decoded.id, isa::InsnId::XcryptEcb);
  EXPECT_EQ(PadlockTrap::next_pc(c, *r), kCode + 5);
  code({0x3E, 0xF3, 0x0F, 0xA7, 0xD0});
  cpu.set_reg(UC_X86_REG_EAX, kIn);  // CBC's IV (16-byte aligned, §3.1)
  cpu.set_reg(UC_X86_REG_ECX, 1);
  r = trap.run(c, nullptr, false, VirtualTime::kNever);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->decoded.id, isa::InsnId::XcryptCbc);
  EXPECT_EQ(r->decoded.length, 5u);
}

// A page fault on the output (§1.7): the PC stays at the instruction, for the signal.
TEST_F(PadlockTrapTest, AFaultStaysAtTheInstruction) {
  code({0xF3, 0x0F, 0xA7, 0xC8});
  cpu.set_reg(UC_X86_REG_EDI, kUnmapped);
  PadlockCall c;
  const PadlockRecord* r = trap.run(c, nullptr, false, VirtualTime::kNever);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->outcome.status, Status::Faulted);
  EXPECT_EQ(PadlockTrap::next_pc(c, *r), kCode);
}

// Not a PadLock instruction (UD2): nothing runs, the owner raises #UD.
TEST_F(PadlockTrapTest, AnotherOpcodeIsNotRun) {
  code({0x0F, 0x0B});
  PadlockCall c;
  EXPECT_EQ(trap.run(c, nullptr, false, VirtualTime::kNever), nullptr);
  EXPECT_EQ(c.pc, kCode);
  EXPECT_EQ(cpu.reg(UC_X86_REG_ECX), 1u);
}

// RDTSC: the virtual clock in EDX:EAX, one cycle on at each read.
TEST_F(PadlockTrapTest, RdtscReadsTheVirtualClockAndMovesIt) {
  clock.advance((uint64_t{1} << 32) + 5);
  EXPECT_EQ(trap.rdtsc(), 1);
  EXPECT_EQ(cpu.reg(UC_X86_REG_EAX), 6u);
  EXPECT_EQ(cpu.reg(UC_X86_REG_EDX), 1u);
  EXPECT_EQ(clock.now(), (uint64_t{1} << 32) + 6);
}

// CPUID 0xC0000001 (§1.3): EDX[2], EDX[3] RNG present and enabled, EDX[6], EDX[7] ACE.
TEST_F(PadlockTrapTest, CpuidGivesTheCentaurFeatureFlags) {
  cpu.set_reg(UC_X86_REG_EAX, 0xC0000001);
  EXPECT_EQ(trap.cpuid(), 1);
  EXPECT_EQ(cpu.reg(UC_X86_REG_EDX) & 0xCC, 0xCCu);
}

}  // namespace
}  // namespace padlock::emu
