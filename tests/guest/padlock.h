/* PadLock instruction wrappers shared by the guest programs.
 *
 * One wrapper per instruction, emitted as raw .byte sequences the way real software does
 * (guide §6 samples, §7.1 "the opcode form is safer with older tools"). Each wrapper binds
 * the guide's fixed registers with GCC constraints, marks every register the instruction
 * updates as an in/out operand (so the caller can inspect ECX/ESI/EDI/EAX afterwards), and
 * clobbers "memory". On x86-64 the same constraints name RSI/RDI/RCX/RAX/RBX/RDX.
 *
 * The register summary is §0; the per-instruction rules are §2.1 (XSTORE), §3.1 (XCRYPT),
 * §4.1 (XSHA), §5.1 (MONTMUL); EFLAGS[30] is §1.8/§3.2.
 */
#ifndef PADLOCK_GUEST_PADLOCK_H
#define PADLOCK_GUEST_PADLOCK_H

#include <stddef.h>
#include <stdint.h>

/* ---- EFLAGS[30] (§1.8, §3.2) ---------------------------------------------------------- */

/* Storing EFLAGS clears bit 30, so the next REP XCRYPT reloads the control word and key.
 * Centaur's recommended sequence before a REP XCRYPT that uses a different key (§1.8). */
static inline void padlock_reload_key(void) {
#if defined(__x86_64__)
  __asm__ volatile("pushfq; popfq" ::: "memory", "cc");
#else
  __asm__ volatile("pushfl; popfl" ::: "memory", "cc");
#endif
}

/* ---- RNG: XSTORE / REP XSTORE (§2.1) ------------------------------------------------- */

struct xstore_regs {
  uint32_t eax;   /* RNG status word: MSR 0x110B[31:5] | bytes stored in [4:0] */
  uintptr_t edi;  /* advanced by the random bytes stored */
  size_t ecx;     /* REP form only: remaining count (0 on completion) */
};

/* XSTORE (0F A7 C0): EDX = quality factor, ES:[EDI] = buffer (>= 8 bytes writable). */
static inline struct xstore_regs padlock_xstore(void *buf, uint32_t quality) {
  struct xstore_regs r;
  uintptr_t di = (uintptr_t)buf;
  uint32_t ax;
  __asm__ volatile(".byte 0x0f,0xa7,0xc0" /* xstore */
                   : "=a"(ax), "+D"(di)
                   : "d"(quality)
                   : "memory");
  r.eax = ax;
  r.edi = di;
  r.ecx = 0;
  return r;
}

/* REP XSTORE (F3 0F A7 C0): ECX = bytes wanted. The buffer must have 8 spare bytes:
 * the last iteration may store up to seven bytes past the request (§2.1 "REP Count"). */
static inline struct xstore_regs padlock_rep_xstore(void *buf, size_t count, uint32_t quality) {
  struct xstore_regs r;
  uintptr_t di = (uintptr_t)buf;
  size_t cx = count;
  uint32_t ax;
  __asm__ volatile(".byte 0xf3,0x0f,0xa7,0xc0" /* rep xstore */
                   : "=a"(ax), "+D"(di), "+c"(cx)
                   : "d"(quality)
                   : "memory");
  r.eax = ax;
  r.edi = di;
  r.ecx = cx;
  return r;
}

/* ---- ACE: REP XCRYPT* (§3.1, §3.2) ---------------------------------------------------- */

/* Control-word bits (§3.2 "Control word fields"). */
enum {
  CW_ROUND_MASK = 0x00F,
  CW_DGEST = 1u << 4,  /* digest (MAC) mode, CBC/CFB: EDI is not advanced */
  CW_ALIGN = 1u << 5,  /* unaligned-buffer microcode; 128 bytes at EDX */
  CW_CIPHR = 1u << 6,
  CW_KEYGN = 1u << 7,  /* 1 = application-provided key schedule */
  CW_INTER = 1u << 8,
  CW_CRYPT = 1u << 9,  /* 1 = decrypt */
  CW_KSIZE_128 = 0u << 10,
  CW_KSIZE_192 = 1u << 10,
  CW_KSIZE_256 = 2u << 10,
};

struct xcrypt_regs {
  uintptr_t esi; /* advanced by the bytes stored (§3.1 "Input data pointer") */
  uintptr_t edi; /* advanced, except in CBC/CFB digest mode */
  uintptr_t eax; /* IV pointer: changed by CBC/CFB encryption (§3.1 EAX table) */
  size_t ecx;    /* 0 on completion */
};

/* REP XCRYPT<mode>: ESI = input, EDI = output, EBX = key (16-byte aligned), EDX = control
 * word (16-byte aligned; 128 bytes when ALIGN = 1), EAX = IV (16-byte aligned; ignored by
 * ECB), ECX = 128-bit blocks. EBX and EDX are not modified. */
#define PADLOCK_DEFINE_XCRYPT(name, modrm)                                                   \
  static inline struct xcrypt_regs name(const void *in, void *out, const void *key,        \
                                        void *iv, const void *cword, size_t blocks) {      \
    struct xcrypt_regs r;                                                                  \
    uintptr_t si = (uintptr_t)in, di = (uintptr_t)out, ax = (uintptr_t)iv;                 \
    size_t cx = blocks;                                                                    \
    __asm__ volatile(".byte 0xf3,0x0f,0xa7," #modrm                                        \
                     : "+S"(si), "+D"(di), "+a"(ax), "+c"(cx)                              \
                     : "b"(key), "d"(cword)                                                \
                     : "memory", "cc");                                                    \
    r.esi = si;                                                                            \
    r.edi = di;                                                                            \
    r.eax = ax;                                                                            \
    r.ecx = cx;                                                                            \
    return r;                                                                              \
  }

PADLOCK_DEFINE_XCRYPT(padlock_xcrypt_ecb, 0xc8) /* rep xcryptecb */
PADLOCK_DEFINE_XCRYPT(padlock_xcrypt_cbc, 0xd0) /* rep xcryptcbc */
PADLOCK_DEFINE_XCRYPT(padlock_xcrypt_ctr, 0xd8) /* rep xcryptctr (ACE2) */
PADLOCK_DEFINE_XCRYPT(padlock_xcrypt_cfb, 0xe0) /* rep xcryptcfb */
PADLOCK_DEFINE_XCRYPT(padlock_xcrypt_ofb, 0xe8) /* rep xcryptofb */

/* ---- PHE: REP XSHA1 / REP XSHA256 (§4.1) ---------------------------------------------- */

struct xsha_regs {
  uintptr_t esi; /* advanced by the bytes hashed */
  uintptr_t edi; /* never modified */
  uintptr_t eax; /* bytes hashed: == ECX on completion */
  size_t ecx;    /* never modified */
};

/* EAX = `done` (bytes already hashed into the state), ECX = total byte count, ESI = the
 * rest of the data (any alignment), EDI = 128-byte, 16-byte-aligned area holding the state
 * as little-endian words: the FIPS 180-2 initial constants when done = 0 (§4.1, §4.3). */
#define PADLOCK_DEFINE_XSHA(name, modrm)                                                     \
  static inline struct xsha_regs name##_from(const void *data, size_t done, size_t len,    \
                                             void *state) {                                \
    struct xsha_regs r;                                                                    \
    uintptr_t si = (uintptr_t)data, di = (uintptr_t)state, ax = done;                      \
    size_t cx = len;                                                                       \
    __asm__ volatile(".byte 0xf3,0x0f,0xa6," #modrm                                        \
                     : "+S"(si), "+D"(di), "+a"(ax), "+c"(cx)                              \
                     :                                                                     \
                     : "memory", "cc");                                                    \
    r.esi = si;                                                                            \
    r.edi = di;                                                                            \
    r.eax = ax;                                                                            \
    r.ecx = cx;                                                                            \
    return r;                                                                              \
  }                                                                                        \
  static inline struct xsha_regs name(const void *data, size_t len, void *state) {         \
    return name##_from(data, 0, len, state);                                               \
  }

/* FIPS 180-2 initial hash values, the state at EDI for a fresh hash (§4.1). */
static const uint32_t kSha1Init[5] __attribute__((unused)) = {0x67452301, 0xefcdab89, 0x98badcfe,
                                                              0x10325476, 0xc3d2e1f0};
static const uint32_t kSha256Init[8] __attribute__((unused)) = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

PADLOCK_DEFINE_XSHA(padlock_xsha1, 0xc8)   /* rep xsha1 */
PADLOCK_DEFINE_XSHA(padlock_xsha256, 0xd0) /* rep xsha256 */

/* ---- PMM: REP MONTMUL (§5.1) ---------------------------------------------------------- */

/* The Montgomery context in the guide's field order (§5.1), with 32-bit pointers on both
 * ABIs. On x86-64 the instruction is issued with the 67h address-size prefix (the Nano
 * requirement recorded in the models issue), so ESI and the pointers below are 32 bits:
 * the context and every big integer must lie below 4 GiB (static storage does). */
struct mont_ctx {
  uint32_t m_zero_prime; /* -M^-1 mod 2^32 (§6.4) */
  uint32_t a;            /* bigint*, 16-byte aligned */
  uint32_t b;
  uint32_t t;            /* result; zeroed, with 128 spare bits (§5.1 NOTES) */
  uint32_t m;            /* modulus */
  uint32_t scratch;      /* uint32_t[8], 16-byte aligned */
};

struct montmul_regs {
  uint32_t eax; /* undefined on completion */
  uint32_t ecx; /* 0 on completion */
  uint32_t edx; /* 0 on completion */
  uintptr_t esi; /* unchanged */
};

/* REP MONTMUL: EAX = restart state (0 for a new product), ECX = bits (256..32768, a
 * multiple of 128), ESI = context. */
static inline struct montmul_regs padlock_montmul_from(struct mont_ctx *ctx, uint32_t bits,
                                                       uint32_t state) {
  struct montmul_regs r;
  uintptr_t si = (uintptr_t)ctx;
  uint32_t ax = state, cx = bits, dx;
  __asm__ volatile(
#if defined(__x86_64__)
      ".byte 0x67,0xf3,0x0f,0xa6,0xc0" /* addr32 rep montmul */
#else
      ".byte 0xf3,0x0f,0xa6,0xc0" /* rep montmul */
#endif
      : "+S"(si), "+a"(ax), "+c"(cx), "=d"(dx)
      :
      : "memory", "cc");
  r.eax = ax;
  r.ecx = cx;
  r.edx = dx;
  r.esi = si;
  return r;
}

static inline struct montmul_regs padlock_montmul(struct mont_ctx *ctx, uint32_t bits) {
  return padlock_montmul_from(ctx, bits, 0);
}

#endif /* PADLOCK_GUEST_PADLOCK_H */
