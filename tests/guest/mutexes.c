/* guest_mutexes: pthread mutexes whose futex word names the owner's TID (docs/emulator.md,
 * "Threads"): robust mutexes, which the kernel marks FUTEX_OWNER_DIED when their owner
 * exits (the robust list of set_robust_list), and priority-inheritance mutexes, which lock
 * and unlock through FUTEX_LOCK_PI / FUTEX_UNLOCK_PI / FUTEX_TRYLOCK_PI when contended.
 * Every line printed is a result that Linux gives too, whatever the interleaving, so the
 * output of a native run is the reference.
 *
 * usage: mutexes robust        robust mutexes (plain and PI) left locked by exiting threads
 *        mutexes pi [ITERS]    four threads contend for one PI mutex ITERS times each
 *                              (default 200), with a condition variable and a timed lock
 *        mutexes requeue_pi    FUTEX_WAIT_REQUEUE_PI and FUTEX_CMP_REQUEUE_PI */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "guest_util.h"

static const char *err_name(int e) {
  switch (e) {
    case 0:
      return "0";
    case EOWNERDEAD:
      return "EOWNERDEAD";
    case ENOTRECOVERABLE:
      return "ENOTRECOVERABLE";
    case EBUSY:
      return "EBUSY";
    case EDEADLK:
      return "EDEADLK";
    case EPERM:
      return "EPERM";
    case ETIMEDOUT:
      return "ETIMEDOUT";
    default:
      return "other";
  }
}

static void init_mutex(pthread_mutex_t *m, int robust, int pi, int type) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  if (robust) pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  if (pi) pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
  pthread_mutexattr_settype(&a, type);
  if (pthread_mutex_init(m, &a) != 0) die("pthread_mutex_init");
  pthread_mutexattr_destroy(&a);
}

/* ---- robust --------------------------------------------------------------------------- */

static pthread_mutex_t held, waited, released;
static pthread_barrier_t locked;

/* Locks `held` and returns: the thread exits owning it. */
static void *exit_holding(void *arg) {
  pthread_mutex_t *m = arg;
  if (pthread_mutex_lock(m) != 0) die("lock in thread");
  return NULL;
}

/* Locks `waited`, lets main block on it, and exits owning it. */
static void *exit_while_waited(void *arg) {
  pthread_mutex_t *m = arg;
  if (pthread_mutex_lock(m) != 0) die("lock in thread");
  pthread_barrier_wait(&locked);
  usleep(2000); /* main is in its futex wait by now */
  return NULL;
}

static void *lock_and_release(void *arg) {
  pthread_mutex_t *m = arg;
  if (pthread_mutex_lock(m) != 0 || pthread_mutex_unlock(m) != 0) die("lock/unlock in thread");
  return NULL;
}

static void run_thread(void *(*fn)(void *), void *arg) {
  pthread_t th;
  if (pthread_create(&th, NULL, fn, arg) != 0) die("pthread_create");
  pthread_join(th, NULL);
}

/* One flavour (plain or PI robust mutexes): prefix_* lines. */
static void robust_case(const char *prefix, int pi) {
  init_mutex(&held, 1, pi, PTHREAD_MUTEX_NORMAL);
  init_mutex(&waited, 1, pi, PTHREAD_MUTEX_NORMAL);
  init_mutex(&released, 1, pi, PTHREAD_MUTEX_NORMAL);

  /* The owner is gone before main tries. */
  run_thread(exit_holding, &held);
  printf("%s_after_exit=%s\n", prefix, err_name(pthread_mutex_lock(&held)));
  printf("%s_consistent=%s\n", prefix, err_name(pthread_mutex_consistent(&held)));
  printf("%s_unlock=%s\n", prefix, err_name(pthread_mutex_unlock(&held)));
  printf("%s_relock=%s\n", prefix, err_name(pthread_mutex_lock(&held)));
  pthread_mutex_unlock(&held);

  /* Main waits in the kernel when the owner exits: it is woken, and owns it. */
  pthread_t th;
  pthread_barrier_init(&locked, NULL, 2);
  if (pthread_create(&th, NULL, exit_while_waited, &waited) != 0) die("pthread_create");
  pthread_barrier_wait(&locked);
  printf("%s_waiter=%s\n", prefix, err_name(pthread_mutex_lock(&waited)));
  pthread_join(th, NULL);
  /* Unlocked without pthread_mutex_consistent: the mutex is not recoverable. */
  pthread_mutex_unlock(&waited);
  printf("%s_not_consistent=%s\n", prefix, err_name(pthread_mutex_lock(&waited)));
  pthread_barrier_destroy(&locked);

  /* Locked and unlocked before the exit: nothing to mark. */
  run_thread(lock_and_release, &released);
  printf("%s_released=%s\n", prefix, err_name(pthread_mutex_lock(&released)));
  pthread_mutex_unlock(&released);
}

static int run_robust(void) {
  robust_case("robust", 0);
  robust_case("robust_pi", 1);
  return 0;
}

/* ---- pi ------------------------------------------------------------------------------- */

enum { kWorkers = 4 };
static pthread_mutex_t pi_lock;
static pthread_cond_t pi_cond = PTHREAD_COND_INITIALIZER;
static unsigned iters, counter, per_thread[kWorkers], errors;
static uint32_t mix = 2166136261u; /* FNV-1a of every counter value, in lock order */
static unsigned produced, consumed;

static void *pi_worker(void *arg) {
  const unsigned me = (unsigned)(uintptr_t)arg;
  for (unsigned i = 0; i < iters; ++i) {
    if (pthread_mutex_lock(&pi_lock) != 0) ++errors;
    const unsigned v = ++counter;
    /* Integer work inside the critical section: time slices end here too. */
    for (int k = 0; k < 200; ++k) mix = (mix ^ (v + (unsigned)k)) * 16777619u;
    ++per_thread[me];
    if (pthread_mutex_unlock(&pi_lock) != 0) ++errors;
  }
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  pthread_mutex_lock(&pi_lock);
  while (consumed < 50) {
    while (produced == consumed) pthread_cond_wait(&pi_cond, &pi_lock);
    ++consumed;
  }
  pthread_mutex_unlock(&pi_lock);
  return NULL;
}

static void *try_from_other(void *arg) {
  return (void *)(uintptr_t)pthread_mutex_trylock(arg);
}

static void *unlock_from_other(void *arg) {
  return (void *)(uintptr_t)pthread_mutex_unlock(arg);
}

static int run_pi(unsigned n) {
  iters = n;
  init_mutex(&pi_lock, 0, 1, PTHREAD_MUTEX_ERRORCHECK);
  pthread_t th[kWorkers];
  for (unsigned t = 0; t < kWorkers; ++t) {
    if (pthread_create(&th[t], NULL, pi_worker, (void *)(uintptr_t)t) != 0) die("pthread_create");
  }
  for (unsigned t = 0; t < kWorkers; ++t) pthread_join(th[t], NULL);
  printf("counter=%u\n", counter);
  for (unsigned t = 0; t < kWorkers; ++t) printf("worker%u=%u\n", t, per_thread[t]);
  printf("errors=%u\n", errors);
  /* The mix depends only on the counter values, which the lock serialises. */
  printf("mix=%08x\n", mix);

  /* A condition variable on a PI mutex: 50 items handed over one by one. */
  pthread_t c;
  if (pthread_create(&c, NULL, consumer, NULL) != 0) die("pthread_create");
  for (unsigned k = 0; k < 50; ++k) {
    pthread_mutex_lock(&pi_lock);
    ++produced;
    pthread_cond_signal(&pi_cond);
    pthread_mutex_unlock(&pi_lock);
    while (1) {
      pthread_mutex_lock(&pi_lock);
      const int done = consumed == produced;
      pthread_mutex_unlock(&pi_lock);
      if (done) break;
      sched_yield();
    }
  }
  pthread_join(c, NULL);
  printf("consumed=%u\n", consumed);

  /* Held by main: another thread's trylock is EBUSY, its unlock EPERM; main's relock of
   * an error-checking mutex EDEADLK; a timed lock from another thread times out. */
  pthread_mutex_lock(&pi_lock);
  pthread_t o;
  void *r;
  pthread_create(&o, NULL, try_from_other, &pi_lock);
  pthread_join(o, &r);
  printf("trylock_other=%s\n", err_name((int)(uintptr_t)r));
  pthread_create(&o, NULL, unlock_from_other, &pi_lock);
  pthread_join(o, &r);
  printf("unlock_other=%s\n", err_name((int)(uintptr_t)r));
  printf("relock_self=%s\n", err_name(pthread_mutex_lock(&pi_lock)));
  printf("trylock_self=%s\n", err_name(pthread_mutex_trylock(&pi_lock)));
  pthread_mutex_unlock(&pi_lock);
  printf("trylock_free=%s\n", err_name(pthread_mutex_trylock(&pi_lock)));
  pthread_mutex_unlock(&pi_lock);
  return 0;
}

static pthread_mutex_t timed_lock;

static void *timed_locker(void *arg) {
  (void)arg;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += 3000000;
  if (ts.tv_nsec >= 1000000000) {
    ts.tv_nsec -= 1000000000;
    ++ts.tv_sec;
  }
  return (void *)(uintptr_t)pthread_mutex_timedlock(&timed_lock, &ts);
}

/* A PI mutex held by main while another thread's pthread_mutex_timedlock runs out. */
static void run_timed_pi(void) {
  init_mutex(&timed_lock, 0, 1, PTHREAD_MUTEX_NORMAL);
  pthread_mutex_lock(&timed_lock);
  pthread_t th;
  void *r;
  pthread_create(&th, NULL, timed_locker, NULL);
  pthread_join(th, &r);
  printf("timedlock=%s\n", err_name((int)(uintptr_t)r));
  pthread_mutex_unlock(&timed_lock);
}

/* requeue_pi: the kernel's condition-variable protocol for PI mutexes, with raw futex
 * calls. Three waiters each take the PI word, note the condition word, release the PI
 * word and wait on the condition word with FUTEX_WAIT_REQUEUE_PI; main bumps the
 * condition word and calls FUTEX_CMP_REQUEUE_PI: one waiter comes back owning the PI word
 * (taken for it), the others are moved to wait for the PI word and get it one after the
 * other through FUTEX_UNLOCK_PI. A waiter that had not waited yet gets EAGAIN and takes
 * the PI word itself. Each must own it when it counts. */
static uint32_t cond_word, pi_word;
static unsigned requeue_count, requeue_bad;

static long futex(uint32_t *uaddr, int op, uint32_t val, void *timeout, uint32_t *uaddr2,
                  uint32_t val3) {
  return syscall(SYS_futex, uaddr, op, val, timeout, uaddr2, val3);
}

static uint32_t my_tid(void) {
  return (uint32_t)syscall(SYS_gettid);
}

static void word_lock(void) {
  uint32_t zero = 0;
  if (!__atomic_compare_exchange_n(&pi_word, &zero, my_tid(), 0, __ATOMIC_ACQUIRE,
                                   __ATOMIC_RELAXED)) {
    while (futex(&pi_word, FUTEX_LOCK_PI, 0, NULL, NULL, 0) != 0) {
      if (errno != EINTR) die("FUTEX_LOCK_PI");
    }
  }
}

static void word_unlock(void) {
  uint32_t me = my_tid();
  if (!__atomic_compare_exchange_n(&pi_word, &me, 0, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    if (futex(&pi_word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0) != 0) die("FUTEX_UNLOCK_PI");
  }
}

static void *requeue_waiter(void *arg) {
  (void)arg;
  word_lock();
  const uint32_t seen = __atomic_load_n(&cond_word, __ATOMIC_ACQUIRE);
  word_unlock();
  const long r = futex(&cond_word, FUTEX_WAIT_REQUEUE_PI, seen, NULL, &pi_word, 0);
  if (r != 0) {
    if (errno != EAGAIN) die("FUTEX_WAIT_REQUEUE_PI");
    word_lock();
  }
  /* Owner now, by the requeue or by the lock. */
  if ((__atomic_load_n(&pi_word, __ATOMIC_ACQUIRE) & FUTEX_TID_MASK) != my_tid()) ++requeue_bad;
  ++requeue_count;
  word_unlock();
  return NULL;
}

static int run_requeue_pi(void) {
  enum { kWaiters = 3 };
  pthread_t t[kWaiters];
  for (int i = 0; i < kWaiters; ++i) {
    if (pthread_create(&t[i], NULL, requeue_waiter, NULL) != 0) die("pthread_create");
  }
  struct timespec nap = {0, 20000000}; /* the waiters reach their wait meanwhile */
  nanosleep(&nap, NULL);
  word_lock();
  const uint32_t next = __atomic_add_fetch(&cond_word, 1, __ATOMIC_RELEASE);
  word_unlock();
  const long moved = futex(&cond_word, FUTEX_CMP_REQUEUE_PI, 1, (void *)(uintptr_t)kWaiters,
                           &pi_word, next);
  if (moved < 0) die("FUTEX_CMP_REQUEUE_PI");
  for (int i = 0; i < kWaiters; ++i) pthread_join(t[i], NULL);
  errno = 0;
  const long wrong = futex(&cond_word, FUTEX_CMP_REQUEUE_PI, 2, (void *)1, &pi_word, next);
  printf("requeue_pi counted=%u not_owner=%u pi_word=%u nr_wake2=%ld einval=%d\n",
         requeue_count, requeue_bad, pi_word, wrong, errno == EINVAL);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "robust")) return run_robust();
  if (argc > 1 && !strcmp(argv[1], "requeue_pi")) return run_requeue_pi();
  if (argc > 1 && !strcmp(argv[1], "pi")) {
    const int rc = run_pi(argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 200);
    run_timed_pi();
    return rc;
  }
  die("usage: mutexes robust | pi [ITERS] | requeue_pi");
  return 2;
}
