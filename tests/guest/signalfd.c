/* guest_signalfd: signalfd and signalfd4 (docs/emulator.md, "Sockets").
 * The process blocks SIGUSR1 and SIGTERM, makes a signalfd for them, raises one and kills
 * itself with the other, and sees them through poll, select, epoll_wait and read; then it
 * changes the descriptor's mask, and blocks in read until an interval timer's SIGALRM.
 * Every line is what Linux prints too: a native run is the reference. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <unistd.h>

#include "guest_util.h"

static int poll_in(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  const int r = poll(&p, 1, 0);
  return r == 1 ? (p.revents & POLLIN) != 0 : r;
}

static int select_in(int fd) {
  fd_set set;
  FD_ZERO(&set);
  FD_SET(fd, &set);
  struct timeval tv = {0, 0};
  return select(fd + 1, &set, NULL, NULL, &tv);
}

static void show(const char *what, const struct signalfd_siginfo *si) {
  printf("%s signo=%u code=%d pid_ok=%d uid_ok=%d\n", what, si->ssi_signo, si->ssi_code,
         si->ssi_pid == (uint32_t)getpid() || (si->ssi_code > 0 && si->ssi_pid == 0),
         si->ssi_uid == (uint32_t)getuid());
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  printf("size=%zu\n", sizeof(struct signalfd_siginfo));
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGUSR1);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGUSR2);
  sigaddset(&mask, SIGALRM);
  if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0) die("sigprocmask");
  sigdelset(&mask, SIGUSR2);
  sigdelset(&mask, SIGALRM);
  const int fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) die("signalfd");
  printf("cloexec=%d nonblock=%d\n", (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0,
         (fcntl(fd, F_GETFL) & O_NONBLOCK) != 0);
  struct signalfd_siginfo si[2];
  ssize_t n = read(fd, si, sizeof si);
  printf("empty read=%zd eagain=%d", n, errno == EAGAIN);
  printf(" poll=%d", poll_in(fd));
  printf(" select=%d\n", select_in(fd));
  n = read(fd, si, sizeof si[0] - 1);
  printf("short read=%zd einval=%d\n", n, errno == EINVAL);
  raise(SIGUSR1);
  kill(getpid(), SIGTERM);
  const int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data = {.fd = fd}};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl");
  printf("pending poll=%d", poll_in(fd));
  printf(" select=%d", select_in(fd));
  printf(" epoll=%d\n", epoll_wait(ep, &ev, 1, 0));
  printf("read=%zd\n", read(fd, si, sizeof si));
  show("first", &si[0]);
  show("second", &si[1]);
  printf("after poll=%d", poll_in(fd));
  printf(" select=%d\n", select_in(fd));
  /* signalfd on the descriptor itself: a new mask (SIGUSR2 only). */
  sigset_t usr2;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  printf("update=%d\n", signalfd(fd, &usr2, 0) == fd);
  raise(SIGUSR1);
  printf("usr1 poll=%d\n", poll_in(fd));
  raise(SIGUSR2);
  printf("usr2 poll=%d", poll_in(fd));
  printf(" read=%zd\n", read(fd, si, sizeof si));
  show("usr2", &si[0]);
  const int r = signalfd(ep, &usr2, 0);
  printf("not_signalfd=%d einval=%d\n", r, errno == EINVAL);
  /* A blocking signalfd4 read that waits for SIGALRM from an interval timer. */
  sigset_t alrm;
  sigemptyset(&alrm);
  sigaddset(&alrm, SIGALRM);
  const int bfd = signalfd(-1, &alrm, 0);
  struct itimerval it = {{0, 0}, {0, 20000}};
  if (setitimer(ITIMER_REAL, &it, NULL) != 0) die("setitimer");
  printf("blocking read=%zd\n", read(bfd, si, sizeof si));
  show("alarm", &si[0]);
  /* SIGUSR1 is still pending, for the process: sigpending says so. */
  sigset_t pend;
  sigpending(&pend);
  printf("usr1_pending=%d\n", sigismember(&pend, SIGUSR1));
  return 0;
}
