/* guest_signalfd_threads: signalfd waits while other threads run (docs/emulator.md,
 * "Sockets", "Threads"). Every thread blocks SIGUSR1 and SIGUSR2. In each case one thread
 * waits on a blocking signalfd (read, poll, epoll_wait) while another computes for a while
 * and then sends the signal, to the process (kill) or to the waiting thread (tgkill); the
 * wait can only end if the sender ran meanwhile. A signal for the process that every
 * thread blocks stays pending for the process, as on Linux: any thread's signalfd and
 * sigpending see it. Every line is what Linux prints too: a native run is the reference.
 * Usage: signalfd_threads [dup|alarm|busy_timer] (dup: the signalfd's duplicates read the
 * same signals; alarm: a lone thread polls a signalfd until an interval timer's SIGALRM;
 * busy_timer: a poll times out while a timer's signal that is not the signalfd's arrives). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "guest_util.h"

enum How { KILL, TGKILL };

struct Job {
  enum How how;
  int sig;
  pid_t target; /* TGKILL: the thread */
  volatile unsigned sum;
};

static int sfd;

/* Work the sender does before it signals: the waiter must have started waiting by then
 * in most interleavings, and the result is the same whichever ran first. */
static unsigned compute(void) {
  unsigned x = 1;
  for (unsigned i = 0; i < 300000; ++i) x = x * 1103515245u + 12345u + (x >> 7);
  return x;
}

static void *sender(void *arg) {
  struct Job *j = arg;
  j->sum = compute();
  if (j->how == KILL) {
    kill(getpid(), j->sig);
  } else {
    syscall(SYS_tgkill, getpid(), j->target, j->sig);
  }
  return NULL;
}

static void start(pthread_t *t, struct Job *j, enum How how, int sig) {
  j->how = how;
  j->sig = sig;
  j->target = (pid_t)syscall(SYS_gettid);
  if (pthread_create(t, NULL, sender, j) != 0) die("pthread_create");
}

static void show(const char *what, ssize_t n, const struct signalfd_siginfo *si) {
  printf("%s read=%zd signo=%u code=%d pid_ok=%d\n", what, n, si->ssi_signo, si->ssi_code,
         si->ssi_pid == (uint32_t)getpid());
}

static volatile int spinning;

/* A thread that waits in read while main computes and kills the process. */
static void *reader(void *arg) {
  struct signalfd_siginfo *si = arg;
  if (read(sfd, si, sizeof *si) != sizeof *si) die("reader read");
  return NULL;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGUSR1);
  sigaddset(&mask, SIGUSR2);
  if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0) die("sigprocmask");
  sfd = signalfd(-1, &mask, 0);
  if (sfd < 0) die("signalfd");
  const int dup_mode = argc > 1 && strcmp(argv[1], "dup") == 0;
  if (dup_mode) {
    /* Each duplicate is the same signalfd: read, poll and a new mask work on it. */
    const int d1 = dup(sfd);
    const int d2 = fcntl(sfd, F_DUPFD_CLOEXEC, 20);
    const int d3 = dup3(sfd, 30, 0);
    printf("dups=%d,%d,%d\n", d1 > 2, d2 >= 20, d3 == 30);
    close(sfd);
    raise(SIGUSR1);
    struct pollfd p = {d1, POLLIN, 0};
    const int pr = poll(&p, 1, 0);
    printf("dup poll=%d revents_in=%d\n", pr, (p.revents & POLLIN) != 0);
    struct signalfd_siginfo si;
    ssize_t n = read(d2, &si, sizeof si);
    show("dupfd", n, &si);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    printf("dup3 update=%d\n", signalfd(d3, &usr2, 0) == d3);
    raise(SIGUSR1);
    raise(SIGUSR2);
    n = read(d3, &si, sizeof si);
    show("dup3", n, &si);
    n = read(d1, &si, 4);
    printf("short=%zd einval=%d\n", n, errno == EINVAL);
    sigset_t pend;
    sigpending(&pend);
    printf("usr1_pending=%d\n", sigismember(&pend, SIGUSR1));
    return 0;
  }

  if (argc > 1 && strcmp(argv[1], "alarm") == 0) {
    /* A lone thread polls a signalfd for SIGALRM, blocked, until an interval timer fires. */
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    if (sigprocmask(SIG_BLOCK, &alrm, NULL) != 0) die("sigprocmask");
    const int afd = signalfd(-1, &alrm, 0);
    struct itimerval it = {{0, 0}, {0, 20000}};
    if (setitimer(ITIMER_REAL, &it, NULL) != 0) die("setitimer");
    struct pollfd p = {afd, POLLIN, 0};
    const int pr = poll(&p, 1, -1);
    printf("alarm poll=%d revents_in=%d\n", pr, (p.revents & POLLIN) != 0);
    struct signalfd_siginfo si;
    const ssize_t n = read(afd, &si, sizeof si);
    show("alarm", n, &si);
    return 0;
  }

  if (argc > 1 && strcmp(argv[1], "busy_timer") == 0) {
    /* poll with a timeout on a signalfd (SIGUSR1) and a pipe nobody writes, while a second
     * thread computes and a 2 ms interval timer's SIGALRM (blocked, not in the signalfd's
     * mask) keeps arriving: nothing becomes ready, and the poll times out. */
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    if (sigprocmask(SIG_BLOCK, &alrm, NULL) != 0) die("sigprocmask");
    int fds[2];
    if (pipe(fds) != 0) die("pipe");
    spinning = 1;
    pthread_t t;
    if (pthread_create(&t, NULL, spin_while, (void *)&spinning) != 0) die("pthread_create");
    struct itimerval it = {{0, 2000}, {0, 2000}};
    if (setitimer(ITIMER_REAL, &it, NULL) != 0) die("setitimer");
    struct pollfd p[2] = {{sfd, POLLIN, 0}, {fds[0], POLLIN, 0}};
    const int pr = poll(p, 2, 30);
    spinning = 0;
    pthread_join(t, NULL);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    sigset_t pend;
    sigpending(&pend);
    printf("busy_timer poll=%d alarm_pending=%d\n", pr, sigismember(&pend, SIGALRM));
    return 0;
  }

  pthread_t t;
  struct Job j;
  struct signalfd_siginfo si;

  /* read: kill to the process from a thread that blocks the signal too. */
  start(&t, &j, KILL, SIGUSR1);
  ssize_t n = read(sfd, &si, sizeof si);
  pthread_join(t, NULL);
  show("read_kill", n, &si);

  /* read: tgkill to the waiting thread. */
  start(&t, &j, TGKILL, SIGUSR2);
  n = read(sfd, &si, sizeof si);
  pthread_join(t, NULL);
  show("read_tgkill", n, &si);

  /* poll without a timeout, then read. */
  start(&t, &j, KILL, SIGUSR2);
  struct pollfd p = {sfd, POLLIN, 0};
  const int pr = poll(&p, 1, -1);
  printf("poll=%d revents_in=%d\n", pr, (p.revents & POLLIN) != 0);
  n = read(sfd, &si, sizeof si);
  pthread_join(t, NULL);
  show("poll_kill", n, &si);

  /* epoll_wait without a timeout, tgkill. */
  const int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data = {.fd = sfd}};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev) != 0) die("epoll_ctl");
  start(&t, &j, TGKILL, SIGUSR1);
  const int er = epoll_wait(ep, &ev, 1, -1);
  printf("epoll=%d fd_ok=%d\n", er, ev.data.fd == sfd);
  n = read(sfd, &si, sizeof si);
  pthread_join(t, NULL);
  show("epoll_tgkill", n, &si);

  /* The roles reversed: a second thread waits in read while main computes and kills. */
  struct signalfd_siginfo got;
  memset(&got, 0, sizeof got);
  if (pthread_create(&t, NULL, reader, &got) != 0) die("pthread_create");
  const unsigned sum = compute();
  kill(getpid(), SIGUSR1);
  pthread_join(t, NULL);
  show("thread_read", sizeof got, &got);

  /* A signal for the process that every thread blocks is the process's: another thread's
   * sigpending and signalfd see it. */
  kill(getpid(), SIGUSR2);
  if (pthread_create(&t, NULL, reader, &got) != 0) die("pthread_create");
  pthread_join(t, NULL);
  show("pending_for_process", sizeof got, &got);
  printf("sum_same=%d\n", sum == j.sum);
  return 0;
}
