#include "emulator/linux/signal/host_signals.hpp"

#include <signal.h>
#include <sys/time.h>
#include <ucontext.h>

#include <atomic>

#include "emulator/linux/process.hpp"

namespace padlock::emu {

namespace {

std::atomic<uint64_t> g_arrived{0};
std::atomic<bool> g_running{false};
std::atomic<uc_engine*> g_uc{nullptr};
std::atomic<std::atomic<bool>*> g_host_stop{nullptr};  // HostStop::flag()
std::atomic<uint64_t> g_blocked{0};  // signals on_host_signal left blocked on the host
struct ArrivedInfo {
  std::atomic<int> pid{0}, uid{0}, code{0};
};
ArrivedInfo g_info[kNumSignals + 1];
struct sigaction g_saved[kNumSignals + 1];
bool g_saved_valid[kNumSignals + 1];

// Signals that only the emulation itself raises for the guest (faults) are never
// forwarded from the host: there they would mean a crash of the emulator.
bool forwardable(int sig) {
  switch (sig) {
    case SIGSEGV:
    case SIGBUS:
    case SIGILL:
    case SIGFPE:
    case SIGTRAP:
    case SIGKILL:
    case SIGSTOP:
    case 32:  // reserved by the host's C library for its threads
    case 33:
      return false;
    default:
      return sig >= 1 && sig <= kNumSignals;
  }
}

// Signals whose default action ends the process and that arrive from outside (a
// terminal's ^C, kill, a hang-up, a resource limit). The emulator catches them on the
// host even while the guest leaves them at SIG_DFL, so the guest dies through the run
// loop, which closes --profile, --trace, --chrome-trace and --stats before the emulator
// ends by the same signal (emulator/cli/main.cpp).
constexpr int kEndingSignals[] = {SIGHUP,  SIGINT,  SIGQUIT,   SIGUSR1, SIGUSR2,
                                  SIGALRM, SIGTERM, SIGVTALRM, SIGPROF, SIGXCPU};

bool ends_by_default(int sig) {
  for (int s : kEndingSignals) {
    if (s == sig) return true;
  }
  return false;
}

// An embedder (Python) keeps SIGINT for itself: it stops the run (HostStop::kill) and
// raises KeyboardInterrupt; the guest never sees it.
bool forwarded(const Process& p, int sig) {
  return forwardable(sig) && !(p.options().embedded && sig == SIGINT);
}

sigset_t signal_set(uint64_t bits) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig = 1; sig <= kNumSignals; ++sig) {
    if (bits & sig_bit(sig)) sigaddset(&set, sig);
  }
  return set;
}

void on_host_signal(int sig, siginfo_t* si, void* context) {
  // The signal stays blocked on the host (the mask restored on return) until the run
  // loop has collected it. A host interval timer re-arms only when its signal is taken
  // (Linux's dequeue_signal), so a guest's 1 us timer under --timing off cannot keep the
  // emulator in this handler, with no time left for the run loop (docs/reliability.md,
  // "Every run stoppable").
  sigaddset(&static_cast<ucontext_t*>(context)->uc_sigmask, sig);
  g_blocked.fetch_or(sig_bit(sig));
  g_info[sig].pid.store(si->si_pid, std::memory_order_relaxed);
  g_info[sig].uid.store(static_cast<int>(si->si_uid), std::memory_order_relaxed);
  g_info[sig].code.store(si->si_code, std::memory_order_relaxed);
  g_arrived.fetch_or(sig_bit(sig));
  // A host signal is an interrupt: a PadLock REP in progress stops at its next interrupt
  // point (§1.7) and the run loop sees the signal within milliseconds.
  if (std::atomic<bool>* stop = g_host_stop.load()) stop->store(true);
  uc_engine* uc = g_uc.load();
  if (uc == nullptr) return;
  // A stop that comes before uc_emu_start has begun would be lost (the start resets the
  // request), and the guest would run on to its next system call, or forever: it stays
  // pending for the next start until collect_host_signals has seen the signal.
  uc_emu_stop_pending(uc, true);
  if (g_running.load()) uc_emu_stop(uc);
}

void set_host(int sig, void (*handler)(int, siginfo_t*, void*), void (*simple)(int)) {
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  if (handler != nullptr) {
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;  // no SA_RESTART: blocking host calls return EINTR
  } else {
    sa.sa_handler = simple;
  }
  if (!g_saved_valid[sig]) {
    sigaction(sig, nullptr, &g_saved[sig]);
    g_saved_valid[sig] = true;
  }
  sigaction(sig, &sa, nullptr);
}

}  // namespace

void host_signals_init(Process& p) {
  g_uc.store(p.cpu().uc());
  g_host_stop.store(&p.host_stop().flag());
  g_arrived.store(0);
  // A signal the emulator inherited as ignored starts ignored in the guest, as exec keeps it.
  for (int sig = 1; sig <= kNumSignals; ++sig) {
    if (!forwarded(p, sig)) continue;
    struct sigaction cur {};
    if (sigaction(sig, nullptr, &cur) == 0 && cur.sa_handler == SIG_IGN) {
      p.signals().action[sig].handler = kSigIgn;
    } else if (!p.options().embedded && ends_by_default(sig)) {
      set_host(sig, on_host_signal, nullptr);
    }
  }
  set_host(SIGPIPE, nullptr, SIG_IGN);
}

void host_signals_restore() {
  // The guest's interval timers (alarm, setitimer: syscall/itimer.cpp) die with it; left
  // armed, their signal would now reach the emulator with the default action.
  const itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  setitimer(ITIMER_VIRTUAL, &off, nullptr);
  setitimer(ITIMER_PROF, &off, nullptr);
  // A second instance of a signal the handler left blocked is dropped (SIG_IGN discards
  // it), not delivered to the emulator's restored action once it is unblocked.
  const uint64_t blocked = g_blocked.exchange(0);
  for (int sig = 1; sig <= kNumSignals; ++sig) {
    if (blocked & sig_bit(sig)) signal(sig, SIG_IGN);
    if (g_saved_valid[sig]) sigaction(sig, &g_saved[sig], nullptr);
    g_saved_valid[sig] = false;
  }
  const sigset_t unblock = signal_set(blocked);
  sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
  g_host_stop.store(nullptr);
  uc_engine* uc = g_uc.exchange(nullptr);
  if (uc != nullptr) uc_emu_stop_pending(uc, false);
}

void host_signal_update(Process& p, int sig) {
  if (!forwarded(p, sig)) return;
  const uint64_t h = p.signals().action[sig].handler;
  if (sig == SIGPIPE) return;  // always ignored on the host (see the header)
  if (h == kSigIgn) {
    set_host(sig, nullptr, SIG_IGN);
  } else if (h == kSigDfl && (p.options().embedded || !ends_by_default(sig))) {
    set_host(sig, nullptr, SIG_DFL);
  } else {
    set_host(sig, on_host_signal, nullptr);
  }
}

void host_signals_running(bool running) {
  g_running.store(running);
}

void wait_host_signal() {
  // With every signal blocked, a signal that arrived after the caller last looked is seen
  // here; otherwise sigsuspend opens the mask and waits in one step (pause() would miss a
  // signal that arrives between the caller's check and the wait, and wait for the next).
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &old);
  if (g_arrived.load() == 0) sigsuspend(&old);
  sigprocmask(SIG_SETMASK, &old, nullptr);
}

bool host_signal_ends_guest(Process& p) {
  const uint64_t arrived = g_arrived.load();
  for (int sig : kEndingSignals) {
    if ((arrived & sig_bit(sig)) != 0 && p.signals().action[sig].handler == kSigDfl) return true;
  }
  return false;
}

int collect_host_signals(Process& p) {
  // Cleared first: a signal that arrives after the exchange sets them again.
  uc_emu_stop_pending(p.cpu().uc(), false);
  p.host_stop().rearm();
  uint64_t arrived = g_arrived.exchange(0);
  const int count = __builtin_popcountll(arrived);
  while (arrived != 0) {
    const int sig = __builtin_ctzll(arrived) + 1;
    arrived &= arrived - 1;
    GuestSiginfo si;
    si.signo = sig;
    si.code = g_info[sig].code.load();
    si.pid = g_info[sig].pid.load();
    si.uid = g_info[sig].uid.load();
    p.queue_process_signal(si);
  }
  // Unblocked on the host once the guest has taken its instance (a handler ran, or it was
  // ignored or waited for): as Linux re-arms an interval timer only when its signal is
  // dequeued, the next one comes after that, never faster than the guest takes them.
  const uint64_t taken = g_blocked.load() & ~p.signals().shared;
  g_blocked.fetch_and(~taken);
  const sigset_t unblock = signal_set(taken);
  sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
  // Collected inside a hook (a blocking system call's wait): the host handler stopped
  // Unicorn for these signals, and the caller may consume them at once (a signalfd read,
  // rt_sigtimedwait). The stop is then the run loop's own, not one no hook asked for.
  if (count > 0 && g_running.load()) p.request_stop();
  return count;
}

}  // namespace padlock::emu
