/* REP XCRYPTCBC in a tight loop while a host-time interval timer (ITIMER_REAL, 500 us)
 * raises SIGALRM, for `padlock-emu run --timing off`, where timers follow the host clock
 * and so stop Unicorn asynchronously, at any point of the loop (docs/emulator.md,
 * "Asynchronous host signals").
 *
 * Every iteration encrypts the same 4 KB with the same key and IV, so every result must
 * equal the first. Prints c=<first 32 bytes>, bad=<iterations that differed>, alarms=.
 *
 * usage: host_alarm_xcrypt [ITERATIONS]   (default 20000) */
#include <signal.h>
#include <sys/time.h>

#include "guest_util.h"
#include "padlock.h"

static volatile unsigned long alarms;
static void on_alarm(int sig) {
  (void)sig;
  alarms++;
}

static uint8_t in[4096] __attribute__((aligned(16)));
static uint8_t out[4096] __attribute__((aligned(16)));
static uint8_t first[4096] __attribute__((aligned(16)));
static uint8_t key[16] __attribute__((aligned(16)));
static uint8_t iv[16] __attribute__((aligned(16)));
static uint32_t cword[4] __attribute__((aligned(16)));

static void encrypt(uint8_t *dst) {
  memset(iv, 0, sizeof iv);
  padlock_reload_key();
  struct xcrypt_regs r = padlock_xcrypt_cbc(in, dst, key, iv, cword, sizeof in / 16);
  if (r.ecx != 0) die("REP XCRYPTCBC left ECX non-zero");
}

int main(int argc, char **argv) {
  long iterations = argc > 1 ? atol(argv[1]) : 20000;
  for (size_t i = 0; i < sizeof in; ++i) in[i] = (uint8_t)i;
  for (size_t i = 0; i < sizeof key; ++i) key[i] = (uint8_t)(7 * i);
  cword[0] = 10 | CW_KSIZE_128; /* §3.1: 10 rounds, hardware key expansion, encrypt */
  encrypt(first);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  if (sigaction(SIGALRM, &sa, NULL) != 0) die("sigaction");
  struct itimerval it = {{0, 500}, {0, 500}};
  if (setitimer(ITIMER_REAL, &it, NULL) != 0) die("setitimer");

  long bad = 0;
  for (long n = 0; n < iterations; ++n) {
    encrypt(out);
    if (memcmp(out, first, sizeof out) != 0) bad++;
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  print_hex("c", first, 32);
  printf("bad=%ld\nalarms=%lu\n", bad, alarms);
  return bad != 0;
}
