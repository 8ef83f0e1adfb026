/* What bench/guest/xcrypt_loop.c (under padlock-emu) and bench/host_stream.c (on the host)
 * share, so that both do the same passes over the same buffers: SIZE and the stream shape
 * read from the command line, the buffers filled alike, and the checksum printed.
 *
 *   inplace   one call of SIZE bytes per pass, output over the input
 *   separate  one call per pass from one SIZE buffer into another
 *   steps     SIZE/STEP calls of STEP bytes per pass from one buffer into the other, as a
 *             file encryption or a driver walks its data (STEP 1 MiB, or SIZE if smaller) */
#ifndef PADLOCK_BENCH_STREAM_SHAPE_H
#define PADLOCK_BENCH_STREAM_SHAPE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stream_buffers {
  size_t size, step;
  uint8_t *in, *out; /* out == in in place */
};

/* 0 with the buffers filled; else the exit status, after one line on stderr. */
static int stream_buffers_make(const char* prog, const char* size_arg, const char* shape,
                               struct stream_buffers* b) {
  b->size = strtoul(size_arg, NULL, 0);
  if (b->size == 0 || b->size % 16 != 0) {
    fprintf(stderr, "%s: SIZE must be a positive multiple of 16\n", prog);
    return 2;
  }
  const int separate = strcmp(shape, "inplace") != 0;
  b->step = b->size;
  if (strcmp(shape, "steps") == 0) {
    b->step = b->size < (1u << 20) ? b->size : (1u << 20);
  } else if (separate && strcmp(shape, "separate") != 0) {
    fprintf(stderr, "%s: unknown shape %s\n", prog, shape);
    return 2;
  }
  b->in = aligned_alloc(16, b->size);
  b->out = separate ? aligned_alloc(16, b->size) : b->in;
  if (b->in == NULL || b->out == NULL) return 1;
  for (size_t i = 0; i < b->size; ++i) b->in[i] = (uint8_t)(i * 7);
  if (separate) memset(b->out, 0, b->size);
  return 0;
}

static void stream_buffers_free(struct stream_buffers* b) {
  if (b->out != b->in) free(b->out);
  free(b->in);
}

static uint32_t fnv1a(const uint8_t* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

/* The line both print: a checksum of the first blocks of the output (enough to check). */
static void stream_print(const char* mode, const struct stream_buffers* b, unsigned long count,
                         const uint8_t* result, size_t result_len) {
  printf("%s %zu x %lu: %08x\n", mode, b->size, count,
         fnv1a(result, result_len < 4096 ? result_len : 4096));
}

#endif
