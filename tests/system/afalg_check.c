/* Runs the known answers of a vector file (afalg_vectors.txt) through AF_ALG, binding each
 * algorithm by its driver name so that only that driver (a PadLock one) can answer.
 * Prints one "AFALG <driver> ok|FAIL|ERROR" line per vector; exits 1 if any is not ok.
 * Built static for the system-mode initramfs (docs/system.md). */
#include <errno.h>
#include <linux/if_alg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SOL_ALG
#define SOL_ALG 279
#endif

enum { kMax = 256 };

static size_t unhex(const char *s, unsigned char *out) {
  size_t n = 0;
  if (strcmp(s, "-") == 0) return 0;
  for (; s[0] && s[1] && n < kMax; s += 2) sscanf(s, "%2hhx", &out[n++]);
  return n;
}

/* One transform: returns the output length, or -1 with errno set. */
static ssize_t run(const char *type, const char *driver, const unsigned char *key, size_t klen,
                   const unsigned char *iv, size_t ivlen, const unsigned char *in, size_t inlen,
                   unsigned char *out) {
  struct sockaddr_alg sa = {.salg_family = AF_ALG};
  int tfm, op;
  ssize_t got = -1;
  snprintf((char *)sa.salg_type, sizeof sa.salg_type, "%s", type);
  snprintf((char *)sa.salg_name, sizeof sa.salg_name, "%s", driver);
  tfm = socket(AF_ALG, SOCK_SEQPACKET, 0);
  if (tfm < 0) return -1;
  if (bind(tfm, (struct sockaddr *)&sa, sizeof sa) < 0 ||
      (klen && setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, klen) < 0) ||
      (op = accept(tfm, NULL, 0)) < 0) {
    close(tfm);
    return -1;
  }
  if (strcmp(type, "skcipher") == 0) {
    char cbuf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct af_alg_iv) + 16)] = {0};
    struct iovec iov = {(void *)in, inlen};
    struct msghdr msg = {.msg_control = cbuf, .msg_controllen = sizeof cbuf,
                         .msg_iov = &iov, .msg_iovlen = 1};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    struct af_alg_iv *aiv;
    c->cmsg_level = SOL_ALG;
    c->cmsg_type = ALG_SET_OP;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    *(int *)CMSG_DATA(c) = ALG_OP_ENCRYPT;
    c = CMSG_NXTHDR(&msg, c);
    c->cmsg_level = SOL_ALG;
    c->cmsg_type = ALG_SET_IV;
    c->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + 16);
    aiv = (struct af_alg_iv *)CMSG_DATA(c);
    aiv->ivlen = (unsigned)ivlen;
    memcpy(aiv->iv, iv, ivlen);
    if (sendmsg(op, &msg, 0) == (ssize_t)inlen) got = read(op, out, inlen);
  } else {
    /* A hash as a stream, 64 bytes per send with MSG_MORE but the last: the driver's
     * update() hashes whole blocks and its final() the rest, the kernel's own
     * "init+update+final" (a single send would be one digest() call). */
    size_t at = 0;
    while (inlen - at > 64 && send(op, in + at, 64, MSG_MORE) == 64) at += 64;
    if (inlen - at <= 64 && send(op, in + at, inlen - at, 0) == (ssize_t)(inlen - at)) {
      got = read(op, out, kMax);
    }
  }
  close(op);
  close(tfm);
  return got;
}

int main(int argc, char **argv) {
  FILE *f = fopen(argc > 1 ? argv[1] : "/afalg_vectors.txt", "r");
  char line[1024], type[14], driver[64], key[160], iv[80], in[600], exp[600];
  int bad = 0;
  if (!f) {
    perror("afalg_check: vectors");
    return 1;
  }
  while (fgets(line, sizeof line, f)) {
    unsigned char k[kMax], v[kMax], i[kMax], e[kMax], out[kMax];
    size_t kl, vl, il, el;
    ssize_t got;
    char *name;
    if (line[0] == '#' ||
        sscanf(line, "%13s %63s %159s %79s %599s %599s", type, driver, key, iv, in, exp) != 6)
      continue;
    kl = unhex(key, k);
    vl = unhex(iv, v);
    il = unhex(in, i);
    el = unhex(exp, e);
    /* Alternatives separated by commas: the first driver that binds (the Nano's are named
     * "-nano"); a vector no driver serves is reported under the first name. */
    name = strtok(driver, ",");
    got = -1;
    for (char *d = name; d; d = strtok(NULL, ",")) {
      got = run(type, d, k, kl, v, vl, i, il, out);
      if (got >= 0 || errno != ENOENT) {
        name = d;
        break;
      }
    }
    if (got < 0) {
      printf("AFALG %s %s ERROR %s\n", type, name, strerror(errno));
      bad = 1;
    } else if ((size_t)got != el || memcmp(out, e, el) != 0) {
      printf("AFALG %s %s FAIL\n", type, name);
      bad = 1;
    } else {
      printf("AFALG %s %s ok\n", type, name);
    }
  }
  fclose(f);
  return bad;
}
