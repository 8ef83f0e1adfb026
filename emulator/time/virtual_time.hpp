// The guest's clock (docs/timing.md): one cycle counter at --mhz drives everything the guest
// can observe: clock_gettime (every clock), gettimeofday, time, times, clock(), getrusage,
// RDTSC, the sleeps (which advance it instead of blocking) and the interval/POSIX timers,
// whose signals become due at their virtual deadlines. It also holds the periodic
// interrupt model (--irq-hz, jitter from --seed) and the time at which ACE/SSE is free
// again (§3.3 overlap). No Unicorn here: emulator/linux/process.cpp feeds it cycles.
//
// With --timing off the guest sees the host clocks instead (fast functional mode); the
// cycle counter still runs (PadLock cycles only) for the models and RDTSC.
#pragma once

#include <cstdint>
#include <ctime>
#include <limits>

namespace padlock::emu {

struct VirtualTimeConfig {
  double mhz = 1600;
  bool enabled = true;         // --timing on|off
  double irq_hz = 250;         // --irq-hz (0: no interrupts)
  double irq_jitter = 0.1;     // period varies by +-10 % (seeded)
  uint64_t irq_cycles = 2000;  // cost of taking one interrupt (docs/timing.md)
  uint64_t seed = 0;
};

// One timer: ITIMER_REAL/VIRTUAL/PROF (alarm is ITIMER_REAL) or a POSIX timer.
struct VirtualTimer {
  bool armed = false;
  uint64_t deadline = 0;  // cycle
  uint64_t interval = 0;  // cycles; 0 = one-shot
  int signo = 0;          // 0: SIGEV_NONE
  int code = 0;           // si_code of the signal (SI_KERNEL for itimers, SI_TIMER)
  uint64_t overrun = 0;
};

class VirtualTime {
 public:
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  static constexpr int kItimers = 3;       // ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF
  static constexpr int kPosixTimers = 32;  // timer_create slots

  explicit VirtualTime(const VirtualTimeConfig& c);

  const VirtualTimeConfig& config() const { return cfg_; }
  bool enabled() const { return cfg_.enabled; }
  double mhz() const { return cfg_.mhz; }

  // --- the clock ---------------------------------------------------------------------
  uint64_t now() const { return now_; }
  void advance(uint64_t cycles) { now_ += cycles; }
  // Sets the clock (the direct model API's `now`); ACE is free by then at the latest.
  void set_now(uint64_t cycle) {
    now_ = cycle;
    if (sse_ready_ > cycle) sse_ready_ = cycle;
  }
  void advance_to(uint64_t cycle) {
    if (cycle > now_) now_ = cycle;
  }
  uint64_t ns_of(uint64_t cycles) const;  // elapsed cycles as nanoseconds
  uint64_t cycles_of_ns(uint64_t ns) const;

  // §3.3 overlap: the cycle at which ACE (and the SSE unit) is free. A following SSE or
  // PadLock instruction waits for it; integer, MMX and x87 code does not.
  uint64_t sse_ready() const { return sse_ready_; }
  void set_sse_ready(uint64_t c) { sse_ready_ = c; }
  void wait_for_sse() { advance_to(sse_ready_); }

  // What the guest reads, in nanoseconds (Linux clock ids); false for an unknown clock.
  // Virtual: REALTIME = the host's real time when the run started + elapsed; MONOTONIC
  // and BOOTTIME likewise from the host's monotonic clock; the CPU-time clocks = elapsed
  // (the guest has the CPU to itself). With timing off: the host's clocks.
  bool clock_ns(int clock_id, int64_t& ns) const;
  // Process CPU time (user) in ns: times(), getrusage(), clock().
  int64_t cpu_ns() const;

  // --- events (interrupts, timers) ----------------------------------------------------
  // The earliest cycle at which something is due (kNever if nothing is).
  uint64_t next_event() const { return next_event_; }
  // The clock and the next-event cycle as memory cells, for Unicorn's inline block cost
  // accounting (UC_CTL_BLOCK_COST): generated code adds each block's cost to the first
  // and calls the block hook once it reaches the second.
  uint64_t* clock_cell() { return &now_; }
  uint64_t* next_event_cell() { return &next_event_; }
  // The SSE-ready cycle as a cell: generated code calls the hook for an SSE block only
  // when the block starts before it (UC_CTL_BLOCK_COST_READY).
  uint64_t* sse_ready_cell() { return &sse_ready_; }
  // The cycle of the next periodic interrupt (ExecEnv.interrupt_at for REP instructions).
  uint64_t next_irq() const { return next_irq_; }
  // Takes the interrupt due at or before now: charges its cost and schedules the next.
  // Returns how many were taken (0 if none was due).
  unsigned take_irqs();
  uint64_t irqs_taken() const { return irqs_; }
  uint64_t irq_cycles_total() const { return irq_cycles_total_; }

  // Timers: index 0..2 itimers, 3.. POSIX timers. Values in cycles.
  VirtualTimer& timer(int i) { return timers_[i]; }
  const VirtualTimer& timer(int i) const { return timers_[i]; }
  static int posix_index(int id) { return kItimers + id; }
  void arm(int i, uint64_t value_cycles, uint64_t interval_cycles, int signo, int code);
  void disarm(int i) { arm(i, 0, 0, timers_[i].signo, timers_[i].code); }
  // Remaining cycles of an armed timer (0 if disarmed).
  uint64_t remaining(int i) const;
  // Fires every timer due at or before now; calls fire(signo, code, index) for each with a
  // signal, re-arms periodic ones. Returns the number fired.
  template <typename F>
  int fire_due(F&& fire) {
    int n = 0;
    for (int i = 0; i < kItimers + kPosixTimers; ++i) {
      VirtualTimer& t = timers_[i];
      if (!t.armed || t.deadline > now_) continue;
      if (t.interval > 0) {
        const uint64_t late = (now_ - t.deadline) / t.interval;
        t.overrun = late;
        t.deadline += (late + 1) * t.interval;
      } else {
        t.armed = false;
      }
      if (t.signo != 0) fire(t.signo, t.code, i);
      ++n;
    }
    recompute();
    return n;
  }
  // The earliest armed timer deadline (kNever if none): what pause()/sigsuspend() sleep to.
  uint64_t next_timer() const;
  bool posix_slot_used(int id) const { return posix_used_[id]; }
  int posix_alloc();  // -1 when full
  void posix_free(int id);

  // The end of the running guest thread's time slice (emulator/linux/threads/scheduler.hpp): an
  // event like a timer deadline, so generated code calls the block hook when it is reached. kNever
  // while the process has one thread.
  uint64_t slice_end() const { return slice_end_; }
  void set_slice_end(uint64_t cycle) {
    slice_end_ = cycle;
    recompute();
  }

  // Cycles spent idle in sleeps and waits (advanced without executing code).
  uint64_t idle_cycles() const { return idle_; }
  void add_idle(uint64_t c) { idle_ += c; }

 private:
  void schedule_irq();
  void recompute();
  uint64_t splitmix();

  VirtualTimeConfig cfg_;
  uint64_t now_ = 0;
  uint64_t sse_ready_ = 0;
  uint64_t next_irq_ = kNever;
  uint64_t next_event_ = kNever;
  uint64_t slice_end_ = kNever;
  uint64_t irqs_ = 0, irq_cycles_total_ = 0, idle_ = 0;
  uint64_t rng_ = 0;
  int64_t realtime0_ns_ = 0, monotonic0_ns_ = 0;
  VirtualTimer timers_[kItimers + kPosixTimers];
  bool posix_used_[kPosixTimers] = {};
};

}  // namespace padlock::emu
