/* guest_hello: a static hello world, for start-up benchmarks and the CLI contract
 * (arguments, exit status, death by signal).
 *
 * usage: hello [--exit N] [--raise SIGNO] [--catch SIGNO] [--echo ARGS...]
 *   prints "hello, world"; --echo prints each following argument on its own line;
 *   --exit N returns N from main; --raise SIGNO raises that signal (default action);
 *   --catch SIGNO handles that signal, spins until it arrives and prints "caught N". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t caught;
static void on_signal(int sig) { caught = sig; }

int main(int argc, char **argv) {
  int status = 0;
  puts("hello, world");
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--exit") && i + 1 < argc) {
      status = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--raise") && i + 1 < argc) {
      fflush(stdout);
      raise(atoi(argv[++i]));
    } else if (!strcmp(argv[i], "--catch") && i + 1 < argc) {
      signal(atoi(argv[++i]), on_signal);
      puts("waiting");
      fflush(stdout);
      while (!caught) {
      }
      printf("caught %d\n", (int)caught);
    } else if (!strcmp(argv[i], "--echo")) {
      for (++i; i < argc; ++i) printf("arg=%s\n", argv[i]);
    }
  }
  return status;
}
