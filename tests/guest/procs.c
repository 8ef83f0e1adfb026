/* guest_procs: processes under padlock-emu (docs/emulator.md, "Processes"): fork, vfork,
 * clone, execve (of ELF programs and #! scripts), wait4/waitpid/waitid, SIGCHLD, pipes with
 * dup2, kill between guests. Each test prints "NAME=RESULT" lines.
 *
 * usage: procs fork | pipe | exec SCRIPT_DIR | kill | vfork | spawn | echo ARGS... |
 *        run PROGRAM ARGS...
 *
 *   fork   a child exits 7, another dies of SIGABRT: "exit=7 signaled=6", the child's
 *          getppid is the parent, SIGCHLD reached a handler, waitid reports CLD_EXITED
 *   pipe   a child writes through a pipe dup2'ed onto its stdout: "pipe=through the pipe"
 *   exec   the child execs this program ("echo"), and a #! script naming it, in SCRIPT_DIR
 *   kill   the parent kills a paused child with SIGTERM: "killed=15"
 *   vfork  vfork + execve, and vfork + _exit(3)
 *   spawn  posix_spawn of this program ("echo spawned")
 *   echo   prints "argv0=" (argv[0]'s last part) and "argv=A|B|..." (the arguments after
 *          "echo")
 *   run    fork + execv(PROGRAM, [PROGRAM, ARGS...]) + wait: "run_status=N" */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static volatile sig_atomic_t g_chld;

static void on_chld(int sig) {
  (void)sig;
  g_chld = 1;
}

static const char *self_path(void) {
  static char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = 0;
  return buf;
}

static void test_fork(void) {
  signal(SIGCHLD, on_chld);
  const pid_t me = getpid();
  pid_t a = fork();
  if (a == 0) _exit(getppid() == me ? 7 : 1);
  int st = 0;
  waitpid(a, &st, 0);
  pid_t b = fork();
  if (b == 0) abort();
  int st2 = 0;
  wait4(b, &st2, 0, NULL);
  printf("exit=%d signaled=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
         WIFSIGNALED(st2) ? WTERMSIG(st2) : -1);
  printf("sigchld=%d\n", (int)g_chld);
  pid_t c = fork();
  if (c == 0) _exit(5);
  siginfo_t si;
  memset(&si, 0, sizeof si);
  int r = waitid(P_PID, c, &si, WEXITED);
  printf("waitid=%d code=%d status=%d pid_ok=%d\n", r, si.si_code == CLD_EXITED,
         si.si_status, si.si_pid == c);
  printf("nochild=%d\n", waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD);
}

static void test_pipe(void) {
  int fds[2];
  if (pipe(fds) != 0) return;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    close(fds[1]);
    printf("through the pipe");
    fflush(stdout);
    _exit(0);
  }
  close(fds[1]);
  char buf[64] = {0};
  size_t got = 0;
  ssize_t n;
  while ((n = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)n;
  waitpid(pid, NULL, 0);
  printf("pipe=%s\n", buf);
}

static int run_and_wait(char *const argv[]) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execv(argv[0], argv);
    printf("execv failed: %d\n", errno);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_exec(const char *dir) {
  char *argv1[] = {(char *)self_path(), "echo", "one", "two words", NULL};
  printf("exec_status=%d\n", run_and_wait(argv1));
  char script[4096];
  snprintf(script, sizeof script, "%s/script.sh", dir);
  FILE *f = fopen(script, "w");
  fprintf(f, "#!%s echo\n", self_path());
  fclose(f);
  chmod(script, 0755);
  char *argv2[] = {script, "arg", NULL};
  printf("script_status=%d\n", run_and_wait(argv2));
  char *argv3[] = {"/nonexistent/program", NULL};
  fflush(stdout);
  printf("enoent=%d\n", execv(argv3[0], argv3) == -1 && errno == ENOENT);
  snprintf(script, sizeof script, "%s/plain.txt", dir);
  f = fopen(script, "w");
  fprintf(f, "not a program\n");
  fclose(f);
  chmod(script, 0755);
  char *argv4[] = {script, NULL};
  printf("enoexec=%d\n", execv(script, argv4) == -1 && errno == ENOEXEC);
}

static void test_kill(void) {
  int fds[2];
  pipe(fds);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    write(fds[1], "r", 1);  // ready
    for (;;) pause();
  }
  close(fds[1]);
  char b;
  read(fds[0], &b, 1);
  kill(pid, SIGTERM);
  int st = 0;
  waitpid(pid, &st, 0);
  printf("killed=%d\n", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
}

static void test_vfork(void) {
  fflush(stdout);
  pid_t pid = vfork();
  if (pid == 0) {
    char *argv[] = {(char *)self_path(), "echo", "vforked", NULL};
    execv(argv[0], argv);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  printf("vfork_exec=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  pid = vfork();
  if (pid == 0) _exit(3);
  waitpid(pid, &st, 0);
  printf("vfork_exit=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void test_spawn(void) {
  fflush(stdout);
  pid_t pid;
  char *argv[] = {(char *)self_path(), "echo", "spawned", NULL};
  int r = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
  int st = 0;
  waitpid(pid, &st, 0);
  printf("spawn=%d status=%d\n", r, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2) return 2;
  const char *w = argv[1];
  if (!strcmp(w, "fork")) test_fork();
  else if (!strcmp(w, "pipe")) test_pipe();
  else if (!strcmp(w, "exec") && argc > 2) test_exec(argv[2]);
  else if (!strcmp(w, "kill")) test_kill();
  else if (!strcmp(w, "vfork")) test_vfork();
  else if (!strcmp(w, "spawn")) test_spawn();
  else if (!strcmp(w, "run") && argc > 2) printf("run_status=%d\n", run_and_wait(argv + 2));
  else if (!strcmp(w, "echo")) {
    const char *base = strrchr(argv[0], '/');
    printf("argv0=%s\n", base ? base + 1 : argv[0]);
    printf("argv=");
    for (int i = 2; i < argc; ++i) printf("%s%s", i > 2 ? "|" : "", argv[i]);
    printf("\n");
    return 0;
  } else return 2;
  return 0;
}
