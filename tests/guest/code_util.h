/* Helpers of the guests that write code and catch their own faults (self_modifying,
 * cross_page): a SIGSEGV handler that records the signal and si_addr and jumps back, and
 * the instruction encodings they emit. No PadLock here. */
#ifndef PADLOCK_GUEST_CODE_UTIL_H
#define PADLOCK_GUEST_CODE_UTIL_H

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

enum { PAGE = 4096 };

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_sig;
static volatile uintptr_t fault_addr;

static void on_fault(int sig, siginfo_t *si, void *ctx) {
  (void)ctx;
  fault_sig = sig;
  fault_addr = (uintptr_t)si->si_addr;
  siglongjmp(fault_jmp, 1);
}

/* on_fault for SIGSEGV: a fault inside `if (sigsetjmp(fault_jmp, 1) == 0) ...` returns
 * there with fault_sig and fault_addr set. */
static inline void catch_segv(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, NULL);
}

/* `mov eax, imm32; ret` at p; returns the address of the immediate. */
static inline uint8_t *emit_mov_ret(uint8_t *p, uint32_t imm) {
  p[0] = 0xB8;
  memcpy(p + 1, &imm, 4);
  p[5] = 0xC3;
  return p + 1;
}

#endif
