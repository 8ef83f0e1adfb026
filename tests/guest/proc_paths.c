/* guest_proc_paths: the /proc files served for the guest, reached by every spelling a path
 * can take (docs/reliability.md, "Sandbox", "Escape classes"). Native Linux answers each
 * spelling as the plain one; under the emulator each must reach the guest's served view,
 * never the emulator's own file.
 *
 * usage: proc_paths OP...
 *   mem     /proc/self/mem under each spelling: "mem LABEL=" the word at a guest variable
 *           (hex) or -errno
 *   maps    /proc/self/maps, auxv, exe (readlink): "FILE LABEL=same" when the spelling
 *   auxv    reads what the plain /proc/self/FILE reads, "=differs" or "=-errno" otherwise
 *   exe
 *   gdt     writes a call gate over the top pages of the address space through
 *           /proc/self/mem ("gdt write=-errno" or the count), then calls through it
 *           (i386: a far call to selector 0x7b); the process should die of SIGSEGV
 *   force   Linux's FOLL_FORCE rules through /proc/self/mem: "force none=" a read of a
 *           PROT_NONE page, "force private=" a write to a read-only private file mapping,
 *           "force shared=" a write to a read-only shared one (a value or -errno)
 *   walk    reads every file under /proc/self/ and /proc/self/task/<pid>/ and prints
 *           "walk NAME:" and each line of it (NAME: the path below /proc/self) */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64 /* pread at addresses above 2 GiB on i386 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile uint32_t secret = 0x12345678u;

/* The spellings of /proc/self/X. Each opens X by one path (`how` 0), relative to /proc
 * after chdir (1), through a directory descriptor of /proc/self (2) or of /proc (3), or
 * through a symbolic link made in the working directory to /proc/self/X (4) or to
 * /proc/self (5). */
struct Spelling {
  const char *label;
  const char *fmt; /* %s: the file name, %d: the pid */
  int how;
};
static const struct Spelling kSpellings[] = {
    {"plain", "/proc/self/%s", 0},
    {"double-slash", "/proc//self/%s", 0},
    {"leading-slashes", "//proc/self/%s", 0},
    {"dot", "/proc/self/./%s", 0},
    {"dotdot", "/proc/self/../self/%s", 0},
    {"trailing-dots", "/proc/./self/.//%s", 0},
    {"pid", "/proc/%d/%s", 0},
    {"task", "/proc/%d/task/%d/%s", 0},
    {"thread-self", "/proc/thread-self/%s", 0},
    {"root-link", "/proc/self/root/proc/self/%s", 0},
    {"relative", "self/%s", 1},
    {"dirfd-self", "%s", 2},
    {"dirfd-proc", "self/%s", 3},
    {"file-link", "%s", 4},
    {"dir-link", "%s", 5},
};
#define NSPELL (sizeof kSpellings / sizeof kSpellings[0])

/* The path of spelling `s` for FILE. */
static void spell(const struct Spelling *s, const char *file, char *path, size_t size) {
  const int pid = getpid();
  if (strstr(s->fmt, "%d/task/%d")) {
    snprintf(path, size, s->fmt, pid, pid, file);
  } else if (strstr(s->fmt, "%d")) {
    snprintf(path, size, s->fmt, pid, file);
  } else {
    snprintf(path, size, s->fmt, file);
  }
}

/* Opens FILE by spelling `s`: a descriptor or -errno. */
static int open_by(const struct Spelling *s, const char *file, int flags) {
  char path[256];
  spell(s, file, path, sizeof path);
  int fd = -1, err = 0;
  if (s->how == 0) {
    fd = open(path, flags);
  } else if (s->how == 1) {
    char cwd[512];
    if (getcwd(cwd, sizeof cwd) == NULL) return -errno;
    if (chdir("/proc") != 0) return -errno;
    fd = open(path, flags);
    err = errno;
    if (chdir(cwd) != 0) return -errno;
  } else if (s->how == 2 || s->how == 3) {
    const int dir = open(s->how == 2 ? "/proc/self" : "/proc", O_RDONLY | O_DIRECTORY);
    if (dir < 0) return -errno;
    fd = openat(dir, path, flags);
    err = errno;
    close(dir);
  } else {
    char target[256], link[64];
    snprintf(link, sizeof link, "link-%d", s->how);
    if (s->how == 4) {
      snprintf(target, sizeof target, "/proc/self/%s", file);
    } else {
      snprintf(target, sizeof target, "/proc/self");
    }
    unlink(link);
    if (symlink(target, link) != 0) return -errno;
    if (s->how == 5) snprintf(link + strlen(link), sizeof link - strlen(link), "/%s", file);
    fd = open(link, flags);
    err = errno;
    snprintf(link, sizeof link, "link-%d", s->how);
    unlink(link);
  }
  if (fd < 0) return -(err ? err : errno);
  return fd;
}

/* The whole file in `buf` (at most `cap` bytes): its length or -errno. */
static long slurp(int fd, char *buf, size_t cap) {
  size_t n = 0;
  for (;;) {
    const ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0) return -errno;
    if (r == 0 || n + (size_t)r == cap) return (long)(n + (size_t)r);
    n += (size_t)r;
  }
}

static void mem(void) {
  for (size_t i = 0; i < NSPELL; ++i) {
    const int fd = open_by(&kSpellings[i], "mem", O_RDONLY);
    if (fd < 0) {
      printf("mem %s=%d\n", kSpellings[i].label, fd);
      continue;
    }
    uint32_t v = 0;
    const ssize_t r = pread(fd, &v, 4, (off_t)(uintptr_t)&secret);
    if (r == 4) {
      printf("mem %s=%08x\n", kSpellings[i].label, v);
    } else {
      printf("mem %s=%d\n", kSpellings[i].label, r < 0 ? -errno : -EIO);
    }
    close(fd);
  }
}

static char ref[1 << 16], got[1 << 16];

static void compare(const char *file) {
  long nref;
  if (strcmp(file, "exe") == 0) {
    nref = readlink("/proc/self/exe", ref, sizeof ref);
  } else {
    char p[64];
    snprintf(p, sizeof p, "/proc/self/%s", file);
    const int f = open(p, O_RDONLY);
    nref = f < 0 ? -errno : slurp(f, ref, sizeof ref);
    if (f >= 0) close(f);
  }
  for (size_t i = 0; i < NSPELL; ++i) {
    long n;
    if (strcmp(file, "exe") == 0) {
      /* readlink through each spelling: a descriptor opened O_PATH|O_NOFOLLOW names the
       * link itself, so read the link by its path instead. */
      const struct Spelling *s = &kSpellings[i];
      if (s->how == 0) {
        char path[256];
        spell(s, file, path, sizeof path);
        n = readlink(path, got, sizeof got);
      } else if (s->how == 2 || s->how == 3) {
        const int dir = open(s->how == 2 ? "/proc/self" : "/proc", O_RDONLY | O_DIRECTORY);
        n = readlinkat(dir, s->how == 2 ? "exe" : "self/exe", got, sizeof got);
        close(dir);
      } else {
        continue; /* chdir and links: covered by open below */
      }
      if (n < 0) n = -errno;
    } else {
      const int fd = open_by(&kSpellings[i], file, O_RDONLY);
      if (fd < 0) {
        printf("%s %s=%d\n", file, kSpellings[i].label, fd);
        continue;
      }
      n = slurp(fd, got, sizeof got);
      close(fd);
    }
    if (n < 0) {
      printf("%s %s=%ld\n", file, kSpellings[i].label, n);
    } else {
      printf("%s %s=%s\n", file, kSpellings[i].label,
             n == nref && memcmp(ref, got, (size_t)n) == 0 ? "same" : "differs");
    }
  }
}

/* i386: a 386 call gate (type 0xC, DPL 3, present) to selector 0x23:0 in GDT entry 15,
 * written through /proc/self/mem at the top pages of the 4 GiB space (where the emulator
 * keeps its GDT; unmapped for an i386 process on Linux). */
static void gdt(void) {
  const int fd = open("/proc/self/mem", O_RDWR);
  if (fd < 0) {
    printf("gdt open=%d\n", -errno);
    return;
  }
  const uint8_t gate[8] = {0x00, 0x00, 0x23, 0x00, 0x00, 0xEC, 0x00, 0x00};
  long r = 0;
  for (uint64_t page = 0xFFFFE000u; page < 0x100000000ull; page += 0x1000) {
    const ssize_t w = pwrite(fd, gate, sizeof gate, (off_t)(page + 15 * 8));
    r = w < 0 ? -errno : w;
    printf("gdt write %llx=%ld\n", (unsigned long long)page, r);
    uint8_t back[8];
    const ssize_t rd = pread(fd, back, sizeof back, (off_t)page);
    printf("gdt read %llx=%ld\n", (unsigned long long)page, rd < 0 ? -(long)errno : (long)rd);
  }
  close(fd);
#if defined(__i386__)
  /* A far call through selector 0x7b (entry 15, RPL 3). */
  static const uint8_t far_ptr[6] = {0, 0, 0, 0, 0x7b, 0};
  __asm__ volatile("lcall *%0" ::"m"(far_ptr) : "memory");
  printf("gdt call returned\n");
#endif
}

static void force(void) {
  const int mem = open("/proc/self/mem", O_RDWR);
  uint8_t *none = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  none[0] = 0x5A;
  mprotect(none, 4096, PROT_NONE);
  uint8_t v = 0;
  ssize_t r = pread(mem, &v, 1, (off_t)(uintptr_t)none);
  printf("force none=%ld\n", r == 1 ? (long)v : -(long)errno);
  const int f = open("force-file", O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (f < 0 || ftruncate(f, 4096) != 0) {
    printf("force file=%d\n", -errno);
    return;
  }
  static const char *const kinds[] = {"private", "shared"};
  for (int k = 0; k < 2; ++k) {
    uint8_t *m = mmap(NULL, 4096, PROT_READ, k ? MAP_SHARED : MAP_PRIVATE, f, 0);
    r = pwrite(mem, "x", 1, (off_t)(uintptr_t)m);
    printf("force %s=%ld\n", kinds[k], r == 1 ? (long)m[0] : -(long)errno);
    munmap(m, 4096);
  }
  close(f);
  unlink("force-file");
  close(mem);
}

/* Every file under DIR (the path below /proc/self is PREFIX), one level of directories
 * deep, skipping the links that leave the process (cwd, root, exe's target, fd/N's
 * targets: the listing names them) and the task/ directory other than this thread. */
static void walk_dir(const char *dir, const char *prefix, int depth) {
  DIR *d = opendir(dir);
  if (d == NULL) {
    printf("walk %s: opendir=%d\n", prefix, -errno);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[1024], name[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    snprintf(name, sizeof name, "%s%s", prefix, e->d_name);
    if (strcmp(name, "cwd") == 0 || strcmp(name, "root") == 0) continue;
    if (strcmp(name, "mem") == 0 || strcmp(name, "pagemap") == 0 || strcmp(name, "clear_refs") == 0)
      continue; /* binary, or a write-only control */
    struct stat st;
    if (lstat(path, &st) != 0) {
      printf("walk %s: lstat=%d\n", name, -errno);
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      char target[512];
      const ssize_t n = readlink(path, target, sizeof target - 1);
      target[n < 0 ? 0 : n] = 0;
      printf("walk %s -> %s\n", name, n < 0 ? "(unreadable)" : target);
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (depth >= 2) continue;
      if (strcmp(name, "task") == 0) {
        char self[1100];
        snprintf(self, sizeof self, "%s/%d", path, getpid());
        snprintf(name, sizeof name, "task/%d/", getpid());
        walk_dir(self, name, depth + 1);
        continue;
      }
      if (strcmp(e->d_name, "net") == 0 || strcmp(e->d_name, "attr") == 0) continue;
      snprintf(name + strlen(name), sizeof name - strlen(name), "/");
      walk_dir(path, name, depth + 1);
      continue;
    }
    const int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
      printf("walk %s: open=%d\n", name, -errno);
      continue;
    }
    const long n = slurp(fd, got, sizeof got - 1);
    close(fd);
    if (n < 0) {
      printf("walk %s: read=%ld\n", name, n);
      continue;
    }
    got[n] = 0;
    printf("walk %s:\n", name);
    /* cmdline and environ are NUL-separated: their words first. */
    if (strcmp(e->d_name, "cmdline") == 0 || strcmp(e->d_name, "environ") == 0) {
      for (long i = 0; i < n; i += (long)strlen(got + i) + 1) printf("  word %s\n", got + i);
    }
    for (long i = 0; i < n; ++i) {
      if (got[i] == 0) got[i] = ' ';
    }
    for (char *line = strtok(got, "\n"); line != NULL; line = strtok(NULL, "\n")) {
      printf("  %s\n", line);
    }
  }
  closedir(d);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "mem") == 0) {
      mem();
    } else if (strcmp(argv[i], "gdt") == 0) {
      gdt();
    } else if (strcmp(argv[i], "force") == 0) {
      force();
    } else if (strcmp(argv[i], "walk") == 0) {
      walk_dir("/proc/self", "", 0);
    } else {
      compare(argv[i]);
    }
  }
  return 0;
}
