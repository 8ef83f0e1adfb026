// No C++ exception crosses Unicorn's C frames (emulator/cpu/uc_hooks.hpp): a hook that
// throws stops the emulation, and the exception comes back to the caller of uc_emu_start.
#include "emulator/cpu/uc_hooks.hpp"

#include <gtest/gtest.h>
#include <unicorn/unicorn.h>

#include <new>
#include <stdexcept>

namespace padlock::emu {
namespace {

// The hook set's owner, throwing from CPUID and counting blocks.
struct Thrower {
  HookException errors;
  int cpuids = 0, blocks = 0;
  bool throw_bad_alloc = true;
  HookException& hook_exception() { return errors; }
  int on_cpuid() {
    ++cpuids;
    if (throw_bad_alloc) throw std::bad_alloc();
    throw std::runtime_error("hook failed");
  }
  void on_block(uint64_t, uint32_t) { ++blocks; }
};

constexpr uint64_t kCode = 0x10000;

// cpuid; jmp next; next: nop ... (a second block after the CPUID)
void run(Thrower& t) {
  uc_engine* uc = nullptr;
  ASSERT_EQ(uc_open(UC_ARCH_X86, UC_MODE_32, &uc), UC_ERR_OK);
  ASSERT_EQ(uc_mem_map(uc, kCode, 0x1000, UC_PROT_ALL), UC_ERR_OK);
  const uint8_t code[] = {0x0F, 0xA2, 0xEB, 0x00, 0x90, 0x90};
  ASSERT_EQ(uc_mem_write(uc, kCode, code, sizeof code), UC_ERR_OK);
  uc_hook h1, h2;
  ASSERT_EQ(uc_hook_add(uc, &h1, UC_HOOK_INSN, reinterpret_cast<void*>(UcHooks<Thrower>::cpuid), &t,
                        1, 0, UC_X86_INS_CPUID),
            UC_ERR_OK);
  ASSERT_EQ(uc_hook_add(uc, &h2, UC_HOOK_BLOCK, reinterpret_cast<void*>(UcHooks<Thrower>::block),
                        &t, 1, 0),
            UC_ERR_OK);
  uc_emu_start(uc, kCode, kCode + sizeof code, 0, 0);
  uc_close(uc);
}

TEST(UcHooks, BadAllocInAHookStopsTheEmulationAndComesBack) {
  Thrower t;
  run(t);
  EXPECT_EQ(t.cpuids, 1);
  EXPECT_EQ(t.blocks, 1);  // stopped: the block after the CPUID never ran
  EXPECT_THROW(t.errors.rethrow(), std::bad_alloc);
  EXPECT_NO_THROW(t.errors.rethrow());  // given back once
}

TEST(UcHooks, AnyExceptionComesBackAsItself) {
  Thrower t;
  t.throw_bad_alloc = false;
  run(t);
  EXPECT_THROW(t.errors.rethrow(), std::runtime_error);
}

}  // namespace
}  // namespace padlock::emu
