// The first byte a faulting instruction could not access. Our TLB fill (UC_TLB_VIRTUAL)
// only sees the page, and Linux reports the exact address in si_addr: the instruction at
// the PC is decoded (Capstone) and its memory operands, and the stack slots of pushes,
// pops, calls and returns, are matched against the page. Process and the function
// harness (Machine) both use it.
#include "emulator/cpu/fault_address.hpp"

#include <capstone/capstone.h>
#include <unicorn/unicorn.h>

#include <utility>

namespace padlock::emu {

namespace {

// Capstone's names of the registers an address can use, and Unicorn's.
constexpr std::pair<x86_reg, int> kAddressRegs[] = {
    {X86_REG_EAX, UC_X86_REG_EAX}, {X86_REG_RAX, UC_X86_REG_RAX},
    {X86_REG_ECX, UC_X86_REG_ECX}, {X86_REG_RCX, UC_X86_REG_RCX},
    {X86_REG_EDX, UC_X86_REG_EDX}, {X86_REG_RDX, UC_X86_REG_RDX},
    {X86_REG_EBX, UC_X86_REG_EBX}, {X86_REG_RBX, UC_X86_REG_RBX},
    {X86_REG_ESP, UC_X86_REG_ESP}, {X86_REG_RSP, UC_X86_REG_RSP},
    {X86_REG_EBP, UC_X86_REG_EBP}, {X86_REG_RBP, UC_X86_REG_RBP},
    {X86_REG_ESI, UC_X86_REG_ESI}, {X86_REG_RSI, UC_X86_REG_RSI},
    {X86_REG_EDI, UC_X86_REG_EDI}, {X86_REG_RDI, UC_X86_REG_RDI},
    {X86_REG_R8, UC_X86_REG_R8},   {X86_REG_R8D, UC_X86_REG_R8D},
    {X86_REG_R9, UC_X86_REG_R9},   {X86_REG_R9D, UC_X86_REG_R9D},
    {X86_REG_R10, UC_X86_REG_R10}, {X86_REG_R10D, UC_X86_REG_R10D},
    {X86_REG_R11, UC_X86_REG_R11}, {X86_REG_R11D, UC_X86_REG_R11D},
    {X86_REG_R12, UC_X86_REG_R12}, {X86_REG_R12D, UC_X86_REG_R12D},
    {X86_REG_R13, UC_X86_REG_R13}, {X86_REG_R13D, UC_X86_REG_R13D},
    {X86_REG_R14, UC_X86_REG_R14}, {X86_REG_R14D, UC_X86_REG_R14D},
    {X86_REG_R15, UC_X86_REG_R15}, {X86_REG_R15D, UC_X86_REG_R15D},
    {X86_REG_SI, UC_X86_REG_SI},   {X86_REG_DI, UC_X86_REG_DI},
    {X86_REG_BX, UC_X86_REG_BX},   {X86_REG_BP, UC_X86_REG_BP},
};

}  // namespace

uint64_t first_faulting_byte(size_t cs, const Cpu& cpu, const AddressSpace& mem, uint64_t page,
                             int type, bool* via_stack) {
  bool stack_dummy = false;
  bool& stack = via_stack != nullptr ? *via_stack : stack_dummy;
  stack = false;
  const bool guest64 = cpu.guest64();
  const uint64_t pc = cpu.pc();
  const uint64_t page_mask = ~(AddressSpace::kPageSize - 1);
  if (type == UC_MEM_FETCH) return (pc & page_mask) == page ? pc : page;
  const uint64_t avail = mem.accessible_with(pc, 15, kPageMapped | kPageRead);
  cs_insn* insn = nullptr;
  const size_t n = avail > 0 ? cs_disasm(cs, mem.host(pc), avail, pc, 1, &insn) : 0;
  if (n == 0) return page;
  const cs_x86& x = insn[0].detail->x86;
  const unsigned addr_bits = guest64 ? (x.addr_size == 4 ? 32 : 64) : (x.addr_size == 2 ? 16 : 32);
  auto wrap = [&](uint64_t v) {
    return addr_bits == 64 ? v : addr_bits == 32 ? (v & 0xFFFFFFFFu) : (v & 0xFFFFu);
  };
  auto reg_value = [&](x86_reg r) -> uint64_t {
    if (r == X86_REG_INVALID) return 0;
    if (r == X86_REG_RIP || r == X86_REG_EIP) return pc + insn[0].size;
    for (const auto& [cs_id, uc_id] : kAddressRegs) {
      if (cs_id == r) return cpu.reg(uc_id);
    }
    return 0;
  };
  auto segment_base = [&](x86_reg seg) -> uint64_t {
    if (seg == X86_REG_FS || seg == X86_REG_GS) {
      if (guest64) return cpu.reg(seg == X86_REG_FS ? UC_X86_REG_FS_BASE : UC_X86_REG_GS_BASE);
      const uint64_t sel = cpu.reg(seg == X86_REG_FS ? UC_X86_REG_FS : UC_X86_REG_GS);
      const uint64_t d = (sel & ~uint64_t{7}) ? cpu.gdt_entry(static_cast<unsigned>(sel >> 3)) : 0;
      return ((d >> 16) & 0xFFFFFF) | ((d >> 32) & 0xFF000000u);
    }
    return 0;
  };
  uint64_t best = page;
  bool found = false;
  auto consider = [&](uint64_t ea, uint64_t size, bool through_ss) {
    if (found) return;
    if ((ea & page_mask) == page) {
      best = ea;
      found = true;
    } else if (ea < page && ea + size > page) {
      best = page;  // the access crossed into the faulting page
      found = true;
    }
    stack = found && through_ss;
  };
  auto is_stack_reg = [](x86_reg r) {
    return r == X86_REG_RSP || r == X86_REG_ESP || r == X86_REG_RBP || r == X86_REG_EBP ||
           r == X86_REG_SP || r == X86_REG_BP;
  };
  for (uint8_t i = 0; i < x.op_count; ++i) {
    const cs_x86_op& op = x.operands[i];
    if (op.type != X86_OP_MEM) continue;
    uint64_t ea = static_cast<uint64_t>(op.mem.disp) + reg_value(op.mem.base) +
                  reg_value(op.mem.index) * static_cast<uint64_t>(op.mem.scale);
    ea = wrap(ea) + segment_base(op.mem.segment);
    if (!guest64) ea &= 0xFFFFFFFFu;
    const bool ss = op.mem.segment == X86_REG_SS ||
                    (op.mem.segment == X86_REG_INVALID && is_stack_reg(op.mem.base));
    consider(ea, op.size ? op.size : 1, ss);
  }
  // Stack accesses Capstone does not list as memory operands.
  const uint64_t sp = reg_value(guest64 ? X86_REG_RSP : X86_REG_ESP);
  const uint64_t word = guest64 ? 8 : 4;
  switch (insn[0].id) {
    case X86_INS_PUSH:
    case X86_INS_PUSHF:
    case X86_INS_PUSHFD:
    case X86_INS_PUSHFQ:
    case X86_INS_CALL:
    case X86_INS_PUSHAL:
    case X86_INS_ENTER:
      consider(sp - word, word, true);
      break;
    case X86_INS_POP:
    case X86_INS_POPF:
    case X86_INS_POPFD:
    case X86_INS_POPFQ:
    case X86_INS_RET:
    case X86_INS_POPAL:
    case X86_INS_IRET:
    case X86_INS_IRETD:
      consider(sp, word, true);
      break;
    case X86_INS_LEAVE:
      consider(reg_value(guest64 ? X86_REG_RBP : X86_REG_EBP), word, true);
      break;
    default:
      break;
  }
  cs_free(insn, n);
  return best;
}

}  // namespace padlock::emu
