// The function-level harness: one CPU model's processor with an empty user-mode address
// space, into which ELF executables, shared objects and relocatable objects are loaded
// (emulator/harness/object_loader.hpp) and whose functions are called with the i386 cdecl or
// x86-64 SysV convention. Ordinary code runs under Unicorn exactly as in a Process (same
// AddressSpace, Cpu, CPUID, RDTSC and PadLock trap rules); what differs is that nothing
// runs unless called, calls return to a sentinel address, imported functions land on stub
// addresses that hand control to a host callback, and PadLock instructions can be
// observed before and after they execute.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "emulator/cpu/block_cache.hpp"
#include "emulator/cpu/cpu.hpp"
#include "emulator/cpu/uc_hooks.hpp"
#include "emulator/exec/core.hpp"
#include "emulator/exec/padlock_call.hpp"
#include "emulator/harness/machine_memory.hpp"
#include "emulator/memory/address_space.hpp"
#include "emulator/observe/check/checker.hpp"
#include "emulator/observe/stats.hpp"
#include "emulator/time/virtual_time.hpp"
#include "isa/decoder.hpp"
#include "models/padlock.hpp"
#include "models/state_io.hpp"

namespace padlock::emu {

// Bad use of the harness (unmapped memory, unknown register, a call while no code is
// loaded ...): a one-line message for the user.
class MachineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One PadLock instruction as the hooks see it. Before execution `after` and `outcome` are
// not yet meaningful; `before` holds the registers the model will read.
struct PadlockEvent {
  uint64_t pc = 0;
  uint64_t now = 0;  // virtual clock when the instruction starts
  isa::Decoded decoded;
  ArchState before;
  ArchState after;
  Outcome outcome;
  bool executed = false;  // after-hook: the model ran (false: the hook sees the before state)
};

// Why a call did not return normally. signo follows Linux's mapping of the x86 exception
// (the same as Process: #PF and #GP -> SIGSEGV, #UD -> SIGILL, #DE -> SIGFPE, INT3 ->
// SIGTRAP); for a PadLock instruction `padlock` holds the model's fault.
struct MachineFault {
  // Interrupted: the host asked it to stop (interrupt_from_host: Ctrl-C in Python).
  enum class Kind : uint8_t { Signal, Syscall, Timeout, InternalStop, Interrupted };
  Kind kind = Kind::Signal;
  int signo = 0;
  int code = 0;          // si_code
  uint64_t address = 0;  // si_addr (first faulting byte for SIGSEGV page faults)
  int trapno = -1;       // x86 exception vector
  uint64_t pc = 0;       // the faulting instruction
  std::string disassembly;
  bool write = false;       // a page fault by a store
  bool is_padlock = false;  // raised by a PadLock instruction
  isa::InsnId insn = isa::InsnId::Count;
  Fault padlock;                // the model's fault (kind, address, write)
  uint64_t syscall_number = 0;  // Kind::Syscall
};

// What one call did.
struct CallResult {
  bool returned = false;  // false: see `fault`
  uint64_t value = 0;     // EAX / RAX
  uint64_t value_hi = 0;  // EDX / RDX (64-bit results on i386, 128-bit on x86-64)
  MachineFault fault;
  uint64_t cycles = 0;          // virtual cycles the call took (instructions + PadLock)
  uint64_t instructions = 0;    // guest instructions executed
  uint64_t padlock_cycles = 0;  // cycles charged by PadLock instructions
  uint64_t padlock_count = 0;   // PadLock instructions executed (faulting ones included)
  uint64_t stub_calls = 0;      // stubs entered
};

// Ring-0 state a kernel driver runs under (docs/fidelity/emulator.md): CR4[9] (OSFXSR; clear:
// PadLock raises #UD, §1.2) and CR0[3] (TS; set: PadLock raises #NM). The CLI's user-space
// guests always run with OSFXSR set and TS clear, as Linux gives them.
struct ControlRegisters {
  bool cr4_osfxsr = true;
  bool cr0_ts = false;
};

// A named import resolved to a stub address; calls to it reach the stub handler.
struct StubSlot {
  std::string name;
  uint64_t address = 0;
};

class Machine {
 public:
  // The layout every Machine uses (all below 2 GiB, so x86-64 objects compiled for the
  // small code model reach every address with 32-bit displacements).
  static constexpr uint64_t kTlsBase = 0x0E000000;   // FS/GS base: stack-protector canary
  static constexpr uint64_t kStubBase = 0x0F000000;  // return sentinel, then stubs
  static constexpr uint64_t kStubSpan = 0x10000;     // 4096 stubs of 16 bytes
  static constexpr uint64_t kStubSize = 16;
  static constexpr uint64_t kArenaBase = 0x10000000;  // allocations and loaded objects
  static constexpr uint64_t kArenaLimit = 0x70000000;
  static constexpr uint64_t kStackTop = 0x7F000000;
  static constexpr uint64_t kStackSize = 8ull << 20;

  // bits: 32 (protected mode) or 64 (long mode; the CPU model must have it).
  // timing: PadLock time as the CLI charges it with --timing on (memory stalls and the
  // §3.3 overlap, docs/timing.md); {false, false} gives the units' clocks alone.
  Machine(const CpuModel& cpu, unsigned bits, const PadlockConfig& config, double mhz,
          const PadlockTiming& timing = {});
  ~Machine();
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  // The PadLock checker (docs/checker.md) on every PadLock instruction from now on;
  // `lookup` (may be null) names functions and lines when the findings are read.
  void enable_check(std::unique_ptr<check::SourceLookup> lookup);
  // Null until enable_check. Its findings are symbolized when findings() is called.
  check::Checker* checker() { return checker_.get(); }
  unsigned bits() const { return guest64_ ? 64 : 32; }
  double mhz() const { return mhz_; }
  // The PadLock units and the CPU model (padlock().model()).
  Padlock& padlock() { return *padlock_; }
  // RDMSR/WRMSR of MSR 0x110B / 0x1107 as ring-0 code would (false: #GP, §1.3). A write's
  // diagnostics (§2.2 reserved fields) become checker findings at the current PC.
  bool rdmsr(uint32_t msr, uint64_t& value);
  bool wrmsr(uint32_t msr, uint64_t value);

  // --- memory ---------------------------------------------------------------------------
  // Mapping, reads and writes, the arena; the page table is memory().space().
  MachineMemory& memory() { return *memory_; }

  // --- registers ------------------------------------------------------------------------
  // x86 names: eax..edi, ax..di, al..bl, rax..r15, r8d..r15d, eip/rip, eflags/rflags,
  // fs_base, gs_base. A 32-bit write on x86-64 zero-extends, as the instruction would.
  uint64_t reg(const std::string& name) const;
  void set_reg(const std::string& name, uint64_t value);
  static bool is_register(const std::string& name);
  // EFLAGS[30] (§1.8, §3.2): QEMU never holds it; the harness keeps the live bit.
  bool eflags30() const { return eflags30_; }
  void set_eflags30(bool on) { eflags30_ = on; }
  ControlRegisters& control_registers() { return cr_; }

  // --- virtual time and interrupts -------------------------------------------------------
  // Guest instructions, PadLock cycles, RDTSC reads; advance() moves it as time passing.
  VirtualTime& clock() { return *vt_; }
  // One external interrupt becomes pending at this cycle (§1.7): a REP instruction that
  // reaches an interruptible point stops there, the harness takes the interrupt (EFLAGS
  // is stored, so bit 30 clears, §1.8) and re-executes the instruction. UINT64_MAX: none.
  uint64_t interrupt_at = UINT64_MAX;
  uint64_t interrupts_taken = 0;

  // --- stubs -------------------------------------------------------------------------------
  // The stub address of `name`, created on first use.
  uint64_t stub_address(const std::string& name);
  const StubSlot* stub_at(uint64_t address) const;
  bool has_stub(const std::string& name) const { return stub_by_name_.count(name) != 0; }
  const std::vector<StubSlot>& stubs() const { return stubs_; }
  // Called when guest code enters a stub: returns the value for EAX/RAX. The handler reads
  // the arguments with arg(); it may call memory/register functions and call() again.
  using StubHandler = std::function<uint64_t(Machine&, const StubSlot&)>;
  void set_stub_handler(StubHandler h) { stub_handler_ = std::move(h); }
  // Argument i of the function being entered (at a stub: the return address is on top of
  // the stack), per the ABI: i386 cdecl stack words; x86-64 SysV RDI, RSI, RDX, RCX, R8,
  // R9, then the stack.
  uint64_t arg(unsigned i) const;

  // --- calls ---------------------------------------------------------------------------
  // Calls the function at `address` with word-sized integer arguments and runs until it
  // returns to the sentinel, a fault stops it, or `timeout_us` (0: none) elapses. Calls
  // nest (a stub handler may call back into the guest). The stack pointer starts at the
  // top of the machine's stack for an outermost call.
  CallResult call(uint64_t address, const std::vector<uint64_t>& args, uint64_t timeout_us = 0);
  int call_depth() const { return depth_; }
  // Stops the running call (and the calls it nested in) at the next block: each returns
  // a MachineFault of kind Interrupted. Async-signal-safe (a SIGINT handler calls it); a
  // request made while no guest code runs (in a stub) stops the call when the stub returns.
  void interrupt_from_host() {
    host_interrupt_.store(true);
    uc_emu_stop(cpu_->uc());
  }

  // --- PadLock hooks -------------------------------------------------------------------
  // before: called with the registers the model will read; it may change registers,
  // memory and EFLAGS[30] through the Machine, and they take effect. after: called with
  // the outcome. Neither may call(). An exception from a hook aborts the call (rethrown
  // by call()).
  using PadlockHook = std::function<void(Machine&, const PadlockEvent&)>;
  void set_padlock_hooks(PadlockHook before, PadlockHook after) {
    before_ = std::move(before);
    after_ = std::move(after);
  }

  // --- statistics ----------------------------------------------------------------------
  const Stats& stats() const { return stats_; }
  // Diagnostics (cases the guide leaves undefined) reported since the last take.
  struct DiagRecord {
    Diag id;
    uint64_t pc;
  };
  std::vector<DiagRecord> take_diagnostics();

  std::string disassemble(uint64_t pc) const;

  // --- snapshots (emulator/harness/machine_snapshot.cpp) ----------------------------------
  // The state a call sees and changes, as bytes: registers (general, EFLAGS, segments,
  // x87/SSE), every mapped page with its permissions, EFLAGS[30], the PadLock units (ACE's
  // key registers, the RNG's MSR, buffers and generators), the cache model, the virtual
  // clock and the §3.3 overlap, statistics, the pending interrupt, the stub table and the
  // arena. Hooks, the stub handler and code translations are not state: they stay. Not
  // during a call, and not with the checker on (its findings are not saved).
  std::vector<uint8_t> snapshot() const;
  // Loads a snapshot of a Machine of the same CPU model, bits, mhz and timing (else
  // StateError, and nothing changes); running on from it repeats what followed it.
  void restore(const uint8_t* data, size_t size);

  // --- instruction, memory and system-call hooks -------------------------------------
  // A code hook runs before each instruction in [begin, end] (an address hook: begin ==
  // end), a memory hook on each guest load (write false) or store in [begin, end] with its
  // size and, for a store, the value. Both slow the code they cover (Unicorn calls them from
  // generated code); translated code is dropped when one is added or removed, so it takes
  // effect at once. They may read and write memory and registers, not call(). Returns an
  // id for remove_hook. An exception aborts the call, as a PadLock hook's does.
  using CodeHook = std::function<void(Machine&, uint64_t address, uint32_t size)>;
  using MemoryHook =
      std::function<void(Machine&, bool write, uint64_t address, int size, uint64_t value)>;
  uint64_t add_code_hook(uint64_t begin, uint64_t end, CodeHook fn);
  uint64_t add_memory_hook(uint64_t begin, uint64_t end, bool reads, bool writes, MemoryHook fn);
  void remove_hook(uint64_t id);
  // A system call (INT 0x80, SYSCALL): the hook gets the number and returns true when it
  // handled the call (it sets EAX/RAX), and the guest goes on after the instruction; false
  // stops the call with UnsupportedSyscall, as without a hook. SYSENTER always stops
  // (Linux returns from it into the vDSO, which the harness does not have).
  using SyscallHook = std::function<bool(Machine&, uint64_t number)>;
  void set_syscall_hook(SyscallHook fn) { syscall_hook_ = std::move(fn); }

 private:
  // Unicorn's hooks (emulator/cpu/uc_hooks.hpp's trampolines, through Hooks below).
  bool on_invalid_insn();
  void on_interrupt(uint32_t intno);
  void on_syscall_insn();
  void on_sysenter();
  void on_block(uint64_t address, uint32_t size);
  bool on_tlb_fill(uint64_t va, int type, uint64_t* paddr, int* perms);

  // The trampolines' owner (their user data): the hooks above, which nothing else calls.
  struct Hooks {
    Machine& m;
    bool on_invalid_insn() { return m.on_invalid_insn(); }
    uint64_t on_padlock_insn(const uc_padlock_state* at) { return m.padlock_insn(at); }
    void on_interrupt(uint32_t intno) { m.on_interrupt(intno); }
    void on_syscall_insn() { m.on_syscall_insn(); }
    void on_sysenter() { m.on_sysenter(); }
    void on_block(uint64_t address, uint32_t size) { m.on_block(address, size); }
    bool on_tlb_fill(uint64_t va, int type, uint64_t* paddr, int* perms) {
      return m.on_tlb_fill(va, type, paddr, perms);
    }
    int on_cpuid() { return m.trap_->cpuid(); }
    int on_rdtsc() { return m.trap_->rdtsc(); }  // as in a Process
    HookException& hook_exception() { return m.hook_exception_; }
  };
  using Trampolines = UcHooks<Hooks>;
  Hooks hooks_{*this};

  class DiagSink;
  void install_hooks();
  // `at`: the state from generated code (UC_CTL_PADLOCK_INSN), null from the #UD trap.
  uint64_t padlock_insn(const uc_padlock_state* at = nullptr);
  void setup_tls();
  void stop_with(const MachineFault& f);
  void set_exits();
  void reg_checked(const std::string& name, int& id, unsigned& width) const;
  // The steps of call(): the entry frame and registers, the emulation until the call
  // returns or stops, why one emulation slice stopped (none: at the sentinel or a stub),
  // and a stub's return to its caller.
  void push_call_frame(uint64_t address, const std::vector<uint64_t>& args, bool nested);
  void run_call(CallResult& r, uint64_t timeout_us);
  std::optional<MachineFault> slice_stop(uc_err err, bool timed);
  void return_from_stub(const StubSlot& slot);
  void read_state(StateReader& r, AddressSpace* mem, Stats& stats, VirtualTime& vt, Padlock& units,
                  timing::CacheModel* cache, std::vector<StubSlot>& stubs);

  bool guest64_;
  double mhz_;
  std::unique_ptr<AddressSpace> mem_;
  std::unique_ptr<Cpu> cpu_;
  std::unique_ptr<BlockCache> blocks_;
  std::unique_ptr<MachineMemory> memory_;  // over mem_, cpu_, blocks_ and tlb_
  std::unique_ptr<Padlock> padlock_;
  std::unique_ptr<DiagSink> diag_;
  std::unique_ptr<VirtualTime> vt_;    // guest instructions, PadLock cycles, RDTSC reads
  std::unique_ptr<PadlockCore> core_;  // PadLock execution (emulator/exec/core.hpp)
  std::unique_ptr<check::SourceLookup> check_lookup_;
  std::unique_ptr<check::Checker> checker_;  // enable_check()
  Stats stats_;
  size_t cs_ = 0;  // Capstone handle (messages, fault addresses)
  uc_hook block_hook_ = 0;

  bool eflags30_ = false;
  std::unique_ptr<PadlockTrap> trap_;  // padlock_insn, CPUID, RDTSC (shared with Process)
  ControlRegisters cr_;

  std::vector<StubSlot> stubs_;
  std::unordered_map<std::string, size_t> stub_by_name_;
  std::unordered_map<uint64_t, size_t> stub_by_address_;
  StubHandler stub_handler_;
  PadlockHook before_, after_;

  // Why Unicorn stopped (reset before each uc_emu_start).
  bool stop_fault_ = false;
  MachineFault fault_;
  TlbGate tlb_;  // the TLB-fill hook (on_tlb_fill) and the fault it refused
  struct UserHook {
    uc_hook handle = 0;
    CodeHook code;
    MemoryHook memory;
    Machine* machine = nullptr;
  };
  std::map<uint64_t, std::unique_ptr<UserHook>> user_hooks_;
  uint64_t next_hook_id_ = 1;
  SyscallHook syscall_hook_;
  bool handled_syscall(uint64_t number);
  static void code_trampoline(uc_engine*, uint64_t address, uint32_t size, void* user);
  static bool memory_trampoline(uc_engine*, uc_mem_type type, uint64_t address, int size,
                                int64_t value, void* user);
  HookException hook_exception_;
  int depth_ = 0;
  std::atomic<bool> host_interrupt_{false};
  uint64_t padlock_count_ = 0;
  uint64_t stub_calls_ = 0;
};

}  // namespace padlock::emu
