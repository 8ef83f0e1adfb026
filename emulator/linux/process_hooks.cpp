// The Process's CPU hooks other than PadLock (linux/padlock_trap.cpp) and blocks: INT n and
// the exception vectors become Linux signals (linux/signal/exception_signals.hpp), the TLB
// fill is where page faults come from (their exact address: cpu/fault_address.hpp), and
// CPUID and RDTSC answer from the model and the virtual clock.
#include <capstone/capstone.h>
#include <signal.h>

#include <cstdio>
#include <stdexcept>

#include "emulator/cpu/uc_hooks.hpp"
#include "emulator/linux/process.hpp"
#include "emulator/linux/signal/exception_signals.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

void Process::on_interrupt(uint32_t intno) {
  drain_block_log();
  if (intno == 0x80) {
    dispatch_syscall(kAbiI386, 2);  // also from 64-bit code: the compat entry
    return;
  }
  const uint64_t pc = cpu_->pc();
  fault_ = GuestSiginfo{};
  const VectorSignal v = vector_signal(intno);
  fault_.signo = v.signo;
  fault_.code = v.code;
  fault_.trapno = static_cast<int>(intno);
  fault_.addr = v.addr_is_pc ? pc : 0;
  // Unicorn leaves the PC after a software interrupt (INT n, INT3, INTO). Linux reports
  // INT n without a user gate as #GP at the INT instruction itself.
  if (intno != 3 && intno != 4 && pc >= 2) {
    const uint8_t* b = mem_->accessible_with(pc - 2, 2, kPageMapped | kPageExec) == 2
                           ? mem_->host(pc - 2)
                           : nullptr;
    if (b != nullptr && b[0] == 0xCD && b[1] == intno) {
      fault_.signo = SIGSEGV;
      fault_.code = kSiKernel;
      fault_.trapno = 13;
      fault_.error_code = intno * 8 + 2;
      fault_.addr = 0;
      fault_ip_ = pc - 2;
      fault_ip_valid_ = true;
    }
  }
  fault_pending_ = true;
  // QEMU remembers this exception as "in flight" because no delivery happened through
  // its IDT; forget it so the next one is not promoted to a double fault.
  cpu_->clear_exception_state();
  clear_eflags30();  // §1.8: exceptions store EFLAGS
  request_stop();
}

uint32_t Process::on_port_io() {
  drain_block_log();
  const uint64_t pc = cpu_->pc();  // Unicorn synced it to the instruction for the hook
  uint32_t value = static_cast<uint32_t>(cpu_->reg(UC_X86_REG_EAX));
  if (!fault_pending_) {
    // Linux: user code runs at IOPL 0 with no I/O bitmap unless it asked (ioperm, iopl,
    // which are not offered here), so every port access is #GP: SIGSEGV, si_addr 0.
    cpu_->save(fault_ctx_);
    fault_ctx_valid_ = true;
    fault_ = GuestSiginfo{};
    fault_.signo = SIGSEGV;
    fault_.code = kSiKernel;
    fault_.trapno = 13;
    fault_pending_ = true;
    clear_eflags30();
    request_stop();
  }
  // INS stores what it read at ES:EDI before the stop: let it store what is there.
  const uint64_t avail = mem_->accessible_with(pc, 4, kPageMapped | kPageRead);
  size_t i = 0;
  while (i < avail &&
         (mem_->host(pc)[i] == 0x66 || mem_->host(pc)[i] == 0xF3 || mem_->host(pc)[i] == 0xF2 ||
          (id_.guest64 && (mem_->host(pc)[i] & 0xF0) == 0x40)))
    ++i;
  if (i < avail && (mem_->host(pc)[i] == 0x6C || mem_->host(pc)[i] == 0x6D)) {
    const uint64_t edi = cpu_->reg(id_.guest64 ? UC_X86_REG_RDI : UC_X86_REG_EDI);
    value = 0;
    user_.read(edi, &value, mem_->host(pc)[i] == 0x6C ? 1 : 4);
  }
  return value;
}

bool Process::undefined_opcode_signal(uint64_t pc) {
  const uint64_t avail = mem_->accessible_with(pc, 2, kPageMapped | kPageExec);
  if (avail == 0) return false;
  const uint8_t* b = mem_->host(pc);
  fault_ = GuestSiginfo{};
  if (b[0] == 0xF1) {
    // ICEBP (INT1): a #DB trap after the instruction; Linux's exc_debug_user sends SIGTRAP
    // with TRAP_BRKPT (no DR6 bits) and si_addr the next instruction.
    fault_.signo = SIGTRAP;
    fault_.code = kTrapBrkpt;
    fault_.trapno = 1;
    fault_.addr = pc + 1;
    fault_ip_ = pc + 1;
  } else if (avail == 2 && b[0] == 0x0F && b[1] == 0x33) {
    // RDPMC with CR4.PCE clear (Linux sets it only for perf's user-space counters): #GP.
    fault_.signo = SIGSEGV;
    fault_.code = kSiKernel;
    fault_.trapno = 13;
    fault_ip_ = pc;
  } else {
    return false;
  }
  fault_ip_valid_ = true;
  fault_pending_ = true;
  clear_eflags30();
  request_stop();
  return true;
}

bool Process::on_tlb_fill(uint64_t va, int type, uint64_t* paddr, int* perms) {
  return tlb_.fill(*mem_, va, type, paddr, perms);
}

int Process::on_cpuid() {
  return trap_->cpuid();
}

// The chip check (emulator/cpu/chip_check.hpp), once per translated block that holds an
// instruction the chip lacks, once per such instruction. --chip-check warn reports it and
// lets it run. The default hooks that one instruction (a code hook on its address alone,
// so no other instruction pays) to raise #UD before it runs; the block being translated
// has no call to the hook yet, so emulation stops at the block's start (the exit check
// precedes everything in a block) and the run loop drops the block before going on.
void Process::check_chip(const BlockInfo& b) {
  const uint64_t at = b.address + b.missing_offset;
  if (!chip_found_.emplace(at, b.missing).second) return;
  if (opts_.chip_check == ChipCheck::Warn) {
    std::fprintf(opts_.log,
                 "padlock-emu: chip check: 0x%llx: %s needs CPUID feature '%s', which CPU model "
                 "'%s' does not have (--chip-check warn: it runs)\n",
                 static_cast<unsigned long long>(at), disassemble(at).c_str(), b.missing->name,
                 opts_.cpu->name);
    return;
  }
  uc_hook h = 0;
  if (uc_hook_add(cpu_->uc(), &h, UC_HOOK_CODE, reinterpret_cast<void*>(Trampolines::code), &hooks_,
                  at, at) != UC_ERR_OK) {
    throw std::runtime_error("unicorn: cannot add the chip check's code hook");
  }
  retranslate_.emplace_back(b.address, b.size);
  request_stop();
}

void Process::on_code(uint64_t address) {
  drain_block_log();
  fault_ = GuestSiginfo{};
  fault_.signo = SIGILL;
  fault_.code = kIllIllopn;
  fault_.addr = address;
  fault_.trapno = 6;
  fault_ip_ = address;
  fault_ip_valid_ = true;
  fault_pending_ = true;
  clear_eflags30();  // §1.8: exceptions store EFLAGS
  request_stop();
}

int Process::on_rdtsc() {
  return trap_->rdtsc();
}

}  // namespace padlock::emu
