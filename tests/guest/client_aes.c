/* A client of a distribution's AES library: loads Debian's libgcrypt (libgcrypt.so.20) or
 * mbed TLS (libmbedcrypto.so.7) by soname, as an application linked against it would use
 * it, and runs AES requests from stdin through the library's public API. The library
 * decides whether PadLock does the work (its own CPUID detection); padlock-emu's --stats
 * and --check show what it issued (tests/integration/test_clients_checker.py,
 * docs/checker.md "Findings in real clients").
 *
 *   guest_client_aes_<arch> gcrypt|mbedtls < requests
 *
 * One request a line, one answer line each:
 *   ecb|cbc enc|dec KEYHEX IVHEX|- INHEX   ->  out=HEX
 *   random N  (gcrypt: gcry_randomize, strong) ->  random=HEX
 *   close     (dlclose; no request may follow)  ->  closed unloaded|still-loaded
 *             (whether the library left the process, asked with RTLD_NOLOAD)
 * The prototypes below are our own, from the libraries' documented APIs: the program needs
 * no -dev package, so one source builds for i386 and x86-64 alike.
 * Exit status: 0, 2 on a usage or library error, 3 when the library is not found. */
#include <dlfcn.h>
#include <stddef.h>

#include "guest_util.h"

#define MAX_DATA 4096

enum mode { MODE_ECB, MODE_CBC };

struct request {
  enum mode mode;
  int encrypt;
  uint8_t key[32];
  size_t key_len;
  uint8_t iv[16];
  uint8_t *in, *out; /* 16-byte aligned: mbed TLS's PadLock CBC needs that */
  size_t len;
};

/* One library: its soname, how to load its functions, how to run one request. */
struct backend {
  const char *name;
  const char *soname;
  void (*load)(void *lib);
  void (*crypt)(const struct request *r);
  void (*random)(uint8_t *buf, size_t n); /* NULL: the library has no such call here */
};

/* A function the program needs from the library, and where its address goes. */
struct symbol {
  const char *name;
  void **slot;
};

static void resolve(void *lib, const struct symbol *syms, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    *syms[i].slot = dlsym(lib, syms[i].name);
    if (!*syms[i].slot) {
      fprintf(stderr, "error: %s\n", dlerror());
      exit(2);
    }
  }
}

/* ---- libgcrypt 1.10 (gcrypt.h): GCRY_CIPHER_AES/AES192/AES256 = 7/8/9,
 * GCRY_CIPHER_MODE_ECB/CBC = 1/3, GCRYCTL_DISABLE_SECMEM = 37,
 * GCRYCTL_INITIALIZATION_FINISHED = 38, GCRY_STRONG_RANDOM = 1. */
typedef unsigned int gcry_error_t;
static struct {
  const char *(*check_version)(const char *);
  gcry_error_t (*control)(int, ...);
  gcry_error_t (*open)(void **, int, int, unsigned int);
  gcry_error_t (*setkey)(void *, const void *, size_t);
  gcry_error_t (*setiv)(void *, const void *, size_t);
  gcry_error_t (*encrypt)(void *, void *, size_t, const void *, size_t);
  gcry_error_t (*decrypt)(void *, void *, size_t, const void *, size_t);
  void (*close)(void *);
  void (*randomize)(void *, size_t, int);
} gcry;

static void gcry_load(void *lib) {
  const struct symbol syms[] = {
      {"gcry_check_version", (void **)&gcry.check_version},
      {"gcry_control", (void **)&gcry.control},
      {"gcry_cipher_open", (void **)&gcry.open},
      {"gcry_cipher_setkey", (void **)&gcry.setkey},
      {"gcry_cipher_setiv", (void **)&gcry.setiv},
      {"gcry_cipher_encrypt", (void **)&gcry.encrypt},
      {"gcry_cipher_decrypt", (void **)&gcry.decrypt},
      {"gcry_cipher_close", (void **)&gcry.close},
      {"gcry_randomize", (void **)&gcry.randomize},
  };
  resolve(lib, syms, sizeof syms / sizeof syms[0]);
  if (!gcry.check_version(NULL)) die("gcry_check_version");
  gcry.control(37, 0); /* no secure memory: it would need mlock */
  gcry.control(38, 0);
}

static void gcry_check(gcry_error_t e, const char *what) {
  if (e != 0) {
    fprintf(stderr, "error: %s: gcrypt error %u\n", what, e);
    exit(2);
  }
}

static void gcry_crypt(const struct request *r) {
  static const int algo_of_bytes[33] = {[16] = 7, [24] = 8, [32] = 9};
  void *h = NULL;
  gcry_check(gcry.open(&h, algo_of_bytes[r->key_len], r->mode == MODE_ECB ? 1 : 3, 0),
             "gcry_cipher_open");
  gcry_check(gcry.setkey(h, r->key, r->key_len), "gcry_cipher_setkey");
  if (r->mode == MODE_CBC) gcry_check(gcry.setiv(h, r->iv, 16), "gcry_cipher_setiv");
  gcry_check((r->encrypt ? gcry.encrypt : gcry.decrypt)(h, r->out, r->len, r->in, r->len),
             "gcry_cipher_encrypt/decrypt");
  gcry.close(h);
}

static void gcry_random(uint8_t *buf, size_t n) { gcry.randomize(buf, n, 1); }

/* ---- mbed TLS 2.28 (mbedtls/aes.h): MBEDTLS_AES_ENCRYPT = 1, MBEDTLS_AES_DECRYPT = 0.
 * The context is opaque here; 2.28's is 280 bytes on i386 and 288 on x86-64. */
static struct {
  void (*init)(void *);
  int (*setkey_enc)(void *, const uint8_t *, unsigned int);
  int (*setkey_dec)(void *, const uint8_t *, unsigned int);
  int (*crypt_ecb)(void *, int, const uint8_t *, uint8_t *);
  int (*crypt_cbc)(void *, int, size_t, uint8_t *, const uint8_t *, uint8_t *);
  void (*free)(void *);
} mbed;

static void mbed_load(void *lib) {
  const struct symbol syms[] = {
      {"mbedtls_aes_init", (void **)&mbed.init},
      {"mbedtls_aes_setkey_enc", (void **)&mbed.setkey_enc},
      {"mbedtls_aes_setkey_dec", (void **)&mbed.setkey_dec},
      {"mbedtls_aes_crypt_ecb", (void **)&mbed.crypt_ecb},
      {"mbedtls_aes_crypt_cbc", (void **)&mbed.crypt_cbc},
      {"mbedtls_aes_free", (void **)&mbed.free},
  };
  resolve(lib, syms, sizeof syms / sizeof syms[0]);
}

static void mbed_crypt(const struct request *r) {
  static uint8_t ctx[1024] __attribute__((aligned(16)));
  uint8_t iv[16];
  mbed.init(ctx);
  if ((r->encrypt ? mbed.setkey_enc : mbed.setkey_dec)(ctx, r->key, 8 * r->key_len) != 0)
    die("mbedtls_aes_setkey");
  if (r->mode == MODE_ECB) {
    for (size_t i = 0; i < r->len; i += 16)
      if (mbed.crypt_ecb(ctx, r->encrypt, r->in + i, r->out + i) != 0) die("mbedtls_aes_crypt_ecb");
  } else {
    memcpy(iv, r->iv, 16);
    if (mbed.crypt_cbc(ctx, r->encrypt, r->len, iv, r->in, r->out) != 0) die("mbedtls_aes_crypt_cbc");
  }
  mbed.free(ctx);
}

static const struct backend backends[] = {
    {"gcrypt", "libgcrypt.so.20", gcry_load, gcry_crypt, gcry_random},
    {"mbedtls", "libmbedcrypto.so.7", mbed_load, mbed_crypt, NULL},
};

static uint8_t data_in[MAX_DATA] __attribute__((aligned(16)));
static uint8_t data_out[MAX_DATA] __attribute__((aligned(16)));

static void run_aes(const struct backend *b, char **f, int nf) {
  struct request r = {.in = data_in, .out = data_out};
  if (nf != 5) die("expected: ecb|cbc enc|dec KEY IV|- IN");
  if (strcmp(f[0], "ecb") == 0)
    r.mode = MODE_ECB;
  else if (strcmp(f[0], "cbc") == 0)
    r.mode = MODE_CBC;
  else
    die("mode is ecb or cbc");
  r.encrypt = strcmp(f[1], "enc") == 0;
  r.key_len = parse_hex(f[2], r.key, sizeof r.key);
  if (r.key_len != 16 && r.key_len != 24 && r.key_len != 32) die("key is 16, 24 or 32 bytes");
  if (r.mode == MODE_CBC && parse_hex(f[3], r.iv, sizeof r.iv) != 16) die("iv is 16 bytes");
  r.len = parse_hex(f[4], data_in, sizeof data_in);
  if (r.len == 0 || r.len % 16 != 0) die("input is whole blocks");
  b->crypt(&r);
  print_hex("out", data_out, r.len);
}

static void run_random(const struct backend *b, char **f, int nf) {
  static uint8_t buf[MAX_DATA];
  size_t n = nf == 2 ? strtoul(f[1], NULL, 10) : 0;
  if (!b->random) die("this library has no random request here");
  if (n == 0 || n > sizeof buf) die("random N, 0 < N <= 4096");
  b->random(buf, n);
  print_hex("random", buf, n);
}

/* dlclose, as an application that unloads a plug-in before it exits: the checker still
 * names findings in the unmapped library (docs/checker.md, "How it works"). */
static void run_close(const struct backend *b, void **lib) {
  if (!*lib) die("closed already");
  if (dlclose(*lib) != 0) die("dlclose failed");
  *lib = NULL;
  void *again = dlopen(b->soname, RTLD_NOW | RTLD_NOLOAD);
  printf("closed %s\n", again ? "still-loaded" : "unloaded");
  if (again) dlclose(again);
}

int main(int argc, char **argv) {
  const struct backend *b = NULL;
  for (size_t i = 0; argc == 2 && i < sizeof backends / sizeof backends[0]; ++i)
    if (strcmp(argv[1], backends[i].name) == 0) b = &backends[i];
  if (!b) die("usage: client_aes gcrypt|mbedtls < requests");
  void *lib = dlopen(b->soname, RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "error: %s\n", dlerror());
    return 3;
  }
  b->load(lib);
  static char line[3 * MAX_DATA];
  while (fgets(line, sizeof line, stdin)) {
    char *f[8];
    int nf = 0;
    for (char *t = strtok(line, " \t\r\n"); t && nf < 8; t = strtok(NULL, " \t\r\n")) f[nf++] = t;
    if (nf == 0 || f[0][0] == '#') continue;
    if (strcmp(f[0], "close") == 0)
      run_close(b, &lib);
    else if (!lib)
      die("the library is closed");
    else if (strcmp(f[0], "random") == 0)
      run_random(b, f, nf);
    else
      run_aes(b, f, nf);
    fflush(stdout);
  }
  return 0;
}
