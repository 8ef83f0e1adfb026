// One guest thread of a process (docs/emulator.md, "Threads"): what it keeps while another
// one runs on the process's CPU, and what it waits for. ThreadTable owns them.
#pragma once

#include <poll.h>

#include <cstdint>
#include <vector>

#include "emulator/cpu/cpu.hpp"
#include "emulator/linux/signal/signals.hpp"
#include "emulator/time/virtual_time.hpp"

namespace padlock::emu {

// What a thread waiting in wait4/waitid waits for (syscall/host_wait.cpp): waitid's
// idtype, id and options.
struct ChildWait {
  bool on = false;
  int idtype = 0;
  unsigned id = 0;
  int options = 0;
};

// The REP string instruction in progress (Process::charge_rep_string): its address, the clock
// when its last block ended (a block that is the instruction alone costs 0, so an
// iteration that follows at once finds the clock unchanged), elements charged so far,
// and the count register when its block was last entered.
struct RepRun {
  uint64_t pc = 0;
  uint64_t mark = ~0ull;
  uint64_t elements = 0;
  uint64_t charged = 0;  // clocks
  uint64_t count = 0;
  bool pending_first = false;  // began in a block before it: that block may have run one
  bool misaligned = false;     // its elements are misaligned (RepStringCost::misaligned)
};

// A guest thread's state while another one runs (threads/scheduler.cpp): its registers, i386
// TLS descriptors, per-thread signal state and kernel words, and what it waits for.
struct GuestThread {
  enum class State : uint8_t { Runnable, Waiting, Dead };
  int tid = 0;
  State state = State::Runnable;
  CpuContext ctx;
  uint64_t tls[kGdtTlsEntries] = {};  // i386: GDT entries 12..14 (per thread in Linux)
  uint64_t blocked = 0, pending = 0;  // signals
  uint64_t altstack_sp = 0, altstack_size = 0;
  int altstack_flags = kSsDisable;
  bool has_saved_mask = false;
  uint64_t saved_mask = 0;
  uint64_t clear_child_tid = 0, robust_list = 0, robust_list_len = 0;
  RepRun rep;
  // Waiting: on a futex word (0: a sleep) with a bitset, until a deadline (cycles);
  // wait_seq orders waiters (oldest woken first).
  uint64_t futex_addr = 0;
  uint32_t bitset = 0;
  uint64_t deadline = VirtualTime::kNever;
  uint64_t wait_seq = 0;
  bool pi_wait = false;  // in FUTEX_LOCK_PI: only FUTEX_UNLOCK_PI (or a death) wakes it
  // FUTEX_WAIT_REQUEUE_PI: waiting on its word for FUTEX_CMP_REQUEUE_PI to `requeue_pi_to`
  // (then pi_wait on that word, `requeued_pi`).
  uint64_t requeue_pi_to = 0;
  bool requeued_pi = false;
  bool sigwait = false;  // in rt_sigtimedwait: its mask before the wait is sigwait_mask
  uint64_t sigwait_mask = 0;
  bool has_result = false;  // the result its system call returns when it runs again
  int64_t result = 0;
  // Waiting on host descriptors (syscall/host_wait.cpp) until `host_deadline` (host
  // steady-clock ns; -1: none); then the call is made again (`retry`), for real once its
  // timeout has passed (`retry_real`; the wait began at virtual cycle `host_wait_start`).
  bool host_io = false;
  std::vector<pollfd> fds;
  ChildWait child;          // or on a child's state change (rechecked, host_wait.cpp)
  bool recheck = false;     // or made again at each poll (connect: a full backlog)
  bool connecting = false;  // connect in progress: the call made again asks SO_ERROR
  int64_t host_deadline = -1;
  uint64_t host_wait_start = 0;
  bool retry = false, retry_real = false;
  bool virtual_retry = false;  // made again after a virtual event of its descriptors
  uint64_t write_done = 0;     // a long pipe write: the bytes its pieces wrote so far
};

}  // namespace padlock::emu
