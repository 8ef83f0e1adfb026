// Guest signal state (actions, mask, pending set, alternate stack) and the Linux rules
// for what happens to a signal: default actions, forced delivery of synchronous faults.
#pragma once

#include <cstdint>

namespace padlock::emu {

inline constexpr int kNumSignals = 64;

// Linux values (same on i386 and x86-64).
enum : uint64_t {
  kSigDfl = 0,
  kSigIgn = 1,
  kSaSiginfo = 0x00000004,
  kSaRestorer = 0x04000000,
  kSaOnstack = 0x08000000,
  kSaRestart = 0x10000000,
  kSaNodefer = 0x40000000,
  kSaResethand = 0x80000000,
};
enum : int { kSsOnstack = 1, kSsDisable = 2 };

// The page-fault error code Linux puts in the signal frame (arch/x86/include/asm/trap_pf.h):
// user mode always; write access; the page was present (a protection fault); a fetch.
inline uint64_t page_fault_error_code(bool write, bool present, bool fetch) {
  return 4u | (write ? 2u : 0u) | (present ? 1u : 0u) | (fetch ? 0x10u : 0u);
}

// si_code values used here.
enum : int {
  kSiUser = 0,
  kSiKernel = 0x80,
  kSiTkill = -6,
  kSegvMaperr = 1,
  kSegvAccerr = 2,
  kIllIllopn = 2,
  kIllPrvopc = 5,
  kFpeIntdiv = 1,
  kFpeIntovf = 2,
  kFpeFltinv = 7,
  kBusAdraln = 1,
  kTrapBrkpt = 1,
  kTrapTrace = 2,
};

struct GuestSigaction {
  uint64_t handler = kSigDfl;
  uint64_t flags = 0;
  uint64_t restorer = 0;
  uint64_t mask = 0;
};

// The parts of siginfo_t we fill.
struct GuestSiginfo {
  int signo = 0;
  int code = 0;
  int err = 0;
  uint64_t addr = 0;     // SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGTRAP
  int pid = 0, uid = 0;  // SI_USER / SI_TKILL
  // Fault details for the signal frame (trapno, err, cr2).
  int trapno = 0;
  uint64_t error_code = 0;
};

enum class DefaultAction { Terminate, Core, Ignore, Stop, Continue };
DefaultAction default_action(int sig);
const char* signal_name(int sig);         // "SIGSEGV"
const char* signal_description(int sig);  // "Segmentation fault"

inline uint64_t sig_bit(int sig) {
  return uint64_t{1} << (sig - 1);
}
// SIGKILL and SIGSTOP can be neither caught nor blocked.
inline constexpr uint64_t kUnblockable = (uint64_t{1} << (9 - 1)) | (uint64_t{1} << (19 - 1));

struct SignalState {
  GuestSigaction action[kNumSignals + 1];
  uint64_t blocked = 0;
  uint64_t pending = 0;  // the running thread's own (tgkill, its faults, SIGPIPE)
  // The process's (Linux's shared pending set: kill, timers, the host): any thread that
  // does not block one may take it, and every thread's sigpending, sigwait and signalfd
  // see it. Not swapped at a thread switch.
  uint64_t shared = 0;
  GuestSiginfo info[kNumSignals + 1];
  uint64_t altstack_sp = 0, altstack_size = 0;
  int altstack_flags = kSsDisable;
  // rt_sigsuspend: the mask to restore when the handler returns (saved in its frame).
  bool has_saved_mask = false;
  uint64_t saved_mask = 0;

  void raise(const GuestSiginfo& si) {
    pending |= sig_bit(si.signo);
    info[si.signo] = si;
  }
  void raise_shared(const GuestSiginfo& si) {
    shared |= sig_bit(si.signo);
    info[si.signo] = si;
  }
  // The running thread's view: its own pending signals and the process's.
  uint64_t all_pending() const { return pending | shared; }
  // Lowest-numbered pending signal of `set`, or 0.
  int lowest_pending(uint64_t set) const {
    const uint64_t ready = all_pending() & set;
    return ready == 0 ? 0 : __builtin_ctzll(ready) + 1;
  }
  // Dequeues `sig`: the thread's own first, as Linux's dequeue_signal.
  void take(int sig) {
    if (pending & sig_bit(sig)) {
      pending &= ~sig_bit(sig);
    } else {
      shared &= ~sig_bit(sig);
    }
  }
  // Lowest-numbered pending signal that is not blocked, or 0.
  int next_deliverable() const { return lowest_pending(~(blocked & ~kUnblockable)); }
  bool on_altstack(uint64_t sp) const {
    return altstack_flags != kSsDisable && sp > altstack_sp && sp - altstack_sp <= altstack_size;
  }
};

}  // namespace padlock::emu
