// CPU exceptions and page faults become Linux signals: the vector-to-signal table of
// arch/x86/kernel/traps.c and our TLB fill (which is where page faults come from; their
// exact address: fault_address.hpp).
#include <capstone/capstone.h>
#include <signal.h>

#include "emulator/exception_signals.hpp"
#include "emulator/process.hpp"
#include "emulator/syscalls.hpp"

namespace padlock::emu {

// Linux's user-mode handling of each exception vector.
VectorSignal vector_signal(uint32_t vector) {
  switch (vector) {
    case 0:
      return {SIGFPE, kFpeIntdiv, true};  // #DE
    case 1:
      return {SIGTRAP, kTrapTrace, true};  // #DB
    case 3:
      return {SIGTRAP, kSiKernel, false};  // #BP (int3)
    case 4:
      return {SIGSEGV, kSiKernel, false};  // #OF (into)
    case 5:
      return {SIGSEGV, kSiKernel, false};  // #BR (bound)
    case 6:
      return {SIGILL, kIllIllopn, true};  // #UD
    case 11:                              // #NP
    case 12:
      return {SIGBUS, kSiKernel, false};  // #SS
    case 16:
      return {SIGFPE, kFpeFltinv, true};  // #MF
    case 17:
      return {SIGBUS, kBusAdraln, true};  // #AC
    case 19:
      return {SIGFPE, kFpeFltinv, true};  // #XM
    default:
      return {SIGSEGV, kSiKernel, false};  // #GP, #TS, and INT n without a gate
  }
}

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

bool Process::on_tlb_fill(uint64_t va, int type, uint64_t* paddr, int* perms) {
  return tlb_.fill(*mem_, va, type, paddr, perms);
}


}  // namespace padlock::emu
