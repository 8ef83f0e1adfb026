// PadLock instructions reach UC_HOOK_INSN_INVALID because QEMU's translator has no case
// for 0F A6 / 0F A7. The hook gets no opcode and no length: decode at the PC, run the
// model, write the registers back and move the PC. Any other invalid opcode is SIGILL.
#include <signal.h>

#include <algorithm>
#include <cstring>

#include "emulator/process.hpp"
#include "emulator/trace/run_observers.hpp"

namespace padlock::emu {

namespace {

// Linux page-fault error code bits (arch/x86/include/asm/trap_pf.h).
constexpr uint64_t kPfProt = 1, kPfWrite = 2, kPfUser = 4;

}  // namespace

// Timing of one PadLock instruction (issue #4, docs/timing.md). The model's clocks assume
// everything in L1 and no store-buffer stalls (§3.3); the data stream's cost from the cache
// model is added to both the SSE-visible and the integer-visible clocks (the integer
// pipeline "slips and stalls into step with ACE"). Integer code continues after
// int_cycles; ACE is busy until cycles (§3.3 overlap).
void Process::charge_padlock(const isa::Decoded& d, const uint64_t before[8], Outcome& o) {
  timing::MemCost mc;
  const uint64_t esi = before[static_cast<int>(Gpr::SI)];
  const uint64_t edi = before[static_cast<int>(Gpr::DI)];
  switch (d.id) {
    case isa::InsnId::XcryptEcb:
    case isa::InsnId::XcryptCbc:
    case isa::InsnId::XcryptCtr:
    case isa::InsnId::XcryptCfb:
    case isa::InsnId::XcryptOfb:
      if (o.bytes > 0) mc = cache_->stream(esi, o.bytes, edi, o.bytes);
      break;
    case isa::InsnId::Xsha1:
    case isa::InsnId::Xsha256:
      if (o.bytes > 0) mc = cache_->stream(esi, o.bytes, 0, 0);
      break;
    default:
      break;
  }
  const double total = cache_->combine(static_cast<double>(o.cycles), mc);
  const uint64_t extra =
      total > static_cast<double>(o.cycles) ? static_cast<uint64_t>(total - o.cycles + 0.5) : 0;
  o.cycles += extra;
  o.int_cycles += extra;
  stats_.cache_cycles += extra;
  const uint64_t start = vt_->now();
  vt_->set_sse_ready(std::max(vt_->sse_ready(), start + o.cycles));
  vt_->advance(o.int_cycles);
}

bool Process::on_invalid_insn() {
  drain_block_log();
  const uint64_t pc = cpu_->pc();
  const uint64_t avail = mem_->accessible_with(pc, 15, kPageMapped | kPageExec);
  const isa::Decoded d = isa::decode(mem_->host(pc), avail,
                                     guest64_ ? isa::CpuMode::Long64 : isa::CpuMode::Protected32);
  if (d.status == isa::DecodeStatus::NotPadlock) {
    fault_ = GuestSiginfo{};
    fault_.signo = SIGILL;
    fault_.code = kIllIllopn;
    fault_.addr = pc;
    fault_.trapno = 6;
    fault_pending_ = true;
    request_stop();
    return true;  // handled by us: the run loop delivers SIGILL with the PC unchanged
  }

  ArchState s;
  uint64_t before[8];
  cpu_->read_gpr8(before);
  std::memcpy(s.gpr, before, sizeof before);
  // EFLAGS[30] lives in our shadow bit (§1.8, §3.2); QEMU never holds it.
  s.eflags = (cpu_->reg(guest64_ ? UC_X86_REG_RFLAGS : UC_X86_REG_EFLAGS) & ~ArchState::kEflags30) |
             (eflags30_ ? ArchState::kEflags30 : 0);
  s.cr4_osfxsr = true;  // §1.2: Linux always sets CR4[9]
  ExecEnv env;
  // §3.3 overlap: a PadLock instruction waits until ACE (and the SSE unit) is free.
  if (opts_.timing) vt_->wait_for_sse();
  env.now = now();
  // Interrupt model (--irq-hz): a REP instruction stops at its next interruptible point
  // after the pending interrupt's cycle (§1.7, §6.6) and resumes after it.
  if (opts_.timing) env.interrupt_at = vt_->next_irq();
  env.mhz = mhz_;
  env.pc = pc;
  env.diag = diag_.get();
  if (obs_) obs_->before_padlock(d, s, *mem_, pc, env.now);
  Outcome o = padlock_->execute(d, s, *mem_, env);
  if (opts_.timing) {
    charge_padlock(d, before, o);
  } else {
    vt_->advance(o.cycles);
  }
  if (d.id != isa::InsnId::Count) stats_.record(d.id, o);
  if (obs_) obs_->after_padlock(s, o, *mem_, now());
  if (opts_.timing && vt_->now() >= vt_->next_event()) time_events();

  uint8_t changed = 0;
  for (int i = 0; i < 8; ++i) {
    if (s.gpr[i] != before[i]) changed |= static_cast<uint8_t>(1u << i);
  }
  cpu_->write_gpr8(s.gpr, changed);

  // §1.8: REP XCRYPT sets EFLAGS[30] (after loading the key), REP XSHA clears it; the
  // models report the new value in s.eflags.
  if (s.eflags30()) {
    eflags30_ = true;
    if (!block_hook_on_) {
      // From now on PUSHF must be seen: install the block hook (once per run).
      want_block_hook_ = true;
      request_stop();
    }
  } else {
    clear_eflags30();
  }

  switch (o.status) {
    case Status::Completed:
      cpu_->set_pc(pc + d.length);
      break;
    case Status::Interrupted:
      // §1.7: the instruction resumes from the updated registers; taking the interrupt
      // stores EFLAGS, which clears bit 30.
      clear_eflags30();
      break;
    case Status::Faulted: {
      clear_eflags30();  // the exception stores EFLAGS (§1.8)
      fault_ = GuestSiginfo{};
      switch (o.fault.kind) {
        case FaultKind::PageFault: {
          fault_.signo = SIGSEGV;
          const bool mapped = (mem_->flags(o.fault.address) & kPageMapped) != 0;
          fault_.code = mapped ? kSegvAccerr : kSegvMaperr;
          fault_.addr = o.fault.address;
          fault_.trapno = 14;
          fault_.error_code = kPfUser | (o.fault.write ? kPfWrite : 0) | (mapped ? kPfProt : 0);
          break;
        }
        case FaultKind::GeneralProtection:
          fault_.signo = SIGSEGV;
          fault_.code = kSiKernel;  // Linux reports #GP with si_addr 0
          fault_.trapno = 13;
          break;
        case FaultKind::InvalidOpcode:
        case FaultKind::None:
          fault_.signo = SIGILL;
          fault_.code = kIllIllopn;
          fault_.addr = pc;
          fault_.trapno = 6;
          break;
      }
      fault_pending_ = true;
      request_stop();
      break;
    }
  }
  return true;
}

}  // namespace padlock::emu
