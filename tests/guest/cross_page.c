/* guest_cross_page: direct jumps from one code page to another whose mapping, permissions
 * or bytes then change. No PadLock. padlock-emu chains a direct jump to its target block
 * even across pages, as qemu-user does (docs/emulator.md, "Unicorn"), so the jump no
 * longer looks the target page up: every change of the target page must drop its blocks
 * and unlink the jumps into them. Each case builds two adjacent pages, A holding
 * `jmp B` (after a little set-up) and B `mov eax, imm32; ret`, calls A a few times so
 * that the jump is chained, changes B and calls A again.
 *
 * usage: cross_page [ROUNDS]    (default 200)
 * Prints key=value lines (a fault as signal:offset of si_addr from B's start, where a
 * fault is expected):
 *   remap_file  A's result after mmap(MAP_FIXED) of a file holding `mov eax, 3; ret`
 *               over B (nothing in the guest writes B: only the mapping changes)
 *   remap_anon  A's result after munmap(B) and a new anonymous B with `mov eax, 4; ret`
 *   prot_none   the fault of calling A after mprotect(B, PROT_NONE), then A's result
 *               once B is executable again (its code unchanged: 1)
 *   noexec      the fault of calling A after mprotect(B, PROT_READ | PROT_WRITE)
 *   mremap      the fault of calling A after mremap moved B away, then the result of
 *               calling the moved page (1)
 *   dontneed    the fault of calling A (which zeroes EAX first) after
 *               madvise(B, MADV_DONTNEED) zeroed B: `add [eax], al` faults at address 0,
 *               printed as signal:si_addr
 *   smc_c       sum over ROUNDS calls of A, B's immediate rewritten by C to i + 1 before
 *               each call
 *   smc_a       the same sum where A itself stores its argument into B's immediate and
 *               then jumps to B (a store into another page's code, in the block that
 *               jumps there) */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "code_util.h"
#include "guest_util.h"

enum { WARM = 3 };

typedef uint32_t (*fn_t)(uint32_t);

/* `jmp rel32` at p to target; returns the byte after it. */
static uint8_t *emit_jmp(uint8_t *p, const uint8_t *target) {
  const int32_t rel = (int32_t)(target - (p + 5));
  p[0] = 0xE9;
  memcpy(p + 1, &rel, 4);
  return p + 5;
}

/* Two adjacent fresh pages: A = the first, B = the second, holding `mov eax, 1; ret`. */
static uint8_t *pair(void) {
  uint8_t *a = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (a == MAP_FAILED) die("mmap pair");
  emit_mov_ret(a + PAGE, 1);
  return a;
}

/* A: `jmp B`. */
static uint8_t *pair_jmp(void) {
  uint8_t *a = pair();
  emit_jmp(a, a + PAGE);
  return a;
}

/* Calls A WARM times (the first run chains its jump) and checks the result. */
static void warm(uint8_t *a, uint32_t want) {
  for (int i = 0; i < WARM; ++i) {
    if (((fn_t)a)(0) != want) die("warm-up: wrong result");
  }
}

/* Calls f(arg); on a fault records the signal and si_addr and returns 0. */
static uint32_t call_catching(uint8_t *f, uint32_t arg) {
  fault_sig = 0;
  fault_addr = 0;
  if (sigsetjmp(fault_jmp, 1) == 0) return ((fn_t)f)(arg);
  return 0;
}

static void print_fault(const char *key, const uint8_t *b, const char *tail) {
  printf("%s=%d:%ld%s", key, (int)fault_sig, (long)(fault_addr - (uintptr_t)b), tail);
}

static void remap_file(void) {
  uint8_t *a = pair_jmp();
  warm(a, 1);
  uint8_t code[PAGE];
  memset(code, 0xCC, sizeof code);
  emit_mov_ret(code, 3);
  FILE *f = tmpfile();
  if (f == NULL || fwrite(code, 1, sizeof code, f) != sizeof code || fflush(f) != 0) {
    die("tmpfile");
  }
  if (mmap(a + PAGE, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fileno(f), 0) !=
      a + PAGE) {
    die("mmap file over B");
  }
  fclose(f);
  printf("remap_file=%u\n", ((fn_t)a)(0));
}

static void remap_anon(void) {
  uint8_t *a = pair_jmp();
  warm(a, 1);
  if (munmap(a + PAGE, PAGE) != 0) die("munmap B");
  uint8_t *b = mmap(a + PAGE, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (b != a + PAGE) die("mmap B again");
  emit_mov_ret(b, 4);
  printf("remap_anon=%u\n", ((fn_t)a)(0));
}

static void prot_none(void) {
  uint8_t *a = pair_jmp();
  warm(a, 1);
  if (mprotect(a + PAGE, PAGE, PROT_NONE) != 0) die("mprotect none");
  call_catching(a, 0);
  print_fault("prot_none", a + PAGE, " ");
  if (mprotect(a + PAGE, PAGE, PROT_READ | PROT_EXEC) != 0) die("mprotect rx");
  printf("%u\n", ((fn_t)a)(0));
}

static void noexec(void) {
  uint8_t *a = pair_jmp();
  warm(a, 1);
  if (mprotect(a + PAGE, PAGE, PROT_READ | PROT_WRITE) != 0) die("mprotect rw");
  call_catching(a, 0);
  print_fault("noexec", a + PAGE, "\n");
}

static void moved(void) {
  uint8_t *a = pair_jmp();
  warm(a, 1);
  uint8_t *away = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (away == MAP_FAILED) die("mmap away");
  if (mremap(a + PAGE, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, away) != away) {
    die("mremap");
  }
  call_catching(a, 0);
  print_fault("mremap", a + PAGE, " ");
  printf("%u\n", ((fn_t)away)(0));
}

static void dontneed(void) {
  uint8_t *a = pair();
  a[0] = 0x31; /* xor eax, eax */
  a[1] = 0xC0;
  emit_jmp(a + 2, a + PAGE);
  warm(a, 1);
  if (madvise(a + PAGE, PAGE, MADV_DONTNEED) != 0) die("madvise");
  call_catching(a, 0);
  printf("dontneed=%d:%#lx\n", (int)fault_sig, (unsigned long)fault_addr);
}

static uint32_t smc_c(unsigned rounds) {
  uint8_t *a = pair_jmp();
  uint8_t *imm = a + PAGE + 1;
  warm(a, 1);
  uint32_t sum = 0;
  for (unsigned i = 0; i < rounds; ++i) {
    const uint32_t v = i + 1;
    memcpy(imm, &v, 4);
    sum += ((fn_t)a)(0);
  }
  return sum;
}

/* A: store the argument into B's immediate, then `jmp B`. */
static uint32_t smc_a(unsigned rounds) {
  uint8_t *a = pair();
  uint8_t *imm = a + PAGE + 1, *p = a;
#if defined(__x86_64__)
  p[0] = 0x89; /* mov [rip + rel32], edi */
  p[1] = 0x3D;
  const int32_t rel = (int32_t)(imm - (p + 6));
  memcpy(p + 2, &rel, 4);
  p += 6;
#else
  static const uint8_t load_arg[] = {0x8B, 0x4C, 0x24, 0x04}; /* mov ecx, [esp + 4] */
  memcpy(p, load_arg, sizeof load_arg);
  p[4] = 0x89; /* mov [disp32], ecx */
  p[5] = 0x0D;
  const uint32_t abs = (uint32_t)(uintptr_t)imm;
  memcpy(p + 6, &abs, 4);
  p += 10;
#endif
  emit_jmp(p, a + PAGE);
  for (int i = 0; i < WARM; ++i) {
    if (((fn_t)a)(1) != 1) die("smc_a warm-up");
  }
  uint32_t sum = 0;
  for (unsigned i = 0; i < rounds; ++i) sum += ((fn_t)a)(i + 1);
  return sum;
}

int main(int argc, char **argv) {
  const unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 200;
  catch_segv();

  remap_file();
  remap_anon();
  prot_none();
  noexec();
  moved();
  dontneed();
  printf("smc_c=%u\n", smc_c(rounds));
  printf("smc_a=%u\n", smc_a(rounds));
  return 0;
}
