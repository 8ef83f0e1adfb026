/* guest_segv_xcrypt: a page fault inside REP XCRYPTCBC, seen from a SIGSEGV handler
 * (§1.7 "REP prefixes and exception handling", §3.1 register rules).
 *
 * usage: segv_xcrypt in|out unmap|prot enc|dec
 *   in     the INPUT runs from 3 blocks before a page boundary into the next page
 *   out    the OUTPUT does
 *   unmap  that next page is munmap'ed;  prot  it is mprotect'ed PROT_NONE
 *   enc/dec  CBC encryption (EAX itself changes) or decryption (the IV memory changes)
 *
 * A 6-block REP XCRYPTCBC runs with a 128-bit hardware-expanded key. The SA_SIGINFO
 * handler records si_addr, si_code and the registers in the ucontext (ECX, ESI, EDI, EAX,
 * EIP and EFLAGS, or their R* forms), the 16 bytes at EAX and at the IV buffer, and the
 * instruction bytes at EIP; then it maps the page back (restoring the input bytes that
 * lived there) and returns, so the instruction restarts from the saved registers (§1.7:
 * "the translator re-issues the original REP XCRYPT instruction"). main prints the
 * record and the final result; the test recomputes the CBC result independently. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "guest_util.h"
#include "padlock.h"

enum { PAGE = 4096, BLOCKS = 6, MAPPED = 3, LEN = 16 * BLOCKS };

#if defined(__x86_64__)
#define R_CX REG_RCX
#define R_SI REG_RSI
#define R_DI REG_RDI
#define R_AX REG_RAX
#define R_IP REG_RIP
#else
#define R_CX REG_ECX
#define R_SI REG_ESI
#define R_DI REG_EDI
#define R_AX REG_EAX
#define R_IP REG_EIP
#endif

struct fault_record {
  int signo, code, count;
  uintptr_t addr, cx, si, di, ax, ip, flags;
  int have_eaxmem;
  uint8_t eaxmem[16], ivmem[16], insn[4], out_done[LEN];
};

static struct fault_record g_rec;
static uint8_t *g_region;      /* 3 pages: [mapped | faulting | mapped] */
static uint8_t *g_page;        /* the faulting page */
static uint8_t *g_in, *g_out, *g_iv, *g_other;
static uint8_t g_saved_in[LEN];
static int g_unmap, g_fault_in;

/* Is [p, p+16) inside memory that is mapped while the fault is pending? */
static int readable16(uintptr_t p) {
  const uintptr_t lo = (uintptr_t)g_region, page = (uintptr_t)g_page;
  const uintptr_t iv = (uintptr_t)g_iv, other = (uintptr_t)g_other;
  if (p >= iv && p + 16 <= iv + 16) return 1;
  if (p >= other && p + 16 <= other + LEN + 256) return 1;
  return (p >= lo && p + 16 <= page) || (p >= page + PAGE && p + 16 <= lo + 3 * PAGE);
}

static void on_segv(int sig, siginfo_t *si, void *ctx) {
  ucontext_t *uc = ctx;
  greg_t *g = uc->uc_mcontext.gregs;
  if (++g_rec.count > 3) _exit(99); /* the restart keeps faulting: give up */
  if (g_rec.count == 1) {
    g_rec.signo = sig;
    g_rec.code = si->si_code;
    g_rec.addr = (uintptr_t)si->si_addr;
    g_rec.cx = (uintptr_t)g[R_CX];
    g_rec.si = (uintptr_t)g[R_SI];
    g_rec.di = (uintptr_t)g[R_DI];
    g_rec.ax = (uintptr_t)g[R_AX];
    g_rec.ip = (uintptr_t)g[R_IP];
    g_rec.flags = (uintptr_t)g[REG_EFL];
    if (readable16(g_rec.ax)) {
      memcpy(g_rec.eaxmem, (const void *)g_rec.ax, 16);
      g_rec.have_eaxmem = 1;
    }
    memcpy(g_rec.ivmem, g_iv, 16);
    memcpy(g_rec.insn, (const void *)g_rec.ip, 4);
    /* Output stored so far: the blocks before the faulting page are always readable. */
    memcpy(g_rec.out_done, g_out, g_fault_in ? LEN : 16 * MAPPED);
  }
  if (g_unmap) {
    if (mmap(g_page, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
             0) == MAP_FAILED)
      _exit(98);
    if (g_fault_in) memcpy(g_in + 16 * MAPPED, g_saved_in + 16 * MAPPED, LEN - 16 * MAPPED);
  } else if (mprotect(g_page, PAGE, PROT_READ | PROT_WRITE) != 0) {
    _exit(97);
  }
}

static void print_loc(const char *label, uintptr_t p) {
  const uintptr_t iv = (uintptr_t)g_iv, in = (uintptr_t)g_in, out = (uintptr_t)g_out;
  if (p == iv)
    printf("%s=iv+0\n", label);
  else if (p >= out && p <= out + LEN)
    printf("%s=out+%lu\n", label, (unsigned long)(p - out));
  else if (p >= in && p <= in + LEN)
    printf("%s=in+%lu\n", label, (unsigned long)(p - in));
  else
    printf("%s=0x%lx\n", label, (unsigned long)p);
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[1], "in") && strcmp(argv[1], "out")) ||
      (strcmp(argv[2], "unmap") && strcmp(argv[2], "prot")) ||
      (strcmp(argv[3], "enc") && strcmp(argv[3], "dec"))) {
    fprintf(stderr, "usage: segv_xcrypt in|out unmap|prot enc|dec\n");
    return 2;
  }
  g_fault_in = !strcmp(argv[1], "in");
  g_unmap = !strcmp(argv[2], "unmap");
  const int decrypt = !strcmp(argv[3], "dec");

  g_region = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g_region == MAP_FAILED) die("mmap");
  g_page = g_region + PAGE;
  g_other = pool_alloc(LEN + 256, 16, 0);
  uint8_t *straddle = g_page - 16 * MAPPED; /* 16-byte aligned: the boundary is a block edge */
  g_in = g_fault_in ? straddle : g_other;
  g_out = g_fault_in ? g_other : straddle;
  for (int i = 0; i < LEN; ++i) g_in[i] = (uint8_t)(i * 29 + 7);
  memcpy(g_saved_in, g_in, LEN);

  uint8_t *cw = pool_alloc(128, 16, 0);
  uint8_t *key = pool_alloc(16, 16, 0);
  g_iv = pool_alloc(16, 16, 0);
  const uint32_t cw_word = decrypt ? 0x20A : 0x00A; /* §6.2: 128-bit, hardware keys */
  memcpy(cw, &cw_word, 4);
  parse_hex("2b7e151628aed2a6abf7158809cf4f3c", key, 16);
  parse_hex("000102030405060708090a0b0c0d0e0f", g_iv, 16);
  uint8_t iv0[16];
  memcpy(iv0, g_iv, 16);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, NULL) != 0) die("sigaction");

  if (g_unmap ? munmap(g_page, PAGE) : mprotect(g_page, PAGE, PROT_NONE)) die("unmap/protect");

  padlock_reload_key();
  const struct xcrypt_regs r = padlock_xcrypt_cbc(g_in, g_out, key, g_iv, cw, BLOCKS);

  printf("variant=%s %s %s\n", argv[1], argv[2], argv[3]);
  print_hex("key", key, 16);
  print_hex("iv", iv0, 16);
  print_hex("in", g_saved_in, LEN);
  printf("blocks=%d\nmapped_blocks=%d\n", BLOCKS, MAPPED);
  printf("faults=%d\n", g_rec.count);
  if (g_rec.count) {
    printf("fault_signo=%d\nfault_code=%d\n", g_rec.signo, g_rec.code);
    printf("fault_addr_off=%ld\n", (long)(g_rec.addr - (uintptr_t)g_page));
    printf("fault_ecx=%lu\n", (unsigned long)g_rec.cx);
    printf("fault_esi_adv=%ld\n", (long)(g_rec.si - (uintptr_t)g_in));
    printf("fault_edi_adv=%ld\n", (long)(g_rec.di - (uintptr_t)g_out));
    print_loc("fault_eax", g_rec.ax);
    if (g_rec.have_eaxmem) print_hex("fault_eaxmem", g_rec.eaxmem, 16);
    print_hex("fault_ivmem", g_rec.ivmem, 16);
    printf("fault_eflags30=%lu\n", (unsigned long)(g_rec.flags >> 30 & 1));
    print_hex("fault_insn", g_rec.insn, 4);
    const size_t done = g_rec.cx <= BLOCKS ? 16 * (BLOCKS - g_rec.cx) : 0;
    print_hex("fault_out", g_rec.out_done, done <= (g_fault_in ? LEN : 16 * MAPPED) ? done : 0);
  }
  printf("ecx=%lu\n", (unsigned long)r.ecx);
  printf("esi_adv=%ld\n", (long)(r.esi - (uintptr_t)g_in));
  printf("edi_adv=%ld\n", (long)(r.edi - (uintptr_t)g_out));
  print_loc("eax", r.eax);
  print_hex("out", g_out, LEN);
  return 0;
}
