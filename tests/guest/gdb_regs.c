/* A guest for the gdb stub's register test (tests/integration/test_gdb_registers.py): at
 * the global label gdb_regs_site every general register holds its own known value, so the
 * test can check which value sits in which `g` packet and `p` slot.
 *
 * Register number k in the x86 encoding (AX=0, CX=1, DX=2, BX=3, SP=4, BP=5, SI=6, DI=7,
 * R8..R15 = 8..15) holds (k + 1) * 0x0101010101010101 (x86-64) or (k + 1) * 0x01010101
 * (i386), ESP and EBP included: the asm first stores every register to gdb_saved and
 * restores them all after the site, so no C code runs while they hold the pattern.
 * Prints "done" and exits 0. */
#include <stdint.h>
#include <stdio.h>

uintptr_t gdb_saved[16];

#if defined(__x86_64__)
#define SAVE(r, k) "movq %%" #r ", gdb_saved+8*" #k "\n\t"
#define LOAD(r, k) "movq gdb_saved+8*" #k ", %%" #r "\n\t"
#define SET(r, k) "movabsq $(" #k "+1)*0x0101010101010101, %%" #r "\n\t"
#define EACH(X)                                                                            \
  X(rax, 0) X(rcx, 1) X(rdx, 2) X(rbx, 3) X(rsp, 4) X(rbp, 5) X(rsi, 6) X(rdi, 7) X(r8, 8) \
      X(r9, 9) X(r10, 10) X(r11, 11) X(r12, 12) X(r13, 13) X(r14, 14) X(r15, 15)
#else
#define SAVE(r, k) "movl %%" #r ", gdb_saved+4*" #k "\n\t"
#define LOAD(r, k) "movl gdb_saved+4*" #k ", %%" #r "\n\t"
#define SET(r, k) "movl $(" #k "+1)*0x01010101, %%" #r "\n\t"
#define EACH(X) \
  X(eax, 0) X(ecx, 1) X(edx, 2) X(ebx, 3) X(esp, 4) X(ebp, 5) X(esi, 6) X(edi, 7)
#endif

__attribute__((noinline)) static void load_patterns(void) {
  __asm__ volatile(EACH(SAVE) EACH(SET)
                   ".globl gdb_regs_site\n"
                   "gdb_regs_site:\n\t"
                   "nop\n\t" EACH(LOAD)
                   :
                   :
                   : "memory");
}

int main(void) {
  load_patterns();
  puts("done");
  return 0;
}
