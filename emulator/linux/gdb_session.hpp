// The Process side of the gdb stub (--gdb, docs/debugging.md): registers, memory,
// breakpoints and watchpoints of one emulated process, and the run loop's stops.
//
// Nothing here runs unless --gdb is given. Breakpoints are Unicorn code hooks bounded to
// their address; a single step or a watchpoint adds a code hook on every instruction, and
// a watchpoint a memory hook on its range, only while they exist. Translated code is
// dropped whenever that set changes, so code translated without gdb has no hook call.
#pragma once

#include <unicorn/unicorn.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "emulator/cpu/cpu.hpp"
#include "emulator/gdb/gdb_server.hpp"
#include "emulator/options/run_options.hpp"
#include "models/unit_interface.hpp"

namespace padlock::emu {

class Process;

class GdbSession final : public gdb::Target {
 public:
  // Listens on 127.0.0.1:port; throws LoadError with a one-line reason.
  GdbSession(Process& p, int port);
  ~GdbSession() override;

  int port() const { return server_.port(); }
  // Before the first instruction: waits for gdb and does what it asks first.
  void attach();
  // After Unicorn stopped and the run loop handled the stop: a breakpoint, step or
  // watchpoint stop is reported to gdb.
  void after_stop();
  // A signal about to be delivered to the guest (a fault, a timer, kill): gdb is told
  // first and decides what the guest gets; returns that signal (0: none).
  int on_signal(int sig);
  void finished(const RunResult& r);
  // gdb sent ^C while the guest ran and stopped Unicorn; after_stop reports it as SIGINT.
  bool interrupt_pending() const { return interrupted_.load(); }

  // Hook bodies (static trampolines in gdb_session.cpp).
  void on_breakpoint_hook(uint64_t address);
  void on_every_insn(uint64_t address);
  void on_watch_access(bool write, uint64_t address, uint64_t size);
  // A PadLock instruction ran: its data stream read, its result and chaining block written
  // (Outcome spans) count as accesses for the watchpoints.
  void on_padlock(const Outcome& o) {
    if (watches_.empty()) return;
    if (o.input.len != 0) on_watch_access(false, o.input.addr, o.input.len);
    if (o.output.len != 0) on_watch_access(true, o.output.addr, o.output.len);
    if (o.chain.len != 0) on_watch_access(true, o.chain.addr, o.chain.len);
  }

  // gdb::Target
  bool guest64() const override;
  bool ending() override;
  int pid() const override;
  void read_register(size_t regno, uint8_t* out) override;
  void write_register(size_t regno, const uint8_t* in) override;
  size_t read_memory(uint64_t addr, uint8_t* out, size_t len) override;
  bool write_memory(uint64_t addr, const uint8_t* in, size_t len) override;
  bool insert_breakpoint(uint64_t addr) override;
  bool remove_breakpoint(uint64_t addr) override;
  bool insert_watchpoint(gdb::WatchKind k, uint64_t addr, uint64_t len) override;
  bool remove_watchpoint(gdb::WatchKind k, uint64_t addr, uint64_t len) override;
  std::string auxv() override;
  std::string exec_file() override;
  std::vector<int> threads() override;  // live guest threads' TIDs, in creation order
  int current_thread() override;
  bool select_thread(int id) override;

 private:
  struct Watch {
    gdb::WatchKind kind;
    uint64_t addr, len;
    uc_hook hook;
  };
  void apply(const gdb::Resume& r);
  void report(const gdb::Stop& s);
  void stop_guest(const gdb::Stop& s);
  // Adds or removes the every-instruction hook and the stop gate as the breakpoints,
  // watchpoints and stepping need them, and drops translated code when that changed.
  void update_hooks(bool changed);
  void detach();
  // The registers gdb reads: the running thread's (from the CPU) or, after Hg, another
  // thread's saved ones (`running`: false; written back through Process::threads()).
  const CpuContext& context(bool& running);
  // The guest runs (the watcher may read ^C from the socket) or is stopped (the run loop
  // talks to gdb).
  void set_running(bool running);
  void start_watcher();
  void stop_watcher();

  Process& p_;
  gdb::Server server_;
  bool active_ = false;  // gdb is attached
  std::map<uint64_t, uc_hook> breakpoints_;
  std::vector<Watch> watches_;
  uc_hook every_insn_hook_ = 0;
  uc_hook gate_hook_ = 0;
  bool stepping_ = false;
  unsigned step_insns_ = 0;       // instructions begun since the step started
  bool skip_breakpoint_ = false;  // the resumed instruction has a breakpoint: run it once
  uint64_t resume_pc_ = 0;
  bool stop_pending_ = false;  // a hook stopped the guest for gdb
  gdb::Stop stop_;
  bool watch_hit_ = false;  // an access hit a watchpoint: stop at the next instruction
  gdb::Stop watch_stop_;
  int inject_signal_ = 0;  // gdb resumed with this signal: deliver it unreported
  int selected_ = 0;       // Hg: the thread whose registers gdb reads (0: the running one)
  bool ctx_valid_ = false;
  CpuContext ctx_;
  // ^C from gdb while the guest runs: a thread polls the socket only then and stops
  // Unicorn (as HostStop::kill does), repeating until the run loop has seen it.
  std::thread watcher_;
  std::mutex io_;
  bool running_ = false;  // guarded by io_
  std::atomic<bool> interrupted_{false};
  std::atomic<bool> quit_{false};
};

}  // namespace padlock::emu
