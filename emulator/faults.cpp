// CPU exceptions and page faults become Linux signals: the vector-to-signal table of
// arch/x86/kernel/traps.c, our TLB fill (which is where page faults come from), and the
// exact faulting address, recovered from the instruction since the fill only sees pages.
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

uint64_t Process::fault_address(uint64_t page, int type) {
  const uint64_t pc = cpu_->pc();
  const uint64_t page_mask = ~(AddressSpace::kPageSize - 1);
  if (type == UC_MEM_FETCH) return (pc & page_mask) == page ? pc : page;
  const uint64_t avail = mem_->accessible_with(pc, 15, kPageMapped | kPageRead);
  cs_insn* insn = nullptr;
  const size_t n = avail > 0 ? cs_disasm(cs_, mem_->host(pc), avail, pc, 1, &insn) : 0;
  if (n == 0) return page;
  const cs_x86& x = insn[0].detail->x86;
  const unsigned addr_bits = guest64_ ? (x.addr_size == 4 ? 32 : 64) : (x.addr_size == 2 ? 16 : 32);
  auto wrap = [&](uint64_t v) {
    return addr_bits == 64 ? v : addr_bits == 32 ? (v & 0xFFFFFFFFu) : (v & 0xFFFFu);
  };
  auto reg_value = [&](x86_reg r) -> uint64_t {
    if (r == X86_REG_INVALID) return 0;
    if (r == X86_REG_RIP || r == X86_REG_EIP) return pc + insn[0].size;
    const int uc_id = [&]() -> int {
      switch (r) {
        case X86_REG_EAX:
          return UC_X86_REG_EAX;
        case X86_REG_RAX:
          return UC_X86_REG_RAX;
        case X86_REG_ECX:
          return UC_X86_REG_ECX;
        case X86_REG_RCX:
          return UC_X86_REG_RCX;
        case X86_REG_EDX:
          return UC_X86_REG_EDX;
        case X86_REG_RDX:
          return UC_X86_REG_RDX;
        case X86_REG_EBX:
          return UC_X86_REG_EBX;
        case X86_REG_RBX:
          return UC_X86_REG_RBX;
        case X86_REG_ESP:
          return UC_X86_REG_ESP;
        case X86_REG_RSP:
          return UC_X86_REG_RSP;
        case X86_REG_EBP:
          return UC_X86_REG_EBP;
        case X86_REG_RBP:
          return UC_X86_REG_RBP;
        case X86_REG_ESI:
          return UC_X86_REG_ESI;
        case X86_REG_RSI:
          return UC_X86_REG_RSI;
        case X86_REG_EDI:
          return UC_X86_REG_EDI;
        case X86_REG_RDI:
          return UC_X86_REG_RDI;
        case X86_REG_R8:
          return UC_X86_REG_R8;
        case X86_REG_R8D:
          return UC_X86_REG_R8D;
        case X86_REG_R9:
          return UC_X86_REG_R9;
        case X86_REG_R9D:
          return UC_X86_REG_R9D;
        case X86_REG_R10:
          return UC_X86_REG_R10;
        case X86_REG_R10D:
          return UC_X86_REG_R10D;
        case X86_REG_R11:
          return UC_X86_REG_R11;
        case X86_REG_R11D:
          return UC_X86_REG_R11D;
        case X86_REG_R12:
          return UC_X86_REG_R12;
        case X86_REG_R12D:
          return UC_X86_REG_R12D;
        case X86_REG_R13:
          return UC_X86_REG_R13;
        case X86_REG_R13D:
          return UC_X86_REG_R13D;
        case X86_REG_R14:
          return UC_X86_REG_R14;
        case X86_REG_R14D:
          return UC_X86_REG_R14D;
        case X86_REG_R15:
          return UC_X86_REG_R15;
        case X86_REG_R15D:
          return UC_X86_REG_R15D;
        case X86_REG_SI:
          return UC_X86_REG_SI;
        case X86_REG_DI:
          return UC_X86_REG_DI;
        case X86_REG_BX:
          return UC_X86_REG_BX;
        case X86_REG_BP:
          return UC_X86_REG_BP;
        default:
          return -1;
      }
    }();
    return uc_id < 0 ? 0 : cpu_->reg(uc_id);
  };
  auto segment_base = [&](x86_reg seg) -> uint64_t {
    if (seg == X86_REG_FS || seg == X86_REG_GS) {
      if (guest64_) return cpu_->reg(seg == X86_REG_FS ? UC_X86_REG_FS_BASE : UC_X86_REG_GS_BASE);
      const uint64_t sel = cpu_->reg(seg == X86_REG_FS ? UC_X86_REG_FS : UC_X86_REG_GS);
      const uint64_t d =
          (sel & ~uint64_t{7}) ? cpu_->gdt_entry(static_cast<unsigned>(sel >> 3)) : 0;
      return ((d >> 16) & 0xFFFFFF) | ((d >> 32) & 0xFF000000u);
    }
    return 0;
  };
  uint64_t best = page;
  bool found = false;
  auto consider = [&](uint64_t ea, uint64_t size) {
    if (found) return;
    if ((ea & page_mask) == page) {
      best = ea;
      found = true;
    } else if (ea < page && ea + size > page) {
      best = page;  // the access crossed into the faulting page
      found = true;
    }
  };
  for (uint8_t i = 0; i < x.op_count; ++i) {
    const cs_x86_op& op = x.operands[i];
    if (op.type != X86_OP_MEM) continue;
    uint64_t ea = static_cast<uint64_t>(op.mem.disp) + reg_value(op.mem.base) +
                  reg_value(op.mem.index) * static_cast<uint64_t>(op.mem.scale);
    ea = wrap(ea) + segment_base(op.mem.segment);
    if (!guest64_) ea &= 0xFFFFFFFFu;
    consider(ea, op.size ? op.size : 1);
  }
  // Stack accesses Capstone does not list as memory operands.
  const uint64_t sp = reg_value(guest64_ ? X86_REG_RSP : X86_REG_ESP);
  const uint64_t word = guest64_ ? 8 : 4;
  switch (insn[0].id) {
    case X86_INS_PUSH:
    case X86_INS_PUSHF:
    case X86_INS_PUSHFD:
    case X86_INS_PUSHFQ:
    case X86_INS_CALL:
    case X86_INS_PUSHAL:
    case X86_INS_ENTER:
      consider(sp - word, word);
      break;
    case X86_INS_POP:
    case X86_INS_POPF:
    case X86_INS_POPFD:
    case X86_INS_POPFQ:
    case X86_INS_RET:
    case X86_INS_POPAL:
    case X86_INS_IRET:
    case X86_INS_IRETD:
      consider(sp, word);
      break;
    case X86_INS_LEAVE:
      consider(reg_value(guest64_ ? X86_REG_RBP : X86_REG_EBP), word);
      break;
    default:
      break;
  }
  cs_free(insn, n);
  return best;
}

}  // namespace padlock::emu
