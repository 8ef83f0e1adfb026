/* guest_timed_waits: the timeouts of select, pselect6, poll, ppoll and epoll_wait
 * (docs/emulator.md, "Sockets"). Each line is "<call> r=<result> ns=<CLOCK_MONOTONIC time
 * the call took>"; under padlock-emu with timing on that time is virtual.
 *
 * usage: timed_waits sleeps  each call on no descriptor with a 10 ms timeout (a sleep)
 *        timed_waits pipe    poll, select and epoll_wait on a pipe nobody writes, 20 ms
 *        timed_waits ready   poll on a pipe that holds a byte, 20 ms (ready at once)
 *        timed_waits thread  poll and select on no descriptor, 10 ms, and poll on a pipe
 *                            nobody writes, 20 ms, while a second thread computes
 *        timed_waits long    select and poll on no descriptor, 3 s each */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "guest_util.h"

static int64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void report(const char *name, int r, int64_t start) {
  printf("%s r=%d ns=%lld\n", name, r, (long long)(mono_ns() - start));
}

static void select_ms(const char *name, int fd, int ms) {
  fd_set set;
  FD_ZERO(&set);
  if (fd >= 0) FD_SET(fd, &set);
  struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
  const int64_t t0 = mono_ns();
  const int r = select(fd + 1, fd >= 0 ? &set : NULL, NULL, NULL, &tv);
  report(name, r, t0);
  printf("%s_left_us=%lld\n", name, (long long)tv.tv_sec * 1000000 + tv.tv_usec);
}

static void poll_ms(const char *name, int fd, int ms) {
  struct pollfd p = {fd, POLLIN, 0};
  const int64_t t0 = mono_ns();
  const int r = poll(fd >= 0 ? &p : NULL, fd >= 0 ? 1 : 0, ms);
  report(name, r, t0);
}

static void epoll_ms(const char *name, int fd, int ms) {
  const int ep = epoll_create1(0);
  if (ep < 0) die("epoll_create1");
  struct epoll_event ev = {.events = EPOLLIN, .data = {.fd = fd}};
  if (fd >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl");
  const int64_t t0 = mono_ns();
  const int r = epoll_wait(ep, &ev, 1, ms);
  report(name, r, t0);
  close(ep);
}

static void sleeps(void) {
  select_ms("select", -1, 10);
  struct timespec ts = {0, 10000000};
  int64_t t0 = mono_ns();
  int r = pselect(0, NULL, NULL, NULL, &ts, NULL);
  report("pselect", r, t0);
  poll_ms("poll", -1, 10);
  t0 = mono_ns();
  r = ppoll(NULL, 0, &ts, NULL);
  report("ppoll", r, t0);
  epoll_ms("epoll_wait", -1, 10);
}

static volatile int stop;

static void *compute(void *arg) {
  (void)arg;
  volatile uint32_t x = 1;
  while (!stop) x = x * 1103515245u + 12345u;
  return NULL;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  const char *mode = argc > 1 ? argv[1] : "sleeps";
  if (strcmp(mode, "sleeps") == 0) {
    sleeps();
  } else if (strcmp(mode, "pipe") == 0 || strcmp(mode, "ready") == 0) {
    int fds[2];
    if (pipe(fds) != 0) die("pipe");
    if (mode[0] == 'r') {
      if (write(fds[1], "x", 1) != 1) die("write");
      poll_ms("poll", fds[0], 20);
      select_ms("select", fds[0], 20);
    } else {
      poll_ms("poll", fds[0], 20);
      select_ms("select", fds[0], 20);
      epoll_ms("epoll_wait", fds[0], 20);
    }
  } else if (strcmp(mode, "thread") == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, compute, NULL) != 0) die("pthread_create");
    poll_ms("poll", -1, 10);
    select_ms("select", -1, 10);
    int fds[2];
    if (pipe(fds) != 0) die("pipe");
    poll_ms("poll_pipe", fds[0], 20);
    stop = 1;
    pthread_join(t, NULL);
  } else if (strcmp(mode, "long") == 0) {
    select_ms("select", -1, 3000);
    poll_ms("poll", -1, 3000);
  } else {
    die("unknown mode");
  }
  return 0;
}
