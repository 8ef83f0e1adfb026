#include "emulator/linux/gdb_session.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "emulator/gdb/x86_registers.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/signal/host_signals.hpp"
#include "emulator/linux/signal/signals.hpp"

namespace padlock::emu {

namespace {

using gdb::RegSource;

void hook_breakpoint(uc_engine*, uint64_t address, uint32_t, void* s) {
  static_cast<GdbSession*>(s)->on_breakpoint_hook(address);
}
void hook_every_insn(uc_engine*, uint64_t address, uint32_t, void* s) {
  static_cast<GdbSession*>(s)->on_every_insn(address);
}
void hook_watch(uc_engine*, uc_mem_type type, uint64_t address, int size, int64_t, void* s) {
  static_cast<GdbSession*>(s)->on_watch_access(type == UC_MEM_WRITE, address,
                                               static_cast<uint64_t>(size));
}
// Does nothing: its existence makes Unicorn check for a stop request after a code hook
// (check_exit_request in our patch skips that check while no memory hook exists), so
// that a breakpoint or step stops before its instruction rather than at the next block.
void hook_gate(uc_engine*, uc_mem_type, uint64_t, int, int64_t, void*) {}
// An address no guest access reaches (beyond every guest window).
constexpr uint64_t kGateAddress = ~uint64_t{0} - 0xFFF;
// Accesses are checked by their start address: a watchpoint's hook range begins this far
// before it so that a wider access that starts earlier and overlaps it is seen.
constexpr uint64_t kWidestAccess = 16;

// FXSAVE image offsets (Intel SDM vol. 1 §10.5.1).
constexpr size_t kFxFcw = 0, kFxFsw = 2, kFxFtw = 4, kFxFop = 6, kFxFip = 8, kFxFcs = 12,
                 kFxFdp = 16, kFxFds = 20, kFxMxcsr = 24, kFxSt = 32, kFxXmm = 160;

uint32_t load16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// gdb's ftag is the full x87 tag word (2 bits per physical register: valid, zero,
// special, empty); FXSAVE keeps one bit (empty or not), so the rest comes from the value.
uint32_t full_tag_word(const uint8_t* fx) {
  const unsigned top = (load16(fx + kFxFsw) >> 11) & 7;
  uint32_t tag = 0;
  for (unsigned i = 0; i < 8; ++i) {
    unsigned t = 3;
    if (fx[kFxFtw] & (1u << i)) {
      const uint8_t* st = fx + kFxSt + 16 * ((i - top) & 7);
      const unsigned exp = load16(st + 8) & 0x7FFF;
      uint64_t mant;
      std::memcpy(&mant, st, 8);
      if (exp == 0x7FFF)
        t = 2;
      else if (exp == 0)
        t = mant == 0 ? 1 : 2;
      else
        t = (mant >> 63) ? 0 : 2;
    }
    tag |= t << (2 * i);
  }
  return tag;
}

}  // namespace

GdbSession::GdbSession(Process& p, int port) try : p_(p), server_(port) {
} catch (const std::runtime_error& e) {
  throw LoadError(e.what());
}

GdbSession::~GdbSession() {
  stop_watcher();
}

void GdbSession::attach() {
  std::fprintf(p_.options().log, "padlock-emu: gdb: waiting for a connection on port %d\n",
               server_.port());
  std::fflush(p_.options().log);
  active_ = true;
  const gdb::Resume r = server_.attach(*this);
  start_watcher();
  apply(r);
}

void GdbSession::set_running(bool running) {
  std::lock_guard<std::mutex> lk(io_);
  running_ = running;
}

void GdbSession::start_watcher() {
  const int fd = server_.socket_fd();
  if (fd < 0) return;
  uc_engine* uc = p_.cpu().uc();
  watcher_ = std::thread([this, fd, uc] {
    using namespace std::chrono_literals;
    while (!quit_.load()) {
      pollfd pf{fd, POLLIN, 0};
      const bool readable = poll(&pf, 1, 50) == 1 && (pf.revents & POLLIN);
      bool idle = true;
      {
        std::lock_guard<std::mutex> lk(io_);
        if (running_ && interrupted_.load()) {
          uc_emu_stop(uc);  // a stop between two emulation slices is lost: repeat it
        } else if (running_ && readable) {
          char c = 0;
          if (recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 1 && c == 0x03) {
            recv(fd, &c, 1, MSG_DONTWAIT);
            interrupted_.store(true);
            uc_emu_stop(uc);
            idle = false;
          }
        }
      }
      if (idle) std::this_thread::sleep_for(20ms);
    }
  });
}

void GdbSession::stop_watcher() {
  quit_.store(true);
  if (watcher_.joinable()) watcher_.join();
}

void GdbSession::after_stop() {
  if (!active_ || p_.ended()) return;
  if (interrupted_.exchange(false)) {
    gdb::Stop s;
    s.linux_signal = SIGINT;
    set_running(false);
    report(s);
    return;
  }
  if (stop_pending_) {
    set_running(false);
    report(stop_);
  }
}

int GdbSession::on_signal(int sig) {
  if (!active_) return sig;
  if (sig == inject_signal_) {
    inject_signal_ = 0;
    return sig;
  }
  gdb::Stop s;
  s.linux_signal = sig;
  stop_pending_ = false;
  ctx_valid_ = false;
  selected_ = 0;
  set_running(false);
  const gdb::Resume r = server_.serve(*this, s);
  const int deliver = r.kind == gdb::Resume::Kind::Kill ? 0 : r.linux_signal;
  apply(gdb::Resume{r.kind, 0});
  return deliver;
}

void GdbSession::finished(const RunResult& r) {
  set_running(false);
  stop_watcher();
  if (!active_) return;
  if (r.signaled)
    server_.killed(r.signal);
  else
    server_.exited(r.exit_code);
  active_ = false;
}

void GdbSession::report(const gdb::Stop& s) {
  stop_pending_ = false;
  watch_hit_ = false;
  ctx_valid_ = false;
  selected_ = 0;
  apply(server_.serve(*this, s));
}

void GdbSession::apply(const gdb::Resume& r) {
  ctx_valid_ = false;
  switch (r.kind) {
    case gdb::Resume::Kind::Detach:
      detach();
      return;
    case gdb::Resume::Kind::Kill: {
      GuestSiginfo si;
      si.signo = SIGKILL;
      si.code = kSiUser;
      p_.die(SIGKILL, si);
      active_ = false;  // gdb expects no reply
      return;
    }
    case gdb::Resume::Kind::Continue:
    case gdb::Resume::Kind::Step:
      break;
  }
  stepping_ = r.kind == gdb::Resume::Kind::Step;
  step_insns_ = 0;
  resume_pc_ = p_.cpu().pc();
  skip_breakpoint_ = breakpoints_.count(resume_pc_) != 0;
  if (r.linux_signal != 0) {
    GuestSiginfo si;
    si.signo = r.linux_signal;
    si.code = kSiUser;
    inject_signal_ = r.linux_signal;
    p_.scheduler().signal_thread(p_.threads().running_tid(), si);
  }
  update_hooks(false);
  set_running(true);
}

void GdbSession::detach() {
  uc_engine* uc = p_.cpu().uc();
  for (const auto& [addr, h] : breakpoints_) uc_hook_del(uc, h);
  for (const Watch& w : watches_) uc_hook_del(uc, w.hook);
  breakpoints_.clear();
  watches_.clear();
  stepping_ = false;
  active_ = false;
  update_hooks(true);
  set_running(false);
  stop_watcher();
}

void GdbSession::update_hooks(bool changed) {
  uc_engine* uc = p_.cpu().uc();
  const bool want_every = active_ && (stepping_ || !watches_.empty());
  const bool want_gate = active_ && (want_every || !breakpoints_.empty());
  if (want_every != (every_insn_hook_ != 0)) {
    // Stepped or watched, REP MOVS and REP STOS run an iteration at a time, as on the chip
    // under single-step; the code is translated again below.
    p_.set_rep_loop(!want_every);
    if (want_every) {
      uc_hook_add(uc, &every_insn_hook_, UC_HOOK_CODE, reinterpret_cast<void*>(hook_every_insn),
                  this, 1, 0);
    } else {
      uc_hook_del(uc, every_insn_hook_);
      every_insn_hook_ = 0;
    }
    changed = true;
  }
  if (want_gate != (gate_hook_ != 0)) {
    if (want_gate) {
      uc_hook_add(uc, &gate_hook_, UC_HOOK_MEM_READ, reinterpret_cast<void*>(hook_gate), this,
                  kGateAddress, kGateAddress);
    } else {
      uc_hook_del(uc, gate_hook_);
      gate_hook_ = 0;
    }
    changed = true;
  }
  // Code translated before has no call to the hooks that are new (or still calls ones
  // that are gone).
  if (changed) uc_ctl_flush_tb(uc);
}

void GdbSession::stop_guest(const gdb::Stop& s) {
  if (!stop_pending_) {
    stop_ = s;
    stop_pending_ = true;
  }
  p_.request_stop();
}

void GdbSession::on_breakpoint_hook(uint64_t address) {
  // A step ends at the next instruction anyway, and reports a step there, not a
  // breakpoint (which gdb would take for a hit).
  if (stepping_) return;
  if (skip_breakpoint_ && address == resume_pc_) {
    skip_breakpoint_ = false;
    return;
  }
  skip_breakpoint_ = false;
  if (breakpoints_.count(address) == 0) return;  // removed; its hook goes at the next stop
  gdb::Stop s;
  s.kind = gdb::Stop::Kind::SwBreak;
  stop_guest(s);
}

void GdbSession::on_every_insn(uint64_t) {
  if (watch_hit_) {
    // The access's instruction has completed, as a debug-register watchpoint reports it.
    watch_hit_ = false;
    stop_guest(watch_stop_);
    return;
  }
  if (stepping_ && step_insns_++ > 0) {
    gdb::Stop s;
    s.kind = gdb::Stop::Kind::Step;
    stop_guest(s);
  }
}

void GdbSession::on_watch_access(bool write, uint64_t address, uint64_t size) {
  for (const Watch& w : watches_) {
    const bool kind_ok =
        w.kind == gdb::WatchKind::Access || (w.kind == gdb::WatchKind::Write) == write;
    if (!kind_ok || address >= w.addr + w.len || address + size <= w.addr) {
      continue;
    }
    watch_hit_ = true;
    watch_stop_ = gdb::Stop{};
    watch_stop_.kind = gdb::Stop::Kind::Watch;
    watch_stop_.watch = w.kind;
    watch_stop_.watch_addr = w.addr;
    return;
  }
}

// --- gdb::Target ---------------------------------------------------------------------------

bool GdbSession::guest64() const {
  return p_.identity().guest64;
}

bool GdbSession::ending() {
  // Python's SIGINT stops the run through HostStop::kill (python/src/sigint_guard.hpp).
  return host_signal_ends_guest(p_) || p_.host_stop().killed();
}

int GdbSession::pid() const {
  return p_.identity().pid;
}

std::vector<int> GdbSession::threads() {
  return p_.threads().live_tids();
}

int GdbSession::current_thread() {
  return p_.threads().running_tid();
}

bool GdbSession::select_thread(int id) {
  if (id == 0 || id == current_thread()) {
    selected_ = 0;
    return true;
  }
  if (p_.threads().saved_registers(id) == nullptr) return false;
  selected_ = id;
  return true;
}

const CpuContext& GdbSession::context(bool& running) {
  const CpuContext* saved = selected_ != 0 ? p_.threads().saved_registers(selected_) : nullptr;
  running = saved == nullptr;  // also when the thread is gone since Hg
  if (!running) return *saved;
  if (!ctx_valid_) {
    p_.cpu().save(ctx_);
    ctx_valid_ = true;
  }
  return ctx_;
}

void GdbSession::read_register(size_t regno, uint8_t* out) {
  const gdb::RegDesc& r = gdb::x86_registers(guest64())[regno];
  bool running;
  const CpuContext& c = context(running);
  const uint8_t* fx = c.fxsave;
  const size_t n = r.bits / 8;
  std::memset(out, 0, 16);
  uint64_t v = 0;
  switch (r.source) {
    case RegSource::Gpr:
      v = c.gpr[r.index];
      break;
    case RegSource::Ip:
      v = c.ip;
      break;
    case RegSource::Flags:
      // A switched-out thread is switched in with bit 30 clear (§1.8; threads/scheduler.cpp).
      v = (c.flags & ~(uint64_t{1} << 30)) | (uint64_t{running && p_.eflags30()} << 30);
      break;
    case RegSource::Segment: {
      const uint16_t sel[6] = {c.cs, c.ss, c.ds, c.es, c.fs, c.gs};
      v = sel[r.index];
      break;
    }
    case RegSource::SegmentBase:
      if (guest64())
        v = r.index == 0 ? c.fs_base : c.gs_base;
      else
        v = p_.cpu().reg(r.index == 0 ? UC_X86_REG_FS_BASE : UC_X86_REG_GS_BASE);
      break;
    case RegSource::St:
      std::memcpy(out, fx + kFxSt + 16 * r.index, 10);
      return;
    case RegSource::FpControl: {
      // fctrl fstat ftag fiseg fioff foseg fooff fop
      switch (r.index) {
        case gdb::kFpFctrl:
          v = load16(fx + kFxFcw);
          break;
        case gdb::kFpFstat:
          v = load16(fx + kFxFsw);
          break;
        case gdb::kFpFtag:
          v = full_tag_word(fx);
          break;
        case gdb::kFpFiseg:
          v = load16(fx + kFxFcs);
          break;
        case gdb::kFpFioff:
          v = load32(fx + kFxFip);
          break;
        case gdb::kFpFoseg:
          v = load16(fx + kFxFds);
          break;
        case gdb::kFpFooff:
          v = load32(fx + kFxFdp);
          break;
        default:
          v = load16(fx + kFxFop) & 0x7FF;
          break;
      }
      break;
    }
    case RegSource::Xmm:
      std::memcpy(out, fx + kFxXmm + 16 * r.index, 16);
      return;
    case RegSource::Mxcsr:
      v = load32(fx + kFxMxcsr);
      break;
    case RegSource::OrigAx:
      v = ~uint64_t{0};  // no system call in progress
      break;
  }
  std::memcpy(out, &v, n < 8 ? n : 8);
}

void GdbSession::write_register(size_t regno, const uint8_t* in) {
  const gdb::RegDesc& r = gdb::x86_registers(guest64())[regno];
  bool running;
  CpuContext c = context(running);
  uint8_t* fx = c.fxsave;
  const size_t n = r.bits / 8;
  uint64_t v = 0;
  std::memcpy(&v, in, n < 8 ? n : 8);
  switch (r.source) {
    case RegSource::Gpr:
      c.gpr[r.index] = v;
      break;
    case RegSource::Ip:
      c.ip = v;
      break;
    case RegSource::Flags:
      c.flags = v & ~(uint64_t{1} << 30);
      // §1.8: the key-reload bit is the process's shadow; setting it needs the block hook
      // that sees PUSHF, as a REP XCRYPT that sets it does. (Another thread's is 0 when it
      // is switched in, whatever gdb writes.)
      if (!running) break;
      p_.set_eflags30((v & (uint64_t{1} << 30)) != 0);
      break;
    case RegSource::Segment: {
      uint16_t* sel[6] = {&c.cs, &c.ss, &c.ds, &c.es, &c.fs, &c.gs};
      *sel[r.index] = static_cast<uint16_t>(v);  // CS and SS stay as Linux set them
      break;
    }
    case RegSource::SegmentBase:
      if (guest64()) (r.index == 0 ? c.fs_base : c.gs_base) = v;
      break;  // i386: the base comes from the descriptor the selector names
    case RegSource::St:
      std::memcpy(fx + kFxSt + 16 * r.index, in, 10);
      break;
    case RegSource::FpControl:
      if (r.index == gdb::kFpFctrl) std::memcpy(fx + kFxFcw, in, 2);
      if (r.index == gdb::kFpFstat) std::memcpy(fx + kFxFsw, in, 2);
      if (r.index == gdb::kFpFtag) {
        fx[kFxFtw] = 0;
        for (unsigned i = 0; i < 8; ++i) {
          if (((v >> (2 * i)) & 3) != 3) fx[kFxFtw] |= static_cast<uint8_t>(1u << i);
        }
      }
      break;  // the instruction and operand pointers are not kept by the CPU model
    case RegSource::Xmm:
      std::memcpy(fx + kFxXmm + 16 * r.index, in, 16);
      break;
    case RegSource::Mxcsr:
      std::memcpy(fx + kFxMxcsr, in, 4);
      break;
    case RegSource::OrigAx:
      return;
  }
  if (running) {
    p_.cpu().load(c);
    ctx_valid_ = false;
  } else {
    p_.threads().set_saved_registers(selected_, c);
  }
}

size_t GdbSession::read_memory(uint64_t addr, uint8_t* out, size_t len) {
  AddressSpace& m = p_.mem();
  if (!m.in_window(addr, 0)) return 0;
  if (len > m.size() - addr) len = m.size() - addr;
  const uint64_t n = m.accessible_with(addr, len, kPageMapped | kPageRead);
  std::memcpy(out, m.host(addr), n);
  return n;
}

bool GdbSession::write_memory(uint64_t addr, const uint8_t* in, size_t len) {
  AddressSpace& m = p_.mem();
  if (!m.in_window(addr, len) || m.accessible_with(addr, len, kPageMapped) != len) return false;
  // As ptrace does, a write ignores the page's protections; code translated from the
  // bytes is dropped.
  p_.vm().invalidate_code(addr, len);
  m.poke(addr, in, len);
  return true;
}

bool GdbSession::insert_breakpoint(uint64_t addr) {
  if (breakpoints_.count(addr) != 0) return true;
  uc_hook h = 0;
  if (uc_hook_add(p_.cpu().uc(), &h, UC_HOOK_CODE, reinterpret_cast<void*>(hook_breakpoint), this,
                  addr, addr) != UC_ERR_OK) {
    return false;
  }
  breakpoints_[addr] = h;
  update_hooks(true);
  return true;
}

bool GdbSession::remove_breakpoint(uint64_t addr) {
  const auto it = breakpoints_.find(addr);
  if (it == breakpoints_.end()) return true;
  uc_hook_del(p_.cpu().uc(), it->second);
  breakpoints_.erase(it);
  update_hooks(true);
  return true;
}

bool GdbSession::insert_watchpoint(gdb::WatchKind k, uint64_t addr, uint64_t len) {
  if (len == 0) return false;
  const int types = k == gdb::WatchKind::Write  ? UC_HOOK_MEM_WRITE
                    : k == gdb::WatchKind::Read ? UC_HOOK_MEM_READ
                                                : (UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE);
  const uint64_t begin = addr >= kWidestAccess ? addr - (kWidestAccess - 1) : 0;
  uc_hook h = 0;
  if (uc_hook_add(p_.cpu().uc(), &h, types, reinterpret_cast<void*>(hook_watch), this, begin,
                  addr + len - 1) != UC_ERR_OK) {
    return false;
  }
  watches_.push_back(Watch{k, addr, len, h});
  update_hooks(true);
  return true;
}

bool GdbSession::remove_watchpoint(gdb::WatchKind k, uint64_t addr, uint64_t len) {
  for (auto it = watches_.begin(); it != watches_.end(); ++it) {
    if (it->kind == k && it->addr == addr && it->len == len) {
      uc_hook_del(p_.cpu().uc(), it->hook);
      watches_.erase(it);
      update_hooks(true);
      return true;
    }
  }
  return true;
}

std::string GdbSession::auxv() {
  return p_.identity().auxv;
}

std::string GdbSession::exec_file() {
  return p_.identity().exe_path;
}

}  // namespace padlock::emu
