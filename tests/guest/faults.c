/* guest_faults: instructions whose fault a hostile or buggy guest can reach, for comparison
 * with the host running the same binary (docs/reliability.md, "Faithful faults").
 *
 * usage: faults CASE
 *
 * Each case copies a few instruction bytes into an RWX page (the instruction under test at
 * a fixed offset), calls them, and prints one line:
 *   CASE sig=N code=C addr=A ip=I
 * N and C are the signal and si_code that ended it (sig=0: it ran to its end), A is
 * si_addr and I the ucontext's instruction pointer, each as "+K" (K bytes past the
 * instruction under test, which may be negative), "0" or "other".
 *
 * Cases: in out in-dx ins outs (port I/O at CPL 3), icebp (F1), rdpmc, sysenter (x86-64),
 * ac (a misaligned load with EFLAGS.AC set), noncanonical-push (x86-64: PUSH with a
 * non-canonical RSP), iret-vm (i386: IRET with EFLAGS.VM set), padlock-next-page (REP
 * XCRYPTECB whose ModRM byte lies on an unmapped page), padlock-modrm-rewrite (XSTORE's
 * ModRM byte rewritten in place, then the code replaced: "first=1 second=1 third=42"). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "guest_util.h"

enum { PAGE = 4096 };

static sigjmp_buf back;
static volatile int got_sig, got_code;
static volatile uintptr_t got_addr, got_ip;
static uint8_t *insn; /* the instruction under test */

#if defined(__x86_64__)
#define CTX_IP(uc) ((uc)->uc_mcontext.gregs[REG_RIP])
#else
#define CTX_IP(uc) ((uc)->uc_mcontext.gregs[REG_EIP])
#endif

static void on_signal(int sig, siginfo_t *si, void *ctx) {
  clear_ac();
  got_sig = sig;
  got_code = si->si_code;
  got_addr = (uintptr_t)si->si_addr;
  got_ip = (uintptr_t)CTX_IP((ucontext_t *)ctx);
  siglongjmp(back, 1);
}

static void print_rel(const char *name, uintptr_t v) {
  const intptr_t d = (intptr_t)(v - (uintptr_t)insn);
  if (v == 0)
    printf(" %s=0", name);
  else if (d >= -64 && d <= 64)
    printf(" %s=%+d", name, (int)d);
  else
    printf(" %s=other", name);
}

/* Runs `pre` then `code` (the instruction under test) then `post` and a RET, in an RWX
 * page; `at_end` puts `code` at the page's very end with the next page unmapped. */
static void run(const char *name, const void *pre, size_t npre, const void *code, size_t ncode,
                const void *post, size_t npost, int at_end) {
  uint8_t *page = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    perror("mmap");
    exit(2);
  }
  memset(page, 0x90, 2 * PAGE);
  uint8_t *start;
  if (at_end) {
    munmap(page + PAGE, PAGE);
    insn = page + PAGE - ncode;
    start = insn - npre - 2;
    start[0] = 0xEB; /* jmp over nothing: the prelude starts 2 bytes earlier */
    start[1] = 0x00;
  } else {
    start = page + 64;
    insn = start + npre;
  }
  memcpy(insn - npre, pre, npre);
  memcpy(insn, code, ncode);
  if (!at_end) {
    memcpy(insn + ncode, post, npost);
    insn[ncode + npost] = 0xC3;
  }
  got_sig = 0;
  fflush(stdout);
  if (sigsetjmp(back, 1) == 0) {
    ((void (*)(void))start)();
    clear_ac();
  }
  printf("%s sig=%d code=%d", name, got_sig, got_sig ? got_code : 0);
  print_rel("addr", got_sig ? got_addr : 0);
  print_rel("ip", got_sig ? got_ip : 0);
  printf("\n");
}

#define RUN(name, pre, code, post, at_end) \
  run(name, pre, sizeof pre - 1, code, sizeof code - 1, post, sizeof post - 1, at_end)

int main(int argc, char **argv) {
  static uint8_t altstack[64 * 1024];
  stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
  sigaltstack(&ss, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) sigaction(sigs[i], &sa, NULL);
  static uint8_t buf[64] __attribute__((aligned(16)));
  const char *c = argc > 1 ? argv[1] : "";
#if defined(__x86_64__)
  /* mov rdi/rsi, buf (REX.W B8+r imm64) */
  uint8_t di_si[20] = {0x48, 0xBF, 0, 0, 0, 0, 0, 0, 0, 0, 0x48, 0xBE};
  uint64_t b = (uintptr_t)buf;
  memcpy(di_si + 2, &b, 8);
  memcpy(di_si + 12, &b, 8);
#else
  uint8_t di_si[10] = {0xBF, 0, 0, 0, 0, 0xBE};
  uint32_t b = (uintptr_t)buf;
  memcpy(di_si + 1, &b, 4);
  memcpy(di_si + 6, &b, 4);
#endif
  if (strcmp(c, "in") == 0) RUN(c, "", "\xE4\x80", "", 0);              /* in al, 0x80 */
  else if (strcmp(c, "out") == 0) RUN(c, "", "\xE6\x80", "", 0);       /* out 0x80, al */
  else if (strcmp(c, "in-dx") == 0) RUN(c, "\x66\xBA\x80\x00", "\xED", "", 0); /* in eax, dx */
  else if (strcmp(c, "ins") == 0 || strcmp(c, "outs") == 0) {
    uint8_t pre[24];
    memcpy(pre, di_si, sizeof di_si);
    memcpy(pre + sizeof di_si, "\x66\xBA\x80\x00", 4); /* mov dx, 0x80 */
    run(c, pre, sizeof di_si + 4, strcmp(c, "ins") == 0 ? "\x6C" : "\x6E", 1, "", 0, 0);
  } else if (strcmp(c, "icebp") == 0) RUN(c, "", "\xF1", "", 0);
  else if (strcmp(c, "rdpmc") == 0) RUN(c, "\x31\xC9", "\x0F\x33", "", 0); /* xor ecx,ecx */
#if defined(__x86_64__)
  else if (strcmp(c, "sysenter") == 0) RUN(c, "", "\x0F\x34", "", 0);
  /* pushfq; or dword [rsp], 0x40000 */
  else if (strcmp(c, "ac") == 0) RUN(c, "\x9C\x81\x0C\x24\x00\x00\x04\x00\x9D", "\x8B\x44\x24\x01", "", 0);
  /* mov r11, rsp; mov rsp, 0x8000000000000008; push rax; mov rsp, r11 */
  else if (strcmp(c, "noncanonical-push") == 0)
    RUN(c, "\x49\x89\xE3\x48\xBC\x08\x00\x00\x00\x00\x00\x00\x80", "\x50", "\x4C\x89\xDC", 0);
#else
  else if (strcmp(c, "ac") == 0) RUN(c, "\x9C\x81\x0C\x24\x00\x00\x04\x00\x9D", "\x8B\x44\x24\x01", "", 0);
  /* pushfl; or dword [esp], 0x20000 (VM); push cs; call +0; add dword [esp], 5 (the
   * address after the IRET); iret */
  else if (strcmp(c, "iret-vm") == 0)
    RUN(c, "\x9C\x81\x0C\x24\x00\x00\x02\x00\x0E\xE8\x00\x00\x00\x00\x83\x04\x24\x05",
        "\xCF", "", 0);
#endif
  else if (strcmp(c, "padlock-modrm-rewrite") == 0) {
    /* push edi; mov edi, buf; xor edx, edx; xstore (0F A7 C0); pop edi; mov eax, 1; ret:
     * the translator ends
     * a block at 0F A7, so the ModRM byte belongs to no translated block. Rewritten in
     * place, then the whole code replaced by mov eax, 42; ret: the new code must run. */
    static uint8_t xbuf[64] __attribute__((aligned(16)));
    uint8_t *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return 2;
    const uint32_t x = (uint32_t)(uintptr_t)xbuf;
    uint8_t code[] = {0x57, 0xBF, 0, 0, 0, 0,    0x31, 0xD2, 0x0F,
                      0xA7, 0xC0, 0x5F, 0xB8, 1, 0, 0, 0,    0xC3};
    memcpy(code + 2, &x, 4);
    memcpy(page, code, sizeof code);
    int (*fn)(void) = (int (*)(void))page;
    const int first = fn();
    *(volatile uint8_t *)(page + 10) = 0xC0; /* the ModRM byte, in place */
    const int second = fn();
    static const uint8_t ret42[] = {0xB8, 42, 0, 0, 0, 0xC3, 0x90, 0x90, 0x90, 0x90, 0x90};
    for (size_t i = 0; i < sizeof ret42; ++i) ((volatile uint8_t *)page)[i] = ret42[i];
    printf("%s first=%d second=%d third=%d\n", c, first, second, fn());
  } else if (strcmp(c, "padlock-next-page") == 0)
    RUN(c, "", "\xF3\x0F\xA7", "", 1); /* rep xcryptecb, its ModRM (C8) on the next page */
  else {
    fprintf(stderr, "faults: unknown case '%s'\n", c);
    return 2;
  }
  return 0;
}
