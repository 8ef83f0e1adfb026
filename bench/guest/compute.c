/* A compute-bound static program with no PadLock instructions, for comparing the
 * emulator's speed on ordinary x86 code with qemu-user's (bench/run_vs_qemu.sh).
 * A mix of what real programs do: table-driven CRC32, a prime sieve, integer matrix
 * multiplication, quicksort and a hash table. Prints one checksum so the two emulators
 * can be checked to agree.
 *
 * usage: compute [ROUNDS]   (default 4) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng_state = 0x12345678u;
static uint32_t next_rand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

static uint32_t crc_table[256];
static void crc_init(void) {
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[i] = c;
  }
}
static uint32_t crc32_buf(const uint8_t *p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  while (n--) c = crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

static uint32_t sieve(uint32_t n) {
  uint8_t *composite = calloc(n + 1, 1);
  uint32_t count = 0;
  for (uint32_t i = 2; i <= n; ++i) {
    if (composite[i]) continue;
    ++count;
    for (uint64_t j = (uint64_t)i * i; j <= n; j += i) composite[j] = 1;
  }
  free(composite);
  return count;
}

#define N 96
static int32_t ma[N][N], mb[N][N], mc[N][N];
static uint32_t matmul(void) {
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      ma[i][j] = (int32_t)(next_rand() % 1000) - 500;
      mb[i][j] = (int32_t)(next_rand() % 1000) - 500;
    }
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      int32_t s = 0;
      for (int k = 0; k < N; ++k) s += ma[i][k] * mb[k][j];
      mc[i][j] = s;
    }
  uint32_t h = 0;
  for (int i = 0; i < N; ++i) h = h * 31 + (uint32_t)mc[i][(i * 7) % N];
  return h;
}

static void quicksort(uint32_t *a, long lo, long hi) {
  while (lo < hi) {
    uint32_t pivot = a[(lo + hi) / 2];
    long i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot) ++i;
      while (a[j] > pivot) --j;
      if (i <= j) {
        uint32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
        ++i;
        --j;
      }
    }
    if (j - lo < hi - i) {
      quicksort(a, lo, j);
      lo = i;
    } else {
      quicksort(a, i, hi);
      hi = j;
    }
  }
}

static uint32_t sort_test(size_t n) {
  uint32_t *a = malloc(n * sizeof *a);
  for (size_t i = 0; i < n; ++i) a[i] = next_rand();
  quicksort(a, 0, (long)n - 1);
  uint32_t h = 0;
  for (size_t i = 1; i < n; ++i) {
    if (a[i - 1] > a[i]) h = 0xDEADBEEF;
    h += a[i] >> 7;
  }
  free(a);
  return h;
}

#define HT_SIZE 65536
static uint32_t hash_test(size_t n) {
  uint32_t *keys = calloc(HT_SIZE, sizeof *keys);
  uint32_t *vals = calloc(HT_SIZE, sizeof *vals);
  uint32_t found = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t k = (next_rand() % 40000) + 1;
    uint32_t h = (k * 2654435761u) & (HT_SIZE - 1);
    while (keys[h] != 0 && keys[h] != k) h = (h + 1) & (HT_SIZE - 1);
    if (keys[h] == k) ++found;
    keys[h] = k;
    vals[h] += (uint32_t)i;
  }
  uint32_t s = found;
  for (size_t i = 0; i < HT_SIZE; ++i) s = s * 33 + vals[i];
  free(keys);
  free(vals);
  return s;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 4;
  crc_init();
  uint8_t *buf = malloc(1 << 20);
  uint32_t sum = 0;
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < (1u << 20); ++i) buf[i] = (uint8_t)next_rand();
    sum ^= crc32_buf(buf, 1u << 20);
    sum += sieve(2000000);
    sum ^= matmul();
    sum += sort_test(200000);
    sum ^= hash_test(300000);
  }
  free(buf);
  printf("checksum %08x\n", sum);
  return 0;
}
