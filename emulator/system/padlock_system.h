/* The C ABI system mode's QEMU calls: one PadLock execution core per virtual CPU, guest
 * memory through QEMU's softmmu, the CPU models' CPUID leaves and the VIA MSRs. QEMU loads
 * libpadlock-system.so with dlopen, so the models change without rebuilding QEMU
 * (docs/system.md). Plain C: QEMU's patch includes this header. */
#ifndef PADLOCK_SYSTEM_H
#define PADLOCK_SYSTEM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PADLOCK_SYS_ABI_VERSION 2

typedef struct padlock_sys padlock_sys;

/* Guest linear memory, one page at a time. `page` returns the host address of `va` when
 * the byte is ordinary RAM accessible for the access (write != 0: a store) without a
 * fault, else NULL; it never raises the fault itself. A range never crosses a page. */
typedef struct padlock_sys_mem {
  void* opaque;
  uint8_t* (*page)(void* opaque, uint64_t va, int write);
  uint64_t page_size;
} padlock_sys_mem;

typedef struct padlock_sys_regs {
  uint64_t gpr[8]; /* EAX, ECX, EDX, EBX, ESP, EBP, ESI, EDI (or their 64-bit forms) */
  uint64_t eflags; /* bit 30: the ACE key-loaded bit (§1.8) */
  uint64_t pc;     /* linear address of the instruction, for diagnostics */
  int long_mode;   /* 64-bit code segment */
  int cr4_osfxsr;  /* CR4[9] (§1.2) */
  uint64_t now_ns; /* QEMU's virtual clock: the RNG's bits accumulate with it (§2.3) */
} padlock_sys_regs;

enum padlock_sys_status {
  PADLOCK_SYS_DONE = 0,        /* completed: the PC moves past the instruction */
  PADLOCK_SYS_INTERRUPTED = 1, /* stopped at an interrupt point (§1.7): the PC stays */
  PADLOCK_SYS_UD = 2,          /* #UD */
  PADLOCK_SYS_GP = 3,          /* #GP(0) */
  PADLOCK_SYS_PF = 4,          /* #PF at fault_address: the PC stays, registers restartable */
};

typedef struct padlock_sys_result {
  int status;             /* enum padlock_sys_status */
  unsigned length;        /* instruction length in bytes */
  uint64_t fault_address; /* #PF: the first inaccessible byte */
  int fault_write;        /* #PF: a store */
  uint64_t cycles;        /* the instruction's clocks */
} padlock_sys_result;

int padlock_sys_abi_version(void);

/* The CPU models (padlock-emu cpus): count and names. */
int padlock_sys_model_count(void);
const char* padlock_sys_model_name(int index);

/* A PadLock unit set for the model `cpu` (a name or alias); NULL if unknown. The RNG
 * bits are reproducible from `seed`. */
padlock_sys* padlock_sys_create(const char* cpu, uint64_t seed);
void padlock_sys_destroy(padlock_sys* p);

/* CPUID as the model's chip answers it (models/cpus/): 1 if the model has the leaf. */
int padlock_sys_cpuid(padlock_sys* p, uint32_t leaf, uint32_t subleaf, uint32_t out[4]);
const char* padlock_sys_brand(padlock_sys* p);
int padlock_sys_long_mode(padlock_sys* p);

/* RDMSR/WRMSR of 0x1107 (FCR) and 0x110B (RNG): 1 if the MSR is the model's, 0 where the
 * instruction raises #GP (§1.3, §1.5), -1 if the MSR is not PadLock's. */
int padlock_sys_rdmsr(padlock_sys* p, uint32_t msr, uint64_t* value, uint64_t now_ns);
int padlock_sys_wrmsr(padlock_sys* p, uint32_t msr, uint64_t value, uint64_t now_ns);

/* Executes the instruction whose bytes (at most 15) start at `insn`. A REP instruction
 * with `interrupt_pending` stops at its first interrupt point after making progress
 * (§1.7). `regs` are updated in place: on a fault or an interrupt they hold the
 * restartable state and EFLAGS[30] is 0 (§1.8). */
void padlock_sys_execute(padlock_sys* p, const uint8_t* insn, unsigned avail,
                         padlock_sys_regs* regs, const padlock_sys_mem* mem, int interrupt_pending,
                         padlock_sys_result* result);

/* The model's clock: QEMU's virtual clock in cycles at the model's MHz plus the cycles of
 * every PadLock instruction executed so far. */
uint64_t padlock_sys_cycles(padlock_sys* p);

/* RDTSC: the model's clock at QEMU's virtual time `now_ns` (docs/system.md, "Time"). */
uint64_t padlock_sys_tsc(padlock_sys* p, uint64_t now_ns);

#ifdef __cplusplus
}
#endif

#endif
