/* guest_timerfd: timerfd on the guest's clock (docs/emulator.md, "Sockets"). Each case
 * arms a timerfd, waits for it (read, poll, epoll_wait, select; alone and while a second
 * thread computes) and prints the expirations read and the CLOCK_MONOTONIC time that
 * passed, in microseconds, which tests/integration/test_timerfd.py checks against the
 * timer's settings. Also: TFD_TIMER_ABSTIME on CLOCK_REALTIME and CLOCK_MONOTONIC, an
 * interval's expiry count, timerfd_gettime, a non-blocking read before the expiry, and
 * ppoll's signal mask (a signal it unblocks ends the wait with EINTR and its handler runs).
 * Usage: timerfd [alone] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "guest_util.h"

static int64_t now_us(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void arm(int fd, int flags, int64_t value_us, int64_t interval_us) {
  struct itimerspec its = {{interval_us / 1000000, interval_us % 1000000 * 1000},
                           {value_us / 1000000, value_us % 1000000 * 1000}};
  if (timerfd_settime(fd, flags, &its, NULL) != 0) die("timerfd_settime");
}

static uint64_t read_ticks(int fd) {
  uint64_t ticks = 0;
  if (read(fd, &ticks, sizeof ticks) != sizeof ticks) die("read");
  return ticks;
}

static volatile int spinning;

static volatile int handled;
static void on_usr1(int sig) {
  (void)sig;
  handled = 1;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  const int fd = timerfd_create(CLOCK_MONOTONIC, 0);
  if (fd < 0) die("timerfd_create");

  /* One shot, relative, read blocks. */
  int64_t t0 = now_us(CLOCK_MONOTONIC);
  arm(fd, 0, 50000, 0);
  uint64_t ticks = read_ticks(fd);
  printf("read ticks=%llu us=%lld\n", (unsigned long long)ticks,
         (long long)(now_us(CLOCK_MONOTONIC) - t0));

  /* Non-blocking read before the expiry; timerfd_gettime while armed and after. */
  const int nfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  arm(nfd, 0, 30000, 0);
  uint64_t v;
  ssize_t n = read(nfd, &v, sizeof v);
  printf("nonblock read=%zd eagain=%d\n", n, errno == EAGAIN);
  n = read(nfd, &v, 4);
  printf("short read=%zd einval=%d\n", n, errno == EINVAL);
  struct itimerspec cur;
  timerfd_gettime(nfd, &cur);
  printf("gettime armed_ms=%lld\n", (long long)(cur.it_value.tv_sec * 1000 + cur.it_value.tv_nsec / 1000000));
  arm(nfd, 0, 0, 0);
  timerfd_gettime(nfd, &cur);
  printf("gettime disarmed=%d\n", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0);

  /* An interval: 10 ms, then 35 ms of sleep: three expirations, the next 5 ms away. */
  arm(fd, 0, 10000, 10000);
  struct timespec nap = {0, 35000000};
  nanosleep(&nap, NULL);
  timerfd_gettime(fd, &cur);
  ticks = read_ticks(fd);
  printf("interval ticks=%llu next_ms=%lld interval_ms=%lld\n", (unsigned long long)ticks,
         (long long)((cur.it_value.tv_nsec + 500000) / 1000000),
         (long long)(cur.it_interval.tv_nsec / 1000000));
  t0 = now_us(CLOCK_MONOTONIC);
  ticks = read_ticks(fd);
  printf("interval next ticks=%llu us=%lld\n", (unsigned long long)ticks,
         (long long)(now_us(CLOCK_MONOTONIC) - t0));
  arm(fd, 0, 0, 0);

  /* Absolute on CLOCK_REALTIME, waited for by poll. */
  const int rfd = timerfd_create(CLOCK_REALTIME, 0);
  t0 = now_us(CLOCK_MONOTONIC);
  arm(rfd, TFD_TIMER_ABSTIME, now_us(CLOCK_REALTIME) + 30000, 0);
  struct pollfd p = {rfd, POLLIN, 0};
  const int pr = poll(&p, 1, -1);
  printf("abs_realtime poll=%d us=%lld ticks=%llu\n", pr, (long long)(now_us(CLOCK_MONOTONIC) - t0),
         (unsigned long long)read_ticks(rfd));

  /* Absolute on CLOCK_MONOTONIC in the past: expires at once. */
  timerfd_settime(fd, TFD_TIMER_ABSTIME,
                  &(struct itimerspec){{0, 0}, {now_us(CLOCK_MONOTONIC) / 1000000 - 1, 0}}, NULL);
  printf("abs_past ticks=%llu\n", (unsigned long long)read_ticks(fd));

  /* epoll_wait with a timeout longer than the timer; select with one shorter. */
  const int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data = {.fd = fd}};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl");
  t0 = now_us(CLOCK_MONOTONIC);
  arm(fd, 0, 20000, 0);
  const int er = epoll_wait(ep, &ev, 1, 1000);
  printf("epoll=%d us=%lld ticks=%llu\n", er, (long long)(now_us(CLOCK_MONOTONIC) - t0),
         (unsigned long long)read_ticks(fd));
  arm(fd, 0, 40000, 0);
  fd_set set;
  FD_ZERO(&set);
  FD_SET(fd, &set);
  struct timeval tv = {0, 15000};
  t0 = now_us(CLOCK_MONOTONIC);
  const int sr = select(fd + 1, &set, NULL, NULL, &tv);
  printf("select_timeout=%d us=%lld\n", sr, (long long)(now_us(CLOCK_MONOTONIC) - t0));
  arm(fd, 0, 0, 0);

  /* ppoll's signal mask: SIGUSR1, blocked and pending, is unblocked by the wait's mask:
   * the wait ends with EINTR, the handler runs, and the old mask is back afterwards. */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  sigset_t usr1, old, none;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, &old);
  raise(SIGUSR1);
  sigemptyset(&none);
  arm(fd, 0, 20000, 0);
  struct timespec forever = {5, 0};
  p.fd = fd;
  const int ppr = ppoll(&p, 1, &forever, &none);
  const int ppoll_errno = errno;
  sigset_t after;
  sigprocmask(SIG_BLOCK, NULL, &after);
  printf("ppoll_mask=%d eintr=%d handled=%d still_blocked=%d\n", ppr, ppoll_errno == EINTR,
         handled, sigismember(&after, SIGUSR1));
  /* With the mask left blocking SIGUSR1, a pending SIGUSR1 does not end the wait. */
  raise(SIGUSR1);
  handled = 0;
  const int ppb = ppoll(&p, 1, &forever, &usr1);
  printf("ppoll_blocked=%d handled=%d ticks=%llu\n", ppb, handled,
         (unsigned long long)read_ticks(fd));
  sigprocmask(SIG_SETMASK, &old, NULL);
  printf("after_unblock handled=%d\n", handled);

  /* "alone": not the threaded cases (under --timing off a spinning thread keeps the CPU:
   * its slice ends only as PadLock work moves the clock). */
  if (argc > 1 && strcmp(argv[1], "alone") == 0) return 0;

  /* While a second thread computes: read and poll wait in the scheduler. */
  spinning = 1;
  pthread_t t;
  if (pthread_create(&t, NULL, spin_while, (void *)&spinning) != 0) die("pthread_create");
  t0 = now_us(CLOCK_MONOTONIC);
  arm(fd, 0, 20000, 0);
  ticks = read_ticks(fd);
  printf("thread read ticks=%llu us=%lld\n", (unsigned long long)ticks,
         (long long)(now_us(CLOCK_MONOTONIC) - t0));
  t0 = now_us(CLOCK_MONOTONIC);
  arm(fd, 0, 25000, 0);
  p.fd = fd;
  const int tp = poll(&p, 1, -1);
  printf("thread poll=%d us=%lld ticks=%llu\n", tp, (long long)(now_us(CLOCK_MONOTONIC) - t0),
         (unsigned long long)read_ticks(fd));
  spinning = 0;
  pthread_join(t, NULL);
  return 0;
}
