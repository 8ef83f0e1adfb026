/* guest_chip_check: runs one instruction of an x86 extension that not every modelled chip
 * has, in the middle of a basic block, so a test can check the chip check
 * (docs/emulator.md): on a chip whose CPUID lacks the feature the instruction raises #UD
 * (SIGILL) before it runs, with the registers as the instructions before it left them.
 *
 * usage: chip_check sse2|ssse3|sse41 [handler] [repeat N]
 *
 * Prints "executing WHAT", then runs the instruction (N times, default once) and prints
 * "WHAT ok". With "handler", a SIGILL handler prints "sigill at=label|other eax=N" (EAX
 * holds 3, set by the two instructions before it in the same block) and exits 0. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

extern char chip_insn_sse2[], chip_insn_ssse3[], chip_insn_sse41[];
static char *g_expected;

static void on_sigill(int sig, siginfo_t *si, void *uc_) {
  (void)sig;
  ucontext_t *uc = uc_;
#if defined(__x86_64__)
  const unsigned long eax = uc->uc_mcontext.gregs[REG_RAX] & 0xFFFFFFFFu;
#else
  const unsigned long eax = uc->uc_mcontext.gregs[REG_EAX];
#endif
  printf("sigill at=%s eax=%lu\n", (char *)si->si_addr == g_expected ? "label" : "other", eax);
  fflush(stdout);
  _exit(0);
}

/* i386 guests are built for i686 without SSE, where GCC knows no XMM registers to clobber
   (nothing else of the program uses them there). */
#if defined(__x86_64__)
#define XMM1 "xmm1",
#else
#define XMM1
#endif

/* Each: EAX = 1 + 2, then the instruction, in one block (no branch between). */
static void run_sse2(void) {
  __asm__ volatile(
      "movl $1, %%eax\n\t"
      "addl $2, %%eax\n\t"
      ".globl chip_insn_sse2\nchip_insn_sse2:\n\t"
      "paddq %%xmm0, %%xmm1\n\t"
      ::: "eax", XMM1 "memory");
}
static void run_ssse3(void) {
  __asm__ volatile(
      "movl $1, %%eax\n\t"
      "addl $2, %%eax\n\t"
      ".globl chip_insn_ssse3\nchip_insn_ssse3:\n\t"
      "pshufb %%xmm0, %%xmm1\n\t"
      ::: "eax", XMM1 "memory");
}
static void run_sse41(void) {
  __asm__ volatile(
      "movl $1, %%eax\n\t"
      "addl $2, %%eax\n\t"
      ".globl chip_insn_sse41\nchip_insn_sse41:\n\t"
      "pmulld %%xmm0, %%xmm1\n\t"
      ::: "eax", XMM1 "memory");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: chip_check sse2|ssse3|sse41 [handler] [repeat N]\n");
    return 2;
  }
  void (*fn)(void) = NULL;
  if (!strcmp(argv[1], "sse2")) fn = run_sse2, g_expected = chip_insn_sse2;
  if (!strcmp(argv[1], "ssse3")) fn = run_ssse3, g_expected = chip_insn_ssse3;
  if (!strcmp(argv[1], "sse41")) fn = run_sse41, g_expected = chip_insn_sse41;
  if (fn == NULL) return 2;
  int repeat = 1;
  for (int i = 2; i < argc; ++i) {
    if (!strcmp(argv[i], "handler")) {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_sigaction = on_sigill;
      sa.sa_flags = SA_SIGINFO;
      sigaction(SIGILL, &sa, NULL);
    } else if (!strcmp(argv[i], "repeat") && i + 1 < argc) {
      repeat = atoi(argv[++i]);
    }
  }
  printf("executing %s\n", argv[1]);
  fflush(stdout);
  for (int i = 0; i < repeat; ++i) fn();
  printf("%s ok\n", argv[1]);
  return 0;
}
