/* guest_rep_fault: REP MOVS and REP STOS that fault part-way, seen from a SIGSEGV
 * handler (docs/timing.md, "REP string instructions": padlock-emu runs them whole, in a
 * loop inside their translated block, which must leave the state of the element that
 * faulted as an x86 does).
 *
 * For each form (movsb, movsl, stosb, stosl) and direction (forward, and backward with
 * DF = 1), the destination, or the source, runs ELEMS elements across a page boundary
 * into a PROT_NONE page (the next page going up, the one before going down), BEFORE
 * bytes after its start. The SA_SIGINFO handler records ECX, ESI and EDI (as offsets from
 * the buffers) and si_addr from the ucontext, makes the page accessible and returns: the
 * instruction starts again from the saved registers and finishes. main prints the record
 * and an FNV-1a checksum of both buffers. The same binary run directly on an x86 is the
 * reference.
 *
 * Output lines: "fault insn=movsl dir=up side=dst ecx=... esi=... edi=... addr=... sum=..." */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#if defined(__x86_64__)
#define R_CX REG_RCX
#define R_SI REG_RSI
#define R_DI REG_RDI
#else
#define R_CX REG_ECX
#define R_SI REG_ESI
#define R_DI REG_EDI
#endif

enum { PAGE = 4096, ELEMS = 100, BEFORE = 40 /* bytes mapped before the boundary */ };

static uint8_t *g_area;    // two pages, one of them PROT_NONE (g_prot)
static uint8_t *g_prot;
static uint8_t *g_other;   // the buffer that does not fault
static volatile long g_cx, g_si, g_di, g_addr;
static volatile int g_faults;

static void on_segv(int sig, siginfo_t *si, void *ctx) {
  (void)sig;
  ucontext_t *uc = ctx;
  g_cx = (long)uc->uc_mcontext.gregs[R_CX];
  g_si = (long)uc->uc_mcontext.gregs[R_SI];
  g_di = (long)uc->uc_mcontext.gregs[R_DI];
  g_addr = (long)((uint8_t *)si->si_addr - g_area);
  ++g_faults;
  mprotect(g_prot, PAGE, PROT_READ | PROT_WRITE);
}

static uint32_t fnv1a(const uint8_t *p, size_t n, uint32_t h) {
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

/* One REP instruction: form 0 movsb, 1 movsl, 2 stosb, 3 stosl; down: DF = 1. */
static void run(int form, int down, void *dst, const void *src, long n) {
  void *d = dst;
  const void *s = src;
  long c = n;
  if (down) __asm__ volatile("std" ::: "cc");
  switch (form) {
    case 0: __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(c) : : "memory"); break;
    case 1: __asm__ volatile("rep movsl" : "+D"(d), "+S"(s), "+c"(c) : : "memory"); break;
    case 2: __asm__ volatile("rep stosb" : "+D"(d), "+c"(c) : "a"(0x5a5a5a5a) : "memory"); break;
    case 3: __asm__ volatile("rep stosl" : "+D"(d), "+c"(c) : "a"(0x5a5a5a5a) : "memory"); break;
  }
  if (down) __asm__ volatile("cld" ::: "cc");
}

int main(void) {
  static const char *names[] = {"movsb", "movsl", "stosb", "stosl"};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, NULL);
  g_area = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_other = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g_area == MAP_FAILED || g_other == MAP_FAILED) return 1;
  for (int form = 0; form < 4; ++form) {
    const long size = form == 1 || form == 3 ? 4 : 1;
    const int stores = form >= 2;
    for (int down = 0; down < 2; ++down) {
      for (int side = 0; side < (stores ? 1 : 2); ++side) {  // 0: the destination faults
        for (long i = 0; i < 2 * PAGE; ++i) {
          g_area[i] = (uint8_t)(i * 7 + 1);
          g_other[i] = (uint8_t)(i * 13 + 5);
        }
        g_prot = down ? g_area : g_area + PAGE;
        mprotect(g_prot, PAGE, PROT_NONE);
        g_faults = 0;
        /* The string's first element lies BEFORE bytes from the boundary, on the
           accessible side; the other buffer is far from any boundary. */
        uint8_t *far = g_other + 64;
        uint8_t *fault_start = down ? g_area + PAGE + BEFORE - size : g_area + PAGE - BEFORE;
        uint8_t *other_start = down ? far + (ELEMS - 1) * size : far;
        void *dst = side == 0 ? fault_start : other_start;
        void *src = side == 0 ? other_start : fault_start;
        run(form, down, dst, src, ELEMS);
        printf("fault insn=%s dir=%s side=%s faults=%d ecx=%ld esi=%ld edi=%ld addr=%ld sum=%08x\n",
               names[form], down ? "down" : "up", side == 0 ? "dst" : "src", g_faults, g_cx,
               stores ? 0 : (long)((uint8_t *)g_si - (side == 0 ? g_other : g_area)),
               (long)((uint8_t *)g_di - (side == 0 ? g_area : g_other)), g_addr,
               fnv1a(g_other, 2 * PAGE, fnv1a(g_area, 2 * PAGE, 2166136261u)));
      }
    }
  }
  return 0;
}
