/* guest_switch_key: a thread switch clears EFLAGS[30] (§1.8 steps 3 and 5).
 *
 * Two threads take turns, ROUNDS times: main encrypts one block with REP XCRYPTECB under
 * K1, the second thread under K2. Between its turns each thread spins on a shared counter
 * (plain loads, no system call, no PUSHF/POPF), so nothing but the scheduler's switch
 * stores EFLAGS between one thread's XCRYPT and the other's. Each XCRYPT runs right after
 * the other thread loaded its own key, so it uses its own key only if the switch cleared
 * bit 30; left set, it would reuse the other thread's key (§1.8: "the key is not
 * reloaded").
 *
 * K1 and its block are SP 800-38A's AES-128 ECB key and first block (F.1.1), K2 and its
 * block FIPS-197 C.1's. output: rounds=N, then c1=<hex> and c2=<hex> when every round gave the same
 * block, else "mismatch thread=T round=R". usage: switch_key [ROUNDS]  (default 6) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_util.h"
#include "padlock.h"

static const char *kK1 = "2b7e151628aed2a6abf7158809cf4f3c";
static const char *kK2 = "000102030405060708090a0b0c0d0e0f";
static const char *kPlain1 = "6bc1bee22e409f96e93d7e117393172a";
static const char *kPlain2 = "00112233445566778899aabbccddeeff";

struct party {
  uint8_t key[16] __attribute__((aligned(16)));
  uint8_t cw[16] __attribute__((aligned(16)));
  uint8_t in[16] __attribute__((aligned(16)));
  uint8_t out[16] __attribute__((aligned(16)));
  uint8_t first[16];
  int id;
  int bad_round;
};

static struct party g_party[2];
static atomic_int g_turn; /* 2 * round + thread id: whose XCRYPT is next */
static int g_rounds = 6;

static void take_turns(struct party *p) {
  for (int r = 0; r < g_rounds; ++r) {
    while (atomic_load_explicit(&g_turn, memory_order_acquire) != 2 * r + p->id) {
    }
    padlock_xcrypt_ecb(p->in, p->out, p->key, NULL, p->cw, 1);
    if (r == 0) memcpy(p->first, p->out, 16);
    else if (memcmp(p->first, p->out, 16) != 0 && p->bad_round < 0) p->bad_round = r;
    atomic_store_explicit(&g_turn, 2 * r + p->id + 1, memory_order_release);
  }
}

static void *second(void *arg) {
  take_turns(arg);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) g_rounds = atoi(argv[1]);
  if (g_rounds < 2) die("usage: switch_key [ROUNDS >= 2]");
  for (int i = 0; i < 2; ++i) {
    struct party *p = &g_party[i];
    const uint32_t cw = 10; /* AES-128 encrypt, hardware key schedule (§6.2) */
    memset(p->cw, 0, sizeof p->cw);
    memcpy(p->cw, &cw, sizeof cw);
    parse_hex(i == 0 ? kK1 : kK2, p->key, 16);
    parse_hex(i == 0 ? kPlain1 : kPlain2, p->in, 16);
    p->id = i;
    p->bad_round = -1;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, second, &g_party[1]) != 0) die("pthread_create");
  take_turns(&g_party[0]);
  pthread_join(t, NULL);
  printf("rounds=%d\n", g_rounds);
  int ok = 1;
  for (int i = 0; i < 2; ++i) {
    if (g_party[i].bad_round >= 0) {
      printf("mismatch thread=%d round=%d\n", i, g_party[i].bad_round);
      ok = 0;
    }
  }
  print_hex("c1", g_party[0].first, 16);
  print_hex("c2", g_party[1].first, 16);
  return ok ? 0 : 1;
}
