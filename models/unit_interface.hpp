// The small interface the PadLock models speak to: registers, guest memory with fault
// reporting, EFLAGS[30], a clock and a diagnostics sink. Nothing here knows Unicorn.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>

#include "isa/control_word.hpp"
#include "models/diagnostics.hpp"

namespace padlock {

enum class Gpr : uint8_t { AX = 0, CX = 1, DX = 2, BX = 3, SP = 4, BP = 5, SI = 6, DI = 7 };

// The architectural state a PadLock instruction reads or writes.
struct ArchState {
  uint64_t gpr[8] = {};
  uint64_t eflags = 0x2;
  bool cr4_osfxsr = true;  // CR4[9] (§1.2); Linux always sets it
  // CR0[3] (TS): PadLock runs in the SSE datapath (§1.2 note), so with TS set it raises #NM
  // as SSE does (older, lazy-FPU Linux kernels cleared TS with irq_ts_save() around each PadLock
  // instruction "to prevent taking the spurious DNA fault"). Only ring-0 harness code sets it.
  bool cr0_ts = false;

  uint64_t& operator[](Gpr r) { return gpr[static_cast<int>(r)]; }
  uint64_t operator[](Gpr r) const { return gpr[static_cast<int>(r)]; }

  static constexpr uint64_t kEflags30 = 1ull << 30;
  bool eflags30() const { return (eflags & kEflags30) != 0; }
  void set_eflags30(bool v) { eflags = v ? (eflags | kEflags30) : (eflags & ~kEflags30); }
};

// Register access at an effective address size (§3.1 "REP prefix": an address-size
// prefix selects SI/ESI/RSI etc.). Writes of 16 bits keep the upper bits; writes of
// 32 bits zero-extend, as any 32-bit register write does on x86-64.
inline uint64_t reg_get(const ArchState& s, Gpr r, unsigned addr_size) {
  const uint64_t v = s[r];
  return addr_size == 64 ? v : addr_size == 32 ? (v & 0xFFFFFFFFull) : (v & 0xFFFFull);
}
inline void reg_set(ArchState& s, Gpr r, uint64_t v, unsigned addr_size) {
  uint64_t& dst = s[r];
  if (addr_size == 64)
    dst = v;
  else if (addr_size == 32)
    dst = v & 0xFFFFFFFFull;
  else
    dst = (dst & ~0xFFFFull) | (v & 0xFFFFull);
}
// Effective address arithmetic wraps at the address size.
inline uint64_t ea_add(uint64_t base, uint64_t delta, unsigned addr_size) {
  const uint64_t sum = base + delta;
  return addr_size == 64 ? sum : addr_size == 32 ? (sum & 0xFFFFFFFFull) : (sum & 0xFFFFull);
}

enum class Access : uint8_t { Read = 1, Write = 2 };

// Guest linear memory. Implementations: the emulator's page map, and FlatMemory for tests.
class GuestMemory {
 public:
  virtual ~GuestMemory() = default;
  // Host pointer to [va, va+len) if the whole range is mapped for `access` and is
  // contiguous in host memory, else nullptr. Never faults.
  virtual uint8_t* translate(uint64_t va, uint64_t len, Access access) = 0;
  // How many bytes from va (at most len) are accessible; va + result is the first
  // faulting byte when result < len.
  virtual uint64_t accessible(uint64_t va, uint64_t len, Access access) = 0;

  // Copies that may cross host-discontiguous mappings. They return false, having
  // copied nothing useful, when any byte is inaccessible: callers probe first.
  bool read(uint64_t va, void* dst, uint64_t len);
  bool write(uint64_t va, const void* src, uint64_t len);
};

enum class FaultKind : uint8_t {
  None,
  InvalidOpcode,       // #UD
  GeneralProtection,   // #GP (misalignment, §3.1 "must be aligned ... or a General Protection")
  PageFault,           // #PF (an inaccessible byte)
  DeviceNotAvailable,  // #NM (CR0.TS set, ArchState::cr0_ts)
  // Not a chip fault: an instruction with no public semantics (REP XRNG2, REP XMODEXP,
  // REP MONTMUL2, SM2 with EDX != 8; docs/fidelity/gmi.md). The emulator stops the guest.
  NotModelled,
};

// The mnemonic of a fault kind, as traces and the Python API print it: "none", "#UD",
// "#GP", "#PF", "#NM", "not-modelled".
inline const char* fault_name(FaultKind k) {
  static constexpr const char* kNames[] = {"none", "#UD", "#GP", "#PF", "#NM", "not-modelled"};
  const auto i = static_cast<size_t>(k);
  return i < std::size(kNames) ? kNames[i] : "?";
}

struct Fault {
  FaultKind kind = FaultKind::None;
  uint64_t address = 0;  // linear address for #PF; the misaligned pointer for #GP
  bool write = false;
};

enum class Status : uint8_t {
  Completed,    // the instruction finished; the PC moves past it
  Faulted,      // a fault was raised; the PC stays; registers as the guide prescribes
  Interrupted,  // stopped at an interruptible point with registers updated (§1.7);
                // the PC stays, so the instruction resumes after the interrupt
};

// A range of guest linear memory (len 0: none).
struct MemSpan {
  uint64_t addr = 0;
  uint64_t len = 0;
};

// What one execution of a PadLock instruction did and cost. The units fill in what they
// touched, so the trace, the profile, the statistics and the checker read it here and never
// work it out again (docs/architecture.md).
struct Outcome {
  Status status = Status::Completed;
  Fault fault;
  uint64_t cycles = 0;        // clocks until a following SSE/PadLock instruction can issue
  uint64_t int_cycles = 0;    // clocks seen by following integer/MMX/x87 code (§3.3 overlap)
  uint64_t bytes = 0;         // payload bytes processed (hashed, encrypted, stored)
  uint32_t blocks = 0;        // 16-byte blocks (ACE), 64-byte blocks (PHE), stores (RNG)
  bool key_reloaded = false;  // ACE loaded the control word and key (EFLAGS[30] was 0)

  // Memory: the data stream read (XCRYPT source, XSHA message); the result written (XSTORE
  // bytes, XCRYPT output or DGEST's MAC block, the XSHA hash words, MONTMUL's T with its
  // spare bits); XCRYPT's chaining block at EAX afterwards (CBC, CFB, OFB, CTR).
  MemSpan input, output, chain;
  // XCRYPT: the control word the engine used (§3.2) and whether it was the one already
  // loaded (EFLAGS[30] = 1, §1.8) rather than read at EDX; key_addr: EBX when it loaded.
  bool has_cw = false;
  bool cw_cached = false;
  isa::ControlWord cw;
  uint64_t key_addr = 0;
  // Diagnostics raised by this execution: bit i is Diag(i) (filled by the execution core).
  uint64_t diags = 0;

  static Outcome faulted(FaultKind k) {
    Outcome o;
    o.status = Status::Faulted;
    o.fault.kind = k;
    return o;
  }
  static Outcome fault_ud() { return faulted(FaultKind::InvalidOpcode); }
};

// The environment of one PadLock instruction: the virtual clock, the pending interrupt
// and the diagnostics sink.
struct ExecEnv {
  uint64_t now = 0;  // virtual clock in cycles when the instruction starts
  // Cycle at which an external interrupt becomes pending. A REP instruction that reaches
  // an interruptible point (§1.7, §6.6) at or after this cycle, having made progress,
  // stops there with Status::Interrupted.
  uint64_t interrupt_at = std::numeric_limits<uint64_t>::max();
  double mhz = 1600.0;  // core clock; converts the RNG's bit rates into cycles
  uint64_t pc = 0;      // guest PC, for diagnostics
  DiagnosticSink* diag = nullptr;

  void report(Diag d) const {
    if (diag != nullptr) diag->report(d, pc);
  }
  bool interrupt_due(uint64_t cycles_so_far) const { return now + cycles_so_far >= interrupt_at; }

  // Set by the host side (a host signal, --max-time, a kill) while the instruction runs: an
  // interrupt that arrives now, whatever the virtual clock says. The units look at it
  // between batches of at most kHostStopBatch bytes of data and stop at the next
  // interruptible point (§1.7), so a REP over gigabytes ends within milliseconds of host
  // time and resumes correctly if the guest goes on (docs/reliability.md).
  const std::atomic<bool>* host_stop = nullptr;
  static constexpr uint64_t kHostStopBatch = uint64_t{1} << 20;
  bool host_stop_requested() const {
    return host_stop != nullptr && host_stop->load(std::memory_order_relaxed);
  }
  // The most units of `unit_bytes` to run before looking at host_stop again.
  uint64_t host_batch(uint64_t unit_bytes) const {
    return host_stop == nullptr ? UINT64_MAX : kHostStopBatch / unit_bytes;
  }
};

}  // namespace padlock
