/* guest_proc_self: what a program learns about its processor and itself through /proc and
 * /sys (docs/emulator.md, "What the guest sees").
 *
 * usage: proc_self cat FILE | maps | auxv | nprocs
 *
 *   cat FILE  copies FILE to stdout
 *   maps      checks /proc/self/maps against the program's own addresses: prints
 *             "code=PERMS NAME" (the line holding main), "stack=NAME" (a local variable),
 *             "heap=NAME" (a fresh malloc block), "mmap=PERMS NAME" (a file this program
 *             maps with mmap: itself, at offset 0)
 *   auxv      compares /proc/self/auxv with getauxval: "auxv_pagesz=", "auxv_entry_ok=",
 *             "auxv_random_ok=", "auxv_end_ok="
 *   nprocs    sysconf(_SC_NPROCESSORS_ONLN) and _CONF: "onln=N conf=N" */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

static void cat(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    printf("open=-1 %d\n", errno);
    return;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stdout);
  fclose(f);
}

/* The maps line holding `addr`: its permissions and name ("" if anonymous). */
static int find(uintptr_t addr, char *perms, char *name) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (f == NULL) return 0;
  char line[512];
  int found = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    unsigned long long lo, hi, off, inode;
    unsigned maj, mnr;
    int pos = 0;
    if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &lo, &hi, perms, &off, &maj, &mnr,
               &inode, &pos) < 7)
      continue;
    if (addr >= lo && addr < hi) {
      strcpy(name, line + pos);
      name[strcspn(name, "\n")] = 0;
      found = 1;
      break;
    }
  }
  fclose(f);
  return found;
}

static void maps(const char *self) {
  char perms[8] = "", name[400] = "";
  find((uintptr_t)&maps, perms, name);
  printf("code=%s %s\n", perms, name);
  int local = 0;
  find((uintptr_t)&local, perms, name);
  printf("stack=%s\n", name);
  void *block = malloc(100);
  find((uintptr_t)block, perms, name);
  printf("heap=%s\n", name);
  int fd = open(self, O_RDONLY);
  void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  find((uintptr_t)m, perms, name);
  printf("mmap=%s %s\n", perms, name);
  munmap(m, 4096);
  name[0] = 0;
  printf("unmapped=%d\n", find((uintptr_t)m, perms, name) == 0 || strcmp(name, self) != 0);
  close(fd);
}

static void auxv(void) {
  unsigned long words[256];
  int fd = open("/proc/self/auxv", O_RDONLY);
  ssize_t n = read(fd, words, sizeof words);
  close(fd);
  unsigned long pagesz = 0, entry = 0, random = 0;
  int end_ok = 0;
  for (ssize_t i = 0; i + 1 < n / (ssize_t)sizeof(unsigned long); i += 2) {
    if (words[i] == AT_PAGESZ) pagesz = words[i + 1];
    if (words[i] == AT_ENTRY) entry = words[i + 1];
    if (words[i] == AT_RANDOM) random = words[i + 1];
    if (words[i] == AT_NULL) end_ok = (i + 2) * (ssize_t)sizeof(unsigned long) == n;
  }
  printf("auxv_pagesz=%lu\n", pagesz);
  printf("auxv_entry_ok=%d\n", entry != 0 && entry == getauxval(AT_ENTRY));
  printf("auxv_random_ok=%d\n", random != 0 && random == getauxval(AT_RANDOM));
  printf("auxv_end_ok=%d\n", end_ok);
}

int main(int argc, char **argv) {
  if (argc >= 3 && !strcmp(argv[1], "cat")) cat(argv[2]);
  else if (argc >= 2 && !strcmp(argv[1], "maps")) maps(argv[0]);
  else if (argc >= 2 && !strcmp(argv[1], "auxv")) auxv();
  else if (argc >= 2 && !strcmp(argv[1], "nprocs"))
    printf("onln=%ld conf=%ld\n", sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_NPROCESSORS_CONF));
  else {
    fprintf(stderr, "usage: proc_self cat FILE | maps | auxv | nprocs\n");
    return 2;
  }
  return 0;
}
