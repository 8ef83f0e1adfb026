/* guest_futex_wake: FUTEX_WAKE with more waiters than it asks to wake (futex(2)).
 *
 * WAITERS threads block in FUTEX_WAIT on word A. Main counts them without waking any:
 * FUTEX_CMP_REQUEUE with nr_wake = 0 moves every waiter of A to word B and returns how many
 * it moved, so main repeats it (sleeping between tries) until all WAITERS sit on B. Then
 * for each n in 0, 1, 2, 3 it calls FUTEX_WAKE(B, n) and counts the waiters left the same
 * way (B -> A -> B). Linux wakes at most n (one when n is 0) and returns how many it woke;
 * the waiters left show how many really woke, with no timing involved.
 *
 * output: "wake n=N returned=R still_waiting=W" per step, then woke=<threads that returned
 * from their wait>. The test compares it with the same binary run natively. */
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "guest_util.h"

#define WAITERS 5

static uint32_t g_a, g_b; /* both stay 0: a waiter only leaves its wait when woken */
static atomic_int g_woke;

static long futex(uint32_t *addr, int op, uint32_t val, uintptr_t val2, uint32_t *addr2,
                  uint32_t val3) {
  return syscall(SYS_futex, addr, op, val, val2, addr2, val3);
}

static void *waiter(void *arg) {
  (void)arg;
  while (futex(&g_a, FUTEX_WAIT, 0, 0, NULL, 0) != 0) {
  }
  atomic_fetch_add(&g_woke, 1);
  return NULL;
}

/* Moves every waiter of `from` to `to` and returns how many there were. */
static long move_all(uint32_t *from, uint32_t *to) {
  long n = futex(from, FUTEX_CMP_REQUEUE, 0, INT_MAX, to, 0);
  if (n < 0) die("FUTEX_CMP_REQUEUE failed");
  return n;
}

static long waiting_on_b(void) {
  long n = move_all(&g_b, &g_a);
  if (move_all(&g_a, &g_b) != n) die("a waiter came or went while counting");
  return n;
}

int main(void) {
  pthread_t t[WAITERS];
  for (int i = 0; i < WAITERS; ++i)
    if (pthread_create(&t[i], NULL, waiter, NULL) != 0) die("pthread_create");
  long on_b = 0;
  for (int tries = 0; on_b < WAITERS; ++tries) {
    if (tries == 10000) die("the waiters never all blocked");
    const struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
    on_b += move_all(&g_a, &g_b);
  }
  const int asks[] = {0, 1, 2, 3};
  for (size_t i = 0; i < sizeof asks / sizeof asks[0]; ++i) {
    long r = futex(&g_b, FUTEX_WAKE, (uint32_t)asks[i], 0, NULL, 0);
    printf("wake n=%d returned=%ld still_waiting=%ld\n", asks[i], r, waiting_on_b());
  }
  long left = waiting_on_b();
  if (left > 0) futex(&g_b, FUTEX_WAKE, (uint32_t)left, 0, NULL, 0);
  for (int i = 0; i < WAITERS; ++i) pthread_join(t[i], NULL);
  printf("woke=%d\n", atomic_load(&g_woke));
  return 0;
}
