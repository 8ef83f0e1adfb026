/* guest_sandbox: what a guest can reach of the host's files, descriptors and memory
 * (docs/reliability.md, "Sandbox"). Every operation prints one line: its name, its path and
 * the result, 0 (or the text read) or -errno.
 *
 * usage: sandbox OP... where OP is
 *   open:PATH          open for reading; "=text:" and the first line read
 *   create:PATH        open O_CREAT|O_WRONLY and write "guest\n"
 *   openat:DIR:REL     open DIR, then openat(that, REL)
 *   stat:PATH  lstat:PATH  access:PATH  readlink:PATH  statfs:PATH  chdir:PATH  mkdir:PATH
 *   unlink:PATH  chmod:PATH  rename:FROM:TO  symlink:TARGET:PATH  link:FROM:TO
 *   socket             socket(AF_INET, SOCK_STREAM)
 *   exec:PATH          execve PATH with the operations after this one as its arguments
 *                      (prints only when it fails)
 *   fds                the entries of /proc/self/fd/ (getdents64) and what each names
 *   dupfds             the same, read through a dup of the listing's descriptor
 *   race:DIR:OUTSIDE   a child swaps DIR/sub between DIR/real and a symbolic link to
 *                      OUTSIDE (renames) while this process opens DIR/sub/secret until
 *                      it read DIR/real/secret ("inside") 50 times and went through the
 *                      link 50 times (read OUTSIDE/secret or got EACCES):
 *                      "opened=some|none linked=some|none escaped=some|none"
 *   mmap:MB  brk:MB  mremap:MB   grow memory by MB MiB: 0 or -errno
 *   strayfds           every descriptor from 3 to 1023 the guest did not open itself
 *                      (none, natively, when the test passes none): write, fchmod 06777,
 *                      fstat, dup, fcntl F_GETFD, poll (POLLNVAL counts as EBADF),
 *                      select (below 64), epoll_ctl ADD and close each; "strayfds=none" or
 *                      "stray FD CALL=RESULT" for each call that did not fail with EBADF
 *   pause              read one byte from stdin (the test looks at the process meanwhile)
 *   forkstray          strayfds in a forked child, then "child=STATUS"
 *   unixbind:PATH      bind a socketpair's AF_UNIX datagram socket to PATH
 *   unixsend:PATH      sendto PATH from a socketpair's AF_UNIX datagram socket
 *   unixmsg:PATH       the same with sendmsg
 *   unixconnect:PATH   connect a socketpair's socket to PATH
 *   abstractsend:NAME  sendto the abstract name NAME (a leading NUL)
 *   inetsend:PORT      sendto 127.0.0.1:PORT from a socketpair's socket (EINVAL natively:
 *                      the wrong family for the socket) */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

static void result(const char *op, const char *path, long r) {
  printf("%s %s=%ld\n", op, path, r < 0 ? -(long)errno : r);
}

static void read_first_line(const char *op, const char *path, int fd) {
  char buf[128] = "";
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n < 0) {
    result(op, path, -1);
    return;
  }
  buf[n] = 0;
  buf[strcspn(buf, "\n")] = 0;
  printf("%s %s=text:%s\n", op, path, buf);
}

static void list_fds(int dup_first) {
  DIR *d = opendir("/proc/self/fd");
  if (d != NULL && dup_first) { /* the listing through a duplicate of its descriptor */
    int fd = dup(dirfd(d));
    closedir(d);
    d = fd < 0 ? NULL : fdopendir(fd);
  }
  if (d == NULL) {
    result("fds", "/proc/self/fd", -1);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char link[300], target[256];
    snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0) {
      printf("fd %s -> -%d\n", e->d_name, errno);
      continue;
    }
    target[n] = 0;
    /* The listing's own descriptor names /proc/<pid>/fd; print it as such. */
    printf("fd %s -> %s\n", e->d_name, atoi(e->d_name) == dirfd(d) ? "(the listing)" : target);
  }
  closedir(d);
}

static void race(const char *dir, const char *outside) {
  char sub[512], real[512], aside[512], secret[512];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  snprintf(real, sizeof real, "%s/real", dir);
  snprintf(aside, sizeof aside, "%s/link", dir);
  snprintf(secret, sizeof secret, "%s/sub/secret", dir);
  unlink(aside);
  if (symlink(outside, aside) != 0) {
    result("race-symlink", aside, -1);
    return;
  }
  int ready[2];
  if (pipe(ready) != 0) return;
  pid_t child = fork();
  if (child == 0) {
    /* Swap sub between the real directory and the link, forever (killed below); say so
     * after the first round. */
    for (int round = 0;; ++round) {
      rename(real, sub);
      rename(sub, real);
      rename(aside, sub);
      rename(sub, aside);
      if (round == 0) write(ready[1], "r", 1);
    }
  }
  char r;
  read(ready[0], &r, 1);
  /* Until both states were met 50 times: the inside file read, and the link hit (an escape
   * or EACCES); or 200000 tries. */
  int escaped = 0, opened = 0, denied = 0;
  for (int i = 0; i < 200000 && (opened < 50 || escaped + denied < 50); ++i) {
    int fd = open(secret, O_RDONLY);
    if (fd < 0) {
      denied += errno == EACCES;
      continue;
    }
    char buf[16] = "";
    if (read(fd, buf, sizeof buf - 1) > 0) {
      if (strncmp(buf, "outside", 7) == 0) ++escaped;
      if (strncmp(buf, "inside", 6) == 0) ++opened;
    }
    close(fd);
  }
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  printf("race opened=%s linked=%s escaped=%s\n", opened > 0 ? "some" : "none",
         escaped + denied > 0 ? "some" : "none", escaped > 0 ? "some" : "none");
}

static void grow(const char *how, long mb) {
  size_t len = (size_t)mb << 20;
  if (strcmp(how, "mmap") == 0) {
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mmap %ld=%d\n", mb, p == MAP_FAILED ? -errno : 0);
  } else if (strcmp(how, "brk") == 0) {
    void *p = sbrk((intptr_t)len);
    printf("brk %ld=%d\n", mb, p == (void *)-1 ? -errno : 0);
  } else {
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *q = mremap(p, 4096, len, MREMAP_MAYMOVE);
    printf("mremap %ld=%d\n", mb, q == MAP_FAILED ? -errno : 0);
  }
}

/* poll: a descriptor that is not open is POLLNVAL (-EBADF here). */
static long poll_one(int fd) {
  struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT};
  const long r = poll(&p, 1, 0);
  if (r == 1 && p.revents == POLLNVAL) {
    errno = EBADF;
    return -1;
  }
  return r < 0 ? r : p.revents;
}

/* select: EBADF for a number below the size of the descriptor table (64 in a process
 * that never had more) that is not open; Linux ignores the numbers past it (max_select_fd),
 * so those are not asked. */
static long select_one(int fd) {
  if (fd >= 64) {
    errno = EBADF;
    return -1;
  }
  fd_set rs, ws;
  FD_ZERO(&rs);
  FD_ZERO(&ws);
  FD_SET(fd, &rs);
  FD_SET(fd, &ws);
  struct timeval tv = {0, 0};
  return select(fd + 1, &rs, &ws, NULL, &tv);
}

static void stray_fds(void) {
  int found = 0;
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  for (int fd = 3; fd < 1024; ++fd) {
    if (fd == ep) continue;
    static const char *const calls[] = {"write", "fchmod", "fstat", "dup", "getfd",
                                        "poll", "select", "epoll_ctl", "close"};
    for (int k = 0; k < 9; ++k) {
      struct stat st;
      struct epoll_event ev = {.events = EPOLLIN};
      long r = 0;
      errno = 0;
      switch (k) {
        case 0: r = write(fd, "guest\n", 6); break;
        case 1: r = fchmod(fd, 06777); break;
        case 2: r = fstat(fd, &st); break;
        case 3: r = dup(fd); if (r >= 0) close((int)r); break;
        case 4: r = fcntl(fd, F_GETFD); break;
        case 5: r = poll_one(fd); break;
        case 6: r = select_one(fd); break;
        case 7: r = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev); break;
        case 8: r = close(fd); break;
      }
      if (r < 0 && errno == EBADF) continue;
      printf("stray %d %s=%ld\n", fd, calls[k], r < 0 ? -(long)errno : r);
      found = 1;
    }
  }
  if (!found) printf("strayfds=none\n");
}

/* One socket operation from a socketpair's AF_UNIX datagram socket. */
static void socket_op(const char *op, const char *arg) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0) {
    result(op, arg, -1);
    return;
  }
  struct sockaddr_un un = {.sun_family = AF_UNIX};
  struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7F000001)};
  struct sockaddr *addr = (struct sockaddr *)&un;
  socklen_t len = sizeof un;
  if (strcmp(op, "abstractsend") == 0) {
    strncpy(un.sun_path + 1, arg, sizeof un.sun_path - 2);
    len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(arg));
  } else if (strcmp(op, "inetsend") == 0) {
    in.sin_port = htons((uint16_t)atoi(arg));
    addr = (struct sockaddr *)&in;
    len = sizeof in;
  } else {
    strncpy(un.sun_path, arg, sizeof un.sun_path - 1);
  }
  long r;
  if (strcmp(op, "unixbind") == 0) {
    r = bind(sv[0], addr, len);
  } else if (strcmp(op, "unixconnect") == 0) {
    r = connect(sv[0], addr, len);
  } else if (strcmp(op, "unixmsg") == 0) {
    struct iovec iov = {.iov_base = "guest", .iov_len = 5};
    struct msghdr m = {.msg_name = addr, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1};
    r = sendmsg(sv[0], &m, 0);
  } else {
    r = sendto(sv[0], "guest", 5, 0, addr, len);
  }
  result(op, arg, r);
  close(sv[0]);
  close(sv[1]);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  for (int i = 1; i < argc; ++i) {
    char *op = argv[i];
    char *a = strchr(op, ':');
    char *b = NULL;
    if (a != NULL) {
      *a++ = 0;
      b = strchr(a, ':');
      if (b != NULL) *b++ = 0;
    }
    struct stat st;
    struct statfs sf;
    char buf[256];
    if (strcmp(op, "open") == 0) {
      int fd = open(a, O_RDONLY);
      if (fd < 0)
        result(op, a, -1);
      else
        read_first_line(op, a, fd);
    } else if (strcmp(op, "create") == 0) {
      int fd = open(a, O_CREAT | O_WRONLY | O_TRUNC, 0644);
      if (fd >= 0) {
        result(op, a, write(fd, "guest\n", 6) == 6 ? 0 : -1);
        close(fd);
      } else {
        result(op, a, -1);
      }
    } else if (strcmp(op, "openat") == 0) {
      int d = open(a, O_RDONLY | O_DIRECTORY);
      int fd = d < 0 ? -1 : openat(d, b, O_RDONLY);
      if (fd < 0)
        result(op, b, -1);
      else
        read_first_line(op, b, fd);
      if (d >= 0) close(d);
    } else if (strcmp(op, "stat") == 0) {
      result(op, a, stat(a, &st));
    } else if (strcmp(op, "lstat") == 0) {
      result(op, a, lstat(a, &st));
    } else if (strcmp(op, "access") == 0) {
      result(op, a, access(a, R_OK));
    } else if (strcmp(op, "readlink") == 0) {
      ssize_t n = readlink(a, buf, sizeof buf - 1);
      if (n < 0) {
        result(op, a, -1);
      } else {
        buf[n] = 0;
        printf("%s %s=text:%s\n", op, a, buf);
      }
    } else if (strcmp(op, "statfs") == 0) {
      result(op, a, statfs(a, &sf));
    } else if (strcmp(op, "chdir") == 0) {
      result(op, a, chdir(a));
    } else if (strcmp(op, "mkdir") == 0) {
      result(op, a, mkdir(a, 0755));
    } else if (strcmp(op, "unlink") == 0) {
      result(op, a, unlink(a));
    } else if (strcmp(op, "chmod") == 0) {
      result(op, a, chmod(a, 0600));
    } else if (strcmp(op, "rename") == 0) {
      result(op, b, rename(a, b));
    } else if (strcmp(op, "symlink") == 0) {
      result(op, b, symlink(a, b));
    } else if (strcmp(op, "link") == 0) {
      result(op, b, link(a, b));
    } else if (strcmp(op, "socket") == 0) {
      int s = socket(AF_INET, SOCK_STREAM, 0);
      result(op, "inet", s < 0 ? -1 : 0);
      if (s >= 0) close(s);
    } else if (strcmp(op, "exec") == 0) {
      argv[i] = a; /* the new image gets the operations after this one */
      execv(a, argv + i);
      result(op, a, -1);
    } else if (strcmp(op, "fds") == 0 || strcmp(op, "dupfds") == 0) {
      list_fds(op[0] == 'd');
    } else if (strcmp(op, "race") == 0) {
      race(a, b);
    } else if (strcmp(op, "strayfds") == 0) {
      stray_fds();
    } else if (strcmp(op, "pause") == 0) {
      result(op, "stdin", read(0, buf, 1));
    } else if (strcmp(op, "forkstray") == 0) {
      const pid_t child = fork();
      if (child == 0) {
        stray_fds();
        _exit(0);
      }
      int status = -1;
      waitpid(child, &status, 0);
      printf("child=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    } else if (strncmp(op, "unix", 4) == 0 || strcmp(op, "abstractsend") == 0 ||
               strcmp(op, "inetsend") == 0) {
      socket_op(op, a);
    } else if (strcmp(op, "mmap") == 0 || strcmp(op, "brk") == 0 || strcmp(op, "mremap") == 0) {
      grow(op, atol(a));
    } else {
      fprintf(stderr, "sandbox: unknown operation %s\n", op);
      return 2;
    }
  }
  return 0;
}
