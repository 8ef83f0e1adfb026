/* guest_random_code: jumps into random byte sequences, as a fuzzer of the emulator's
 * ordinary x86 path (no PadLock). Each round fills an RWX page with bytes from a fixed
 * xorshift stream (system call instructions replaced by NOPs), points every register at a
 * scratch area, arms a 20 ms ITIMER_REAL, and jumps in. Whatever ends the round (a fault
 * signal, SIGALRM for code that loops, or the code returning through the scratch stack)
 * lands in a handler on the alternate stack that goes back to the loop with siglongjmp.
 * A round may also end the process (random code can overwrite the loop's own data, or
 * leave the handler nowhere to run); what must never happen is a hang of the emulator.
 *
 * usage: random_code [ROUNDS] [SEED]    (defaults 200, 1)
 * Prints "rounds=N" then "ends=SIG:COUNT,..." (COUNT rounds ended by signal SIG) and
 * exits 0.
 *
 * Two fixed cases found by it:
 *   random_code altstack-overflow   a faulting SA_ONSTACK | SA_NODEFER handler: prints
 *                                   "altstack_overflow=start", then dies of SIGSEGV
 *   random_code iret-vm             (i386) IRET with EFLAGS.VM set, from CPL 3: prints
 *                                   "iret_vm=returned" (the SDM) or "iret_vm=signal N"
 * and one Linux rule they rely on:
 *   random_code handler-df          a fault with DF set: prints "handler_df=0" (the
 *                                   handler starts with DF clear)
 *   random_code top-pages           (i386) mmap, mprotect, mremap and munmap at the top
 *                                   of the address space, and stores there
 *   random_code spin                loops for ever (for --max-time)
 *   random_code restart-read        a read() of stdin interrupted by an SA_RESTART handler
 *                                   runs again: "read=N alarms=1 errno=0" */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#include "guest_util.h"

enum { PAGE = 4096, SCRATCH = 64 * 1024 };

static sigjmp_buf round_jmp;
static volatile sig_atomic_t round_sig;
static uint8_t *code;
static uint8_t *scratch;
static unsigned ends[65];

/* The C library's thread pointer, which random code may have clobbered (a segment load
 * into GS on i386, FS on x86-64): Linux's signal delivery resets CS, SS, DS and ES, not
 * these, so the handler restores it before any library code runs. */
#if defined(__x86_64__)
static unsigned long tls_base;
static void restore_tls(void) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "0"(158L), "D"(0x1002L), "S"(tls_base) : "rcx", "r11",
                   "memory"); /* arch_prctl(ARCH_SET_FS, tls_base) */
}
static void save_tls(void) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "0"(158L), "D"(0x1003L), "S"(&tls_base) : "rcx", "r11",
                   "memory"); /* arch_prctl(ARCH_GET_FS, &tls_base) */
}
#else
static unsigned short tls_gs;
static void restore_tls(void) { __asm__ volatile("mov %0, %%gs" ::"r"(tls_gs)); }
static void save_tls(void) { __asm__ volatile("mov %%gs, %0" : "=r"(tls_gs)); }
#endif

/* Random code may set EFLAGS.AC (POPF), and the loop's own misaligned accesses would
 * then raise #AC (SIGBUS) from library code: the handler clears it first. */
static void on_signal(int sig) {
  clear_ac();
  restore_tls();
  round_sig = sig;
  siglongjmp(round_jmp, 1);
}

static uint64_t rng_state;
static uint8_t next_byte(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint8_t)(rng_state >> 24);
}

/* INT n (CD), SYSENTER (0F 34), SYSCALL (0F 05) become NOPs: random code must not reach
 * the kernel (exit, kill or mmap would end the experiment, not test the emulator). */
static void fill_code(void) {
  for (int i = 0; i < PAGE; ++i) code[i] = next_byte();
  for (int i = 0; i < PAGE; ++i) {
    if (code[i] == 0xCD) code[i] = 0x90;
    if (code[i] == 0x0F && i + 1 < PAGE && (code[i + 1] == 0x34 || code[i + 1] == 0x05)) {
      code[i] = 0x90;
    }
  }
}

static void enter(void) {
  uintptr_t regs = (uintptr_t)(scratch + SCRATCH / 2);
  /* The code's address goes on the scratch stack first; RET jumps there once every
   * register holds the scratch address. */
#if defined(__x86_64__)
  __asm__ volatile(
      "mov %0, %%rsp\n\tpush %1\n\tmov %0, %%rbp\n\tmov %0, %%rsi\n\tmov %0, %%rdi\n\t"
      "mov %0, %%rbx\n\tmov %0, %%rcx\n\tmov %0, %%rdx\n\tret" ::"a"(regs),
      "D"(code)
      : "memory");
#else
  __asm__ volatile(
      "mov %0, %%esp\n\tpush %1\n\tmov %0, %%ebp\n\tmov %0, %%esi\n\tmov %0, %%edi\n\t"
      "mov %0, %%ebx\n\tmov %0, %%ecx\n\tmov %0, %%edx\n\tret" ::"a"(regs),
      "D"(code)
      : "memory");
#endif
  __builtin_unreachable();
}

/* A handler that faults again, on the alternate stack, with SA_NODEFER: each nested
 * frame goes below the last until the next would leave the alternate stack, where Linux
 * (get_sigframe) refuses it and kills the process with SIGSEGV. */
static int *volatile unmapped = (int *)16;

static void fault_again(int sig) {
  (void)sig;
  *unmapped = 0;
}

static int altstack_overflow(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = fault_again;
  sa.sa_flags = SA_ONSTACK | SA_NODEFER;
  sigaction(SIGSEGV, &sa, NULL);
  printf("altstack_overflow=start\n");
  fflush(stdout);
  *unmapped = 0;
  printf("altstack_overflow=survived\n");
  return 1;
}

/* A fault with DF set: Linux enters the handler with DF clear (the ABI's string direction),
 * TF and RF clear too. Prints "handler_df=0" or "handler_df=1". */
static void report_df(int sig) {
  (void)sig;
  unsigned long flags;
  __asm__ volatile("pushf\n\tpop %0" : "=r"(flags));
  /* No library call may run with DF set (it would copy backwards): clear it first. */
  __asm__ volatile("cld");
  printf("handler_df=%lu\n", (flags >> 10) & 1);
  fflush(stdout);
  _exit(0);
}

static int handler_df(void) {
  signal(SIGSEGV, report_df);
  __asm__ volatile("std");
  *unmapped = 0;
  __asm__ volatile("cld");
  return 1;
}

/* SA_RESTART: a read() interrupted by a handled SIGALRM (from a 100 ms ITIMER_REAL) runs
 * again instead of failing with EINTR. Prints "read=N alarms=A errno=E". */
static volatile sig_atomic_t alarms;
static void count_alarm(int sig) {
  (void)sig;
  ++alarms;
}

static int restart_read(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = count_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval t = {{0, 0}, {0, 100000}};
  setitimer(ITIMER_REAL, &t, NULL);
  char buf[16];
  const ssize_t n = read(0, buf, sizeof buf);
  printf("read=%ld alarms=%d errno=%d\n", (long)n, (int)alarms, n < 0 ? errno : 0);
  return 0;
}

#if !defined(__x86_64__)
/* The top of the i386 address space: Linux (an i386 program on x86-64) ends user memory at
 * TASK_SIZE 0xFFFFE000, so mappings there fail, and the emulator keeps its GDT and boot
 * stub in those pages (docs/reliability.md). Each call prints its result. */
static int touch(uintptr_t a) {
  round_sig = 0;
  if (sigsetjmp(round_jmp, 1) == 0) *(volatile uint32_t *)a = 1;
  return round_sig;
}

static int top_pages(void) {
  static const uintptr_t top[] = {0xFFFFF000u, 0xFFFFE000u, 0xFFFFD000u, 0xFFFF0000u};
  for (int i = 0; i < 4; ++i) {
    void *p = mmap((void *)top[i], 0x1000, PROT_READ | PROT_WRITE,
                   MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mmap_fixed %08lx %d\n", (unsigned long)top[i], p == MAP_FAILED ? errno : 0);
    const int r = mprotect((void *)top[i], 0x1000, PROT_READ | PROT_WRITE | PROT_EXEC);
    printf("mprotect %08lx %d\n", (unsigned long)top[i], r != 0 ? errno : 0);
  }
  void *a = mmap((void *)0xFFFFC000u, 0x1000, PROT_READ | PROT_WRITE,
                 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void *g = mremap(a, 0x1000, 0x8000, 0);
  printf("mremap_grow %d\n", g == MAP_FAILED ? errno : 0);
  void *m = mremap(a, 0x1000, 0x1000, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)0xFFFFF000u);
  printf("mremap_fixed_top %d\n", m == MAP_FAILED ? errno : 0);
  const int u = munmap((void *)0xFFFFE000u, 0x2000);
  printf("munmap_top %d\n", u != 0 ? errno : 0);
  printf("touch_fffffffe %d\n", touch(0xFFFFFFFEu));
  printf("touch_ffffe000 %d\n", touch(0xFFFFE000u));
  return 0;
}

/* IRET at CPL 3 with VM set in the popped EFLAGS: the SDM's IRET ignores VM below CPL 0
 * and returns to `back`. Prints how it ended: "returned" or the signal's number. */
static int iret_vm(void) {
  round_sig = 0;
  if (sigsetjmp(round_jmp, 1) == 0) {
    __asm__ volatile(
        "pushfl\n\torl $0x20000, (%%esp)\n\tpushl %%cs\n\tpushl $1f\n\tiret\n1:" ::
            : "memory", "cc");
  }
  if (round_sig == 0) {
    printf("iret_vm=returned\n");
  } else {
    printf("iret_vm=signal %d\n", round_sig);
  }
  return 0;
}
#endif

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "altstack-overflow") == 0) {
    static uint8_t stack[16 * 1024];
    stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack};
    sigaltstack(&ss, NULL);
    return altstack_overflow();
  }
  if (argc > 1 && strcmp(argv[1], "handler-df") == 0) return handler_df();
  if (argc > 1 && strcmp(argv[1], "spin") == 0) {
    for (volatile unsigned long n = 0;; ++n) {
    }
  }
  if (argc > 1 && strcmp(argv[1], "restart-read") == 0) return restart_read();
  const int rounds = argc > 1 ? atoi(argv[1]) : 200;
  rng_state = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
  if (rng_state == 0) rng_state = 1;
  code = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  scratch = mmap(NULL, SCRATCH, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  static uint8_t altstack[64 * 1024];
  stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
  if (code == MAP_FAILED || scratch == MAP_FAILED || sigaltstack(&ss, NULL) != 0) {
    fprintf(stderr, "random_code: setup failed\n");
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_ONSTACK | SA_NODEFER;
  static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGALRM};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) sigaction(sigs[i], &sa, NULL);
  save_tls();
#if !defined(__x86_64__)
  if (argc > 1 && strcmp(argv[1], "iret-vm") == 0) return iret_vm();
  if (argc > 1 && strcmp(argv[1], "top-pages") == 0) return top_pages();
#endif
  int done = 0;
  for (; done < rounds; ++done) {
    fill_code();
    memset(scratch, 0, SCRATCH);
    round_sig = 0;
    if (sigsetjmp(round_jmp, 1) == 0) {
      struct itimerval t = {{0, 0}, {0, 20000}};
      setitimer(ITIMER_REAL, &t, NULL);
      enter();
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    ends[round_sig > 0 && round_sig < 65 ? round_sig : 0]++;
  }
  printf("rounds=%d\nends=", done);
  const char *sep = "";
  for (int s = 0; s < 65; ++s) {
    if (ends[s] == 0) continue;
    printf("%s%d:%u", sep, s, ends[s]);
    sep = ",";
  }
  printf("\n");
  return 0;
}
