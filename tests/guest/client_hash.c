/* A client of GnuTLS's hash API: loads Debian's libgnutls.so.30 by soname, as an
 * application linked against it would, and hashes a message of each requested size with
 * the requested algorithms, in one call (gnutls_hash_fast) and in pieces of 1, 63 and 1000
 * bytes (gnutls_hash_init / gnutls_hash / gnutls_hash_deinit). GnuTLS decides whether
 * PadLock does the work (lib/accelerated/x86/x86-common.c: its CPUID checks, or
 * GNUTLS_CPUID_OVERRIDE); padlock-emu's --stats shows what it issued
 * (tests/integration/test_zhaoxin_clients.py, docs/zhaoxin.md "Clients").
 *
 *   guest_client_hash_<arch> ALG[,ALG...] SIZE...
 * ALG is sha1, sha256, sha384 or sha512. The message of SIZE bytes is byte
 * i = (i * 7 + 3) mod 256. Lines "ALG SIZE PIECE HEX": PIECE 0 is the one-call digest,
 * 1, 63 and 1000 the digest fed in pieces of that many bytes (the caller compares them).
 * The prototypes are our own, from GnuTLS's documented API (GNUTLS_DIG_SHA1/256/384/512 =
 * 3/6/7/8): no -dev package is needed, so one source builds for i386 and x86-64.
 * Exit status: 0, 2 on a library error, 3 when the library is not found. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "guest_util.h"

#define MAX_SIZE (1 << 20)

static struct {
  int (*global_init)(void);
  int (*hash_fast)(int, const void *, size_t, void *);
  int (*hash_init)(void **, int);
  int (*hash)(void *, const void *, size_t);
  void (*hash_deinit)(void *, void *);
} gt;

static const struct {
  const char *name;
  int id;
  size_t len;
} kAlgs[] = {{"sha1", 3, 20}, {"sha256", 6, 32}, {"sha384", 7, 48}, {"sha512", 8, 64}};

/* 0: one call (gnutls_hash_fast); else the piece size fed to gnutls_hash. */
static const size_t kPieces[] = {0, 1, 63, 1000};

static void load(void) {
  void *lib = dlopen("libgnutls.so.30", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "error: %s\n", dlerror());
    exit(3);
  }
  const struct {
    const char *name;
    void **slot;
  } syms[] = {
      {"gnutls_global_init", (void **)&gt.global_init},
      {"gnutls_hash_fast", (void **)&gt.hash_fast},
      {"gnutls_hash_init", (void **)&gt.hash_init},
      {"gnutls_hash", (void **)&gt.hash},
      {"gnutls_hash_deinit", (void **)&gt.hash_deinit},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; ++i) {
    *syms[i].slot = dlsym(lib, syms[i].name);
    if (!*syms[i].slot) {
      fprintf(stderr, "error: %s\n", dlerror());
      exit(2);
    }
  }
  if (gt.global_init() < 0) die("gnutls_global_init");
}

/* Whether `name` is one of the comma-separated `list`. */
static int listed(const char *list, const char *name) {
  const size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    const size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && !strncmp(p, name, n)) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

/* The digest of msg[0, size) fed in pieces of `piece` bytes. */
static void hash_pieces(int alg, const uint8_t *msg, size_t size, size_t piece, uint8_t *out) {
  void *h = NULL;
  if (gt.hash_init(&h, alg) < 0) die("gnutls_hash_init");
  for (size_t off = 0; off < size; off += piece) {
    const size_t n = size - off < piece ? size - off : piece;
    if (gt.hash(h, msg + off, n) < 0) die("gnutls_hash");
  }
  gt.hash_deinit(h, out);
}

int main(int argc, char **argv) {
  if (argc < 3) die("usage: client_hash ALG[,ALG...] SIZE...");
  const char *algs = argv[1];
  load();
  uint8_t *msg = malloc(MAX_SIZE);
  if (!msg) die("malloc");
  for (size_t i = 0; i < MAX_SIZE; ++i) msg[i] = (uint8_t)(i * 7 + 3);
  for (int a = 2; a < argc; ++a) {
    const size_t size = strtoul(argv[a], NULL, 10);
    if (size > MAX_SIZE) die("size too large");
    for (size_t k = 0; k < sizeof kAlgs / sizeof kAlgs[0]; ++k) {
      if (!listed(algs, kAlgs[k].name)) continue;
      for (size_t j = 0; j < sizeof kPieces / sizeof kPieces[0]; ++j) {
        uint8_t out[64];
        if (kPieces[j] == 0) {
          if (gt.hash_fast(kAlgs[k].id, msg, size, out) < 0) die("gnutls_hash_fast");
        } else {
          hash_pieces(kAlgs[k].id, msg, size, kPieces[j], out);
        }
        printf("%s %zu %zu ", kAlgs[k].name, size, kPieces[j]);
        for (size_t i = 0; i < kAlgs[k].len; ++i) printf("%02x", out[i]);
        printf("\n");
      }
    }
  }
  return 0;
}
