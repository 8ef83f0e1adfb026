/* guest_sockets: sockets under padlock-emu (docs/emulator.md, "Sockets"), the same lines
 * natively and under the emulator. i386 glibc reaches them through its direct system
 * calls; "socketcall" makes the same calls through i386 socketcall (x86-64: direct).
 *
 * usage: sockets unix | inet | rights | options | wait | socketcall | mmsg */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <time.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* socketpair, datagram and stream, send/recv and shutdown. */
static void test_unix(void) {
  int sv[2];
  printf("socketpair=%d\n", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
  char buf[32] = {0};
  send(sv[0], "ping", 4, 0);
  ssize_t n = recv(sv[1], buf, sizeof buf, 0);
  printf("recv=%zd %s\n", n, buf);
  shutdown(sv[0], SHUT_WR);
  printf("eof=%zd\n", recv(sv[1], buf, sizeof buf, 0));
  int dg[2];
  socketpair(AF_UNIX, SOCK_DGRAM, 0, dg);
  sendto(dg[0], "one", 3, 0, NULL, 0);
  sendto(dg[0], "three", 5, 0, NULL, 0);
  memset(buf, 0, sizeof buf);
  ssize_t first = recvfrom(dg[1], buf, sizeof buf, 0, NULL, NULL);
  ssize_t second = recvfrom(dg[1], buf, sizeof buf, 0, NULL, NULL);
  printf("dgram=%zd %zd\n", first, second);
}

/* A TCP server on 127.0.0.1 (port from the kernel) and a forked client. */
static void test_inet(void) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int b = bind(s, (struct sockaddr *)&a, sizeof a);
  printf("bind=%d listen=%d\n", b, listen(s, 4));
  socklen_t len = sizeof a;
  getsockname(s, (struct sockaddr *)&a, &len);
  printf("port_set=%d len=%u\n", ntohs(a.sin_port) != 0, len);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(c, (struct sockaddr *)&a, sizeof a) != 0) _exit(1);
    const char msg[] = "hello over tcp";
    write(c, msg, sizeof msg);
    char b[8];
    read(c, b, 2);
    _exit(b[0] == 'o' && b[1] == 'k' ? 0 : 2);
  }
  struct sockaddr_in peer;
  socklen_t plen = sizeof peer;
  int c = accept4(s, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
  printf("accept=%d peer=%s\n", c >= 0, inet_ntoa(peer.sin_addr));
  char buf[64] = {0};
  size_t got = 0;
  while (got < 15) {
    ssize_t n = read(c, buf + got, sizeof buf - got);
    if (n <= 0) break;
    got += (size_t)n;
  }
  printf("got=%s\n", buf);
  write(c, "ok", 2);
  int st = 0;
  waitpid(pid, &st, 0);
  printf("client=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
  int s6 = socket(AF_INET6, SOCK_STREAM, 0);
  printf("inet6=%d\n", s6 >= 0 && bind(s6, (struct sockaddr *)&a6, sizeof a6) == 0);
}

/* A descriptor passed with SCM_RIGHTS, and a second control message. */
static void test_rights(void) {
  int sv[2], p[2];
  socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
  pipe(p);
  write(p[1], "via fd", 6);
  char data = 'x';
  struct iovec iov = {&data, 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr m = {0};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = u.buf;
  m.msg_controllen = sizeof u.buf;
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &p[0], sizeof(int));
  printf("sendmsg=%zd\n", sendmsg(sv[0], &m, 0));
  close(p[0]);
  char got = 0;
  struct iovec riov = {&got, 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } r;
  struct msghdr rm = {0};
  rm.msg_iov = &riov;
  rm.msg_iovlen = 1;
  rm.msg_control = r.buf;
  rm.msg_controllen = sizeof r.buf;
  ssize_t rn = recvmsg(sv[1], &rm, 0);
  printf("recvmsg=%zd data=%c\n", rn, got);
  struct cmsghdr *rc = CMSG_FIRSTHDR(&rm);
  int fd = -1;
  if (rc && rc->cmsg_type == SCM_RIGHTS) memcpy(&fd, CMSG_DATA(rc), sizeof fd);
  char buf[16] = {0};
  ssize_t pn = read(fd, buf, sizeof buf);
  printf("controllen=%zu passed=%zd %s\n", (size_t)rm.msg_controllen, pn, buf);
}

/* Option values: ints, and struct timeval (SO_RCVTIMEO), whose layout differs by ABI. */
static void test_options(void) {
  int s = socket(AF_INET, SOCK_DGRAM, 0);
  int type = 0;
  socklen_t len = sizeof type;
  getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &len);
  printf("type=%d len=%u\n", type == SOCK_DGRAM, len);
  struct timeval tv = {2, 500000}, back = {0, 0};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  len = sizeof back;
  getsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &back, &len);
  printf("rcvtimeo=%ld.%06ld len=%u\n", (long)back.tv_sec, (long)back.tv_usec, len);
  struct timeval shortt = {0, 20000};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &shortt, sizeof shortt);
  char b;
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, (struct sockaddr *)&a, sizeof a);
  printf("timeout=%d\n", recv(s, &b, 1, 0) == -1 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

/* select, pselect, ppoll, epoll and eventfd on a socketpair, and timerfd. */
static void test_wait(void) {
  int sv[2];
  socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
  fd_set r;
  FD_ZERO(&r);
  FD_SET(sv[1], &r);
  struct timeval tv = {0, 1000};
  printf("select_idle=%d\n", select(sv[1] + 1, &r, NULL, NULL, &tv));
  write(sv[0], "z", 1);
  FD_ZERO(&r);
  FD_SET(sv[1], &r);
  tv.tv_sec = 1;
  int ready = select(sv[1] + 1, &r, NULL, NULL, &tv);
  printf("select_ready=%d isset=%d\n", ready, FD_ISSET(sv[1], &r));
  struct timespec ts = {1, 0};
  FD_ZERO(&r);
  FD_SET(sv[1], &r);
  printf("pselect=%d\n", pselect(sv[1] + 1, &r, NULL, NULL, &ts, NULL));
  struct pollfd pf = {sv[1], POLLIN, 0};
  int pr = ppoll(&pf, 1, &ts, NULL);
  printf("ppoll=%d revents=%d\n", pr, pf.revents == POLLIN);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0x1122334455667788ull};
  epoll_ctl(ep, EPOLL_CTL_ADD, sv[1], &ev);
  struct epoll_event out[2];
  memset(out, 0, sizeof out);
  int n = epoll_wait(ep, out, 2, 1000);
  printf("epoll=%d data_ok=%d\n", n, out[0].data.u64 == 0x1122334455667788ull);
  int e = eventfd(3, EFD_CLOEXEC);
  uint64_t v = 0;
  read(e, &v, sizeof v);
  printf("eventfd=%llu\n", (unsigned long long)v);
  /* timerfd: relative, then absolute on the clock the program reads (10 ms ahead). */
  int t = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  struct itimerspec its = {{0, 0}, {0, 10000000}}, cur;
  timerfd_settime(t, 0, &its, NULL);
  timerfd_gettime(t, &cur);
  printf("timerfd_armed=%d\n", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0);
  uint64_t expirations = 0;
  ssize_t tn = read(t, &expirations, sizeof expirations);
  printf("timerfd=%zd %llu\n", tn, (unsigned long long)expirations);
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  now.tv_nsec += 10000000;
  if (now.tv_nsec >= 1000000000) now.tv_sec += 1, now.tv_nsec -= 1000000000;
  struct itimerspec abs_its = {{0, 0}, now};
  timerfd_settime(t, TFD_TIMER_ABSTIME, &abs_its, NULL);
  struct pollfd tp = {t, POLLIN, 0};
  int early = poll(&tp, 1, 0);
  tn = read(t, &expirations, sizeof expirations);
  printf("timerfd_abs=%d %zd %llu\n", early, tn, (unsigned long long)expirations);
}

/* i386: the socketcall multiplexer (x86-64 has none: the direct calls). */
static void test_socketcall(void) {
#if defined(__i386__)
  int sv[2];
  unsigned long args[4] = {AF_UNIX, SOCK_STREAM, 0, (unsigned long)sv};
  long r = syscall(SYS_socketcall, 8 /* SYS_SOCKETPAIR */, args);
  char buf[8] = {0};
  unsigned long sargs[4] = {(unsigned long)sv[0], (unsigned long)"sc", 2, 0};
  long s = syscall(SYS_socketcall, 9 /* SYS_SEND */, sargs);
  unsigned long rargs[4] = {(unsigned long)sv[1], (unsigned long)buf, sizeof buf, 0};
  long g = syscall(SYS_socketcall, 10 /* SYS_RECV */, rargs);
  printf("socketcall=%ld %ld %ld %s\n", r, s, g, buf);
#else
  printf("socketcall=0 2 2 sc\n");
#endif
}

/* sendmmsg and recvmmsg on a datagram socketpair: three messages in one call each way
 * (MSG_WAITFORONE), then an empty socket under MSG_DONTWAIT. */
static void test_mmsg(void) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0) exit(2);
  const char *words[3] = {"one", "two", "three"};
  struct iovec out_iov[3];
  struct mmsghdr out[3];
  memset(out, 0, sizeof out);
  for (int i = 0; i < 3; ++i) {
    out_iov[i].iov_base = (void *)words[i];
    out_iov[i].iov_len = strlen(words[i]);
    out[i].msg_hdr.msg_iov = &out_iov[i];
    out[i].msg_hdr.msg_iovlen = 1;
  }
  const int sent = sendmmsg(sv[0], out, 3, 0);
  printf("sendmmsg=%d lens=%u,%u,%u\n", sent, out[0].msg_len, out[1].msg_len, out[2].msg_len);
  char buf[4][16];
  struct iovec in_iov[4];
  struct mmsghdr in[4];
  memset(in, 0, sizeof in);
  memset(buf, 0, sizeof buf);
  for (int i = 0; i < 4; ++i) {
    in_iov[i].iov_base = buf[i];
    in_iov[i].iov_len = sizeof buf[i] - 1;
    in[i].msg_hdr.msg_iov = &in_iov[i];
    in[i].msg_hdr.msg_iovlen = 1;
  }
  const int got = recvmmsg(sv[1], in, 4, MSG_WAITFORONE, NULL);
  printf("recvmmsg=%d", got);
  for (int i = 0; i < got; ++i) printf(" %s/%u", buf[i], in[i].msg_len);
  printf("\n");
  errno = 0;
  const int none = recvmmsg(sv[1], in, 4, MSG_DONTWAIT, NULL);
  printf("empty recvmmsg=%d eagain=%d\n", none, errno == EAGAIN);
  close(sv[0]);
  close(sv[1]);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2) return 2;
  if (!strcmp(argv[1], "unix")) test_unix();
  else if (!strcmp(argv[1], "inet")) test_inet();
  else if (!strcmp(argv[1], "rights")) test_rights();
  else if (!strcmp(argv[1], "options")) test_options();
  else if (!strcmp(argv[1], "wait")) test_wait();
  else if (!strcmp(argv[1], "socketcall")) test_socketcall();
  else if (!strcmp(argv[1], "mmsg")) test_mmsg();
  else return 2;
  return 0;
}
