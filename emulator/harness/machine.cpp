#include "emulator/harness/machine.hpp"

#include <capstone/capstone.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "emulator/cpu/cpu_features.hpp"
#include "emulator/cpu/fault_address.hpp"
#include "emulator/cpu/uc_hooks.hpp"
#include "emulator/exec/padlock_call.hpp"
#include "emulator/linux/signal/exception_signals.hpp"
#include "emulator/linux/signal/signals.hpp"

namespace padlock::emu {

namespace {

constexpr uint64_t kPage = AddressSpace::kPageSize;

// x86-64 SysV: the first six integer arguments.
constexpr int kArgRegs64[6] = {UC_X86_REG_RDI, UC_X86_REG_RSI, UC_X86_REG_RDX,
                               UC_X86_REG_RCX, UC_X86_REG_R8,  UC_X86_REG_R9};

}  // namespace

// Diagnostics go to the statistics and to a list the caller takes (the Python layer turns
// them into warnings or attributes); nothing is printed.
class Machine::DiagSink final : public DiagnosticSink {
 public:
  explicit DiagSink(Stats& s) : stats_(s) {}
  void report(Diag d, uint64_t pc) override {
    ++stats_.diag[static_cast<size_t>(d)];
    if (pending.size() < 4096) pending.push_back({d, pc});
  }
  std::vector<DiagRecord> pending;

 private:
  Stats& stats_;
};

Machine::Machine(const CpuModel& cpu, unsigned bits, const PadlockConfig& config, double mhz,
                 const PadlockTiming& timing)
    : guest64_(bits == 64), mhz_(mhz > 0 ? mhz : cpu.default_mhz.value) {
  if (bits != 32 && bits != 64) throw MachineError("bits must be 32 or 64");
  if (guest64_ && !cpu.long_mode) {
    throw MachineError("CPU model '" + std::string(cpu.name) +
                       "' has no long mode: a 64-bit Machine needs one that has (nano)");
  }
  padlock_ = std::make_unique<Padlock>(cpu, config);
  diag_ = std::make_unique<DiagSink>(stats_);
  // The harness's clock: guest instructions count one cycle each (no x86 cost model, no
  // periodic interrupts: `interrupt_at` places them); PadLock time as in a Process.
  VirtualTimeConfig vtc;
  vtc.mhz = mhz_;
  vtc.irq_hz = 0;
  vt_ = std::make_unique<VirtualTime>(vtc);
  core_ = std::make_unique<PadlockCore>(*padlock_, *vt_, stats_, diag_.get(), timing);
  mem_ = std::make_unique<AddressSpace>(guest64_);
  cpu_ = std::make_unique<Cpu>(guest64_, unicorn_cpu_model(*padlock_), *mem_);
  trap_ = std::make_unique<PadlockTrap>(*cpu_, *mem_, *padlock_, *core_, *vt_);
  blocks_ = std::make_unique<BlockCache>(guest64_, *mem_);
  memory_ = std::make_unique<MachineMemory>(*mem_, *cpu_, *blocks_, tlb_, kArenaBase, kArenaLimit);
  csh h = 0;
  if (cs_open(CS_ARCH_X86, guest64_ ? CS_MODE_64 : CS_MODE_32, &h) != CS_ERR_OK) {
    throw MachineError("capstone: cannot open the x86 disassembler");
  }
  cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
  cs_ = h;

  cpu_->boot(mem_->size() - 2 * kPage);
  // The return sentinel and the stubs: executable, never executed (Unicorn exits there).
  // Unicorn's exit path also fetches from the page before an exit address, so that page
  // belongs to the area too.
  if (!mem_->map_anonymous(kStubBase - kPage, kStubSpan + kPage, kPageRead | kPageExec)) {
    throw MachineError("cannot map the stub area");
  }
  std::memset(mem_->host(kStubBase - kPage), 0xF4, kStubSpan + kPage);  // HLT: #GP if run
  if (!mem_->map_anonymous(kStackTop - kStackSize, kStackSize, kPageRead | kPageWrite)) {
    throw MachineError("cannot map the stack");
  }
  cpu_->start_user(kStubBase, kStackTop - 64);
  setup_tls();
  install_hooks();
  set_exits();
}

Machine::~Machine() {
  if (cs_ != 0) {
    csh h = cs_;
    cs_close(&h);
  }
}

// A thread pointer like the C library's: code compiled with the stack protector reads its
// canary at %fs:0x28 (x86-64) or %gs:0x14 (i386); the first word points to itself.
void Machine::setup_tls() {
  if (!mem_->map_anonymous(kTlsBase, kPage, kPageRead | kPageWrite)) {
    throw MachineError("cannot map the TLS page");
  }
  const uint64_t self = kTlsBase;
  std::memcpy(mem_->host(kTlsBase), &self, guest64_ ? 8 : 4);
  const uint64_t canary = 0x00C0FFEE5EED1234ull;  // low byte 0, as glibc's
  std::memcpy(mem_->host(kTlsBase + (guest64_ ? 0x28 : 0x14)), &canary, guest64_ ? 8 : 4);
  if (guest64_) {
    cpu_->set_reg(UC_X86_REG_FS_BASE, kTlsBase);
  } else {
    cpu_->set_gdt_entry(kGdtTlsMin, make_descriptor(static_cast<uint32_t>(kTlsBase), 0xFFFFF, false,
                                                    true, false, true, true, true, true));
    uint16_t sel = static_cast<uint16_t>(kGdtTlsMin * 8 + 3);
    uc_reg_write(cpu_->uc(), UC_X86_REG_GS, &sel);
  }
}

void Machine::install_hooks() {
  uc_engine* uc = cpu_->uc();
  if (const char* why = Trampolines::install_trap_hooks(uc, &hooks_)) {
    throw MachineError(std::string("unicorn: ") + why);
  }
  // Instructions are counted for the virtual clock from the start (a call is short), and
  // PUSHF/POPF clear EFLAGS[30] (§1.8).
  const uc_err e = Trampolines::add(uc, &block_hook_, UC_HOOK_BLOCK,
                                    reinterpret_cast<void*>(Trampolines::block), &hooks_);
  if (e != UC_ERR_OK) throw MachineError(std::string("unicorn: hook: ") + uc_strerror(e));
}

// Unicorn stops when a block starts at the return sentinel or at a stub.
void Machine::set_exits() {
  std::vector<uint64_t> exits;
  exits.reserve(stubs_.size() + 1);
  exits.push_back(kStubBase);
  for (const StubSlot& s : stubs_) exits.push_back(s.address);
  uc_ctl_set_exits(cpu_->uc(), exits.data(), exits.size());
  uc_ctl_flush_tb(cpu_->uc());
}

// --- stubs -----------------------------------------------------------------------------------

uint64_t Machine::stub_address(const std::string& name) {
  if (auto it = stub_by_name_.find(name); it != stub_by_name_.end()) {
    return stubs_[it->second].address;
  }
  const uint64_t address = kStubBase + kStubSize * (stubs_.size() + 1);
  if (address + kStubSize > kStubBase + kStubSpan) throw MachineError("too many stubs");
  stub_by_name_[name] = stubs_.size();
  stub_by_address_[address] = stubs_.size();
  stubs_.push_back({name, address});
  set_exits();
  return address;
}

const StubSlot* Machine::stub_at(uint64_t address) const {
  auto it = stub_by_address_.find(address);
  return it == stub_by_address_.end() ? nullptr : &stubs_[it->second];
}

uint64_t Machine::arg(unsigned i) const {
  const uint64_t sp = cpu_->reg(guest64_ ? UC_X86_REG_RSP : UC_X86_REG_ESP);
  uint64_t v = 0;
  if (guest64_) {
    if (i < 6) return cpu_->reg(kArgRegs64[i]);
    memory_->read(sp + 8 + 8 * (i - 6), &v, 8);
    return v;
  }
  memory_->read(sp + 4 + 4 * uint64_t{i}, &v, 4);
  return v;
}

// --- calls -----------------------------------------------------------------------------------

CallResult Machine::call(uint64_t address, const std::vector<uint64_t>& args, uint64_t timeout_us) {
  if (depth_ == 0) host_interrupt_.store(false);  // a request from before this call is stale
  CpuContext outer;
  const bool nested = depth_ > 0;
  if (nested) cpu_->save(outer);
  push_call_frame(address, args, nested);

  CallResult r;
  const uint64_t t0 = vt_->now(), i0 = stats_.guest_insns, p0 = stats_.padlock_cycles,
                 n0 = padlock_count_, s0 = stub_calls_;
  auto finish = [&]() {
    r.cycles = vt_->now() - t0;
    r.instructions = stats_.guest_insns - i0;
    r.padlock_cycles = stats_.padlock_cycles - p0;
    r.padlock_count = padlock_count_ - n0;
    r.stub_calls = stub_calls_ - s0;
    if (nested) cpu_->load(outer);
  };
  struct Depth {
    int& d;
    explicit Depth(int& x) : d(x) { ++d; }
    ~Depth() { --d; }
  } depth(depth_);
  try {
    run_call(r, timeout_us);
  } catch (...) {
    finish();
    throw;
  }
  finish();
  return r;
}

// Stack at entry: the return address (the sentinel, kStubBase) on top, stack arguments
// above it, and (SP + word) 16-byte aligned (i386 and x86-64 psABI).
void Machine::push_call_frame(uint64_t address, const std::vector<uint64_t>& args, bool nested) {
  const uint64_t word = guest64_ ? 8 : 4;
  const uint64_t sp_now = cpu_->reg(guest64_ ? UC_X86_REG_RSP : UC_X86_REG_ESP);
  uint64_t top = nested ? sp_now - 256 : kStackTop - 64;  // below the caller's red zone
  const size_t reg_args = guest64_ ? std::min<size_t>(args.size(), 6) : 0;
  const size_t stack_args = args.size() - reg_args;
  uint64_t base = (top - stack_args * word) & ~uint64_t{15};
  if (base < kStackTop - kStackSize + 4096) throw MachineError("call: the stack is exhausted");
  for (size_t i = 0; i < stack_args; ++i) {
    const uint64_t v = args[reg_args + i];
    memory_->write(base + i * word, &v, word);
  }
  const uint64_t sentinel = kStubBase;
  const uint64_t sp = base - word;
  memory_->write(sp, &sentinel, word);

  if (guest64_) {
    for (size_t i = 0; i < reg_args; ++i) cpu_->set_reg(kArgRegs64[i], args[i]);
    cpu_->set_reg(UC_X86_REG_RAX, 0);  // AL: no vector registers used (varargs)
    cpu_->set_reg(UC_X86_REG_RSP, sp);
    cpu_->set_reg(UC_X86_REG_RFLAGS, 0x202);
  } else {
    cpu_->set_reg(UC_X86_REG_EAX, 0);
    cpu_->set_reg(UC_X86_REG_ESP, sp);
    cpu_->set_reg(UC_X86_REG_EFLAGS, 0x202);
  }
  cpu_->set_pc(address);
}

// Emulation slices until the call returns to the sentinel or stops; each stub entered on
// the way runs its handler and returns to its caller. The timeout covers the whole call,
// stubs included: each slice gets what is left of it.
void Machine::run_call(CallResult& r, uint64_t timeout_us) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(timeout_us);
  for (;;) {
    stop_fault_ = false;
    tlb_.faulted = false;
    uint64_t slice_us = 0;
    if (timeout_us != 0) {
      const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      slice_us = left > 0 ? static_cast<uint64_t>(left) : 1;
    }
    // A stop requested while a stub ran (no emulation to stop then) is seen here.
    const uc_err err =
        host_interrupt_.load() ? UC_ERR_OK : uc_emu_start(cpu_->uc(), cpu_->pc(), 0, slice_us, 0);
    hook_exception_.rethrow();
    if (host_interrupt_.load()) {
      MachineFault f;
      f.kind = MachineFault::Kind::Interrupted;
      f.pc = cpu_->pc();
      f.disassembly = disassemble(f.pc);
      r.fault = f;
      return;
    }
    if (std::optional<MachineFault> f = slice_stop(err, slice_us != 0)) {
      r.fault = *f;
      return;
    }
    const uint64_t pc = cpu_->pc();
    if (pc == kStubBase) {
      r.returned = true;
      r.value = cpu_->reg(guest64_ ? UC_X86_REG_RAX : UC_X86_REG_EAX);
      r.value_hi = cpu_->reg(guest64_ ? UC_X86_REG_RDX : UC_X86_REG_EDX);
      return;
    }
    if (const StubSlot* slot = stub_at(pc)) {
      return_from_stub(*slot);
      continue;
    }
    // Stopped with no reason we know of (QEMU halted): report it rather than spin.
    MachineFault f;
    f.kind = MachineFault::Kind::InternalStop;
    f.pc = pc;
    f.disassembly = disassemble(pc);
    r.fault = f;
    return;
  }
}

// A fault a hook raised, a page fault the TLB-fill hook refused, a Unicorn error, or the
// end of the slice's time (`timed`: the slice had a timeout).
std::optional<MachineFault> Machine::slice_stop(uc_err err, bool timed) {
  if (stop_fault_) return fault_;
  MachineFault f;
  if (err == UC_ERR_EXCEPTION && tlb_.faulted) {
    const bool mapped = (mem_->flags(tlb_.fault_page) & kPageMapped) != 0;
    f.signo = SIGSEGV;
    f.code = mapped ? kSegvAccerr : kSegvMaperr;
    f.trapno = 14;
    f.pc = cpu_->pc();
    f.address = first_faulting_byte(cs_, *cpu_, *mem_, tlb_.fault_page, tlb_.fault_type);
    f.write = tlb_.fault_type == UC_MEM_WRITE;
    f.disassembly = disassemble(f.pc);
    eflags30_ = false;  // the exception stores EFLAGS (§1.8)
    return f;
  }
  if (err != UC_ERR_OK) {
    f.kind = MachineFault::Kind::InternalStop;
    f.pc = cpu_->pc();
    f.disassembly = std::string("unicorn: ") + uc_strerror(err);
    return f;
  }
  size_t timed_out = 0;
  if (timed && uc_query(cpu_->uc(), UC_QUERY_TIMEOUT, &timed_out) == UC_ERR_OK && timed_out) {
    f.kind = MachineFault::Kind::Timeout;
    f.pc = cpu_->pc();
    f.disassembly = disassemble(f.pc);
    return f;
  }
  return std::nullopt;
}

// The stub's value in EAX/RAX, then a return: pop the return address (cdecl: the caller
// removes the arguments).
void Machine::return_from_stub(const StubSlot& slot) {
  ++stub_calls_;
  if (!stub_handler_) throw MachineError("no stub handler for '" + slot.name + "'");
  const StubSlot copy = slot;  // the handler may add stubs
  const uint64_t value = stub_handler_(*this, copy);
  const uint64_t word = guest64_ ? 8 : 4;
  const uint64_t csp = cpu_->reg(guest64_ ? UC_X86_REG_RSP : UC_X86_REG_ESP);
  uint64_t ret = 0;
  memory_->read(csp, &ret, word);
  cpu_->set_reg(guest64_ ? UC_X86_REG_RAX : UC_X86_REG_EAX, guest64_ ? value : value & 0xFFFFFFFFu);
  cpu_->set_reg(guest64_ ? UC_X86_REG_RSP : UC_X86_REG_ESP, csp + word);
  cpu_->set_pc(ret);
}

void Machine::stop_with(const MachineFault& f) {
  fault_ = f;
  stop_fault_ = true;
  uc_emu_stop(cpu_->uc());
}

std::vector<Machine::DiagRecord> Machine::take_diagnostics() {
  std::vector<DiagRecord> out;
  out.swap(diag_->pending);
  return out;
}

// --- hooks -----------------------------------------------------------------------------------

// A PadLock instruction, called from generated code (UC_CTL_PADLOCK_INSN) or, without it,
// from the invalid-opcode trap: the trap host Process::padlock_insn uses too
// (emulator/exec/padlock_call.hpp: decode, registers, the same core), with the
// before/after hooks around it; faults stop the call. Returns the PC to go on at.
bool Machine::on_invalid_insn() {
  const uint64_t pc = cpu_->pc();
  const uint64_t next = padlock_insn();
  if (next != pc) cpu_->set_pc(next);
  return true;
}

uint64_t Machine::padlock_insn(const uc_padlock_state* at) {
  uint64_t next = at != nullptr ? at->pc : cpu_->pc();
  try {
    PadlockCall c;
    PadlockEvent ev;
    const std::function<void(PadlockCall&)> hooks = [&](PadlockCall& call) {
      // The hooks read and write registers through uc_reg_*, which reach the same registers
      // as call.live and call.live32 (docs/emulator.md, "Unicorn", item 21).
      ev.pc = call.pc;
      ev.decoded = call.decoded;
      ev.before = call.state;
      ev.now = vt_->now();
      if (before_) {
        before_(*this, ev);
        read_padlock_state(*cpu_, guest64_, eflags30_, call);  // the hook may have changed them
        ev.before = call.state;
      }
      call.state.cr4_osfxsr = cr_.cr4_osfxsr;
      call.state.cr0_ts = cr_.cr0_ts;
    };
    const PadlockRecord* ran = trap_->run(c, at, eflags30_, interrupt_at, &hooks);
    if (ran == nullptr) {
      MachineFault f;
      f.signo = SIGILL;
      f.code = kIllIllopn;
      f.address = c.pc;
      f.trapno = 6;
      f.pc = c.pc;
      f.disassembly = disassemble(c.pc);
      stop_with(f);
      return c.pc;
    }
    const PadlockRecord& r = *ran;
    const isa::Decoded& d = c.decoded;
    const uint64_t pc = c.pc;
    const Outcome& o = r.outcome;
    ++padlock_count_;
    next = PadlockTrap::next_pc(c, r);
    // §1.8: REP XCRYPT sets EFLAGS[30] after loading the key, REP XSHA clears it, and so
    // does the interrupt or exception that stops an instruction (the core applies it).
    eflags30_ = r.after.eflags30();

    switch (o.status) {
      case Status::Completed:
        break;
      case Status::Interrupted:
        // §1.7: the harness takes the pending interrupt and the instruction resumes from the
        // updated registers.
        ++interrupts_taken;
        interrupt_at = UINT64_MAX;
        break;
      case Status::Faulted: {
        const FaultSignal sig = padlock_fault_signal(o.fault, *mem_, pc);
        MachineFault f;
        f.pc = pc;
        f.is_padlock = true;
        f.insn = d.id;
        f.padlock = o.fault;
        f.disassembly = disassemble(pc);
        f.signo = sig.signo;
        f.code = sig.code;
        f.address = sig.addr;
        f.trapno = sig.trapno;
        f.write = o.fault.kind == FaultKind::PageFault && o.fault.write;
        fault_ = f;
        stop_fault_ = true;
        break;
      }
    }
    ev.after = r.after;
    ev.outcome = o;
    ev.executed = true;
    if (after_) after_(*this, ev);
    if (stop_fault_) uc_emu_stop(cpu_->uc());
  } catch (...) {
    hook_exception_.keep(cpu_->uc());  // e.g. from a Python callback
  }
  return next;
}

// --- instruction, memory and system-call hooks ------------------------------------------

void Machine::code_trampoline(uc_engine*, uint64_t address, uint32_t size, void* user) {
  auto* h = static_cast<UserHook*>(user);
  Machine& m = *h->machine;
  if (m.hook_exception_.pending()) return;
  try {
    h->code(m, address, size);
  } catch (...) {
    m.hook_exception_.keep(m.cpu_->uc());
  }
}

bool Machine::memory_trampoline(uc_engine*, uc_mem_type type, uint64_t address, int size,
                                int64_t value, void* user) {
  auto* h = static_cast<UserHook*>(user);
  Machine& m = *h->machine;
  if (m.hook_exception_.pending()) return true;
  try {
    h->memory(m, type == UC_MEM_WRITE, address, size, static_cast<uint64_t>(value));
  } catch (...) {
    m.hook_exception_.keep(m.cpu_->uc());
  }
  return true;
}

uint64_t Machine::add_code_hook(uint64_t begin, uint64_t end, CodeHook fn) {
  auto h = std::make_unique<UserHook>();
  h->code = std::move(fn);
  h->machine = this;
  if (uc_hook_add(cpu_->uc(), &h->handle, UC_HOOK_CODE, reinterpret_cast<void*>(code_trampoline),
                  h.get(), begin, end) != UC_ERR_OK) {
    throw MachineError("unicorn: cannot add a code hook");
  }
  uc_ctl_flush_tb(cpu_->uc());  // code translated before has no call to the hook
  user_hooks_[next_hook_id_] = std::move(h);
  return next_hook_id_++;
}

uint64_t Machine::add_memory_hook(uint64_t begin, uint64_t end, bool reads, bool writes,
                                  MemoryHook fn) {
  auto h = std::make_unique<UserHook>();
  h->memory = std::move(fn);
  h->machine = this;
  const int type = (reads ? UC_HOOK_MEM_READ : 0) | (writes ? UC_HOOK_MEM_WRITE : 0);
  if (type == 0) throw MachineError("a memory hook needs reads, writes or both");
  if (uc_hook_add(cpu_->uc(), &h->handle, type, reinterpret_cast<void*>(memory_trampoline), h.get(),
                  begin, end) != UC_ERR_OK) {
    throw MachineError("unicorn: cannot add a memory hook");
  }
  uc_ctl_flush_tb(cpu_->uc());
  user_hooks_[next_hook_id_] = std::move(h);
  return next_hook_id_++;
}

void Machine::remove_hook(uint64_t id) {
  auto it = user_hooks_.find(id);
  if (it == user_hooks_.end()) return;
  uc_hook_del(cpu_->uc(), it->second->handle);
  uc_ctl_flush_tb(cpu_->uc());
  user_hooks_.erase(it);
}

bool Machine::handled_syscall(uint64_t number) {
  if (!syscall_hook_ || hook_exception_.pending()) return false;
  try {
    return syscall_hook_(*this, number);
  } catch (...) {
    hook_exception_.keep(cpu_->uc());
    return true;
  }
}

void Machine::on_interrupt(uint32_t intno) {
  const uint64_t pc = cpu_->pc();
  cpu_->clear_exception_state();  // no IDT delivery happened: forget the exception (Cpu)
  eflags30_ = false;              // §1.8: exceptions store EFLAGS
  MachineFault f;
  // INT 0x80 leaves the PC after the instruction: a handled call goes on there.
  if (intno == 0x80 && handled_syscall(cpu_->reg(guest64_ ? UC_X86_REG_RAX : UC_X86_REG_EAX))) {
    return;
  }
  if (intno == 0x80) {
    f.kind = MachineFault::Kind::Syscall;
    f.syscall_number = cpu_->reg(guest64_ ? UC_X86_REG_RAX : UC_X86_REG_EAX);
    f.pc = pc >= 2 ? pc - 2 : pc;
    f.disassembly = "int 0x80";
    stop_with(f);
    return;
  }
  const VectorSignal v = vector_signal(intno);
  f.signo = v.signo;
  f.code = v.code;
  f.trapno = static_cast<int>(intno);
  f.address = v.addr_is_pc ? pc : 0;
  f.pc = pc;
  // Unicorn leaves the PC after INT n; Linux reports INT n without a gate as #GP there.
  if (intno != 3 && intno != 4 && pc >= 2 &&
      mem_->accessible_with(pc - 2, 2, kPageMapped | kPageExec) == 2) {
    const uint8_t* b = mem_->host(pc - 2);
    if (b[0] == 0xCD && b[1] == intno) {
      f.signo = SIGSEGV;
      f.code = kSiKernel;
      f.trapno = 13;
      f.address = 0;
      f.pc = pc - 2;
    }
  }
  f.disassembly = disassemble(f.pc);
  stop_with(f);
}

void Machine::on_syscall_insn() {
  MachineFault f;
  f.pc = cpu_->pc();
  if (!guest64_) {  // SYSCALL is #UD in 32-bit mode on these chips
    f.signo = SIGILL;
    f.code = kIllIllopn;
    f.trapno = 6;
    f.address = f.pc;
  } else {
    // Unicorn goes on after SYSCALL when the hook returns.
    if (handled_syscall(cpu_->reg(UC_X86_REG_RAX))) return;
    f.kind = MachineFault::Kind::Syscall;
    f.syscall_number = cpu_->reg(UC_X86_REG_RAX);
  }
  f.disassembly = disassemble(f.pc);
  stop_with(f);
}

void Machine::on_sysenter() {
  eflags30_ = false;  // §1.8: SYSENTER sets EFLAGS:30 to 0
  MachineFault f;
  f.kind = MachineFault::Kind::Syscall;
  f.syscall_number = cpu_->reg(UC_X86_REG_EAX);
  f.pc = cpu_->pc();
  f.disassembly = "sysenter";
  stop_with(f);
}

void Machine::on_block(uint64_t address, uint32_t size) {
  const BlockInfo& b = blocks_->lookup(address, size);
  stats_.guest_insns += b.insns;
  vt_->advance(b.insns);
  // §1.8, §3.2: PUSHF stores EFLAGS (clearing bit 30); POPF/IRET load it and cannot set it.
  if (b.clears_eflags30) eflags30_ = false;
}

bool Machine::on_tlb_fill(uint64_t va, int type, uint64_t* paddr, int* perms) {
  return tlb_.fill(*mem_, va, type, paddr, perms);
}

// --- messages and fault addresses ---------------------------------------------------------

std::string Machine::disassemble(uint64_t pc) const {
  const uint64_t avail = mem_->accessible_with(pc, 15, kPageMapped | kPageRead);
  if (avail == 0) return "(unreadable)";
  cs_insn* insn = nullptr;
  const size_t n = cs_disasm(cs_, mem_->host(pc), avail, pc, 1, &insn);
  if (n == 0) {
    const isa::Decoded d = isa::decode(mem_->host(pc), avail,
                                       guest64_ ? isa::CpuMode::Long64 : isa::CpuMode::Protected32);
    if (d.status != isa::DecodeStatus::NotPadlock && d.id != isa::InsnId::Count) {
      return d.info().guide_name;
    }
    return "(undecodable)";
  }
  std::string s = insn[0].mnemonic;
  if (insn[0].op_str[0] != '\0') s += std::string(" ") + insn[0].op_str;
  cs_free(insn, n);
  return s;
}

bool Machine::rdmsr(uint32_t msr, uint64_t& value) {
  ExecEnv env;
  env.now = vt_->now();
  env.mhz = mhz();
  return padlock_->rdmsr(msr, value, env);
}

bool Machine::wrmsr(uint32_t msr, uint64_t value) {
  struct Collect final : DiagnosticSink {
    uint32_t bits = 0;
    void report(Diag d, uint64_t) override { bits |= 1u << static_cast<unsigned>(d); }
  } sink;
  ExecEnv env;
  env.now = vt_->now();
  env.mhz = mhz();
  env.pc = cpu_->pc();
  env.diag = &sink;
  const bool ok = padlock_->wrmsr(msr, value, env);
  if (checker_ && sink.bits != 0) {
    const uint64_t sp = cpu_->reg(guest64_ ? UC_X86_REG_RSP : UC_X86_REG_ESP);
    checker_->on_msr_write(msr, value, sink.bits, env.pc, sp, *mem_);
  }
  return ok;
}

void Machine::enable_check(std::unique_ptr<check::SourceLookup> lookup) {
  if (checker_) return;
  check_lookup_ = std::move(lookup);
  checker_ = std::make_unique<check::Checker>(padlock_->model(), guest64_, check_lookup_.get());
  core_->set_listener(checker_.get());
}

}  // namespace padlock::emu
