/* guest_waits: system calls that block on the host while another thread of the process
 * must run for them to end (docs/emulator.md, "Threads", "Host waits"). If the emulator
 * made such a call for real, every guest thread would stop with it and the run would never
 * end; each mode prints results that Linux gives too, so a native run is the reference.
 *
 * usage: waits write        main writes 1 MiB into a pipe that a second thread reads
 *        waits write_whole  the same, and says in how many write calls (Linux: one)
 *        waits send         the same over an AF_UNIX stream socketpair (send/recv)
 *        waits wait4        main waits for a child that exits only once a second thread,
 *                           which sleeps first, has written it a byte
 *        waits waitid       the same with waitid(P_PID)
 *        waits sigsuspend   main in sigsuspend until a second thread sends it SIGUSR1
 *        waits pause        the same with pause
 *        waits sigtimedwait a pending signal taken at once, a timeout, and main waiting for
 *                           a blocked SIGUSR1 that a second thread sends
 *        waits connect      main connects to an AF_UNIX listener whose backlog is full
 *                           until a second thread, which sleeps first, accepts */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_util.h"

enum { kTotal = 1 << 20 };

static int fds[2];
static uint32_t read_sum;
static size_t read_total;

static uint32_t fnv(uint32_t h, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

static void *drain(void *arg) {
  const int use_recv = arg != NULL;
  static uint8_t buf[8192];
  read_sum = 2166136261u;
  while (read_total < kTotal) {
    const ssize_t n = use_recv ? recv(fds[0], buf, sizeof buf, 0) : read(fds[0], buf, sizeof buf);
    if (n <= 0) die("read");
    read_sum = fnv(read_sum, buf, (size_t)n);
    read_total += (size_t)n;
  }
  return NULL;
}

/* write / send: the pipe (64 KiB) or socket buffer fills long before 1 MiB is written. */
static int run_fill(int use_send, int show_calls) {
  if (use_send ? socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0 : pipe(fds) != 0) die("pipe");
  static uint8_t data[kTotal];
  for (size_t i = 0; i < kTotal; ++i) data[i] = (uint8_t)(i * 131 + (i >> 11));
  pthread_t th;
  if (pthread_create(&th, NULL, drain, use_send ? (void *)1 : NULL) != 0) die("pthread_create");
  size_t done = 0;
  int calls = 0;
  while (done < kTotal) { /* a blocking write may return short (Linux: on a signal) */
    const ssize_t n = use_send ? send(fds[1], data + done, kTotal - done, 0)
                               : write(fds[1], data + done, kTotal - done);
    if (n <= 0) die("write");
    done += (size_t)n;
    ++calls;
  }
  pthread_join(th, NULL);
  /* Linux's blocking pipe write returns once all of it is written: one call. */
  if (show_calls) printf("calls=%d\n", calls);
  printf("written=%zu\nread=%zu\nsame=%d\n", done, read_total,
         read_sum == fnv(2166136261u, data, kTotal));
  return 0;
}

/* wait4 / waitid: the child waits for a byte that the worker writes after a sleep. */
static volatile int worker_wrote;

static void *late_writer(void *arg) {
  (void)arg;
  usleep(3000);
  worker_wrote = write(fds[1], "g", 1) == 1;
  return NULL;
}

static int run_child_wait(int use_waitid) {
  if (pipe(fds) != 0) die("pipe");
  const pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    char c;
    _exit(read(fds[0], &c, 1) == 1 && c == 'g' ? 5 : 1);
  }
  pthread_t th;
  if (pthread_create(&th, NULL, late_writer, NULL) != 0) die("pthread_create");
  if (use_waitid) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    const int r = waitid(P_PID, (id_t)child, &si, WEXITED);
    printf("waitid=%d code_exited=%d status=%d pid_ok=%d\n", r, si.si_code == CLD_EXITED,
           si.si_status, si.si_pid == child);
  } else {
    int status = 0;
    const pid_t r = waitpid(child, &status, 0);
    printf("wait4_pid_ok=%d exited=%d status=%d\n", r == child, WIFEXITED(status),
           WEXITSTATUS(status));
  }
  pthread_join(th, NULL);
  printf("worker_wrote=%d\n", worker_wrote);
  return 0;
}

/* sigsuspend / pause: main waits for the worker's SIGUSR1. */
static volatile int handled, worker_ran, main_back;
static pid_t main_tid;

static void on_usr1(int sig) {
  (void)sig;
  handled = 1;
}

static void *signaller(void *arg) {
  (void)arg;
  volatile unsigned long long sum = 0;
  for (unsigned long long k = 0; k < 1000000; ++k) sum += k;
  worker_ran = sum == 499999500000ull;
  /* Until main is back: natively a signal may beat main to pause(). */
  while (!main_back) {
    syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
    usleep(1000);
  }
  return NULL;
}

static int run_signal_wait(int use_pause) {
  main_tid = (pid_t)syscall(SYS_gettid);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  if (!use_pause) sigprocmask(SIG_BLOCK, &usr1, &old); /* held off until sigsuspend */
  pthread_t th;
  if (pthread_create(&th, NULL, signaller, NULL) != 0) die("pthread_create");
  int r, e;
  if (use_pause) {
    r = pause();
    e = errno;
    main_back = 1;
  } else {
    sigset_t none;
    sigemptyset(&none);
    r = sigsuspend(&none);
    e = errno;
    main_back = 1;
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("mask_restored=%d\n", sigismember(&now, SIGUSR1));
  }
  pthread_join(th, NULL);
  printf("%s=%d eintr=%d handled=%d worker_ran=%d\n", use_pause ? "pause" : "sigsuspend", r,
         e == EINTR, handled, worker_ran);
  return 0;
}

/* sigtimedwait: SIGUSR1 stays blocked; the worker's tgkill leaves it pending for main. */
static void *usr1_sender(void *arg) {
  (void)arg;
  volatile unsigned long long sum = 0;
  for (unsigned long long k = 0; k < 1000000; ++k) sum += k;
  worker_ran = sum == 499999500000ull;
  syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
  return NULL;
}

static volatile int stop_spinning;

static void *spin_until_stopped(void *arg) {
  (void)arg;
  while (!stop_spinning) {
  }
  return NULL;
}

static int run_sigtimedwait(void) {
  main_tid = (pid_t)syscall(SYS_gettid);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGUSR2);
  sigprocmask(SIG_BLOCK, &set, NULL);
  siginfo_t si;
  /* Pending already: taken without waiting, with the sender's siginfo. */
  raise(SIGUSR2);
  memset(&si, 0, sizeof si);
  int r = sigtimedwait(&set, &si, NULL);
  /* (glibc's sigtimedwait reports the kernel's SI_TKILL as SI_USER) */
  printf("pending=%s code_user=%d pid_ok=%d\n", r == SIGUSR2 ? "SIGUSR2" : "other",
         si.si_code == SI_USER, si.si_pid == getpid());
  /* Nothing comes: EAGAIN after 2 ms. */
  const struct timespec two_ms = {0, 2000000};
  r = sigtimedwait(&set, &si, &two_ms);
  printf("timeout=%d eagain=%d\n", r, r < 0 && errno == EAGAIN);
  /* From the other thread while main waits. */
  pthread_t th;
  if (pthread_create(&th, NULL, usr1_sender, NULL) != 0) die("pthread_create");
  memset(&si, 0, sizeof si);
  r = sigtimedwait(&set, &si, NULL);
  pthread_join(th, NULL);
  printf("from_thread=%s code_user=%d worker_ran=%d\n", r == SIGUSR1 ? "SIGUSR1" : "other",
         si.si_code == SI_USER, worker_ran);
  /* A timed wait while another thread spins: EAGAIN. */
  if (pthread_create(&th, NULL, spin_until_stopped, NULL) != 0) die("pthread_create");
  r = sigtimedwait(&set, &si, &two_ms);
  const int e = errno;
  stop_spinning = 1;
  pthread_join(th, NULL);
  printf("timeout_with_thread=%d eagain=%d\n", r, r < 0 && e == EAGAIN);
  return 0;
}

/* connect: listen(fd, 0) queues one connection; the second connect waits for an accept. */
static int listener;
static int accepted;

static void *late_acceptor(void *arg) {
  (void)arg;
  usleep(3000);
  for (int k = 0; k < 2; ++k) {
    const int fd = accept(listener, NULL, NULL);
    if (fd < 0) die("accept");
    char c;
    accepted += read(fd, &c, 1) == 1 && c == 'a' + k;
    close(fd);
  }
  return NULL;
}

static int run_connect(void) {
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  /* An abstract address: nothing in the file system to clean up. */
  snprintf(addr.sun_path + 1, sizeof addr.sun_path - 1, "padlock-waits-%d", (int)getpid());
  const socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
                                    strlen(addr.sun_path + 1));
  listener = socket(AF_UNIX, SOCK_STREAM, 0);
  if (listener < 0 || bind(listener, (struct sockaddr *)&addr, len) != 0 ||
      listen(listener, 0) != 0)
    die("listen");
  int c[2];
  for (int k = 0; k < 2; ++k) c[k] = socket(AF_UNIX, SOCK_STREAM, 0);
  if (connect(c[0], (struct sockaddr *)&addr, len) != 0) die("first connect");
  pthread_t th;
  if (pthread_create(&th, NULL, late_acceptor, NULL) != 0) die("pthread_create");
  const int r = connect(c[1], (struct sockaddr *)&addr, len); /* the backlog is full */
  printf("second_connect=%d\n", r);
  for (int k = 0; k < 2; ++k) {
    const char byte = (char)('a' + k);
    if (write(c[k], &byte, 1) != 1) die("write");
  }
  pthread_join(th, NULL);
  printf("accepted=%d\n", accepted);
  return 0;
}

int main(int argc, char **argv) {
  const char *m = argc > 1 ? argv[1] : "";
  if (!strcmp(m, "write")) return run_fill(0, 0);
  if (!strcmp(m, "write_whole")) return run_fill(0, 1);
  if (!strcmp(m, "send")) return run_fill(1, 0);
  if (!strcmp(m, "wait4")) return run_child_wait(0);
  if (!strcmp(m, "waitid")) return run_child_wait(1);
  if (!strcmp(m, "sigsuspend")) return run_signal_wait(0);
  if (!strcmp(m, "pause")) return run_signal_wait(1);
  if (!strcmp(m, "sigtimedwait")) return run_sigtimedwait();
  if (!strcmp(m, "connect")) return run_connect();
  die("usage: waits write|write_whole|send|wait4|waitid|sigsuspend|pause|sigtimedwait|connect");
  return 2;
}
