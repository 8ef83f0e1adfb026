/* A minimal stand-in for the Linux 6.1 kernel headers that drivers/crypto/padlock-aes.c
 * and padlock-sha.c include, so they compile unmodified as relocatable objects for the
 * padlock-emu function harness (tests/drivers/linux/README.md). Our own code: only the
 * names and the structure fields these two drivers use, with the meaning the kernel gives
 * them; the implementations are in kernel_shim.c. Every kernel header the drivers name is
 * a generated one-line file that includes this one. */
#ifndef PADLOCK_KERNEL_SHIM_H
#define PADLOCK_KERNEL_SHIM_H

#include <stddef.h>
#include <stdint.h>

/* ---- types, compiler, errors ------------------------------------------------------------ */
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef uint32_t __le32;
typedef _Bool bool;
#define true 1
#define false 0
#define __init
#define __exit
#define __packed __attribute__((packed))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define ULONG_MAX (~0UL)
#define EINVAL 22
#define ENOMEM 12
#define ENODEV 19
#define IS_ERR(p) ((unsigned long)(p) >= (unsigned long)-4095)
#define PTR_ERR(p) ((long)(p))
#define ERR_PTR(e) ((void*)(long)(e))
#define ALIGN(x, a) (((x) + ((a)-1)) & ~((__typeof__(x))(a)-1))
#define PTR_ALIGN(p, a) ((__typeof__(p))ALIGN((unsigned long)(p), (a)))
#define PAGE_SIZE 4096UL
#define offset_in_page(p) ((unsigned long)(p) & (PAGE_SIZE - 1))
#define le32_to_cpu(x) (x)
typedef uint64_t __be64;
#define cpu_to_be64(x) __builtin_bswap64(x)
#define swab32(x) __builtin_bswap32(x)
#define min(a, b) ((a) < (b) ? (a) : (b))

void* memcpy(void* d, const void* s, size_t n);
void* memset(void* d, int c, size_t n);

/* ---- module, printk ------------------------------------------------------------------- */
#define THIS_MODULE ((void*)0)
#define MODULE_DESCRIPTION(x)
#define MODULE_LICENSE(x)
#define MODULE_AUTHOR(x)
#define MODULE_ALIAS_CRYPTO(x)
#define MODULE_DEVICE_TABLE(type, name)
/* The harness calls the driver's init through this global (one driver per Machine). */
#define module_init(fn)        \
  int shim_module_init(void) { \
    return fn();               \
  }
#define module_exit(fn)
#define KERN_ERR ""
#define KERN_NOTICE ""
#define KERN_WARNING ""
#define KBUILD_MODNAME "padlock"
int printk(const char* fmt, ...);
#define pr_err(...) printk(__VA_ARGS__)
#define pr_info(...) printk(__VA_ARGS__)
#define __maybe_unused __attribute__((unused))

/* ---- one CPU: per-CPU data and CPUID features ------------------------------------------- */
#define DEFINE_PER_CPU(type, name) type name
#define per_cpu(var, cpu) (*((void)(cpu), &(var)))
#define raw_smp_processor_id() 0
#define for_each_online_cpu(cpu) for ((cpu) = 0; (cpu) < 1; ++(cpu))
struct cpuinfo_x86 {
  u8 x86, x86_model, x86_stepping;
};
struct cpuinfo_x86* shim_cpu_data(int cpu);
#define cpu_data(cpu) (*shim_cpu_data(cpu))
/* Word 5 of the kernel's feature words is CPUID 0xC0000001 EDX (§1.3). */
#define X86_FEATURE_XSTORE (5 * 32 + 2)
#define X86_FEATURE_XSTORE_EN (5 * 32 + 3)
#define X86_FEATURE_XCRYPT (5 * 32 + 6)
#define X86_FEATURE_XCRYPT_EN (5 * 32 + 7)
#define X86_FEATURE_PHE (5 * 32 + 10)
#define X86_FEATURE_PHE_EN (5 * 32 + 11)
struct x86_cpu_id {
  int feature;
  const void* data;
};
#define X86_MATCH_FEATURE(f, d) \
  { (f) + 1, (d) }
int boot_cpu_has(int feature);
const struct x86_cpu_id* x86_match_cpu(const struct x86_cpu_id* ids);
/* ---- CR0.TS (ring 0): shim_read_cr0_ts / shim_write_cr0_ts are left undefined so the
 * harness binds them to Machine.cr0_ts. With TS set a PadLock instruction raises #NM, as an
 * SSE one does. kernel_fpu_begin clears TS and kernel_fpu_end puts back what it found, as a
 * lazy-FPU kernel's did for code that owns no FPU state; irq_ts_save / irq_ts_restore are
 * the same pair as older kernels exported it for the PadLock drivers (Linux 6.1's drivers
 * call neither: its kernel never leaves TS set). ------------------------------------------ */
int shim_read_cr0_ts(void);
void shim_write_cr0_ts(int ts);
void kernel_fpu_begin(void);
void kernel_fpu_end(void);
int irq_ts_save(void);
void irq_ts_restore(int ts_state);
#define cpu_has_xstore boot_cpu_has(X86_FEATURE_XSTORE)

/* ---- MSRs (ring 0 in the kernel): shim_rdmsr / shim_wrmsr are left undefined so the
 * harness binds them to stubs that reach the modelled MSRs (Machine.rdmsr/wrmsr) -------- */
#define MSR_VIA_RNG 0x0000110b
u64 shim_rdmsr(u32 msr);
void shim_wrmsr(u32 msr, u32 lo, u32 hi);
#define rdmsr(msr, lo, hi)          \
  do {                              \
    const u64 v_ = shim_rdmsr(msr); \
    (lo) = (u32)v_;                 \
    (hi) = (u32)(v_ >> 32);         \
  } while (0)
#define wrmsr(msr, lo, hi) shim_wrmsr((msr), (lo), (hi))
void udelay(unsigned long usecs);

/* ---- hw_random -------------------------------------------------------------------------- */
struct hwrng {
  const char* name;
  int (*init)(struct hwrng* rng);
  void (*cleanup)(struct hwrng* rng);
  int (*data_present)(struct hwrng* rng, int wait);
  int (*data_read)(struct hwrng* rng, u32* data);
  unsigned long priv;
};
int hwrng_register(struct hwrng* rng);
void hwrng_unregister(struct hwrng* rng);

/* ---- crypto API ------------------------------------------------------------------------- */
#define CRYPTO_ALG_TYPE_CIPHER 0x1
#define CRYPTO_ALG_NEED_FALLBACK 0x100
#define AES_BLOCK_SIZE 16
#define AES_MIN_KEY_SIZE 16
#define AES_MAX_KEY_SIZE 32
#define AES_MAX_KEYLENGTH (15 * 16)
#define AES_MAX_KEYLENGTH_U32 (AES_MAX_KEYLENGTH / 4)

struct crypto_tfm;
struct cipher_alg {
  unsigned int cia_min_keysize, cia_max_keysize;
  int (*cia_setkey)(struct crypto_tfm* tfm, const u8* key, unsigned int keylen);
  void (*cia_encrypt)(struct crypto_tfm* tfm, u8* dst, const u8* src);
  void (*cia_decrypt)(struct crypto_tfm* tfm, u8* dst, const u8* src);
};
struct crypto_alg {
  const char *cra_name, *cra_driver_name;
  int cra_priority;
  u32 cra_flags;
  unsigned int cra_blocksize, cra_ctxsize, cra_alignmask;
  void* cra_module;
  union {
    struct cipher_alg cipher;
  } cra_u;
};
struct crypto_tfm {
  struct crypto_alg* alg;
  void* ctx;
};
static inline void* crypto_tfm_ctx(struct crypto_tfm* tfm) {
  return tfm->ctx;
}
static inline unsigned int crypto_tfm_ctx_alignment(void) {
  return 8;
}
int crypto_register_alg(struct crypto_alg* alg);
void crypto_unregister_alg(struct crypto_alg* alg);

struct crypto_aes_ctx {
  u32 key_enc[AES_MAX_KEYLENGTH_U32];
  u32 key_dec[AES_MAX_KEYLENGTH_U32];
  u32 key_length;
};
int aes_expandkey(struct crypto_aes_ctx* ctx, const u8* in_key, unsigned int key_len);

/* skcipher: one request walks its buffers in segments of at most `seg` bytes (the kernel's
 * scatterlist walk; seg = 0: one segment). */
struct crypto_skcipher {
  struct crypto_tfm base;
};
struct skcipher_request {
  struct crypto_skcipher* tfm;
  unsigned int cryptlen, seg;
  u8* iv;
  const u8* src;
  u8* dst;
};
struct skcipher_walk {
  struct {
    struct {
      void* addr;
    } virt;
  } src, dst;
  unsigned int nbytes, total, seg;
  u8* iv;
  struct skcipher_request* req;
};
struct skcipher_alg {
  int (*setkey)(struct crypto_skcipher* tfm, const u8* key, unsigned int keylen);
  int (*encrypt)(struct skcipher_request* req);
  int (*decrypt)(struct skcipher_request* req);
  unsigned int min_keysize, max_keysize, ivsize;
  struct crypto_alg base;
};
static inline struct crypto_tfm* crypto_skcipher_tfm(struct crypto_skcipher* t) {
  return &t->base;
}
static inline void* crypto_skcipher_ctx(struct crypto_skcipher* t) {
  return t->base.ctx;
}
static inline struct crypto_skcipher* crypto_skcipher_reqtfm(struct skcipher_request* r) {
  return r->tfm;
}
int skcipher_walk_virt(struct skcipher_walk* walk, struct skcipher_request* req, bool atomic);
int skcipher_walk_done(struct skcipher_walk* walk, int err);
int crypto_register_skcipher(struct skcipher_alg* alg);
void crypto_unregister_skcipher(struct skcipher_alg* alg);

/* shash */
#define SHA1_DIGEST_SIZE 20
#define SHA1_BLOCK_SIZE 64
#define SHA256_DIGEST_SIZE 32
#define SHA256_BLOCK_SIZE 64
#define SHA1_H0 0x67452301UL
#define SHA1_H1 0xefcdab89UL
#define SHA1_H2 0x98badcfeUL
#define SHA1_H3 0x10325476UL
#define SHA1_H4 0xc3d2e1f0UL
#define SHA256_H0 0x6a09e667UL
#define SHA256_H1 0xbb67ae85UL
#define SHA256_H2 0x3c6ef372UL
#define SHA256_H3 0xa54ff53aUL
#define SHA256_H4 0x510e527fUL
#define SHA256_H5 0x9b05688cUL
#define SHA256_H6 0x1f83d9abUL
#define SHA256_H7 0x5be0cd19UL
struct sha1_state {
  u32 state[SHA1_DIGEST_SIZE / 4];
  u64 count;
  u8 buffer[SHA1_BLOCK_SIZE];
};
struct sha256_state {
  u32 state[SHA256_DIGEST_SIZE / 4];
  u64 count;
  u8 buf[SHA256_BLOCK_SIZE];
};
struct crypto_shash;
struct shash_desc {
  struct crypto_shash* tfm;
  void* __ctx[] __attribute__((aligned(16)));
};
struct shash_alg {
  int (*init)(struct shash_desc* desc);
  int (*update)(struct shash_desc* desc, const u8* data, unsigned int len);
  int (*final)(struct shash_desc* desc, u8* out);
  int (*finup)(struct shash_desc* desc, const u8* data, unsigned int len, u8* out);
  int (*digest)(struct shash_desc* desc, const u8* data, unsigned int len, u8* out);
  int (*export)(struct shash_desc* desc, void* out);
  int (*import)(struct shash_desc* desc, const void* in);
  int (*init_tfm)(struct crypto_shash* tfm);
  void (*exit_tfm)(struct crypto_shash* tfm);
  unsigned int descsize, digestsize, statesize;
  struct crypto_alg base;
};
struct crypto_shash {
  unsigned int descsize;
  struct shash_alg* alg;
  void* ctx;
};
static inline void* shash_desc_ctx(struct shash_desc* d) {
  return d->__ctx;
}
static inline void* crypto_shash_ctx(struct crypto_shash* t) {
  return t->ctx;
}
static inline const char* crypto_shash_alg_name(struct crypto_shash* t) {
  return t->alg->base.cra_name;
}
static inline unsigned int crypto_shash_descsize(struct crypto_shash* t) {
  return t->descsize;
}
static inline unsigned int crypto_shash_statesize(struct crypto_shash* t) {
  return t->alg->statesize;
}
struct crypto_shash* crypto_alloc_shash(const char* name, u32 type, u32 mask);
void crypto_free_shash(struct crypto_shash* tfm);
int crypto_shash_init(struct shash_desc* desc);
int crypto_shash_update(struct shash_desc* desc, const u8* data, unsigned int len);
int crypto_shash_final(struct shash_desc* desc, u8* out);
int crypto_shash_finup(struct shash_desc* desc, const u8* data, unsigned int len, u8* out);
int crypto_shash_export(struct shash_desc* desc, void* out);
int crypto_shash_import(struct shash_desc* desc, const void* in);
int crypto_register_shash(struct shash_alg* alg);
void crypto_unregister_shash(struct shash_alg* alg);

#endif
