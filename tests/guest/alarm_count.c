/* guest_alarm_count: counts loop iterations until SIGALRM from setitimer(ITIMER_REAL), the
 * way `openssl speed` counts operations (docs/timing.md). With padlock-emu's virtual time the
 * timer runs on the modelled chip's cycle counter, so the count is deterministic and scales
 * with --mhz. Also reads clock_gettime/gettimeofday/clock() before and after, and checks a
 * nanosleep advances CLOCK_MONOTONIC by at least its duration.
 *
 * usage: alarm_count [MILLISECONDS]   (default 10)
 * Output: count=N elapsed_ns=E cpu_us=C sleep_ok=1 timer_count=M, and over the first loop
 * the other clocks: tod_us (gettimeofday), times_ticks (times(), user + system), tsc
 * (RDTSC cycles). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>

static volatile sig_atomic_t done;
static void on_alarm(int sig) {
  (void)sig;
  done = 1;
}

static uint64_t rdtsc(void) {
  uint32_t lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (uint64_t)hi << 32 | lo;
}

static int64_t tod_us(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

static long cpu_ticks(void) {
  struct tms t;
  times(&t);
  return (long)(t.tms_utime + t.tms_stime);
}

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv) {
  long ms = argc > 1 ? atol(argv[1]) : 10;
  struct sigaction sa = {0};
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);

  /* 1. setitimer + SIGALRM: count iterations of a fixed integer loop body. */
  struct itimerval it = {{0, 0}, {ms / 1000, (ms % 1000) * 1000}};
  const int64_t t0 = mono_ns();
  const clock_t c0 = clock();
  const int64_t u0 = tod_us();
  const long k0 = cpu_ticks();
  const uint64_t r0 = rdtsc();
  volatile uint32_t x = 1;
  unsigned long count = 0;
  setitimer(ITIMER_REAL, &it, NULL);
  while (!done) {
    x = x * 1664525u + 1013904223u;
    ++count;
  }
  const int64_t t1 = mono_ns();
  const clock_t c1 = clock();
  const int64_t u1 = tod_us();
  const long k1 = cpu_ticks();
  const uint64_t r1 = rdtsc();

  /* 2. nanosleep advances the clock by (at least) the request. */
  struct timespec req = {0, 5000000}; /* 5 ms */
  const int64_t s0 = mono_ns();
  nanosleep(&req, NULL);
  const int64_t s1 = mono_ns();

  /* 3. a POSIX timer (timer_create, SIGEV_SIGNAL SIGALRM). */
  done = 0;
  timer_t tid;
  struct sigevent sev = {0};
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGALRM;
  unsigned long tcount = 0;
  if (timer_create(CLOCK_MONOTONIC, &sev, &tid) == 0) {
    struct itimerspec its = {{0, 0}, {ms / 1000, (ms % 1000) * 1000000L}};
    timer_settime(tid, 0, &its, NULL);
    while (!done) {
      x = x * 1664525u + 1013904223u;
      ++tcount;
    }
    timer_delete(tid);
  }

  printf("count=%lu\n", count);
  printf("elapsed_ns=%lld\n", (long long)(t1 - t0));
  printf("cpu_us=%ld\n", (long)((c1 - c0) * (1000000L / CLOCKS_PER_SEC)));
  printf("sleep_ns=%lld\n", (long long)(s1 - s0));
  printf("sleep_ok=%d\n", s1 - s0 >= 5000000);
  printf("timer_count=%lu\n", tcount);
  printf("tod_us=%lld\n", (long long)(u1 - u0));
  printf("times_ticks=%ld\n", k1 - k0);
  printf("tsc=%llu\n", (unsigned long long)(r1 - r0));
  return 0;
}
