// Our Unicorn patch's UC_CTL_PADLOCK_INSN (docs/emulator.md, "Unicorn"): 0F A6 / 0F A7
// call the callback from generated code with the state precise at the instruction (read
// through uc_reg_read and given in uc_padlock_state alike), and execution goes on at the PC
// it returns; without a callback they raise #UD as before.
#include <gtest/gtest.h>
#include <unicorn/unicorn.h>

#include <cstdint>
#include <vector>

namespace {

constexpr uint64_t kCode = 0x100000;

// mov eax, 1; mov ebx, 2; cmp eax, ebx (CF, SF set lazily); <insn>; mov ecx, 7; nop
std::vector<uint8_t> program(const std::vector<uint8_t>& insn) {
  std::vector<uint8_t> c;
  for (const uint8_t b : {0xB8, 1, 0, 0, 0, 0xBB, 2, 0, 0, 0, 0x39, 0xD8}) c.push_back(b);
  for (const uint8_t b : insn) c.push_back(b);
  for (const uint8_t b : {0xB9, 7, 0, 0, 0, 0x90}) c.push_back(b);
  return c;
}
constexpr uint64_t kInsnAt = kCode + 12;

struct Seen {
  int calls = 0;
  int invalid = 0;
  uint32_t eip = 0, eflags = 0;
  uint64_t state_pc = 0, state_eflags = 0, state_eax = 0, state_ebx = 0;
  int repeat = 0;            // return the instruction's own PC this many times first
  bool stop = false;         // stop emulation and stay at the instruction
  bool write_state = false;  // write ESI through uc_padlock_state::gpr32, not uc_reg_write
  bool gpr_null = false;     // uc_padlock_state::gpr was null (UC_MODE_32: gpr32 instead)
  uint64_t length = 4;
};

uint64_t on_padlock(uc_engine* uc, const uc_padlock_state* at, void* data) {
  Seen& s = *static_cast<Seen*>(data);
  ++s.calls;
  uc_reg_read(uc, UC_X86_REG_EIP, &s.eip);
  uc_reg_read(uc, UC_X86_REG_EFLAGS, &s.eflags);
  s.state_pc = at->pc;
  s.state_eflags = at->eflags;
  // UC_MODE_32 runs the i386 target: its 32-bit registers in place, at gpr32.
  s.gpr_null = at->gpr == nullptr;
  s.state_eax = at->gpr32[0];
  s.state_ebx = at->gpr32[3];
  const uint32_t esi = 0x1234 + s.calls;
  if (s.write_state) {
    at->gpr32[6] = esi;
  } else {
    uc_reg_write(uc, UC_X86_REG_ESI, &esi);
  }
  if (s.stop) {
    uc_emu_stop(uc);
    return s.eip;
  }
  if (s.repeat > 0) {
    --s.repeat;
    return s.eip;
  }
  return s.eip + s.length;
}

bool on_invalid(uc_engine*, void* data) {
  ++static_cast<Seen*>(data)->invalid;
  return false;  // stop with UC_ERR_INSN_INVALID
}

struct Result {
  uc_err err;
  uint32_t eip, ecx, esi;
};

Result run(const std::vector<uint8_t>& code, Seen& seen, bool route) {
  uc_engine* uc = nullptr;
  EXPECT_EQ(uc_open(UC_ARCH_X86, UC_MODE_32, &uc), UC_ERR_OK);
  uc_mem_map(uc, kCode, 0x1000, UC_PROT_ALL);
  uc_mem_write(uc, kCode, code.data(), code.size());
  uc_hook h;
  uc_hook_add(uc, &h, UC_HOOK_INSN_INVALID, reinterpret_cast<void*>(on_invalid), &seen, 1, 0);
  if (route) {
    EXPECT_EQ(uc_ctl_padlock_insn(uc, &on_padlock, &seen), UC_ERR_OK);
  }
  Result r{};
  r.err = uc_emu_start(uc, kCode, kCode + code.size() - 1, 0, 0);
  uc_reg_read(uc, UC_X86_REG_EIP, &r.eip);
  uc_reg_read(uc, UC_X86_REG_ECX, &r.ecx);
  uc_reg_read(uc, UC_X86_REG_ESI, &r.esi);
  uc_close(uc);
  return r;
}

constexpr uint32_t kCf = 1u << 0, kZf = 1u << 6, kSf = 1u << 7;

TEST(PadlockInsn, CallbackSeesPreciseStateAndExecutionGoesOn) {
  Seen s;
  const Result r = run(program({0xF3, 0x0F, 0xA7, 0xC8}), s, true);  // rep xcryptecb
  EXPECT_EQ(r.err, UC_ERR_OK);
  EXPECT_EQ(s.calls, 1);
  EXPECT_EQ(s.invalid, 0);
  EXPECT_EQ(s.eip, kInsnAt);                           // the F3 prefix, not the opcode
  EXPECT_EQ(s.eflags & (kCf | kZf | kSf), kCf | kSf);  // cmp 1, 2
  EXPECT_EQ(r.esi, 0x1234u + 1);                       // the callback's write stays
  EXPECT_EQ(r.ecx, 7u);                                // the next instruction ran
}

TEST(PadlockInsn, StateGivesTheSameRegistersAndTakesWrites) {
  Seen s;
  s.write_state = true;
  const Result r = run(program({0xF3, 0x0F, 0xA7, 0xC8}), s, true);
  EXPECT_EQ(r.err, UC_ERR_OK);
  EXPECT_EQ(s.state_pc, kInsnAt);
  EXPECT_EQ(s.state_eflags, s.eflags);  // computed from the lazy flags, as uc_reg_read does
  EXPECT_EQ(s.state_eflags & (kCf | kZf | kSf), kCf | kSf);
  EXPECT_TRUE(s.gpr_null);
  EXPECT_EQ(s.state_eax, 1u);
  EXPECT_EQ(s.state_ebx, 2u);
  EXPECT_EQ(r.esi, 0x1234u + 1);  // written through the pointer, seen by generated code
  EXPECT_EQ(r.ecx, 7u);
}

TEST(PadlockInsn, OpcodeA6IsRoutedToo) {
  Seen s;
  const Result r = run(program({0xF3, 0x0F, 0xA6, 0xD0}), s, true);  // rep xsha256
  EXPECT_EQ(r.err, UC_ERR_OK);
  EXPECT_EQ(s.calls, 1);
  EXPECT_EQ(r.ecx, 7u);
}

TEST(PadlockInsn, ReturningItsOwnPcRunsItAgain) {
  Seen s;
  s.repeat = 2;  // §1.7: a REP instruction stopped at an interrupt point resumes
  const Result r = run(program({0xF3, 0x0F, 0xA7, 0xC8}), s, true);
  EXPECT_EQ(r.err, UC_ERR_OK);
  EXPECT_EQ(s.calls, 3);
  EXPECT_EQ(s.eip, kInsnAt);
  EXPECT_EQ(r.esi, 0x1234u + 3);
  EXPECT_EQ(r.ecx, 7u);
}

TEST(PadlockInsn, StopLeavesThePcAtTheInstruction) {
  Seen s;
  s.stop = true;  // a fault: the embedder delivers a signal at the instruction
  const Result r = run(program({0xF3, 0x0F, 0xA7, 0xC8}), s, true);
  EXPECT_EQ(r.err, UC_ERR_OK);
  EXPECT_EQ(s.calls, 1);
  EXPECT_EQ(r.eip, kInsnAt);
  EXPECT_NE(r.ecx, 7u);  // nothing after it ran
}

TEST(PadlockInsn, WithoutCallbackItIsAnInvalidOpcode) {
  Seen s;
  const Result r = run(program({0xF3, 0x0F, 0xA7, 0xC8}), s, false);
  EXPECT_EQ(r.err, UC_ERR_INSN_INVALID);
  EXPECT_EQ(s.calls, 0);
  EXPECT_EQ(s.invalid, 1);
  EXPECT_NE(r.ecx, 7u);
}

}  // namespace
