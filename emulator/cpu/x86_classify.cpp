#include "emulator/cpu/x86_classify.hpp"

#include <cstring>

namespace padlock::emu {

using timing::InsnClass;

namespace {

bool has_group(const cs_insn& in, uint8_t g) {
  const cs_detail* d = in.detail;
  for (uint8_t i = 0; i < d->groups_count; ++i)
    if (d->groups[i] == g) return true;
  return false;
}

struct MemOps {
  bool any = false;
  bool dest = false;  // operand 0 is memory
};

MemOps mem_ops(const cs_insn& in) {
  MemOps m;
  const cs_x86& x = in.detail->x86;
  for (uint8_t i = 0; i < x.op_count; ++i) {
    if (x.operands[i].type == X86_OP_MEM) {
      m.any = true;
      if (i == 0) m.dest = true;
    }
  }
  return m;
}

bool rep_prefixed(const cs_insn& in) {
  const uint8_t p = in.detail->x86.prefix[0];
  return p == X86_PREFIX_REP || p == X86_PREFIX_REPNE;
}

}  // namespace

InsnCostInfo classify_insn(const cs_insn& in, timing::BlockCost& cost) {
  InsnCostInfo info;
  const MemOps m = mem_ops(in);
  switch (in.id) {
    case X86_INS_MOV:
    case X86_INS_MOVZX:
    case X86_INS_MOVSX:
    case X86_INS_MOVSXD:
    case X86_INS_MOVABS:
      cost.add(m.dest ? InsnClass::Store : m.any ? InsnClass::Load : InsnClass::Mov);
      return info;
    case X86_INS_XCHG:
      cost.add(m.any ? InsnClass::AluRmw : InsnClass::Mov);
      return info;
    case X86_INS_LEA:
      cost.add(InsnClass::Lea);
      return info;
    case X86_INS_ADD:
    case X86_INS_SUB:
    case X86_INS_AND:
    case X86_INS_OR:
    case X86_INS_XOR:
    case X86_INS_ADC:
    case X86_INS_SBB:
    case X86_INS_INC:
    case X86_INS_DEC:
    case X86_INS_NEG:
    case X86_INS_NOT:
      cost.add(m.dest ? InsnClass::AluRmw : m.any ? InsnClass::AluLoad : InsnClass::Alu);
      return info;
    case X86_INS_CMP:
    case X86_INS_TEST:
      cost.add(m.any ? InsnClass::AluLoad : InsnClass::Alu);
      return info;
    case X86_INS_SHL:
    case X86_INS_SAL:
    case X86_INS_SHR:
    case X86_INS_SAR:
    case X86_INS_ROL:
    case X86_INS_ROR:
    case X86_INS_RCL:
    case X86_INS_RCR:
    case X86_INS_SHLD:
    case X86_INS_SHRD:
    case X86_INS_BT:
    case X86_INS_BTS:
    case X86_INS_BTR:
    case X86_INS_BTC:
      cost.add(m.dest ? InsnClass::AluRmw : InsnClass::Shift);
      return info;
    case X86_INS_PUSH:
      cost.add(InsnClass::Push);
      return info;
    case X86_INS_POP:
      cost.add(InsnClass::Pop);
      return info;
    case X86_INS_PUSHAL:
    case X86_INS_PUSHAW:
      cost.add(InsnClass::PushAll);
      return info;
    case X86_INS_POPAL:
    case X86_INS_POPAW:
      cost.add(InsnClass::PopAll);
      return info;
    case X86_INS_MUL:
    case X86_INS_IMUL:
      cost.add(InsnClass::Mul);
      return info;
    case X86_INS_DIV:
    case X86_INS_IDIV:
      cost.add(InsnClass::Div);
      return info;
    case X86_INS_JMP:
    case X86_INS_LJMP:
      cost.add(in.detail->x86.op_count == 1 && in.detail->x86.operands[0].type == X86_OP_IMM
                   ? InsnClass::Jump
                   : InsnClass::JumpIndirect);
      return info;
    case X86_INS_CALL:
    case X86_INS_LCALL:
      cost.add(InsnClass::Call);
      return info;
    case X86_INS_RET:
    case X86_INS_RETF:
    case X86_INS_RETFQ:
      cost.add(InsnClass::Ret);
      return info;
    case X86_INS_MOVSB:
    case X86_INS_MOVSW:
    case X86_INS_MOVSD:
    case X86_INS_MOVSQ:
    case X86_INS_STOSB:
    case X86_INS_STOSW:
    case X86_INS_STOSD:
    case X86_INS_STOSQ:
    case X86_INS_LODSB:
    case X86_INS_LODSW:
    case X86_INS_LODSD:
    case X86_INS_LODSQ:
    case X86_INS_CMPSB:
    case X86_INS_CMPSW:
    case X86_INS_CMPSD:
    case X86_INS_CMPSQ:
    case X86_INS_SCASB:
    case X86_INS_SCASW:
    case X86_INS_SCASD:
    case X86_INS_SCASQ:
      // MOVSD/CMPSD are also SSE2 mnemonics; the SSE forms carry an SSE group.
      if (has_group(in, X86_GRP_SSE2)) break;
      cost.add(InsnClass::String);
      if (rep_prefixed(in)) cost.add(InsnClass::RepStartup);
      return info;
    case X86_INS_PUSHF:
    case X86_INS_PUSHFD:
    case X86_INS_PUSHFQ:
    case X86_INS_POPF:
    case X86_INS_POPFD:
    case X86_INS_POPFQ:
    case X86_INS_SAHF:
    case X86_INS_LAHF:
    case X86_INS_CLD:
    case X86_INS_STD:
    case X86_INS_CLC:
    case X86_INS_STC:
    case X86_INS_CMC:
      cost.add(InsnClass::Flags);
      return info;
    case X86_INS_INT:
    case X86_INS_INT3:
    case X86_INS_SYSENTER:
    case X86_INS_SYSCALL:
      cost.add(InsnClass::Syscall);
      return info;
    case X86_INS_CPUID:
    case X86_INS_RDTSC:
    case X86_INS_RDTSCP:
    case X86_INS_LFENCE:
    case X86_INS_MFENCE:
    case X86_INS_SFENCE:
      cost.add(InsnClass::Serializing);
      return info;
    case X86_INS_NOP:
    case X86_INS_ENDBR32:
    case X86_INS_ENDBR64:
      cost.add(InsnClass::Nop);
      return info;
    default:
      break;
  }
  if (has_group(in, X86_GRP_FPU)) {
    cost.add(InsnClass::X87);
    if (m.any) cost.add(InsnClass::Load);
    return info;
  }
  if (has_group(in, X86_GRP_MMX) && !has_group(in, X86_GRP_SSE2)) {
    cost.add(InsnClass::Mmx);
    return info;
  }
  if (has_group(in, X86_GRP_SSE1) || has_group(in, X86_GRP_SSE2) || has_group(in, X86_GRP_SSE3) ||
      has_group(in, X86_GRP_SSSE3) || has_group(in, X86_GRP_SSE41) ||
      has_group(in, X86_GRP_SSE42) || has_group(in, X86_GRP_AES) ||
      has_group(in, X86_GRP_PCLMUL)) {
    cost.add(InsnClass::Sse);
    if (m.any) cost.add(InsnClass::Load);
    info.sse = true;
    return info;
  }
  if (has_group(in, X86_GRP_CMOV) || std::strncmp(in.mnemonic, "set", 3) == 0) {
    cost.add(InsnClass::CmovSet);
    return info;
  }
  if (has_group(in, X86_GRP_JUMP)) {  // conditional jumps, loop, jcxz
    cost.add(InsnClass::Branch);
    return info;
  }
  cost.add(InsnClass::Other);
  return info;
}

}  // namespace padlock::emu
