/* guest_process_vm: process_vm_readv and process_vm_writev on the process itself, whose
 * answers Linux gives by mm/process_vm_access.c (page protections apply on both sides:
 * no FOLL_FORCE; a transfer stops at the first page it cannot reach, with the bytes moved
 * so far or EFAULT), and ptrace on itself.
 *
 * usage: process_vm CASE...
 * Prints "CASE=R" per case, R the call's result or -errno, then what it moved where a case
 * moves bytes. Cases: read write scatter readonly-remote prot-none local-readonly partial
 * local-partial flags zero-local zero-remote no-pid system-page child ptrace-self. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

enum { PAGE = 4096 };

static volatile uint32_t secret = 0x12345678u;
static const uint32_t read_only = 0xCAFEF00Du; /* .rodata: a read-only page */

static long vm(pid_t pid, const struct iovec *l, unsigned long nl, const struct iovec *r,
               unsigned long nr, unsigned long flags, int write) {
  /* The raw call: the C library's wrappers add nothing, and i386 has no other spelling. */
  long v = syscall(write ? SYS_process_vm_writev : SYS_process_vm_readv, pid, l, nl, r, nr,
                   flags);
  return v < 0 ? -errno : v;
}

static void out(const char *c, long r) {
  printf("%s=%ld", c, r);
}

int main(int argc, char **argv) {
  const pid_t self = getpid();
  uint8_t *pages = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
  if (pages == MAP_FAILED) return 2;
  munmap(pages + 2 * PAGE, PAGE); /* pages[0..2 PAGE) mapped, the third not */
  for (int i = 0; i < 2 * PAGE; ++i) pages[i] = (uint8_t)(i * 7 + 1);
  for (int a = 1; a < argc; ++a) {
    const char *c = argv[a];
    uint8_t buf[64];
    memset(buf, 0, sizeof buf);
    if (strcmp(c, "read") == 0) {
      struct iovec l = {buf, 4}, r = {(void *)&secret, 4};
      out(c, vm(self, &l, 1, &r, 1, 0, 0));
      printf(" got=%02x%02x%02x%02x", buf[3], buf[2], buf[1], buf[0]);
    } else if (strcmp(c, "write") == 0) {
      uint32_t v = 0x9ABCDEF0u;
      struct iovec l = {&v, 4}, r = {(void *)&secret, 4};
      out(c, vm(self, &l, 1, &r, 1, 0, 1));
      printf(" secret=%08x", secret);
      secret = 0x12345678u;
    } else if (strcmp(c, "scatter") == 0) {
      /* remote: 5 bytes at pages+10 and 7 at pages+PAGE-3 (across the page boundary);
       * local: 3, 0, 9 bytes */
      struct iovec r[2] = {{pages + 10, 5}, {pages + PAGE - 3, 7}};
      struct iovec l[3] = {{buf, 3}, {buf + 8, 0}, {buf + 20, 9}};
      out(c, vm(self, l, 3, r, 2, 0, 0));
      printf(" got=");
      for (int i = 0; i < 32; ++i) printf("%02x", buf[i]);
    } else if (strcmp(c, "readonly-remote") == 0) {
      uint32_t v = 0x0BADC0DEu;
      struct iovec l = {&v, 4}, r = {(void *)&read_only, 4};
      out(c, vm(self, &l, 1, &r, 1, 0, 1));
      printf(" read_only=%08x", *(const volatile uint32_t *)&read_only);
    } else if (strcmp(c, "prot-none") == 0) {
      uint8_t *p = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      struct iovec l = {buf, 4}, r = {p, 4};
      out(c, vm(self, &l, 1, &r, 1, 0, 0));
      munmap(p, PAGE);
    } else if (strcmp(c, "local-readonly") == 0) {
      struct iovec l = {(void *)&read_only, 4}, r = {(void *)&secret, 4};
      out(c, vm(self, &l, 1, &r, 1, 0, 0));
      printf(" read_only=%08x", *(const volatile uint32_t *)&read_only);
    } else if (strcmp(c, "partial") == 0) {
      /* the last 8 bytes of the second page, then the unmapped third */
      struct iovec l = {buf, 32}, r = {pages + 2 * PAGE - 8, 32};
      out(c, vm(self, &l, 1, &r, 1, 0, 0));
      printf(" got=");
      for (int i = 0; i < 8; ++i) printf("%02x", buf[i]);
    } else if (strcmp(c, "local-partial") == 0) {
      /* the local buffer runs into the unmapped page after 16 bytes */
      struct iovec l = {pages + 2 * PAGE - 16, 32}, r = {(void *)&secret, 4};
      struct iovec r2[2] = {r, {pages, 28}};
      out(c, vm(self, &l, 1, r2, 2, 0, 0));
    } else if (strcmp(c, "flags") == 0) {
      struct iovec l = {buf, 4}, r = {(void *)&secret, 4};
      out(c, vm(self, &l, 1, &r, 1, 1, 0));
    } else if (strcmp(c, "zero-local") == 0) {
      struct iovec l = {buf, 0}, r = {(void *)0x10, 4};
      out(c, vm(self, &l, 1, &r, 1, 0, 0));
    } else if (strcmp(c, "zero-remote") == 0) {
      struct iovec l = {buf, 4}, r = {(void *)0x10, 0};
      out(c, vm(1, &l, 1, &r, 1, 0, 0));
    } else if (strcmp(c, "no-pid") == 0) {
      struct iovec l = {buf, 4}, r = {(void *)&secret, 4};
      out(c, vm(0x3FFFFFF0, &l, 1, &r, 1, 0, 0));
    } else if (strcmp(c, "system-page") == 0) {
      /* the emulator's GDT in a 32-bit guest; nothing is mapped there natively */
      struct iovec l = {buf, 4}, r = {(void *)(uintptr_t)0xFFFFE000u, 4};
      out(c, vm(self, &l, 1, &r, 1, 0, 0));
    } else if (strcmp(c, "child") == 0) {
      /* another process (a forked child, which Linux lets its parent read) */
      const pid_t child = fork();
      if (child == 0) {
        pause();
        _exit(0);
      }
      struct iovec l = {buf, 4}, r = {(void *)&secret, 4};
      out(c, vm(child, &l, 1, &r, 1, 0, 0));
      kill(child, SIGKILL);
      waitpid(child, NULL, 0);
    } else if (strcmp(c, "ptrace-self") == 0) {
      errno = 0;
      long v = ptrace(PTRACE_PEEKDATA, self, (void *)&secret, NULL);
      out(c, v == -1 && errno != 0 ? -errno : v);
    } else {
      fprintf(stderr, "process_vm: unknown case %s\n", c);
      return 2;
    }
    printf("\n");
  }
  return 0;
}
