#include "emulator/linux/signal/signals.hpp"

#include <signal.h>

namespace padlock::emu {

DefaultAction default_action(int sig) {
  switch (sig) {
    case SIGCHLD:
    case SIGURG:
    case SIGWINCH:
      return DefaultAction::Ignore;
    case SIGCONT:
      return DefaultAction::Continue;
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
      return DefaultAction::Stop;
    case SIGQUIT:
    case SIGILL:
    case SIGTRAP:
    case SIGABRT:
    case SIGBUS:
    case SIGFPE:
    case SIGSEGV:
    case SIGXCPU:
    case SIGXFSZ:
    case SIGSYS:
      return DefaultAction::Core;
    default:
      return DefaultAction::Terminate;
  }
}

namespace {
struct Name {
  int sig;
  const char* name;
  const char* text;
};
constexpr Name kNames[] = {
    {SIGHUP, "SIGHUP", "Hangup"},
    {SIGINT, "SIGINT", "Interrupt"},
    {SIGQUIT, "SIGQUIT", "Quit"},
    {SIGILL, "SIGILL", "Illegal instruction"},
    {SIGTRAP, "SIGTRAP", "Trace/breakpoint trap"},
    {SIGABRT, "SIGABRT", "Aborted"},
    {SIGBUS, "SIGBUS", "Bus error"},
    {SIGFPE, "SIGFPE", "Floating point exception"},
    {SIGKILL, "SIGKILL", "Killed"},
    {SIGUSR1, "SIGUSR1", "User defined signal 1"},
    {SIGSEGV, "SIGSEGV", "Segmentation fault"},
    {SIGUSR2, "SIGUSR2", "User defined signal 2"},
    {SIGPIPE, "SIGPIPE", "Broken pipe"},
    {SIGALRM, "SIGALRM", "Alarm clock"},
    {SIGTERM, "SIGTERM", "Terminated"},
    {SIGSTKFLT, "SIGSTKFLT", "Stack fault"},
    {SIGCHLD, "SIGCHLD", "Child exited"},
    {SIGCONT, "SIGCONT", "Continued"},
    {SIGSTOP, "SIGSTOP", "Stopped (signal)"},
    {SIGTSTP, "SIGTSTP", "Stopped"},
    {SIGTTIN, "SIGTTIN", "Stopped (tty input)"},
    {SIGTTOU, "SIGTTOU", "Stopped (tty output)"},
    {SIGURG, "SIGURG", "Urgent I/O condition"},
    {SIGXCPU, "SIGXCPU", "CPU time limit exceeded"},
    {SIGXFSZ, "SIGXFSZ", "File size limit exceeded"},
    {SIGVTALRM, "SIGVTALRM", "Virtual timer expired"},
    {SIGPROF, "SIGPROF", "Profiling timer expired"},
    {SIGWINCH, "SIGWINCH", "Window changed"},
    {SIGIO, "SIGIO", "I/O possible"},
    {SIGPWR, "SIGPWR", "Power failure"},
    {SIGSYS, "SIGSYS", "Bad system call"},
};
}  // namespace

const char* signal_name(int sig) {
  for (const Name& n : kNames) {
    if (n.sig == sig) return n.name;
  }
  return sig >= 32 && sig <= kNumSignals ? "SIGRT" : "SIG?";
}

const char* signal_description(int sig) {
  for (const Name& n : kNames) {
    if (n.sig == sig) return n.text;
  }
  return "Real-time signal";
}

}  // namespace padlock::emu
