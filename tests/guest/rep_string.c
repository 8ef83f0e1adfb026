/* guest_rep_string: clocks of REP string instructions under padlock-emu's timing model
 * (docs/timing.md, "REP string instructions"): a start-up once per execution plus a cost
 * per element, for counts 0 .. 4096, with the instruction first in its translated block
 * ("start": reached by a jump) or after other instructions ("mid").
 *
 * Method as in clocks.c: t0 = RDTSC (then AL = 0 for STOSB) ends one block; the instruction with its count load;
 * then a fixed block (rdtsc; mov; jmp). The printed clocks include that fixed part; the
 * test compares counts. i386 only.
 *
 * Output lines: "rep insn=movsd at=start n=1000 clocks=1063". */
#include <stdint.h>
#include <stdio.h>

#if defined(__i386__)

uint32_t g_t0, g_t1, g_n;
uint32_t g_src[4096], g_dst[4096];

#define T0 "rdtsc\n\tmovl %%eax, g_t0\n\txorl %%eax, %%eax\n\tjmp 1f\n1:\n\t"
#define T1 "rdtsc\n\tmovl %%eax, g_t1\n\tjmp 3f\n3:\n\t"
#define SETUP "cld\n\tmovl $g_src, %%esi\n\tmovl $g_dst, %%edi\n\t"
/* "start": the count load ends with a jump, so the REP instruction begins a block. */
#define START(insn) "movl g_n, %%ecx\n\tjmp 2f\n2:\n\t" insn "\n\t"
#define MID(insn) "movl g_n, %%ecx\n\t" insn "\n\t"
#define RUN(body) \
  __asm__ __volatile__("pushal\n\t" SETUP T0 body T1 "popal\n\t" ::: "memory", "cc")

static uint32_t measure(int insn, int start, uint32_t n) {
  g_n = n;
  for (int pass = 0; pass < 2; ++pass) {  // the second pass, with warm caches, is kept
    switch (insn * 2 + start) {
      case 0: RUN(MID("rep movsl")); break;
      case 1: RUN(START("rep movsl")); break;
      case 2: RUN(MID("rep stosb")); break;
      case 3: RUN(START("rep stosb")); break;
      case 4: RUN(MID("repe cmpsb")); break;  /* src == dst (zeros): runs to the end */
      case 5: RUN(START("repe cmpsb")); break;
    }
  }
  return g_t1 - g_t0;
}

int main(void) {
  static const char *names[] = {"movsd", "stosb", "cmpsb"};
  static const uint32_t counts[] = {0, 1, 2, 3, 100, 1000, 2000, 4096};
  for (int insn = 0; insn < 3; ++insn)
    for (int start = 0; start < 2; ++start)
      for (unsigned k = 0; k < sizeof counts / sizeof counts[0]; ++k)
        printf("rep insn=%s at=%s n=%u clocks=%u\n", names[insn], start ? "start" : "mid",
               counts[k], measure(insn, start, counts[k]));
  return 0;
}

#else
int main(void) {
  puts("rep_string: i386 only");
  return 0;
}
#endif
