/* guest_threads: four POSIX threads share one work queue of ITEMS items (docs/emulator.md,
 * "Threads"). A thread takes the next item number from a counter under a pthread mutex
 * (a futex when contended), then, outside the lock, encrypts the item's 64-byte plaintext
 * with AES-128-CBC under the item's own key in two REP XCRYPTCBC of two blocks each (the
 * second reuses the loaded key while EFLAGS[30] is 1, §1.8), hashes the ciphertext with
 * REP XSHA256 and stores the hash in the item's slot. A second counter, the bytes
 * encrypted, is updated under the mutex too. When all threads have joined, main hashes the
 * slots in item order with REP XSHA256.
 *
 * Item i: key[k] = 7i + k, iv[k] = i ^ 3k, plaintext[k] = i + k (bytes, mod 256).
 *
 * If a thread switch left EFLAGS[30] set, a thread's second REP XCRYPTCBC would run with
 * another thread's key (§1.8 steps 3-5) and the digest would differ from the independent
 * computation. The items each thread took depend on the interleaving, which the scheduler
 * fixes from the virtual clock: they are printed, and repeat with the same --seed.
 *
 * usage: threads [ITEMS]   (default 256)
 * Between an item's two REP XCRYPTCBC, integer work (FNV-1a over the first ciphertext half,
 * 16 rounds) widens the window in which a time slice ends; the XOR of its values over all
 * items is printed too.
 *
 * output: items=N, thread<k>=<items taken>, bytes=<counter>, check=<hex>, digest=<sha256> */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "guest_util.h"
#include "padlock.h"

enum { kThreads = 4, kMaxItems = 4096, kBlocks = 4 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static unsigned next_item, items, bytes_done;
static unsigned taken[kThreads];
static uint8_t results[kMaxItems][32];

/* One thread's PadLock areas, 16-byte aligned (§3.1, §4.1). */
struct work {
  uint8_t cw[16] __attribute__((aligned(16)));
  uint8_t key[16] __attribute__((aligned(16)));
  uint8_t iv[16] __attribute__((aligned(16)));
  uint8_t in[16 * kBlocks] __attribute__((aligned(16)));
  uint8_t out[16 * kBlocks] __attribute__((aligned(16)));
  uint32_t sha[32] __attribute__((aligned(16)));
  uint32_t check; /* XOR of the items' fnv_rounds values */
};
static struct work works[kThreads];

/* FNV-1a (32-bit) over `p`, `rounds` times over, the state carried on. */
static uint32_t fnv_rounds(const uint8_t *p, size_t n, int rounds) {
  uint32_t h = 2166136261u;
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < n; ++k) h = (h ^ p[k]) * 16777619u;
  return h;
}

static void do_item(struct work *w, unsigned i) {
  for (int k = 0; k < 16; ++k) {
    w->key[k] = (uint8_t)(7 * i + k);
    w->iv[k] = (uint8_t)(i ^ (3 * k));
  }
  for (int k = 0; k < 16 * kBlocks; ++k) w->in[k] = (uint8_t)(i + k);
  /* A new key: clear EFLAGS[30] so the first REP XCRYPT loads it (§1.8). */
  padlock_reload_key();
  padlock_xcrypt_cbc(w->in, w->out, w->key, w->iv, w->cw, 2);
  /* Integer work between the two: a time slice often ends here, and the thread switch must
   * leave this thread's EFLAGS[30] at 0 when it runs again (§1.8 step 5). */
  w->check ^= fnv_rounds(w->out, 32, 16);
  /* CBC goes on from the last ciphertext block; EFLAGS[30] is 1: the key is not reloaded. */
  memcpy(w->iv, w->out + 16, 16);
  padlock_xcrypt_cbc(w->in + 32, w->out + 32, w->key, w->iv, w->cw, 2);
  memset(w->sha, 0, sizeof w->sha);
  memcpy(w->sha, kSha256Init, sizeof kSha256Init);
  padlock_xsha256(w->out, sizeof w->out, w->sha);
  /* The state words are little-endian; the digest is big-endian (§4.3). */
  for (int k = 0; k < 8; ++k)
    for (int b = 0; b < 4; ++b) results[i][4 * k + b] = (uint8_t)(w->sha[k] >> (24 - 8 * b));
}

static void *worker(void *arg) {
  const unsigned me = (unsigned)(uintptr_t)arg;
  struct work *w = &works[me];
  memset(w->cw, 0, sizeof w->cw);
  w->cw[0] = 10; /* AES-128: 10 rounds, hardware key expansion, encrypt (§3.2) */
  pthread_barrier_wait(&start);
  for (;;) {
    pthread_mutex_lock(&lock);
    const unsigned i = next_item++;
    pthread_mutex_unlock(&lock);
    if (i >= items) break;
    do_item(w, i);
    pthread_mutex_lock(&lock);
    bytes_done += 16 * kBlocks;
    ++taken[me];
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

/* ---- timed ------------------------------------------------------------------------- */

static volatile int stop_spin;
static volatile unsigned long spins;

static void *spinner(void *arg) {
  (void)arg;
  while (!stop_spin) ++spins; /* no system call: only a slice end switches away from it */
  return NULL;
}

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *sleeper(void *arg) {
  int64_t *slept = arg;
  const int64_t t0 = mono_ns();
  usleep(3000);
  *slept = mono_ns() - t0;
  return NULL;
}

static void on_alarm(int sig) { (void)sig; }

static int run_timed(void) {
  pthread_t spin, sleep_th;
  /* One thread: a futex wait without a timeout ends when an interval timer's signal comes. */
  signal(SIGALRM, on_alarm);
  struct itimerval it = {{0, 0}, {0, 1500}};
  uint32_t lone = 0;
  int64_t t_alarm = mono_ns();
  setitimer(ITIMER_REAL, &it, NULL);
  long ra = syscall(SYS_futex, &lone, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  printf("alarm_wait=%ld errno=%s waited_us=%lld\n", ra, ra < 0 && errno == EINTR ? "EINTR" : "other",
         (long long)((mono_ns() - t_alarm) / 1000));
  if (pthread_create(&spin, NULL, spinner, NULL) != 0) die("pthread_create");
  /* FUTEX_WAIT, relative timeout, on a word nobody wakes. */
  uint32_t word = 0;
  struct timespec rel = {0, 2000000};
  int64_t t0 = mono_ns();
  long r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
  printf("futex_wait=%ld errno=%s waited_us=%lld\n", r, r < 0 && errno == ETIMEDOUT ? "ETIMEDOUT" : "other",
         (long long)((mono_ns() - t0) / 1000));
  /* pthread_cond_timedwait: FUTEX_WAIT_BITSET with an absolute CLOCK_REALTIME deadline. */
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
  struct timespec abs;
  clock_gettime(CLOCK_REALTIME, &abs);
  abs.tv_nsec += 4000000;
  if (abs.tv_nsec >= 1000000000) abs.tv_sec += 1, abs.tv_nsec -= 1000000000;
  t0 = mono_ns();
  pthread_mutex_lock(&m);
  int rc = pthread_cond_timedwait(&cv, &m, &abs);
  pthread_mutex_unlock(&m);
  printf("cond_timedwait=%s waited_us=%lld\n", rc == ETIMEDOUT ? "ETIMEDOUT" : "other",
         (long long)((mono_ns() - t0) / 1000));
  /* A sleeping thread while the spinner runs and main waits in pthread_join. */
  int64_t slept = 0;
  if (pthread_create(&sleep_th, NULL, sleeper, &slept) != 0) die("pthread_create");
  pthread_join(sleep_th, NULL);
  printf("slept_us=%lld\n", (long long)(slept / 1000));
  stop_spin = 1;
  pthread_join(spin, NULL);
  printf("spinner_ran=%d\n", spins > 1000);
  return 0;
}

/* ---- signal ------------------------------------------------------------------------ */

static volatile pid_t handler_tid;
static pid_t worker_tid;
static int worker_go;

static void on_usr1(int sig) {
  (void)sig;
  handler_tid = (pid_t)syscall(SYS_gettid);
}

static void *signal_worker(void *arg) {
  (void)arg;
  worker_tid = (pid_t)syscall(SYS_gettid);
  printf("worker_pid_same=%d\n", getpid() == (pid_t)(uintptr_t)arg);
  /* Wait on a futex until main has signalled us: the handler interrupts the wait. */
  __atomic_store_n(&worker_go, 1, __ATOMIC_SEQ_CST);
  syscall(SYS_futex, &worker_go, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  uint32_t word = 0;
  long r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  printf("worker_wait=%ld errno=%s\n", r, r < 0 && errno == EINTR ? "EINTR" : "other");
  return NULL;
}

static int run_signal(void) {
  signal(SIGUSR1, on_usr1);
  const pid_t main_tid = (pid_t)syscall(SYS_gettid);
  printf("main_tid_is_pid=%d\n", main_tid == getpid());
  pthread_t th;
  if (pthread_create(&th, NULL, signal_worker, (void *)(uintptr_t)getpid()) != 0)
    die("pthread_create");
  while (!__atomic_load_n(&worker_go, __ATOMIC_SEQ_CST))
    syscall(SYS_futex, &worker_go, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  sched_yield(); /* let the worker reach its wait */
  printf("tids_differ=%d\n", worker_tid != main_tid && worker_tid > 0);
  long r = syscall(SYS_tgkill, getpid(), worker_tid, SIGUSR1);
  pthread_join(th, NULL);
  printf("tgkill=%ld handler_in_worker=%d\n", r, handler_tid == worker_tid);
  r = syscall(SYS_tgkill, getpid(), worker_tid, SIGUSR1); /* it has exited */
  printf("tgkill_gone=%s\n", r < 0 && errno == ESRCH ? "ESRCH" : "other");
  return 0;
}

/* ---- exit, detach ------------------------------------------------------------------ */

static void *exiter(void *arg) {
  fflush(stdout);
  exit((int)(uintptr_t)arg); /* exit_group: main, blocked in pthread_join, ends too */
}

static void *last_one(void *arg) {
  (void)arg;
  usleep(1000);
  printf("worker_last=1\n");
  fflush(stdout);
  return NULL;
}

/* ---- futexops --------------------------------------------------------------------- */

static uint32_t word1, word2;
static int woke[3];

static long futex(uint32_t *w, int op, uint32_t val, uintptr_t val2, uint32_t *w2, uint32_t val3) {
  return syscall(SYS_futex, w, op, val, val2, w2, val3);
}

static void *futex_waiter(void *arg) {
  const int me = (int)(uintptr_t)arg;
  /* Waiters 0 and 1 on word1 (then requeued), waiter 2 on word2 until FUTEX_WAKE_OP. */
  uint32_t *w = me < 2 ? &word1 : &word2;
  woke[me] = futex(w, FUTEX_WAIT_PRIVATE, 0, 0, NULL, 0) == 0;
  return NULL;
}

static int run_futexops(void) {
  pthread_t th[3];
  for (int k = 0; k < 2; ++k)
    if (pthread_create(&th[k], NULL, futex_waiter, (void *)(uintptr_t)k) != 0) die("pthread_create");
  usleep(1000); /* main sleeps: both wait on word1 by then */
  /* Wake none, move up to 8 from word1 to word2 if word1 is still 0: the total moved. */
  printf("requeue=%ld\n", futex(&word1, FUTEX_CMP_REQUEUE_PRIVATE, 0, 8, &word2, 0));
  printf("wake_word1=%ld\n", futex(&word1, FUTEX_WAKE_PRIVATE, 8, 0, NULL, 0));
  printf("wake_word2=%ld\n", futex(&word2, FUTEX_WAKE_PRIVATE, 8, 0, NULL, 0));
  for (int k = 0; k < 2; ++k) pthread_join(th[k], NULL);
  if (pthread_create(&th[2], NULL, futex_waiter, (void *)(uintptr_t)2) != 0) die("pthread_create");
  usleep(1000);
  /* word2 = 5 (SET); the old value 0 == 0 (CMP_EQ), so word2's waiter wakes too. */
  const uint32_t op = FUTEX_OP(FUTEX_OP_SET, 5, FUTEX_OP_CMP_EQ, 0);
  printf("wake_op=%ld\n", futex(&word1, FUTEX_WAKE_OP_PRIVATE, 1, 1, &word2, op));
  pthread_join(th[2], NULL);
  printf("word2=%u\nwoke=%d%d%d\n", word2, woke[0], woke[1], woke[2]);
  return 0;
}

/* ---- pipe ------------------------------------------------------------------------- */

static int pipes[3][2];
static char got_read;
static int got_poll, got_select;

static void *pipe_reader(void *arg) {
  (void)arg;
  if (read(pipes[0][0], &got_read, 1) != 1) got_read = '?';
  return NULL;
}

static void *pipe_poller(void *arg) {
  (void)arg;
  struct pollfd pfd = {pipes[1][0], POLLIN, 0};
  got_poll = poll(&pfd, 1, -1) == 1 && (pfd.revents & POLLIN);
  return NULL;
}

static void *pipe_selecter(void *arg) {
  (void)arg;
  fd_set rd;
  FD_ZERO(&rd);
  FD_SET(pipes[2][0], &rd);
  got_select = select(pipes[2][0] + 1, &rd, NULL, NULL, NULL) == 1 && FD_ISSET(pipes[2][0], &rd);
  return NULL;
}

static int run_pipe(void) {
  pthread_t th[3];
  void *(*fns[3])(void *) = {pipe_reader, pipe_poller, pipe_selecter};
  for (int k = 0; k < 3; ++k) {
    if (pipe(pipes[k]) != 0) die("pipe");
    if (pthread_create(&th[k], NULL, fns[k], NULL) != 0) die("pthread_create");
  }
  /* The three wait on the host: main must still run. */
  volatile unsigned long sum = 0;
  for (unsigned long k = 0; k < 50000; ++k) sum += k;
  for (int k = 0; k < 3; ++k) {
    if (write(pipes[k][1], "x", 1) != 1) die("write");
  }
  for (int k = 0; k < 3; ++k) pthread_join(th[k], NULL);
  printf("main_ran=%d\nread=%c\npoll=%d\nselect=%d\n", sum == 1249975000ul, got_read, got_poll,
         got_select);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "pipe")) return run_pipe();
  if (argc > 1 && !strcmp(argv[1], "futexops")) return run_futexops();
  if (argc > 1 && !strcmp(argv[1], "timed")) return run_timed();
  if (argc > 1 && !strcmp(argv[1], "signal")) return run_signal();
  if (argc > 2 && !strcmp(argv[1], "exit")) {
    pthread_t th;
    printf("main_waits=1\n");
    if (pthread_create(&th, NULL, exiter, (void *)(uintptr_t)atoi(argv[2])) != 0)
      die("pthread_create");
    pthread_join(th, NULL);
    printf("main_returned=1\n"); /* never: the thread's exit ended the process */
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "detach")) {
    pthread_t th;
    if (pthread_create(&th, NULL, last_one, NULL) != 0) die("pthread_create");
    printf("main_exits=1\n");
    fflush(stdout);
    pthread_exit(NULL);
  }
  items = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 256;
  if (items == 0 || items > kMaxItems) die("ITEMS must be 1..4096");
  pthread_t th[kThreads];
  pthread_barrier_init(&start, NULL, kThreads);
  for (unsigned t = 0; t < kThreads; ++t) {
    if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t) != 0) die("pthread_create");
  }
  for (unsigned t = 0; t < kThreads; ++t) pthread_join(th[t], NULL);
  printf("items=%u\n", items);
  for (unsigned t = 0; t < kThreads; ++t) printf("thread%u=%u\n", t, taken[t]);
  printf("bytes=%u\n", bytes_done);
  uint32_t check = 0;
  for (unsigned t = 0; t < kThreads; ++t) check ^= works[t].check;
  printf("check=%08x\n", check);
  uint32_t *state = pool_alloc(128, 16, 0);
  memcpy(state, kSha256Init, sizeof kSha256Init);
  padlock_xsha256(results, (size_t)items * 32, state);
  printf("digest=");
  for (int k = 0; k < 8; ++k) printf("%08x", state[k]);
  printf("\n");
  return 0;
}
