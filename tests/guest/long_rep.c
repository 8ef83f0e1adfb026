/* guest_long_rep: guests that once could not be stopped by --max-time or a host signal
 * (docs/reliability.md, "Every run stoppable").
 *
 *   long_rep huge GIB     one REP XSHA1 over GIB GiB of zero pages (mapped, never
 *                         written): a single instruction that runs for minutes
 *   long_rep huge-mac GIB the same with REP XCRYPTCBC in digest mode (ACE2: the output
 *                         is the one 16-byte block at EDI)
 *   long_rep storm        a 1 us ITIMER_REAL whose SIGALRM handler runs REP XSHA1 over
 *                         256 KiB, while the main loop runs REP XSHA1 too: with
 *                         --timing off the timer is the host's, so host signals arrive
 *                         faster than the handler ends
 *
 * Each prints "start" (flushed) once the work begins and runs until it is stopped; "huge"
 * prints the digest's first word if it ever ends. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#include "guest_util.h"
#include "padlock.h"

static uint32_t state[32] __attribute__((aligned(16)));
static uint32_t handler_state[32] __attribute__((aligned(16)));
static uint8_t data[256 * 1024] __attribute__((aligned(16)));
static volatile unsigned long alarms;

static void on_alarm(int sig) {
  (void)sig;
  memcpy(handler_state, kSha1Init, sizeof kSha1Init);
  padlock_xsha1(data, sizeof data, handler_state);
  alarms++;
}

static int huge(unsigned gib) {
  const size_t len = (size_t)gib << 30;
  void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) die("mmap");
  memcpy(state, kSha1Init, sizeof kSha1Init);
  printf("start\n");
  fflush(stdout);
  padlock_xsha1(p, len, state);
  printf("h0=%08x\n", state[0]);
  return 0;
}

static int huge_mac(unsigned gib) {
  static uint8_t key[16] __attribute__((aligned(16)));
  static uint8_t iv[16] __attribute__((aligned(16)));
  static uint8_t mac[16] __attribute__((aligned(16)));
  static uint32_t cword[4] __attribute__((aligned(16)));
  const size_t len = (size_t)gib << 30;
  void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) die("mmap");
  cword[0] = 10 | CW_KSIZE_128 | CW_DGEST; /* §3.1, §3.2: 10 rounds, digest mode */
  padlock_reload_key();
  printf("start\n");
  fflush(stdout);
  padlock_xcrypt_cbc(p, mac, key, iv, cword, len / 16);
  print_hex("mac", mac, 16);
  return 0;
}

static void storm(void) __attribute__((noreturn));
static void storm(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  if (sigaction(SIGALRM, &sa, NULL) != 0) die("sigaction");
  /* Before the timer: natively its handlers then run back to back and main gets nowhere. */
  printf("start\n");
  fflush(stdout);
  struct itimerval it = {{0, 1}, {0, 1}};
  if (setitimer(ITIMER_REAL, &it, NULL) != 0) die("setitimer");
  for (;;) {
    memcpy(state, kSha1Init, sizeof kSha1Init);
    padlock_xsha1(data, sizeof data, state);
  }
}

int main(int argc, char **argv) {
  if (argc > 2 && strcmp(argv[1], "huge") == 0) return huge((unsigned)atoi(argv[2]));
  if (argc > 2 && strcmp(argv[1], "huge-mac") == 0) return huge_mac((unsigned)atoi(argv[2]));
  if (argc > 1 && strcmp(argv[1], "storm") == 0) storm();
  die("usage: long_rep huge GIB | huge-mac GIB | storm");
}
