// One emulated Linux process: the guest address space, the Unicorn CPU, the PadLock
// units, the system-call layer and signals. Hooks stay small: they record what happened
// and, when control flow must change (exit, sigreturn, a signal), stop Unicorn so the run
// loop can act on a consistent register state.
#pragma once

#include <poll.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "emulator/cpu/block_cache.hpp"
#include "emulator/cpu/chip_check.hpp"
#include "emulator/cpu/cpu.hpp"
#include "emulator/cpu/uc_hooks.hpp"
#include "emulator/exec/core.hpp"
#include "emulator/exec/padlock_call.hpp"
#include "emulator/linux/files/guest_files.hpp"
#include "emulator/linux/guest_paths.hpp"
#include "emulator/linux/guest_proc.hpp"
#include "emulator/linux/guest_random.hpp"
#include "emulator/linux/host_stop/host_stop.hpp"
#include "emulator/linux/process_identity.hpp"
#include "emulator/linux/sandbox.hpp"
#include "emulator/linux/signal/signals.hpp"
#include "emulator/linux/threads/scheduler.hpp"
#include "emulator/linux/vm/address_space_policy.hpp"
#include "emulator/linux/vm/user_memory.hpp"
#include "emulator/loader/elf_loader.hpp"
#include "emulator/memory/address_space.hpp"
#include "emulator/observe/stats.hpp"
#include "emulator/options/run_options.hpp"
#include "emulator/time/virtual_time.hpp"
#include "models/padlock.hpp"

namespace padlock::emu {

struct SyscallAbi;
class GdbSession;    // --gdb (emulator/linux/gdb_session.hpp)
class RunObservers;  // --trace, --chrome-trace, --profile (emulator/observe/trace/)
namespace mix {
class InstructionMix;  // --mix (emulator/observe/mix/)
}

// Per-process kernel state that only system calls touch.
struct KernelState {
  uint64_t clear_child_tid = 0;  // set_tid_address
  uint64_t robust_list = 0, robust_list_len = 0;
  uint64_t personality = 0;
  GuestRandom random{0, GuestRandom::kGetrandomSalt};  // getrandom's, from --seed
  bool rlimit_set[16] = {};  // guest-only limits (not applied to the emulator)
  uint64_t rlimit_cur[16] = {}, rlimit_max[16] = {};
};

class Process final : private VmHost, private ThreadHost {
 public:
  // Loads the program; throws LoadError with a one-line reason.
  explicit Process(const RunOptions& opts);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  RunResult run();

  // --- state the system calls use ---------------------------------------------------
  // Its PID, width, /proc/self/exe and auxv, and the padlock-emu execve runs under.
  const ProcessIdentity& identity() const { return id_; }
  AddressSpace& mem() { return *mem_; }
  Cpu& cpu() { return *cpu_; }
  SignalState& signals() { return sig_; }
  const RunOptions& options() const { return opts_; }
  Stats& stats() { return stats_; }
  KernelState& kernel() { return kernel_; }
  // Descriptors, sockets and where paths lead (emulator/linux/files/guest_files.hpp).
  GuestFiles& files() { return files_; }
  Padlock& padlock() { return *padlock_; }
  // The guest's clock at --mhz: virtual cycles, timers, interrupts
  // (emulator/time/virtual_time.hpp).
  VirtualTime& vtime() { return *vt_; }
  // A sleep or wait: advance virtual time to `cycle` (counted as idle), handling every
  // event on the way; stops early when a signal for the guest became deliverable.
  // Returns true when it stopped early.
  bool sleep_until(uint64_t cycle) override;

  // Guest memory as the kernel sees it (emulator/linux/vm/user_memory.hpp).
  UserMemory& user() { return user_; }
  // mmap, brk, mremap, the layout and the mappings' names (emulator/linux/vm/).
  AddressSpacePolicy& vm() { return *vm_; }

  // In the child of a fork of the emulator (syscall/clone.cpp): a process of its own from
  // now on, as Linux makes a child: its PID, statistics from zero, no timers or pending
  // signals, and output files of its own (--trace FILE writes FILE.PID, and so do
  // --chrome-trace, --profile, --check-jsonl and --check-sarif).
  void become_child();
  // Before execve: the observers' files are complete (the new image writes its own).
  void finish_observers();

  // Control flow requested by a system call; acted on by the run loop.
  void exit_group(int code) override;
  enum class SigreturnKind { None, Legacy, Rt };
  void request_sigreturn(SigreturnKind k) {
    sigreturn_ = k;
    request_stop();
  }
  void request_stop() override;
  // The host's ways to end the run (emulator/linux/host_stop/host_stop.hpp): a kill from
  // another thread (padlock_emu.run's timeout, Python's SIGINT), --max-time, host signals.
  HostStop& host_stop() { return host_stop_; }
  // To the process (kill, a timer, the host): pending for the process; a thread that waits
  // and does not block it is woken when the running thread blocks it (threads/scheduler.hpp).
  void queue_process_signal(const GuestSiginfo& si);
  // The process ends by the fatal signal `sig` (its default action; gdb's kill).
  void die(int sig, const GuestSiginfo& si);
  // exit_group or a fatal signal ended it: the run loop stops.
  bool ended() const override { return exited_ || fatal_; }

  // --- threads (docs/emulator.md, "Threads") -----------------------------------------
  // Guest threads share this process's memory and run one at a time on its CPU
  // (emulator/linux/threads/scheduler.hpp). The threads as a debugger sees them
  // (emulator/linux/threads/guest_threads.hpp).
  GuestThreads& threads() { return sched_->threads(); }
  // The scheduler itself: a SyscallContext made outside dispatch (the fuzz targets), gdb's
  // resume with a signal (Scheduler::signal_thread).
  Scheduler& scheduler() { return *sched_; }

  // EFLAGS[30] (§1.8, §3.2): stored EFLAGS always has it 0; we keep the live bit here.
  bool eflags30() const { return eflags30_; }
  // From outside a hook (gdb's write of EFLAGS): set, from now on PUSHF must see it;
  // cleared, as a task switch or an exception clears it.
  void set_eflags30(bool on) {
    if (!on) return clear_eflags30();
    eflags30_ = true;
    enable_block_hook();
  }

  // REP MOVS and REP STOS run whole (on_rep_string) unless a debugger steps or watches:
  // then they run an iteration at a time, QEMU's way, and charge_rep_string charges them.
  // The caller flushes translated code after.
  void set_rep_loop(bool on);

 private:
  // Unicorn's hooks (emulator/cpu/uc_hooks.hpp's trampolines, through Hooks below).
  void on_syscall_insn();
  void on_sysenter();
  void on_interrupt(uint32_t intno);
  bool on_invalid_insn();
  // IN, OUT, INS, OUTS (Unicorn's I/O hooks): #GP, as for every Linux process that has not
  // asked for ioperm or iopl. The value an IN gets (it is never seen: the signal's frame
  // holds the state before the instruction).
  uint32_t on_port_io();
  void on_block(uint64_t address, uint32_t size);
  // With inline cost accounting: the block's cost is already on the clock; called only
  // for blocks that need it (block_cost) or once an event is due.
  void on_costed_block(uint64_t address, uint32_t size);
  uint32_t block_cost(uint64_t address, uint32_t size, uint64_t* tag);  // at translation
  // A REP MOVS or REP STOS about to run all its `count` elements in one execution of its
  // block (our Unicorn patch, UC_CTL_REP_STRING): charges start-up and elements at once.
  void on_rep_string(uint64_t pc, uint64_t count, uint64_t rsi, uint64_t rdi);
  void on_mem_access(uint64_t address, int size, bool write);  // --cache-x86
  bool on_tlb_fill(uint64_t va, int type, uint64_t* paddr, int* perms);
  int on_cpuid();
  // The chip check's hook on an instruction the chip lacks (--chip-check, the default):
  // #UD before it runs.
  void on_code(uint64_t address);
  int on_rdtsc();

  // The trampolines' owner (their user data): the hooks above, which nothing else calls.
  struct Hooks {
    Process& p;
    void on_syscall_insn() { p.on_syscall_insn(); }
    void on_sysenter() { p.on_sysenter(); }
    void on_interrupt(uint32_t intno) { p.on_interrupt(intno); }
    bool on_invalid_insn() { return p.on_invalid_insn(); }
    uint32_t on_port_io() { return p.on_port_io(); }
    uint64_t on_padlock_insn(const uc_padlock_state* at) { return p.padlock_insn(at); }
    void on_block(uint64_t address, uint32_t size) { p.on_block(address, size); }
    void on_costed_block(uint64_t address, uint32_t size) { p.on_costed_block(address, size); }
    uint32_t block_cost(uint64_t address, uint32_t size, uint64_t* tag) {
      return p.block_cost(address, size, tag);
    }
    void on_rep_string(uint64_t pc, uint64_t count, uint64_t rsi, uint64_t rdi) {
      p.on_rep_string(pc, count, rsi, rdi);
    }
    void on_mem_access(uint64_t address, int size, bool write) {
      p.on_mem_access(address, size, write);
    }
    bool on_tlb_fill(uint64_t va, int type, uint64_t* paddr, int* perms) {
      return p.on_tlb_fill(va, type, paddr, perms);
    }
    int on_cpuid() { return p.on_cpuid(); }
    void on_code(uint64_t address) { p.on_code(address); }
    int on_rdtsc() { return p.on_rdtsc(); }
    HookException& hook_exception() { return p.hook_exception_; }
  };
  using Trampolines = UcHooks<Hooks>;
  Hooks hooks_{*this};

  // What the destructor releases (also when the constructor throws).
  void release() noexcept;
  // Timing (docs/timing.md): after virtual time moved, take due interrupts and fire due timers
  // (their signals are queued for the guest).
  void time_events();
  // VmHost: what the CPU and the observers learn of a change to the address space.
  void drop_code(uint64_t va, uint64_t len) override;
  void memory_changed(uint64_t va, uint64_t len) override;
  void file_mapped(int fd, uint64_t va, uint64_t offset) override;
  void unmapped(uint64_t va, uint64_t len) override;
  // A block with a REP string instruction (BlockInfo::rep): charges its start-up once per
  // execution of the instruction and each element as it is processed.
  void charge_rep_string(const BlockInfo& b);
  // The profiler sees every block through Unicorn's block log (UC_CTL_BLOCK_LOG): the
  // BlockInfo of each executed block, replayed here in order with its virtual time. Every
  // hook that can move the clock or reach the observers calls this first.
  void drain_block_log() {
    if (log_cursor_ != block_log_.data()) replay_block_log();
  }
  void replay_block_log();
  // Runs the PadLock instruction at the PC (emulator/linux/padlock_trap.cpp) and returns
  // the PC to go on at: the next instruction, or this one to run again or to take a signal.
  // `at`: the state from generated code (UC_CTL_PADLOCK_INSN), null from the #UD trap.
  uint64_t padlock_insn(const uc_padlock_state* at = nullptr);

  // Disassembly of the instruction at `pc` for messages ("?" if unreadable).
  std::string disassemble(uint64_t pc);
  // ThreadHost (emulator/linux/threads.cpp): the CPU, signals and host waits around the
  // scheduler.
  void clear_eflags30() override {
    if (eflags30_) ++stats_.eflags30_clears;
    eflags30_ = false;
  }
  // To the running thread (the scheduler's tgkill to it, a SIGPIPE, gdb's resume with a
  // signal: Scheduler::signal_thread).
  void queue_signal(const GuestSiginfo& si) override;
  void save_thread(GuestThread& t) override;
  void load_thread(const GuestThread& t) override;
  void running_thread(int tid, bool switched) override;
  uint64_t robust_list() const override { return kernel_.robust_list; }
  uint64_t clear_child_tid() const override { return kernel_.clear_child_tid; }
  void set_syscall_result(int64_t result) override;
  void restart_syscall() override;
  void await_host_signal() override;
  void take_host_signals() override;
  void sync_wait_descriptors(uint64_t own) override;
  bool children_ready(const ChildWait& w) override;
  uint64_t fd_event_at(int fd) override;

  void load_program();
  void read_interpreter();
  void install_hooks();
  void enable_block_hook();
  void dispatch_syscall(const SyscallAbi& abi, int insn_len);
  void report_unsupported(const SyscallAbi& abi, uint64_t nr);
  void check_chip(const BlockInfo& b);
  void handle_stop(uc_err err);
  bool deliver_pending();
  bool deliver(int sig, const GuestSiginfo& si, bool forced);
  void do_sigreturn(SigreturnKind k);
  void print_fatal(int sig, const GuestSiginfo& si);
  // An instruction with no public semantics ran (FaultKind::NotModelled): one line on the
  // log and the guest stops with kNotModelledExit (docs/fidelity/gmi.md).
  void stop_not_modelled(uint64_t pc, const isa::Decoded& d, const ArchState& s);

  RunOptions opts_;
  ProcessIdentity id_;
  std::unique_ptr<AddressSpace> mem_;
  UserMemory user_;
  std::unique_ptr<AddressSpacePolicy> vm_;
  std::unique_ptr<Cpu> cpu_;
  std::unique_ptr<ChipFeatures> chip_;  // null with --chip-check off
  std::unique_ptr<BlockCache> blocks_;
  RepRun rep_;
  std::unique_ptr<Padlock> padlock_;
  Stats stats_;
  std::unique_ptr<DiagnosticPrinter> diag_;
  std::unique_ptr<RunObservers> obs_;  // null unless tracing or profiling
  SignalState sig_;
  KernelState kernel_;
  ElfFile elf_;
  ElfFile interp_;  // PT_INTERP's file (ld.so); its data is dropped once loaded
  GuestPaths paths_;
  Sandbox sandbox_;
  GuestFiles files_{paths_, sandbox_};
  bool forked_child_ = false;  // become_child(): run() never returns here
  double mhz_ = 0;
  size_t cs_ = 0;  // Capstone handle for messages and fault addresses

  std::unique_ptr<VirtualTime> vt_;    // the guest's clock, timers, interrupts
  std::unique_ptr<PadlockCore> core_;  // PadLock instructions, their caches (--cache-x86 too)
  uc_hook mem_hook_ = 0;               // --cache-x86
  bool eflags30_ = false;
  std::unique_ptr<PadlockTrap> trap_;  // padlock_insn, CPUID, RDTSC (shared with the harness)
  PadlockCall padlock_call_;           // padlock_insn's, reused (nothing runs the guest inside it)
  bool block_hook_on_ = false;
  bool direct_memory_ = false;  // direct_memory_enable() took (--memory direct)
  bool want_block_hook_ = false;
  bool wait_ready_ = false;        // SSE blocks test the SSE-ready cell in generated code
  bool hook_every_block_ = false;  // --stats, --icount: block_cost asks for every block
  // The chip check: instructions found, by address, and blocks to drop before the next
  // start because they were translated before their instruction's hook existed.
  std::unordered_map<uint64_t, const CpuidFeature*> chip_found_;
  std::vector<std::pair<uint64_t, uint32_t>> retranslate_;
  static constexpr size_t kBlockLogEntries = 1 << 14;
  std::vector<uint64_t> block_log_;           // UC_CTL_BLOCK_LOG entries (block_log::entry)
  std::vector<const BlockInfo*> log_blocks_;  // the index of a log entry: its block
  uint64_t* log_cursor_ = nullptr;
  mix::InstructionMix* block_counter_ = nullptr;  // UC_CTL_BLOCK_COUNT: --mix's counters
  bool recount_blocks_ = false;  // a forked child: translate again for its own counters
  uint64_t* log_end_ = nullptr;
  uc_hook block_hook_ = 0;

  // Why Unicorn stopped.
  bool stop_requested_ = false;  // one of our hooks asked (request_stop)
  bool exited_ = false;
  int exit_code_ = 0;
  bool fault_pending_ = false;
  GuestSiginfo fault_;
  bool fault_ip_valid_ = false;  // the fault's instruction is not at the current PC
  uint64_t fault_ip_ = 0;
  // The whole state at the fault, when the instruction went on changing registers after
  // its hook (IN, INS, OUTS): the signal frame gets this, not the registers after it.
  bool fault_ctx_valid_ = false;
  CpuContext fault_ctx_;
  // Linux's signal for an opcode QEMU does not run as the chip would (ICEBP, RDPMC);
  // false for any other.
  bool undefined_opcode_signal(uint64_t pc);
  void invalid_opcode_at_pc();  // #UD (SIGILL) at the PC, from an instruction hook
  SigreturnKind sigreturn_ = SigreturnKind::None;
  TlbGate tlb_;  // the TLB-fill hook (on_tlb_fill) and the fault it refused
  bool fatal_ = false;
  HookException hook_exception_;  // thrown inside a hook, rethrown by run()
  RunResult result_;
  // The last system call, for SA_RESTART after -EINTR.
  bool last_syscall_eintr_ = false;
  uint64_t last_syscall_nr_ = 0;
  int last_syscall_len_ = 0;
  // Declared after cpu_: its watchdog is joined before the CPU it stops goes.
  HostStop host_stop_{[this](bool keep_pending) { stop_emulation(keep_pending); }};
  void stop_emulation(bool keep_pending);          // HostStop's, from any thread
  std::unique_ptr<GdbSession> gdb_;                // --gdb; null otherwise
  std::unordered_set<uint64_t> unsupported_seen_;  // report_unsupported: ABI bit 63, number
  std::unique_ptr<Scheduler> sched_;               // the guest threads and their futexes
};

// The process whose hooks are running (host signal handlers forward to it).
Process* current_process();

// Ends this host process as the guest ended, the way qemu-user does: with its exit status,
// or, killed by a signal, by the same signal after flushing (no core file), so the parent
// sees the signal and a shell reports 128+N.
[[noreturn]] void end_like_guest(const RunResult& r);

}  // namespace padlock::emu
