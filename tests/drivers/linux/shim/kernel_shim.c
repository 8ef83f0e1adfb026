/* The kernel services behind kernel_shim.h for drivers/crypto/padlock-aes.c and
 * padlock-sha.c under the padlock-emu harness, and the glue_* entry points the tests call
 * (tests/drivers/linux/README.md). One CPU, no sleeping, no allocation failures. The
 * software parts (AES key expansion, the SHA generic fallback) are the guests' own
 * (tests/guest/aes_schedule.h, sha_soft.h). */
#include "kernel_shim.h"

#include "aes_schedule.h"
#include "sha_soft.h"

/* ---- libc the drivers reach ------------------------------------------------------------- */
void* memcpy(void* d, const void* s, size_t n) {
  u8* dp = d;
  const u8* sp = s;
  while (n--) *dp++ = *sp++;
  return d;
}
void* memmove(void* d, const void* s, size_t n) {
  u8* dp = d;
  const u8* sp = s;
  if (dp < sp) return memcpy(d, s, n);
  while (n--) dp[n] = sp[n];
  return d;
}
void* memset(void* d, int c, size_t n) {
  u8* dp = d;
  while (n--) *dp++ = (u8)c;
  return d;
}
static int str_eq(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
int printk(const char* fmt, ...) {
  (void)fmt;
  return 0;
}

/* A bump allocator: the harness maps the object's .bss. */
static u8 g_arena[1 << 20] __attribute__((aligned(64)));
static size_t g_used;
static void* alloc(size_t n) {
  g_used = ALIGN(g_used, 64);
  if (g_used + n > sizeof g_arena) return 0;
  void* p = g_arena + g_used;
  g_used += n;
  memset(p, 0, n);
  return p;
}

/* ---- CPU -------------------------------------------------------------------------------- */
static void cpuid(u32 leaf, u32 r[4]) {
  __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(0));
}
struct cpuinfo_x86* shim_cpu_data(int cpu) {
  static struct cpuinfo_x86 c;
  u32 r[4];
  (void)cpu;
  cpuid(1, r);
  c.x86 = (r[0] >> 8) & 0xF;
  c.x86_model = ((r[0] >> 4) & 0xF) | (((r[0] >> 16) & 0xF) << 4);
  c.x86_stepping = r[0] & 0xF;
  return &c;
}
int boot_cpu_has(int feature) {
  u32 r[4];
  if (feature / 32 != 5) return 0;
  cpuid(0xC0000000, r);
  if (r[0] < 0xC0000001) return 0;
  cpuid(0xC0000001, r);
  return (r[3] >> (feature % 32)) & 1;
}
const struct x86_cpu_id* x86_match_cpu(const struct x86_cpu_id* ids) {
  for (; ids->feature != 0; ++ids) {
    if (boot_cpu_has(ids->feature - 1)) return ids;
  }
  return 0;
}
int shim_fpu_depth;
static int shim_fpu_ts; /* TS as kernel_fpu_begin found it */
void kernel_fpu_begin(void) {
  if (shim_fpu_depth++ == 0) {
    shim_fpu_ts = shim_read_cr0_ts();
    shim_write_cr0_ts(0);
  }
}
void kernel_fpu_end(void) {
  if (--shim_fpu_depth == 0) shim_write_cr0_ts(shim_fpu_ts);
}
/* 1 when TS was set and is now clear: irq_ts_restore sets it again. */
int irq_ts_save(void) {
  if (!shim_read_cr0_ts()) return 0;
  shim_write_cr0_ts(0);
  return 1;
}
void irq_ts_restore(int ts_state) {
  if (ts_state) shim_write_cr0_ts(1);
}

/* Spins on the time-stamp counter for usecs x 2000 cycles (at least usecs microseconds up
 * to 2 GHz): the harness's clock advances with the instructions run, so the modelled RNG
 * accumulates bits meanwhile, as the chip's does while the kernel waits. */
void udelay(unsigned long usecs) {
  u32 lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  const u64 end = ((u64)hi << 32 | lo) + (u64)usecs * 2000;
  u64 now;
  do {
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    now = (u64)hi << 32 | lo;
  } while (now < end);
}

/* ---- registration ------------------------------------------------------------------------ */
static struct crypto_alg* g_ciphers[4];
static struct skcipher_alg* g_skciphers[4];
static struct shash_alg* g_shashes[4];
#define REGISTER(table, alg)                                      \
  do {                                                            \
    for (unsigned i = 0; i < sizeof table / sizeof table[0]; ++i) \
      if (!table[i]) {                                            \
        table[i] = alg;                                           \
        return 0;                                                 \
      }                                                           \
    return -ENOMEM;                                               \
  } while (0)
#define UNREGISTER(table, alg)                                  \
  for (unsigned i = 0; i < sizeof table / sizeof table[0]; ++i) \
    if (table[i] == alg) table[i] = 0
int crypto_register_alg(struct crypto_alg* alg) {
  REGISTER(g_ciphers, alg);
}
void crypto_unregister_alg(struct crypto_alg* alg) {
  UNREGISTER(g_ciphers, alg);
}
int crypto_register_skcipher(struct skcipher_alg* alg) {
  REGISTER(g_skciphers, alg);
}
void crypto_unregister_skcipher(struct skcipher_alg* alg) {
  UNREGISTER(g_skciphers, alg);
}
int crypto_register_shash(struct shash_alg* alg) {
  REGISTER(g_shashes, alg);
}
void crypto_unregister_shash(struct shash_alg* alg) {
  UNREGISTER(g_shashes, alg);
}

static struct hwrng* g_rngs[1];
int hwrng_register(struct hwrng* rng) {
  REGISTER(g_rngs, rng);
}
void hwrng_unregister(struct hwrng* rng) {
  UNREGISTER(g_rngs, rng);
}

/* ---- AES key expansion (lib/crypto/aes.c's aes_expandkey: words in memory order) ---------- */
int aes_expandkey(struct crypto_aes_ctx* ctx, const u8* in_key, unsigned int key_len) {
  if (key_len != 16 && key_len != 24 && key_len != 32) return -EINVAL;
  u8 sched[AES_SCHEDULE_BYTES];
  aes_encrypt_schedule(in_key, (int)key_len, sched);
  memcpy(ctx->key_enc, sched, sizeof ctx->key_enc);
  aes_decrypt_schedule(in_key, (int)key_len, sched);
  memcpy(ctx->key_dec, sched, sizeof ctx->key_dec);
  ctx->key_length = key_len;
  return 0;
}

/* ---- skcipher walk: segments of at most req->seg bytes; a misaligned segment goes through
 * an aligned bounce buffer, as the kernel's walk does for cra_alignmask ------------------- */
static u8 g_bounce[4096] __attribute__((aligned(16)));
static void walk_segment(struct skcipher_walk* w) {
  struct skcipher_request* r = w->req;
  const unsigned int done = r->cryptlen - w->total;
  unsigned int n = w->total;
  if (w->seg && n > w->seg) n = w->seg;
  const u8* src = r->src + done;
  u8* dst = r->dst + done;
  w->nbytes = n;
  if (((unsigned long)src | (unsigned long)dst) & 15) {
    if (n > sizeof g_bounce) n = w->nbytes = sizeof g_bounce;
    memcpy(g_bounce, src, n);
    w->src.virt.addr = w->dst.virt.addr = g_bounce;
  } else {
    w->src.virt.addr = (void*)src;
    w->dst.virt.addr = dst;
  }
}
int skcipher_walk_virt(struct skcipher_walk* w, struct skcipher_request* req, bool atomic) {
  (void)atomic;
  w->req = req;
  w->total = req->cryptlen;
  w->seg = req->seg;
  w->iv = req->iv;
  w->nbytes = 0;
  if (w->total) walk_segment(w);
  return 0;
}
int skcipher_walk_done(struct skcipher_walk* w, int err) {
  struct skcipher_request* r = w->req;
  const unsigned int processed = w->nbytes - (unsigned int)err;
  if (w->dst.virt.addr == g_bounce) memcpy(r->dst + (r->cryptlen - w->total), g_bounce, processed);
  w->total -= processed;
  w->nbytes = 0;
  if (w->total && processed) walk_segment(w);
  return 0;
}

/* ---- the generic SHA-1/SHA-256 fallback ("sha1-generic", "sha256-generic") -------------- */
static int gen_init(struct shash_desc* d) {
  struct sha256_state* s = shash_desc_ctx(d);
  memset(s, 0, sizeof *s);
  if (d->tfm->alg->digestsize == SHA1_DIGEST_SIZE) {
    static const u32 h[5] = {SHA1_H0, SHA1_H1, SHA1_H2, SHA1_H3, SHA1_H4};
    memcpy(s->state, h, sizeof h);
  } else {
    static const u32 h[8] = {SHA256_H0, SHA256_H1, SHA256_H2, SHA256_H3,
                             SHA256_H4, SHA256_H5, SHA256_H6, SHA256_H7};
    memcpy(s->state, h, sizeof h);
  }
  return 0;
}
/* sha1_state and sha256_state share the layout state[], count, buffer (state[5] vs [8]). */
static u32* gen_state(struct shash_desc* d) {
  return ((struct sha256_state*)shash_desc_ctx(d))->state;
}
static u64* gen_count(struct shash_desc* d) {
  return d->tfm->alg->digestsize == SHA1_DIGEST_SIZE
             ? &((struct sha1_state*)shash_desc_ctx(d))->count
             : &((struct sha256_state*)shash_desc_ctx(d))->count;
}
static u8* gen_buffer(struct shash_desc* d) {
  return d->tfm->alg->digestsize == SHA1_DIGEST_SIZE
             ? ((struct sha1_state*)shash_desc_ctx(d))->buffer
             : ((struct sha256_state*)shash_desc_ctx(d))->buf;
}
static void gen_block(struct shash_desc* d, const u8* p) {
  if (d->tfm->alg->digestsize == SHA1_DIGEST_SIZE)
    sha1_block(gen_state(d), p);
  else
    sha256_block(gen_state(d), p);
}
static int gen_update(struct shash_desc* d, const u8* data, unsigned int len) {
  u64* count = gen_count(d);
  u8* buf = gen_buffer(d);
  while (len--) {
    buf[*count % 64] = *data++;
    if (++*count % 64 == 0) gen_block(d, buf);
  }
  return 0;
}
static int gen_final(struct shash_desc* d, u8* out) {
  const u64 bits = *gen_count(d) * 8;
  u8 pad[72] = {0x80};
  const unsigned int used = (unsigned int)(*gen_count(d) % 64);
  const unsigned int padlen = used < 56 ? 56 - used : 120 - used;
  for (int i = 0; i < 8; ++i) pad[padlen + i] = (u8)(bits >> (56 - 8 * i));
  gen_update(d, pad, padlen + 8);
  const u32* st = gen_state(d);
  for (unsigned int i = 0; i < d->tfm->alg->digestsize / 4; ++i) {
    out[4 * i] = (u8)(st[i] >> 24), out[4 * i + 1] = (u8)(st[i] >> 16);
    out[4 * i + 2] = (u8)(st[i] >> 8), out[4 * i + 3] = (u8)st[i];
  }
  return 0;
}
static int gen_finup(struct shash_desc* d, const u8* data, unsigned int len, u8* out) {
  gen_update(d, data, len);
  return gen_final(d, out);
}
static int gen_export(struct shash_desc* d, void* out) {
  memcpy(out, shash_desc_ctx(d), d->tfm->alg->statesize);
  return 0;
}
static int gen_import(struct shash_desc* d, const void* in) {
  memcpy(shash_desc_ctx(d), in, d->tfm->alg->statesize);
  return 0;
}
static struct shash_alg g_generic[2] = {
    {.init = gen_init,
     .update = gen_update,
     .final = gen_final,
     .finup = gen_finup,
     .export = gen_export,
     .import = gen_import,
     .descsize = sizeof(struct sha1_state),
     .digestsize = SHA1_DIGEST_SIZE,
     .statesize = sizeof(struct sha1_state),
     .base = {.cra_name = "sha1", .cra_driver_name = "sha1-generic"}},
    {.init = gen_init,
     .update = gen_update,
     .final = gen_final,
     .finup = gen_finup,
     .export = gen_export,
     .import = gen_import,
     .descsize = sizeof(struct sha256_state),
     .digestsize = SHA256_DIGEST_SIZE,
     .statesize = sizeof(struct sha256_state),
     .base = {.cra_name = "sha256", .cra_driver_name = "sha256-generic"}},
};

struct crypto_shash* crypto_alloc_shash(const char* name, u32 type, u32 mask) {
  (void)type, (void)mask;
  for (int i = 0; i < 2; ++i) {
    if (str_eq(name, g_generic[i].base.cra_name)) {
      struct crypto_shash* t = alloc(sizeof *t);
      if (!t) return ERR_PTR(-ENOMEM);
      t->alg = &g_generic[i];
      t->descsize = g_generic[i].descsize;
      return t;
    }
  }
  return ERR_PTR(-ENODEV);
}
void crypto_free_shash(struct crypto_shash* tfm) {
  (void)tfm;
}
int crypto_shash_init(struct shash_desc* d) {
  return d->tfm->alg->init(d);
}
int crypto_shash_update(struct shash_desc* d, const u8* p, unsigned int n) {
  return d->tfm->alg->update(d, p, n);
}
int crypto_shash_final(struct shash_desc* d, u8* out) {
  return d->tfm->alg->final(d, out);
}
int crypto_shash_finup(struct shash_desc* d, const u8* p, unsigned int n, u8* out) {
  /* crypto/shash.c: an algorithm without finup gets update + final. */
  if (d->tfm->alg->finup) return d->tfm->alg->finup(d, p, n, out);
  return d->tfm->alg->update(d, p, n) ?: d->tfm->alg->final(d, out);
}
int crypto_shash_export(struct shash_desc* d, void* out) {
  return d->tfm->alg->export(d, out);
}
int crypto_shash_import(struct shash_desc* d, const void* in) {
  return d->tfm->alg->import(d, in);
}

/* ---- glue: what the tests call ----------------------------------------------------------- */
static struct crypto_alg* find_cipher(const char* name) {
  for (unsigned i = 0; i < 4; ++i)
    if (g_ciphers[i] && str_eq(g_ciphers[i]->cra_name, name)) return g_ciphers[i];
  return 0;
}
static struct skcipher_alg* find_skcipher(const char* name) {
  for (unsigned i = 0; i < 4; ++i)
    if (g_skciphers[i] && str_eq(g_skciphers[i]->base.cra_name, name)) return g_skciphers[i];
  return 0;
}
static struct shash_alg* find_shash(const char* name) {
  for (unsigned i = 0; i < 4; ++i)
    if (g_shashes[i] && str_eq(g_shashes[i]->base.cra_name, name)) return g_shashes[i];
  return 0;
}

/* A transform of a registered "aes", "ecb(aes)" or "cbc(aes)" with its key set; 0 when the
 * algorithm is not registered or setkey fails. */
void* glue_cipher_new(const char* name, const u8* key, unsigned int klen) {
  struct crypto_alg* a = find_cipher(name);
  struct skcipher_alg* s = a ? 0 : find_skcipher(name);
  if (!a && !s) return 0;
  struct crypto_alg* base = a ? a : &s->base;
  struct crypto_skcipher* t = alloc(sizeof *t);
  t->base.alg = base;
  t->base.ctx = alloc(base->cra_ctxsize + base->cra_alignmask + 1);
  const int err = a ? a->cra_u.cipher.cia_setkey(&t->base, key, klen) : s->setkey(t, key, klen);
  return err ? 0 : t;
}

/* One request: `len` bytes from src to dst in segments of `seg` bytes (0: one); iv is read
 * and updated (CBC). Returns the driver's result. */
int glue_cipher_crypt(void* h, int decrypt, u8* iv, const u8* src, u8* dst, unsigned int len,
                      unsigned int seg) {
  struct crypto_skcipher* t = h;
  struct crypto_alg* a = find_cipher(t->base.alg->cra_name);
  if (a == t->base.alg) {
    for (unsigned int off = 0; off < len; off += AES_BLOCK_SIZE) {
      if (decrypt)
        a->cra_u.cipher.cia_decrypt(&t->base, dst + off, src + off);
      else
        a->cra_u.cipher.cia_encrypt(&t->base, dst + off, src + off);
    }
    return 0;
  }
  struct skcipher_alg* s = find_skcipher(t->base.alg->cra_name);
  struct skcipher_request req = {t, len, seg, iv, src, dst};
  return decrypt ? s->decrypt(&req) : s->encrypt(&req);
}

/* A transform of `a` (init_tfm run) and a descriptor for it: a registered algorithm
 * (glue_shash_new) or one the driver did not register (tests of the raw paths). */
void* glue_shash_new_alg(struct shash_alg* a) {
  struct crypto_shash* t = alloc(sizeof *t);
  t->alg = a;
  t->descsize = a->descsize;
  t->ctx = alloc(a->base.cra_ctxsize + 16);
  if (a->init_tfm && a->init_tfm(t)) return 0;
  struct shash_desc* d = alloc(sizeof *d + t->descsize + 16);
  d->tfm = t;
  return d;
}

/* A registered "sha1"/"sha256" transform and its descriptor; 0 when not registered. */
void* glue_shash_new(const char* name) {
  struct shash_alg* a = find_shash(name);
  return a ? glue_shash_new_alg(a) : 0;
}

/* How a hash is fed, as crypto/testmgr.c's configurations do: */
enum { kDigest, kInitUpdateFinal, kInitUpdateFinup, kExportImport };
/* Hashes `len` bytes into out (the digest). seg > 0: updates of at most seg bytes. */
int glue_shash(void* h, int how, const u8* data, unsigned int len, unsigned int seg, u8* out) {
  struct shash_desc* d = h;
  struct shash_alg* a = d->tfm->alg;
  static u8 state[256] __attribute__((aligned(16)));
  int err = a->init(d);
  if (err) return err;
  if (how == kDigest) return crypto_shash_finup(d, data, len, out);
  unsigned int off = 0;
  const unsigned int tail = how == kInitUpdateFinup && len ? (seg && seg < len ? seg : len) : 0;
  while (off < len - tail) {
    unsigned int n = len - tail - off;
    if (seg && n > seg) n = seg;
    if ((err = a->update(d, data + off, n))) return err;
    off += n;
    if (how == kExportImport &&
        ((err = a->export(d, state)) || (err = a->init(d)) || (err = a->import(d, state))))
      return err;
  }
  return how == kInitUpdateFinup ? crypto_shash_finup(d, data + off, tail, out) : a->final(d, out);
}

/* The registered hwrng: its init, then `n` reads as drivers/char/hw_random/core.c makes
 * them (data_present with wait, then data_read), each giving `bytes` bytes of the datum,
 * into out. Returns the number of reads with data, or -1 when init fails. */
int glue_rng_read(u8* out, unsigned int n, unsigned int bytes) {
  struct hwrng* rng = g_rngs[0];
  if (!rng || (rng->init && rng->init(rng))) return -1;
  unsigned int got = 0;
  for (unsigned int i = 0; i < n; ++i) {
    if (!rng->data_present(rng, 1)) continue;
    u32 datum;
    rng->data_read(rng, &datum);
    memcpy(out + bytes * got++, &datum, bytes);
  }
  return (int)got;
}
