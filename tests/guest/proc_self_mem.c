/* guest_proc_self_mem: /proc/self/mem must be the guest's memory, not the emulator's (Linux's
 * mem_rw: the file offset is the address; a write ignores page protections, as ptrace's
 * FOLL_FORCE does; an unmapped address gives EIO).
 *
 * usage: proc_self_mem
 * Prints: read=<hex> write=<hex> force=<hex> seek_read=<hex> unmapped_errno=<n> */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static volatile uint32_t secret = 0x12345678u;
static const uint32_t read_only = 0xCAFEF00Du; /* .rodata: a read-only page */

int main(void) {
  const int fd = open("/proc/self/mem", O_RDWR);
  if (fd < 0) {
    perror("open /proc/self/mem");
    return 2;
  }
  uint32_t v = 0;
  if (pread(fd, &v, 4, (off_t)(uintptr_t)&secret) != 4) perror("pread");
  printf("read=%08x\n", v);
  const uint32_t nv = 0x9ABCDEF0u;
  if (pwrite(fd, &nv, 4, (off_t)(uintptr_t)&secret) != 4) perror("pwrite");
  printf("write=%08x\n", secret);
  const uint32_t forced = 0x0BADC0DEu;
  if (pwrite(fd, &forced, 4, (off_t)(uintptr_t)&read_only) != 4) perror("pwrite read-only");
  printf("force=%08x\n", *(const volatile uint32_t *)&read_only);
  v = 0;
  if (lseek(fd, (off_t)(uintptr_t)&secret, SEEK_SET) < 0) perror("lseek");
  if (read(fd, &v, 4) != 4) perror("read");
  printf("seek_read=%08x\n", v);
  errno = 0;
  const ssize_t r = pread(fd, &v, 4, 0x1000);
  printf("unmapped_errno=%d\n", r < 0 ? errno : 0);
  close(fd);
  return 0;
}
