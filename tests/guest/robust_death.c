/* guest_robust_death: robust futexes of a process that ends all at once (docs/emulator.md,
 * "Threads"). Two process-shared robust mutexes live in a MAP_SHARED file mapping. A
 * forked child locks A (and, in its second thread, B), then ends by exit_group (_exit),
 * by a fatal signal (SIGTERM at its default action) or by execve (this program again,
 * with "done"). Linux walks every thread's robust list then: the parent, once the child
 * is gone, gets EOWNERDEAD for both. Without the walk its timed lock times out.
 * Usage: robust_death exit_group|signal|execve */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_util.h"

struct Shared {
  pthread_mutex_t a, b;
  volatile int b_locked;
};

static struct Shared *sh;

static void *hold_b(void *arg) {
  (void)arg;
  if (pthread_mutex_lock(&sh->b) != 0) die("lock b");
  sh->b_locked = 1;
  for (;;) pause();
  return NULL;
}

static const char *lock_result(pthread_mutex_t *m) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 1;
  const int r = pthread_mutex_timedlock(m, &until);
  if (r == EOWNERDEAD) {
    pthread_mutex_consistent(m);
    pthread_mutex_unlock(m);
    return "eownerdead";
  }
  if (r == 0) {
    pthread_mutex_unlock(m);
    return "locked";
  }
  return r == ETIMEDOUT ? "etimedout" : strerror(r);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc < 2) die("usage: robust_death exit_group|signal|execve");
  if (strcmp(argv[1], "done") == 0) return 0; /* the image the child execs */
  char path[] = "/tmp/robust_death_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) die("mkstemp");
  unlink(path);
  if (ftruncate(fd, 4096) != 0) die("ftruncate");
  sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (sh == MAP_FAILED) die("mmap");
  pthread_mutexattr_t at;
  pthread_mutexattr_init(&at);
  pthread_mutexattr_setpshared(&at, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&sh->a, &at);
  pthread_mutex_init(&sh->b, &at);
  const pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    if (pthread_mutex_lock(&sh->a) != 0) die("lock a");
    pthread_t t;
    if (pthread_create(&t, NULL, hold_b, NULL) != 0) die("pthread_create");
    while (!sh->b_locked) sched_yield();
    if (strcmp(argv[1], "exit_group") == 0) _exit(0);
    if (strcmp(argv[1], "signal") == 0) {
      signal(SIGTERM, SIG_DFL);
      raise(SIGTERM);
    }
    if (strcmp(argv[1], "execve") == 0) {
      char *args[] = {argv[0], "done", NULL};
      execv(argv[0], args);
      die("execv");
    }
    die("unknown mode");
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) die("waitpid");
  printf("child exited=%d signaled=%d\n", WIFEXITED(status),
         WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  const char *a = lock_result(&sh->a);
  const char *b = lock_result(&sh->b);
  printf("a=%s b=%s\n", a, b);
  return 0;
}
