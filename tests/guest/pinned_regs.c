/* Guest registers where C code reads or writes them in the middle of generated code.
 * padlock-emu's Unicorn patches keep the guest's EAX, ECX, EDX, ESI and ESP (RAX, RCX, RDX,
 * RSI and RSP for x86-64) in host registers across blocks (docs/emulator.md, "Unicorn",
 * the items on pinned registers): they reach the CPU state only where C code needs them.
 * Each group below is such a place, with the registers changed just before it in the same
 * block; on x86-64 every value has bits above 32 set, which a 32-bit store would lose:
 *   fault_<kind>  a SIGSEGV in mid-block (a load, a store, a push onto an unmapped stack,
 *                 a read-modify-write): every register in the signal context, and after
 *                 the handler made the page accessible and the access ran again
 *   smc           a store that rewrites an instruction later in its own block (the block
 *                 is translated again from the store): the registers after it
 *   helpers       instructions done by helpers that read and write registers: DIV, IDIV,
 *                 CMPXCHG8B, CPUID's leaf 0, on i386 DAA, DAS, AAA, AAS, AAM, AAD, and on
 *                 x86-64 DIV and IDIV of 64 bits and CMPXCHG16B; besides them one-operand
 *                 MUL and IMUL (one TCG operation writes both A and D) and writes of AH and
 *                 CH (a byte inserted into a pinned register)
 *   async         a timer signal stopping a loop that only counts in a register: the
 *                 signal context holds the loop's constants and its count
 * Addresses are printed relative to the probe or the stack, so the host, running the same
 * binary, is the reference (tests/integration/test_pinned_regs.py).
 *
 * usage: pinned_regs [CASES]   (operand sets for the helpers group, default 2000) */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

static uint64_t hash;
static void mix(uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    hash ^= (uint8_t)(v >> (8 * i));
    hash *= 0x100000001b3ull;
  }
}

/* The general registers in one order for both architectures: A B C D SI DI BP SP. */
#ifdef __i386__
static const int greg_index[8] = {REG_EAX, REG_EBX, REG_ECX, REG_EDX,
                                  REG_ESI, REG_EDI, REG_EBP, REG_ESP};
#define REG_PC REG_EIP
#else
static const int greg_index[8] = {REG_RAX, REG_RBX, REG_RCX, REG_RDX,
                                  REG_RSI, REG_RDI, REG_RBP, REG_RSP};
#define REG_PC REG_RIP
#endif
static const char *const reg_name[8] = {"a", "b", "c", "d", "si", "di", "bp", "sp"};

/* Added to every seed: on x86-64 the registers' upper halves are set too. */
#ifdef __i386__
#define SEED_HIGH ((uintptr_t)0)
#else
#define SEED_HIGH ((uintptr_t)0x7e5700000000ull)
#endif

/* fault_probe(seed, addr, kind): sets every register from seed, changes some of them,
 * then accesses addr in the way `kind` says (see the groups above); records the registers
 * once the access is done in probe_after[] and returns. */
void fault_probe(uintptr_t seed, void *addr, uintptr_t kind);
uintptr_t probe_after[8];
uintptr_t probe_saved_sp;

#ifdef __i386__
__asm__(".text\n.globl fault_probe\n.type fault_probe, @function\nfault_probe:\n"
        "  push %ebp\n  push %ebx\n  push %esi\n  push %edi\n"
        "  mov 20(%esp), %eax\n  mov 24(%esp), %edx\n  mov 28(%esp), %ecx\n"
        "  mov %esp, probe_saved_sp\n"
        "  lea 0x11111111(%eax), %ebx\n  lea 0x22222222(%eax), %esi\n"
        "  lea 0x33333333(%eax), %edi\n  lea 0x44444444(%eax), %ebp\n"
        "  cmp $1, %ecx\n  je 1f\n  cmp $2, %ecx\n  je 2f\n  cmp $3, %ecx\n  je 3f\n"
        "  lea 0x55555555(%eax), %ecx\n  add $0x66666666, %eax\n  inc %esi\n"
        "  mov (%edx), %eax\n  jmp 9f\n"
        "1:lea 0x55555555(%eax), %ecx\n  sub $64, %esp\n  xor $0x5a5a5a5a, %eax\n"
        "  mov %eax, (%edx)\n  jmp 9f\n"
        "2:lea 4(%edx), %esp\n  lea 0x55555555(%eax), %ecx\n  push %ecx\n  jmp 9f\n"
        "3:lea 0x55555555(%eax), %ecx\n  dec %edi\n  add %ebx, (%edx)\n"
        "9:mov %eax, probe_after\n  mov %ebx, probe_after+4\n  mov %ecx, probe_after+8\n"
        "  mov %edx, probe_after+12\n  mov %esi, probe_after+16\n  mov %edi, probe_after+20\n"
        "  mov %ebp, probe_after+24\n  mov %esp, probe_after+28\n"
        "  mov probe_saved_sp, %esp\n  pop %edi\n  pop %esi\n  pop %ebx\n  pop %ebp\n  ret\n"
        ".size fault_probe, .-fault_probe\n");
#else
__asm__(".text\n.globl fault_probe\n.type fault_probe, @function\nfault_probe:\n"
        "  push %rbp\n  push %rbx\n"
        "  mov %rdx, %rcx\n  mov %rsi, %rdx\n  mov %rdi, %rax\n"
        "  mov %rsp, probe_saved_sp(%rip)\n"
        "  lea 0x11111111(%rax), %rbx\n  lea 0x22222222(%rax), %rsi\n"
        "  lea 0x33333333(%rax), %rdi\n  lea 0x44444444(%rax), %rbp\n"
        "  cmp $1, %rcx\n  je 1f\n  cmp $2, %rcx\n  je 2f\n  cmp $3, %rcx\n  je 3f\n"
        "  lea 0x55555555(%rax), %rcx\n  add $0x66666666, %rax\n  inc %rsi\n"
        "  mov (%rdx), %rax\n  jmp 9f\n"
        "1:lea 0x55555555(%rax), %rcx\n  sub $64, %rsp\n  xor $0x5a5a5a5a, %rax\n"
        "  mov %rax, (%rdx)\n  jmp 9f\n"
        "2:lea 8(%rdx), %rsp\n  lea 0x55555555(%rax), %rcx\n  push %rcx\n  jmp 9f\n"
        "3:lea 0x55555555(%rax), %rcx\n  dec %rdi\n  add %rbx, (%rdx)\n"
        "9:mov %rax, probe_after(%rip)\n  mov %rbx, probe_after+8(%rip)\n"
        "  mov %rcx, probe_after+16(%rip)\n  mov %rdx, probe_after+24(%rip)\n"
        "  mov %rsi, probe_after+32(%rip)\n  mov %rdi, probe_after+40(%rip)\n"
        "  mov %rbp, probe_after+48(%rip)\n  mov %rsp, probe_after+56(%rip)\n"
        "  mov probe_saved_sp(%rip), %rsp\n  pop %rbx\n  pop %rbp\n  ret\n"
        ".size fault_probe, .-fault_probe\n");
#endif

/* A fixed address, so that the host and the emulator see the same one. */
#define FAULT_PAGE ((void *)0x50000000)
static uintptr_t seen[8], seen_pc, seen_addr;
static int seen_signals;

static void on_segv(int sig, siginfo_t *si, void *ctx) {
  (void)sig;
  const greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
  for (int i = 0; i < 8; ++i) seen[i] = (uintptr_t)g[greg_index[i]];
  seen_pc = (uintptr_t)g[REG_PC];
  seen_addr = (uintptr_t)si->si_addr;
  ++seen_signals;
  mprotect(FAULT_PAGE, 4096, PROT_READ | PROT_WRITE);
}

/* A register's value as printed: the stack pointer relative to the probe's own stack (or
 * to the fault page, where the probe moved it there), the others as they are. */
static uintptr_t printable(int reg, uintptr_t v, int kind) {
  if (reg != 7) return v;
  return kind == 2 ? v - (uintptr_t)FAULT_PAGE : v - probe_saved_sp;
}

static void fault_group(int kind) {
  static const char *const kinds[4] = {"load", "store", "push", "rmw"};
  mprotect(FAULT_PAGE, 4096, PROT_NONE);
  seen_signals = 0;
  const uintptr_t seed = SEED_HIGH + 0x01020304u + 0x10u * (uintptr_t)kind;
  /* The push writes the word below the stack pointer, which the probe puts just past the
   * first word of the page. */
  fault_probe(seed, FAULT_PAGE, (uintptr_t)kind);
  printf("fault_%s signals=%d pc=+%lu addr=+%lu", kinds[kind], seen_signals,
         (unsigned long)(seen_pc - (uintptr_t)fault_probe),
         (unsigned long)(seen_addr - (uintptr_t)FAULT_PAGE));
  for (int i = 0; i < 8; ++i)
    printf(" %s=%lx", reg_name[i], (unsigned long)printable(i, seen[i], kind));
  printf(" | after");
  for (int i = 0; i < 8; ++i)
    printf(" %s=%lx", reg_name[i], (unsigned long)printable(i, probe_after[i], kind));
  printf("\n");
}

/* smc_probe(seed): changes registers, then stores 0x600DC0DE into the immediate of the
 * `mov $imm, DI` that follows in the same block; records the registers in probe_after[]. */
void smc_probe(uintptr_t seed);
extern unsigned char smc_imm_end[];
#ifdef __i386__
__asm__(".text\n.globl smc_probe\n.type smc_probe, @function\nsmc_probe:\n"
        "  push %ebp\n  push %ebx\n  push %esi\n  push %edi\n"
        "  mov 20(%esp), %eax\n  jmp 1f\n"
        "1:lea 0x11111111(%eax), %ebx\n  lea 0x55555555(%eax), %ecx\n"
        "  lea 0x22222222(%eax), %esi\n  lea 0x77777777(%eax), %edx\n  add $0x66666666, %eax\n"
        "  movl $0x600DC0DE, smc_imm_end-4\n"
        "  mov $0x11223344, %edi\nsmc_imm_end:\n"
        "  mov %eax, probe_after\n  mov %ebx, probe_after+4\n  mov %ecx, probe_after+8\n"
        "  mov %edx, probe_after+12\n  mov %esi, probe_after+16\n  mov %edi, probe_after+20\n"
        "  pop %edi\n  pop %esi\n  pop %ebx\n  pop %ebp\n  ret\n"
        ".size smc_probe, .-smc_probe\n");
#else
__asm__(".text\n.globl smc_probe\n.type smc_probe, @function\nsmc_probe:\n"
        "  push %rbx\n  mov %rdi, %rax\n  jmp 1f\n"
        "1:lea 0x11111111(%rax), %rbx\n  lea 0x55555555(%rax), %rcx\n"
        "  lea 0x22222222(%rax), %rsi\n  lea 0x77777777(%rax), %rdx\n  add $0x66666666, %rax\n"
        "  movl $0x600DC0DE, smc_imm_end-4(%rip)\n"
        "  mov $0x11223344, %edi\nsmc_imm_end:\n"
        "  mov %rax, probe_after(%rip)\n  mov %rbx, probe_after+8(%rip)\n"
        "  mov %rcx, probe_after+16(%rip)\n  mov %rdx, probe_after+24(%rip)\n"
        "  mov %rsi, probe_after+32(%rip)\n  mov %rdi, probe_after+40(%rip)\n"
        "  pop %rbx\n  ret\n"
        ".size smc_probe, .-smc_probe\n");
#endif

static void smc_group(void) {
  const uintptr_t page = (uintptr_t)smc_imm_end & ~(uintptr_t)4095;
  if (mprotect((void *)page, 8192, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
    perror("pinned_regs: mprotect");
    exit(1);
  }
  hash = 0xcbf29ce484222325ull;
  for (uintptr_t round = 0; round < 20; ++round) {
    const uint32_t old = 0x11223344u;
    unsigned char *imm = smc_imm_end;
    __asm__("" : "+r"(imm)); /* an address in code, not the end of an array */
    memcpy(imm - 4, &old, 4); /* the C side writes the old immediate back */
    smc_probe(SEED_HIGH + 0x0a0b0c0du + round);
    for (int i = 0; i < 6; ++i) mix(probe_after[i]);
  }
  printf("smc %016llx di=%lx\n", (unsigned long long)hash, (unsigned long)probe_after[5]);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next32(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)rng;
}

static void helpers_group(int cases) {
  hash = 0xcbf29ce484222325ull;
  for (int i = 0; i < cases; ++i) {
    uint32_t src = next32() | 1, hi = next32() % src, lo = next32();
    uint32_t q = lo, r = hi;
    __asm__("divl %[s]" : "+a"(q), "+d"(r) : [s] "rm"(src) : "cc");
    mix(q);
    mix(r);
    int32_t sd = (int32_t)(next32() | 1);
    int32_t sq = (int32_t)next32(), sr = sq < 0 ? -1 : 0;
    if (sd == -1) sd = 3;
    __asm__("idivl %[s]" : "+a"(sq), "+d"(sr) : [s] "rm"(sd) : "cc");
    mix((uint32_t)sq);
    mix((uint32_t)sr);
    uint64_t mem = ((uint64_t)next32() << 32) | next32();
    uint32_t ea = (i & 1) ? (uint32_t)mem : next32(), ed = (i & 1) ? (uint32_t)(mem >> 32) : next32();
    uint32_t eb = next32(), ec = next32();
    uint8_t zf;
    __asm__("lock cmpxchg8b %[m]\n\tsetz %[z]"
            : [m] "+m"(mem), "+a"(ea), "+d"(ed), [z] "=q"(zf)
            : "b"(eb), "c"(ec)
            : "cc");
    mix(mem);
    mix(ea);
    mix(ed);
    mix(zf);
    /* MUL and IMUL write A and D in one operation; the byte moves write AH and CH. */
    uintptr_t ma = SEED_HIGH ^ next32(), md, mc = SEED_HIGH | next32();
    const uintptr_t mf = SEED_HIGH * 3 + next32();
    __asm__("mul %[f]" : "+a"(ma), "=d"(md) : [f] "rm"(mf) : "cc");
    mix(ma);
    mix(md);
    __asm__("imul %[f]" : "+a"(ma), "=d"(md) : [f] "rm"(mf | 1) : "cc");
    mix(ma);
    mix(md);
    __asm__("xchg %%ah, %%ch\n\tadd %%dl, %%ah\n\tmov %%al, %%ch"
            : "+a"(ma), "+c"(mc), "+d"(md)
            :
            : "cc");
    mix(ma);
    mix(mc);
#ifndef __i386__
    /* 64-bit DIV, IDIV and CMPXCHG16B, helpers only the x86-64 target has. */
    uint64_t q64 = ((uint64_t)next32() << 32) | next32(), s64 = q64 >> 7 | 1;
    uint64_t r64 = s64 >> 1;
    __asm__("divq %[s]" : "+a"(q64), "+d"(r64) : [s] "rm"(s64) : "cc");
    mix(q64);
    mix(r64);
    int64_t sq64 = (int64_t)(((uint64_t)next32() << 32) | next32());
    int64_t sr64 = sq64 < 0 ? -1 : 0, sd64 = (int64_t)(SEED_HIGH + next32()) | 1;
    __asm__("idivq %[s]" : "+a"(sq64), "+d"(sr64) : [s] "rm"(sd64) : "cc");
    mix((uint64_t)sq64);
    mix((uint64_t)sr64);
    unsigned __int128 mem16 = (unsigned __int128)(SEED_HIGH ^ next32()) << 64;
    mem16 |= SEED_HIGH + next32();
    uint64_t ra = (i & 1) ? (uint64_t)mem16 : SEED_HIGH + next32();
    uint64_t rd = (i & 1) ? (uint64_t)(mem16 >> 64) : SEED_HIGH ^ next32();
    const uint64_t rb = SEED_HIGH | next32(), rc = SEED_HIGH * 5 + next32();
    __asm__("lock cmpxchg16b %[m]\n\tsetz %[z]"
            : [m] "+m"(mem16), "+a"(ra), "+d"(rd), [z] "=q"(zf)
            : "b"(rb), "c"(rc)
            : "cc");
    mix((uint64_t)mem16);
    mix((uint64_t)(mem16 >> 64));
    mix(ra);
    mix(rd);
    mix(zf);
#endif
#ifdef __i386__
    /* The BCD adjustments: AL and AH in, EAX and the flags out. */
    uint32_t bcd_in = next32() & 0xffff, flags_in = next32() & 0x11; /* CF and AF */
    uint32_t out, flags;
    /* Only the flags each one defines (the SDM): the others differ between CPUs. */
#define BCD(INSN, DEFINED)                                                                 \
  __asm__("push %[f]\n\tpopf\n\t" INSN "\n\tpushf\n\tpop %[f]"                             \
          : "=a"(out), [f] "=r"(flags)                                                     \
          : "a"(bcd_in), "1"(flags_in)                                                     \
          : "cc");                                                                         \
  mix(out);                                                                                \
  mix(flags & (DEFINED));
    BCD("daa", 0xd5) BCD("das", 0xd5) BCD("aaa", 0x11) BCD("aas", 0x11)
    BCD("aad $10", 0xc4) BCD("aam $7", 0xc4)
#undef BCD
#endif
  }
  /* CPUID's leaf 0: the largest leaf and the vendor differ between CPUs, so only their
   * consistency is printed; the registers CPUID does not write must keep their values. */
  uint32_t a = 0, b, c = 0, d, a2 = 0, b2, c2 = 0, d2;
  uintptr_t si = 0x51515151u, di = 0x62626262u;
  __asm__("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d), "+S"(si), "+D"(di));
  __asm__("cpuid" : "+a"(a2), "=b"(b2), "+c"(c2), "=d"(d2));
  const int cpuid_ok = a >= 1 && b != 0 && d != 0 && c != 0 && a == a2 && b == b2 &&
                       c == c2 && d == d2 && si == 0x51515151u && di == 0x62626262u;
  printf("helpers %016llx cpuid_ok=%d\n", (unsigned long long)hash, cpuid_ok);
}

static volatile sig_atomic_t stop;
static uintptr_t at_signal[8];
static void on_alarm(int sig, siginfo_t *si, void *ctx) {
  (void)sig;
  (void)si;
  const greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
  for (int i = 0; i < 8; ++i) at_signal[i] = (uintptr_t)g[greg_index[i]];
  stop = 1;
}

static void on_signal(int sig, void (*handler)(int, siginfo_t *, void *), int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO | flags;
  sigaction(sig, &sa, NULL);
}

static void async_group(void) {
  on_signal(SIGALRM, on_alarm, 0);
  const struct itimerval once = {{0, 0}, {0, 2000}};
  const uintptr_t a = SEED_HIGH + 0x0a0a0a0a, b = SEED_HIGH + 0x0b0b0b0b;
  const uintptr_t c = SEED_HIGH + 0x0c0c0c0c, d = SEED_HIGH + 0x0d0d0d0d;
  uintptr_t count = SEED_HIGH, di = SEED_HIGH + 0x0e0e0e0e;
  stop = 0;
  setitimer(ITIMER_REAL, &once, NULL);
  __asm__ volatile("1: inc %[n]\n\tcmpl $0, %[stop]\n\tje 1b"
                   : [n] "+S"(count)
                   : "a"(a), "b"(b), "c"(c), "d"(d), "D"(di), [stop] "m"(stop)
                   : "cc", "memory");
  const int consts_ok = at_signal[0] == a && at_signal[1] == b && at_signal[2] == c &&
                        at_signal[3] == d && at_signal[5] == di;
  /* The loop tests the flag once per count: it ends at most one count after the signal. */
  const int count_ok = at_signal[4] <= count && count - at_signal[4] <= 1 && count > SEED_HIGH;
  printf("async consts_ok=%d count_ok=%d\n", consts_ok, count_ok);
}

int main(int argc, char **argv) {
  const int cases = argc > 1 ? atoi(argv[1]) : 2000;
  if (mmap(FAULT_PAGE, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
      FAULT_PAGE) {
    perror("pinned_regs: mmap");
    return 1;
  }
  static char alt[65536];
  const stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt};
  sigaltstack(&ss, NULL);
  on_signal(SIGSEGV, on_segv, SA_ONSTACK);
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int kind = 0; kind < 4; ++kind) fault_group(kind);
  smc_group();
  helpers_group(cases);
  async_group();
  return 0;
}
