#include "emulator/memory/direct_memory.hpp"

#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstring>

namespace padlock::emu {

namespace {

struct DirectState {
  uc_engine* uc = nullptr;
  AddressSpace* mem = nullptr;
  struct sigaction saved {};
};
DirectState g_direct;

constexpr uint64_t kPage = AddressSpace::kPageSize;

void internal_error(const char* what) {
  // Async-signal-safe: no stdio.
  const char head[] = "padlock-emu: internal error: ";
  (void)!write(STDERR_FILENO, head, sizeof head - 1);
  (void)!write(STDERR_FILENO, what, std::strlen(what));
  (void)!write(STDERR_FILENO, "\n", 1);
}

void on_host_sigsegv(int, siginfo_t* si, void* ctx) {
  const DirectState& d = g_direct;
  auto* uc_ctx = static_cast<ucontext_t*>(ctx);
  const auto pc = static_cast<uintptr_t>(uc_ctx->uc_mcontext.gregs[REG_RIP]);
  // si_code > 0: raised by the kernel for an access, not sent by kill().
  if (d.mem != nullptr && si->si_code > 0 && d.mem->host_in_reservation(si->si_addr)) {
    const uint64_t offset =
        static_cast<uint64_t>(static_cast<uint8_t*>(si->si_addr) - d.mem->host_base());
    // The guard past a 32-bit window: the access wrapped at 4 GiB. Past a 64-bit one it
    // lies beyond the window, where the guest's page table maps nothing.
    const uint64_t va = d.mem->size() == (uint64_t{1} << 32) ? offset & 0xFFFFFFFFu : offset;
    const bool write = (uc_ctx->uc_mcontext.gregs[REG_ERR] & 2) != 0;  // #PF error code W
    const bool in_jit = uc_direct_memory_in_jit(d.uc, pc);
    // Generated code keeps some guest registers in host ones (docs/emulator.md, "Unicorn").
    if (in_jit) uc_jit_fault_regs(d.uc, uc_ctx->uc_mcontext.gregs);
    if (write && (d.mem->flags(va) & kPageCode)) {
      d.mem->unprotect_code(va, 1);
      // Unicorn may leave by longjmp (restarting the block): unblock what the fault did.
      pthread_sigmask(SIG_SETMASK, &uc_ctx->uc_sigmask, nullptr);
      uc_code_page_written(d.uc, va & ~(kPage - 1), in_jit ? pc : 0);
      return;  // the store runs again, now allowed
    }
    if (in_jit) {
      pthread_sigmask(SIG_SETMASK, &uc_ctx->uc_sigmask, nullptr);
      uc_direct_memory_fault(d.uc, va, write, pc);  // a guest fault does not come back
      internal_error("host and guest page protections disagree");
    }
  }
  // The emulator's own fault: the previous action takes it when the access runs again.
  sigaction(SIGSEGV, &d.saved, nullptr);
}

}  // namespace

bool direct_memory_enable(uc_engine* uc, AddressSpace& mem) {
  if (g_direct.uc != nullptr) return false;
  if (uc_ctl_direct_memory(uc, mem.host_base(), mem.size()) != UC_ERR_OK) return false;
  struct sigaction sa {};
  sa.sa_sigaction = on_host_sigsegv;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, &g_direct.saved) != 0) {
    uc_ctl_direct_memory(uc, nullptr, 0);
    return false;
  }
  g_direct.uc = uc;
  g_direct.mem = &mem;
  mem.set_mirror();
  return true;
}

void direct_memory_disable() {
  if (g_direct.uc == nullptr) return;
  sigaction(SIGSEGV, &g_direct.saved, nullptr);
  g_direct = DirectState{};
}

}  // namespace padlock::emu
