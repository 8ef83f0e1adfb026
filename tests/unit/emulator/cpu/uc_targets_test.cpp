// Our Unicorn patch builds QEMU's i386 target beside its x86-64 one, and UC_MODE_32 runs on
// it (docs/emulator.md, "Unicorn", item 12): a 32-bit guest's registers are 32 bits wide,
// so generated code needs no zero extension after each write. What the embedder sees must
// not change, apart from the target's own CPUID.
#include <gtest/gtest.h>
#include <unicorn/unicorn.h>

#include <cstdint>
#include <vector>

namespace {

constexpr uint64_t kCode = 0x10000;

struct Engine {
  uc_engine* uc = nullptr;
  Engine(uc_mode mode, const std::vector<uint8_t>& code) {
    EXPECT_EQ(uc_open(UC_ARCH_X86, mode, &uc), UC_ERR_OK);
    uc_mem_map(uc, kCode, 0x1000, UC_PROT_ALL);
    uc_mem_write(uc, kCode, code.data(), code.size());
  }
  ~Engine() { uc_close(uc); }
  uc_err run(size_t size) { return uc_emu_start(uc, kCode, kCode + size, 0, 0); }
  uint64_t reg(int id) const {
    uint64_t v = 0;
    uc_reg_read(uc, id, &v);
    return v;
  }
};

// mov eax, 0x80000001; cpuid
const std::vector<uint8_t> kCpuidExt = {0xB8, 0x01, 0x00, 0x00, 0x80, 0x0F, 0xA2};
constexpr uint64_t kLongMode = 1u << 29, kSyscall = 1u << 11;  // CPUID 80000001h EDX

TEST(UnicornTargets, Mode32RunsOnTheI386Target) {
  // QEMU's i386 target offers no long mode and no SYSCALL, whatever the CPU model says;
  // its x86-64 target offers both, in UC_MODE_32 as well (no CPUID hook here).
  Engine e32(UC_MODE_32, kCpuidExt);
  ASSERT_EQ(e32.run(kCpuidExt.size()), UC_ERR_OK);
  EXPECT_EQ(e32.reg(UC_X86_REG_EDX) & (kLongMode | kSyscall), 0u);
  Engine e64(UC_MODE_64, kCpuidExt);
  ASSERT_EQ(e64.run(kCpuidExt.size()), UC_ERR_OK);
  EXPECT_EQ(e64.reg(UC_X86_REG_EDX) & (kLongMode | kSyscall), kLongMode | kSyscall);
}

TEST(UnicornTargets, ContextRegistersOfA32BitEngine) {
  // uc_context_reg_read/write go by the target's CPU state layout.
  Engine e(UC_MODE_32, {0x90});
  const uint32_t ebx = 0xDEADBEEF, esp = 0x12345678;
  uc_reg_write(e.uc, UC_X86_REG_EBX, &ebx);
  uc_reg_write(e.uc, UC_X86_REG_ESP, &esp);
  uc_context* ctx = nullptr;
  ASSERT_EQ(uc_context_alloc(e.uc, &ctx), UC_ERR_OK);
  ASSERT_EQ(uc_context_save(e.uc, ctx), UC_ERR_OK);
  uint64_t got_ebx = 0, got_esp = 0;
  EXPECT_EQ(uc_context_reg_read(ctx, UC_X86_REG_EBX, &got_ebx), UC_ERR_OK);
  EXPECT_EQ(uc_context_reg_read(ctx, UC_X86_REG_ESP, &got_esp), UC_ERR_OK);
  EXPECT_EQ(got_ebx, ebx);
  EXPECT_EQ(got_esp, esp);
  const uint32_t ecx = 0xCAFEF00D;
  EXPECT_EQ(uc_context_reg_write(ctx, UC_X86_REG_ECX, &ecx), UC_ERR_OK);
  ASSERT_EQ(uc_context_restore(e.uc, ctx), UC_ERR_OK);
  EXPECT_EQ(e.reg(UC_X86_REG_ECX), ecx);
  EXPECT_EQ(e.reg(UC_X86_REG_EBX), ebx);
  uc_context_free(ctx);
}

struct Interrupts {
  int calls = 0;
  uint64_t eip = 0;
};

void on_interrupt(uc_engine* uc, uint32_t intno, void* data) {
  auto& s = *static_cast<Interrupts*>(data);
  ++s.calls;
  if (intno == 0x80) uc_reg_read(uc, UC_X86_REG_EIP, &s.eip);
}

TEST(UnicornTargets, InterruptHookSeesEipAfterTheInt) {
  // A Linux system call: the hook sees EIP past INT 0x80, and execution goes on there.
  // int 0x80; inc ecx; nop
  const std::vector<uint8_t> code = {0xCD, 0x80, 0x41, 0x90};
  Engine e(UC_MODE_32, code);
  Interrupts seen;
  uc_hook h;
  uc_hook_add(e.uc, &h, UC_HOOK_INTR, reinterpret_cast<void*>(on_interrupt), &seen, 1, 0);
  ASSERT_EQ(e.run(code.size() - 1), UC_ERR_OK);
  EXPECT_EQ(seen.calls, 1);
  EXPECT_EQ(seen.eip, kCode + 2);
  EXPECT_EQ(e.reg(UC_X86_REG_ECX), 1u);
}

}  // namespace
