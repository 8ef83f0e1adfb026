/* guest_self_modifying: code that writes code, and faults at the edges of the address
 * space. No PadLock. padlock-emu's direct memory (docs/emulator.md, "Direct memory")
 * write-protects pages holding translated code on the host; these cases check that every
 * way of writing such a page is seen, as on a real x86 (which snoops stores against its
 * instruction stream), and that guest faults stay guest faults.
 *
 * usage: self_modifying [ROUNDS]    (default 200)
 * Prints key=value lines:
 *   other_block  sum of ROUNDS calls of `mov eax, imm32; ret`, the immediate rewritten by C
 *                before each call (i + 1 in round i)
 *   same_block   what one block returns after a `mov dword [imm field], 0x600DC0DE` inside
 *                that block rewrote the `mov eax, imm32` that follows it: on its first
 *                run, and after C wrote the old immediate back
 *   read_into    the value after read() from a pipe replaced the code (a system call
 *                writing a code page)
 *   protected    the signal, and si_addr minus the written address, of a store to the
 *                code page after mprotect(PROT_READ | PROT_EXEC); then "after" the value
 *                once the page is writable again and rewritten
 *   wrap         (i386) the signal of a 4-byte load at 0xFFFFFFFE, which crosses 4 GiB
 *   ea_wrap      (i386) accesses whose base + index * scale + displacement passes 4 GiB and
 *                wraps to 32 bits (a negative index in a 32-bit register): a load, a
 *                store, a read-modify-write, LEA, CMPXCHG8B, and a load from a wrapped
 *                unmapped address (signal:si_addr); the generated code of a 32-bit guest
 *                sums addresses in 64 bits (docs/emulator.md, "Figures")
 *   far          (x86-64) for a load and then a store at each of 2^39, 2^40, 2^44 and
 *                0x7FFFFFFFF000 (the last user page), none of them mapped: the signal and
 *                si_addr; past padlock-emu's window for a 64-bit guest (2^36 to 2^40
 *                bytes) direct memory sends them through the TLB path, which refuses them */
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

typedef uint32_t (*fn_t)(void);

static uint32_t other_block(uint8_t *code, unsigned rounds) {
  uint8_t *imm = emit_mov_ret(code, 0);
  uint32_t sum = 0;
  for (unsigned i = 0; i < rounds; ++i) {
    const uint32_t v = i + 1;
    memcpy(imm, &v, 4);
    sum += ((fn_t)code)();
  }
  return sum;
}

/* One block: mov dword [X], 0x600DC0DE; mov eax, 0x0BADC0DE; ret — where X is the
 * immediate of the second instruction. */
static int same_block(uint8_t *code) {
  uint8_t *p = code;
  const uint32_t fresh = 0x600DC0DE, stale = 0x0BADC0DE;
  p[0] = 0xC7;  /* mov r/m32, imm32 */
  p[1] = 0x05;  /* ModRM: [disp32] on i386, [rip + disp32] on x86-64 */
  uint8_t *disp = p + 2;
  memcpy(p + 6, &fresh, 4);
  uint8_t *imm = emit_mov_ret(p + 10, stale);
#if defined(__x86_64__)
  const int32_t rel = (int32_t)(imm - (p + 10));
  memcpy(disp, &rel, 4);
#else
  const uint32_t abs = (uint32_t)(uintptr_t)imm;
  memcpy(disp, &abs, 4);
#endif
  const uint32_t first = ((fn_t)code)();  /* a new block rewriting itself */
  memcpy(imm, &stale, 4);                  /* C rewrites it back; then again */
  const uint32_t second = ((fn_t)code)();
  printf("same_block=%#x %#x\n", first, second);
  return 0;
}

static uint32_t read_into(uint8_t *code) {
  emit_mov_ret(code, 1);
  if (((fn_t)code)() != 1) die("read_into: first call");
  uint8_t next[6];
  emit_mov_ret(next, 0x12345678);
  int fds[2];
  if (pipe(fds) != 0) die("pipe");
  if (write(fds[1], next, sizeof next) != (ssize_t)sizeof next) die("pipe write");
  if (read(fds[0], code, sizeof next) != (ssize_t)sizeof next) die("read into code");
  close(fds[0]);
  close(fds[1]);
  return ((fn_t)code)();
}

static void protected_store(uint8_t *code) {
  uint8_t *imm = emit_mov_ret(code, 7);
  if (((fn_t)code)() != 7) die("protected: first call");
  if (mprotect(code, PAGE, PROT_READ | PROT_EXEC) != 0) die("mprotect rx");
  fault_sig = 0;
  if (sigsetjmp(fault_jmp, 1) == 0) {
    *(volatile uint32_t *)imm = 8;
  }
  printf("protected=%d %ld\n", (int)fault_sig, (long)(fault_addr - (uintptr_t)imm));
  if (mprotect(code, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) die("mprotect rwx");
  const uint32_t nine = 9;
  memcpy(imm, &nine, 4);
  printf("after=%u\n", ((fn_t)code)());
}

#if !defined(__x86_64__)
static void ea_wrap(void) {
  static uint32_t a[4] = {11, 22, 33, 44};
  static uint64_t q = 5;
  const uint32_t minus1 = 0xFFFFFFFFu, minus8 = 0xFFFFFFF8u;
  uint32_t v, lea, lo = 5, hi = 0;
  asm volatile("movl (%1,%2,4), %0" : "=r"(v) : "r"(&a[1]), "r"(minus1) : "memory");
  asm volatile("movl %2, (%0,%1,1)" : : "r"(&a[3]), "r"(minus8), "r"(77u) : "memory");
  asm volatile("addl $5, 8(%0,%1,4)" : : "r"(&a[1]), "r"(minus1) : "memory");
  asm("leal 4(%1,%2,4), %0" : "=r"(lea) : "r"(&a[1]), "r"(minus1));
  asm volatile("lock cmpxchg8b (%2,%3,1)"
               : "+a"(lo), "+d"(hi)
               : "S"((char *)&q + 8), "D"(minus8), "b"(9u), "c"(0u)
               : "memory");
  fault_sig = 0;
  fault_addr = 0;
  if (sigsetjmp(fault_jmp, 1) == 0) {
    asm volatile("movl (%1,%2,4), %0" : "=r"(v) : "r"(0x1000u), "r"(minus1) : "memory");
  }
  printf("ea_wrap=%u %u %u %d %u %d:%#lx\n", a[0], a[1], a[2], lea == (uintptr_t)&a[1],
         (unsigned)q, (int)fault_sig, (unsigned long)fault_addr);
}
#endif

int main(int argc, char **argv) {
  const unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 200;
  catch_segv();

  uint8_t *code = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (code == MAP_FAILED) die("mmap");
  printf("other_block=%u\n", other_block(code, rounds));
  same_block(code + PAGE);
  printf("read_into=%#x\n", read_into(code + 2 * PAGE));
  protected_store(code + 3 * PAGE);
#if !defined(__x86_64__)
  fault_sig = 0;
  if (sigsetjmp(fault_jmp, 1) == 0) {
    (void)*(volatile uint32_t *)(uintptr_t)0xFFFFFFFEu;
  }
  printf("wrap=%d\n", (int)fault_sig);
  ea_wrap();
#else
  static const uintptr_t far[] = {(uintptr_t)1 << 39, (uintptr_t)1 << 40, (uintptr_t)1 << 44,
                                  0x7FFFFFFFF000u};
  printf("far=");
  for (unsigned i = 0; i < sizeof far / sizeof far[0]; ++i) {
    for (int store = 0; store < 2; ++store) {
      fault_sig = 0;
      fault_addr = 0;
      if (sigsetjmp(fault_jmp, 1) == 0) {
        if (store) {
          *(volatile uint64_t *)far[i] = 1;
        } else {
          (void)*(volatile uint64_t *)far[i];
        }
      }
      printf("%s%d:%#lx", i + store > 0 ? " " : "", (int)fault_sig, (unsigned long)fault_addr);
    }
  }
  printf("\n");
#endif
  return 0;
}
