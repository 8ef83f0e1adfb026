// Faults become Linux signals with correct i386 and x86-64 frames: handlers read the
// registers at the fault from their ucontext, may change them, and sigreturn restores
// them. Also: masks, the alternate stack, default actions and death by signal.
#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include "guest_harness.hpp"

namespace padlock::emu::test {
namespace {

const char* kProgram = R"SRC(
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__x86_64__)
#define R_AX REG_RAX
#define R_CX REG_RCX
#define R_DX REG_RDX
#define R_SI REG_RSI
#define R_DI REG_RDI
#define R_IP REG_RIP
#define R_SP REG_RSP
#else
#define R_AX REG_EAX
#define R_CX REG_ECX
#define R_DX REG_EDX
#define R_SI REG_ESI
#define R_DI REG_EDI
#define R_IP REG_EIP
#define R_SP REG_ESP
#endif

static volatile int hits;
static volatile uintptr_t g_ax, g_cx, g_dx, g_si, g_di, g_ip, g_addr, g_err, g_trapno;
static volatile int g_code, g_signo;
static volatile uintptr_t g_local;

static void on_fault(int sig, siginfo_t* si, void* ctx) {
  ucontext_t* uc = ctx;
  greg_t* g = uc->uc_mcontext.gregs;
  ++hits;
  g_signo = sig;
  g_code = si->si_code;
  g_addr = (uintptr_t)si->si_addr;
  g_ax = g[R_AX]; g_cx = g[R_CX]; g_dx = g[R_DX]; g_si = g[R_SI]; g_di = g[R_DI];
  g_ip = g[R_IP];
  g_err = g[REG_ERR];
  g_trapno = g[REG_TRAPNO];
  if (sig != SIGTRAP) g[R_IP] += 2;   /* every faulting instruction below is 2 bytes */
  g[R_AX] = 0x5a5a5a5a;
}

static void install(int sig, int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | flags;
  sigaction(sig, &sa, 0);
}

static void print_regs(uintptr_t a, uintptr_t c, uintptr_t d, uintptr_t s, uintptr_t di) {
  printf("hits=%d signo=%d code=%d\n", hits, g_signo, g_code);
  printf("fault_ax=%lx fault_cx=%lx fault_dx=%lx fault_si=%lx fault_di=%lx\n",
         (unsigned long)g_ax, (unsigned long)g_cx, (unsigned long)g_dx, (unsigned long)g_si,
         (unsigned long)g_di);
  printf("after_ax=%lx after_cx=%lx after_dx=%lx after_si=%lx after_di=%lx\n",
         (unsigned long)a, (unsigned long)c, (unsigned long)d, (unsigned long)s, (unsigned long)di);
  printf("addr=%lx\nerr=%lx\ntrapno=%lu\n", (unsigned long)g_addr, (unsigned long)g_err,
         (unsigned long)g_trapno);
}

static void on_usr1_legacy(int sig) { g_signo = sig; ++hits; }

static void on_usr1_altstack(int sig) {
  int local;
  g_local = (uintptr_t)&local;
  g_signo = sig;
  ++hits;
}

int main(int argc, char** argv) {
  const char* mode = argv[1];
  if (!strcmp(mode, "read")) {
    install(SIGSEGV, 0);
    uintptr_t a = 0x1234, c = 0x22222222, d = 0x33333333, s = 0x44444444, di = 0x55555555;
    __asm__ volatile("movl (%%" 
#if defined(__x86_64__)
                     "rax"
#else
                     "eax"
#endif
                     "), %%eax" : "+a"(a), "+c"(c), "+d"(d), "+S"(s), "+D"(di) :: "memory");
    print_regs(a, c, d, s, di);
  } else if (!strcmp(mode, "write")) {
    install(SIGSEGV, 0);
    char* page = mmap(0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uintptr_t a = 0, c = 0x22222222, d = 0x33333333, s = 0x44444444;
    uintptr_t di = (uintptr_t)page + 0x10;
    __asm__ volatile("movl %%eax, (%%" 
#if defined(__x86_64__)
                     "rdi"
#else
                     "edi"
#endif
                     ")" : "+a"(a), "+c"(c), "+d"(d), "+S"(s), "+D"(di) :: "memory");
    print_regs(a, c, d, s, di);
    printf("page_off=%lx\n", (unsigned long)(g_addr - (uintptr_t)page));
  } else if (!strcmp(mode, "fpe")) {
    install(SIGFPE, 0);
    for (int i = 0; i < 2; ++i) {
      uintptr_t a = 7, c = 0, d = 0, s = 0x44444444, di = 0x55555555;
      __asm__ volatile("divl %%ecx" : "+a"(a), "+c"(c), "+d"(d), "+S"(s), "+D"(di) :: "cc");
      if (i == 1) print_regs(a, c, d, s, di);
    }
    printf("same_ip=%d\n", g_ip == g_addr);
  } else if (!strcmp(mode, "ill")) {
    install(SIGILL, 0);
    for (int i = 0; i < 2; ++i) {
      uintptr_t a = 1, c = 0x22222222, d = 0x33333333, s = 0x44444444, di = 0x55555555;
      __asm__ volatile("ud2" : "+a"(a), "+c"(c), "+d"(d), "+S"(s), "+D"(di) :: "memory");
      if (i == 1) print_regs(a, c, d, s, di);
    }
  } else if (!strcmp(mode, "trap")) {
    install(SIGTRAP, 0);
    uintptr_t a = 1, c = 0x22222222, d = 0x33333333, s = 0x44444444, di = 0x55555555;
    __asm__ volatile("int3" : "+a"(a), "+c"(c), "+d"(d), "+S"(s), "+D"(di) :: "memory");
    print_regs(a, c, d, s, di);
  } else if (!strcmp(mode, "sse")) {
    /* The handler's FPU/SSE use must not leak into the interrupted code. */
    install(SIGILL, 0);
    double in = 1.5, out = 0;
    __asm__ volatile("movsd %1, %%xmm2\n\tud2\n\tmovsd %%xmm2, %0" : "=m"(out) : "m"(in) : "xmm2");
    printf("xmm2=%g\n", out);
  } else if (!strcmp(mode, "legacy")) {
    signal(SIGUSR1, on_usr1_legacy);
    raise(SIGUSR1);
    raise(SIGUSR1);
    printf("hits=%d signo=%d\n", hits, g_signo);
  } else if (!strcmp(mode, "altstack")) {
    static char alt[65536];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    sigaltstack(&ss, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1_altstack;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, 0);
    raise(SIGUSR1);
    printf("hits=%d on_alt=%d\n", hits,
           g_local >= (uintptr_t)alt && g_local < (uintptr_t)alt + sizeof alt);
  } else if (!strcmp(mode, "mask")) {
    signal(SIGUSR1, on_usr1_legacy);
    sigset_t set, pend;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, 0);
    raise(SIGUSR1);
    sigpending(&pend);
    printf("blocked_hits=%d pending=%d\n", hits, sigismember(&pend, SIGUSR1));
    sigprocmask(SIG_UNBLOCK, &set, 0);
    printf("unblocked_hits=%d\n", hits);
  } else if (!strcmp(mode, "ignored")) {
    signal(SIGUSR1, SIG_IGN);
    raise(SIGUSR1);
    printf("survived=1\n");
  } else if (!strcmp(mode, "resethand")) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1_legacy;
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGUSR1, &sa, 0);
    raise(SIGUSR1);
    printf("first=%d\n", hits);
    fflush(stdout);
    raise(SIGUSR1);  /* now SIG_DFL: terminates */
    printf("not reached\n");
  } else if (!strcmp(mode, "uncaught")) {
    fflush(stdout);
    *(volatile int*)16 = 1;
  } else if (!strcmp(mode, "abort")) {
    abort();
  }
  return 0;
}
)SRC";

class SignalTest : public ::testing::TestWithParam<Arch> {
 protected:
  GuestRun run(const char* mode) {
    const std::string exe =
        build_guest(kProgram, GetParam(), "-static -O1 -fno-pie -no-pie -msse2");
    if (exe.empty()) return GuestRun{true, "gcc cannot build the guest", {}, "", ""};
    return run_guest(exe, {mode});
  }
};

#define SKIP_IF_NO_GUEST(r)                                          \
  if ((r).load_error && (r).error == "gcc cannot build the guest") { \
    GTEST_SKIP() << (r).error;                                       \
  }                                                                  \
  ASSERT_FALSE((r).load_error) << (r).error

TEST_P(SignalTest, SegvOnReadGivesExactAddressAndRegisters) {
  const GuestRun r = run("read");
  SKIP_IF_NO_GUEST(r);
  EXPECT_EQ(r.result.exit_code, 0) << r.err;
  EXPECT_EQ(field(r.out, "hits"), "1 signo=11 code=1");  // SEGV_MAPERR
  // The handler sees the registers at the faulting instruction ...
  EXPECT_EQ(field(r.out, "fault_ax"),
            "1234 fault_cx=22222222 fault_dx=33333333 fault_si=44444444 fault_di=55555555");
  // ... and sigreturn restores what the handler left in the frame.
  EXPECT_EQ(field(r.out, "after_ax"),
            "5a5a5a5a after_cx=22222222 after_dx=33333333 after_si=44444444 after_di=55555555");
  EXPECT_EQ(field(r.out, "addr"), "1234");  // si_addr: the exact byte, not the page
  EXPECT_EQ(field(r.out, "trapno"), "14");  // #PF
  EXPECT_EQ(std::stoul(field(r.out, "err"), nullptr, 16) & 7, 4u);  // user read, not present
}

TEST_P(SignalTest, SegvOnWriteToReadOnlyPageIsAccerr) {
  const GuestRun r = run("write");
  SKIP_IF_NO_GUEST(r);
  EXPECT_EQ(field(r.out, "hits"), "1 signo=11 code=2");  // SEGV_ACCERR
  EXPECT_EQ(field(r.out, "page_off"), "10");
  EXPECT_EQ(std::stoul(field(r.out, "err"), nullptr, 16) & 7, 7u);  // user write, protection
}

TEST_P(SignalTest, DivideErrorTwiceIsSigfpeBothTimes) {
  // The second #DE must not turn into a double fault inside QEMU.
  const GuestRun r = run("fpe");
  SKIP_IF_NO_GUEST(r);
  EXPECT_EQ(field(r.out, "hits"), "2 signo=8 code=1");  // FPE_INTDIV
  EXPECT_EQ(field(r.out, "trapno"), "0");
  EXPECT_EQ(field(r.out, "same_ip"), "1");  // si_addr is the DIV instruction
  EXPECT_EQ(field(r.out, "after_ax"),
            "5a5a5a5a after_cx=0 after_dx=0 after_si=44444444 after_di=55555555");
}

TEST_P(SignalTest, InvalidOpcodeIsSigill) {
  const GuestRun r = run("ill");
  SKIP_IF_NO_GUEST(r);
  EXPECT_EQ(field(r.out, "hits"), "2 signo=4 code=2");  // ILL_ILLOPN
  EXPECT_EQ(field(r.out, "trapno"), "6");
}

TEST_P(SignalTest, Int3IsSigtrapAfterTheInstruction) {
  const GuestRun r = run("trap");
  SKIP_IF_NO_GUEST(r);
  EXPECT_EQ(field(r.out, "hits"), "1 signo=5 code=128");  // SI_KERNEL
  EXPECT_EQ(field(r.out, "after_ax"),
            "5a5a5a5a after_cx=22222222 after_dx=33333333 after_si=44444444 after_di=55555555");
}

TEST_P(SignalTest, HandlerFpuStateIsRestored) {
  const GuestRun r = run("sse");
  SKIP_IF_NO_GUEST(r);
  EXPECT_EQ(field(r.out, "xmm2"), "1.5");
}

TEST_P(SignalTest, HandlerWithoutSiginfo) {
  const GuestRun r = run("legacy");
  SKIP_IF_NO_GUEST(r);
  EXPECT_EQ(field(r.out, "hits"), "2 signo=10");
}

TEST_P(SignalTest, AlternateStack) {
  const GuestRun r = run("altstack");
  SKIP_IF_NO_GUEST(r);
  EXPECT_EQ(field(r.out, "hits"), "1 on_alt=1");
}

TEST_P(SignalTest, BlockedSignalIsDeliveredOnUnblock) {
  const GuestRun r = run("mask");
  SKIP_IF_NO_GUEST(r);
  EXPECT_EQ(field(r.out, "blocked_hits"), "0 pending=1");
  EXPECT_EQ(field(r.out, "unblocked_hits"), "1");
}

TEST_P(SignalTest, IgnoredSignal) {
  const GuestRun r = run("ignored");
  SKIP_IF_NO_GUEST(r);
  EXPECT_EQ(field(r.out, "survived"), "1");
  EXPECT_FALSE(r.result.signaled);
}

TEST_P(SignalTest, ResetHandThenDefaultActionKills) {
  const GuestRun r = run("resethand");
  SKIP_IF_NO_GUEST(r);
  EXPECT_EQ(field(r.out, "first"), "1");
  EXPECT_TRUE(r.result.signaled);
  EXPECT_EQ(r.result.signal, SIGUSR1);
  EXPECT_EQ(r.out.find("not reached"), std::string::npos);
}

TEST_P(SignalTest, UncaughtSegvKillsWithOneLine) {
  const GuestRun r = run("uncaught");
  SKIP_IF_NO_GUEST(r);
  EXPECT_TRUE(r.result.signaled);
  EXPECT_EQ(r.result.signal, SIGSEGV);
  // One line: the signal, the instruction (Capstone) and the address.
  EXPECT_NE(r.err.find("SIGSEGV (Segmentation fault) at 0x"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": mov dword ptr"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(address 0x10)"), std::string::npos) << r.err;
}

TEST_P(SignalTest, AbortIsSigabrt) {
  const GuestRun r = run("abort");
  SKIP_IF_NO_GUEST(r);
  EXPECT_TRUE(r.result.signaled);
  EXPECT_EQ(r.result.signal, SIGABRT);
  EXPECT_NE(r.err.find("SIGABRT"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Arches, SignalTest, ::testing::Values(Arch::I386, Arch::X86_64),
                         [](const auto& info) { return std::string(arch_name(info.param)); });

}  // namespace
}  // namespace padlock::emu::test
