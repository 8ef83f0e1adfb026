/* Small helpers shared by the guest programs: hex I/O, aligned static-pool allocation,
 * fatal errors. No PadLock here (see padlock.h). */
#ifndef PADLOCK_GUEST_UTIL_H
#define PADLOCK_GUEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Clears EFLAGS.AC (alignment check), which a guest's POPF may have set: Linux keeps it
 * for a signal handler and siglongjmp does not restore EFLAGS. */
static inline void clear_ac(void) {
#if defined(__x86_64__)
  __asm__ volatile("pushfq\n\tandq $~0x40000, (%%rsp)\n\tpopfq" ::: "memory", "cc");
#else
  __asm__ volatile("pushfl\n\tandl $~0x40000, (%%esp)\n\tpopfl" ::: "memory", "cc");
#endif
}

static inline void die(const char *msg) {
  fprintf(stderr, "error: %s\n", msg);
  exit(2);
}

/* A thread body that computes while the volatile int at `arg` is nonzero: a wait in
 * another thread must let it run. */
static inline void *spin_while(void *arg) {
  volatile int *on = arg;
  volatile unsigned x = 1;
  while (*on) x = x * 1103515245u + 12345u;
  return NULL;
}

static inline int hex_nibble(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Parses hex into out (at most cap bytes); returns the byte count. "-" is empty. */
static inline size_t parse_hex(const char *s, uint8_t *out, size_t cap) {
  if (strcmp(s, "-") == 0) return 0;
  size_t n = strlen(s);
  if (n % 2 != 0) die("odd-length hex argument");
  if (n / 2 > cap) die("hex argument too long");
  for (size_t i = 0; i < n / 2; ++i) {
    int hi = hex_nibble(s[2 * i]), lo = hex_nibble(s[2 * i + 1]);
    if (hi < 0 || lo < 0) die("bad hex digit");
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  return n / 2;
}

static inline void print_hex(const char *label, const uint8_t *p, size_t n) {
  printf("%s=", label);
  for (size_t i = 0; i < n; ++i) printf("%02x", p[i]);
  printf("\n");
}

/* A bump allocator over static storage. Static storage keeps every buffer below 4 GiB in
 * a non-PIE static binary (REP MONTMUL's 32-bit context pointers need that on x86-64) and
 * keeps the programs' memory layout independent of malloc. */
#ifndef GUEST_POOL_BYTES
#define GUEST_POOL_BYTES (4u << 20)
#endif
static uint8_t guest_pool[GUEST_POOL_BYTES] __attribute__((aligned(4096), unused));
static size_t guest_pool_used __attribute__((unused));

/* Returns n zeroed bytes at an address that is `align`-aligned plus `offset`. */
static inline void *pool_alloc(size_t n, size_t align, size_t offset) {
  size_t start = (guest_pool_used + align - 1) / align * align + offset;
  if (start + n > sizeof guest_pool) die("guest pool exhausted");
  guest_pool_used = start + n;
  memset(guest_pool + start, 0, n);
  return guest_pool + start;
}

#endif /* PADLOCK_GUEST_UTIL_H */
