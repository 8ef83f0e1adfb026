#include "emulator/cpu/x86_classify.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <initializer_list>

namespace padlock::emu {

using timing::InsnClass;
using timing::RegMask;

namespace {

bool has_group(const cs_insn& in, uint8_t g) {
  const cs_detail* d = in.detail;
  for (uint8_t i = 0; i < d->groups_count; ++i)
    if (d->groups[i] == g) return true;
  return false;
}

// How an instruction id maps to a class (the fallback of the measured costs).
enum class Kind : uint8_t {
  None,     // decided by groups (x87, MMX, SSE, CMOV/SETcc, conditional jumps) or Other
  Fixed,    // always `cls`
  Move,     // Store / Load / Mov by its memory operand
  Xchg,     // AluRmw with memory, else Mov
  Alu,      // AluRmw (memory destination) / AluLoad / Alu
  Compare,  // AluLoad / Alu
  Shift,    // AluRmw (memory destination) / Shift
  Jump,     // Jump (direct) / JumpIndirect
  String,   // String (not the SSE2 MOVSD/CMPSD)
};

struct KindRow {
  x86_insn id;
  Kind kind;
  InsnClass cls;
};

constexpr KindRow kKinds[] = {
    {X86_INS_MOV, Kind::Move, InsnClass::Mov},
    {X86_INS_MOVZX, Kind::Move, InsnClass::Mov},
    {X86_INS_MOVSX, Kind::Move, InsnClass::Mov},
    {X86_INS_MOVSXD, Kind::Move, InsnClass::Mov},
    {X86_INS_MOVABS, Kind::Move, InsnClass::Mov},
    {X86_INS_XCHG, Kind::Xchg, InsnClass::Mov},
    {X86_INS_LEA, Kind::Fixed, InsnClass::Lea},
    {X86_INS_ADD, Kind::Alu, InsnClass::Alu},
    {X86_INS_SUB, Kind::Alu, InsnClass::Alu},
    {X86_INS_AND, Kind::Alu, InsnClass::Alu},
    {X86_INS_OR, Kind::Alu, InsnClass::Alu},
    {X86_INS_XOR, Kind::Alu, InsnClass::Alu},
    {X86_INS_ADC, Kind::Alu, InsnClass::Alu},
    {X86_INS_SBB, Kind::Alu, InsnClass::Alu},
    {X86_INS_INC, Kind::Alu, InsnClass::Alu},
    {X86_INS_DEC, Kind::Alu, InsnClass::Alu},
    {X86_INS_NEG, Kind::Alu, InsnClass::Alu},
    {X86_INS_NOT, Kind::Alu, InsnClass::Alu},
    {X86_INS_CMP, Kind::Compare, InsnClass::Alu},
    {X86_INS_TEST, Kind::Compare, InsnClass::Alu},
    {X86_INS_SHL, Kind::Shift, InsnClass::Shift},
    {X86_INS_SAL, Kind::Shift, InsnClass::Shift},
    {X86_INS_SHR, Kind::Shift, InsnClass::Shift},
    {X86_INS_SAR, Kind::Shift, InsnClass::Shift},
    {X86_INS_ROL, Kind::Shift, InsnClass::Shift},
    {X86_INS_ROR, Kind::Shift, InsnClass::Shift},
    {X86_INS_RCL, Kind::Shift, InsnClass::Shift},
    {X86_INS_RCR, Kind::Shift, InsnClass::Shift},
    {X86_INS_SHLD, Kind::Shift, InsnClass::Shift},
    {X86_INS_SHRD, Kind::Shift, InsnClass::Shift},
    {X86_INS_BT, Kind::Shift, InsnClass::Shift},
    {X86_INS_BTS, Kind::Shift, InsnClass::Shift},
    {X86_INS_BTR, Kind::Shift, InsnClass::Shift},
    {X86_INS_BTC, Kind::Shift, InsnClass::Shift},
    {X86_INS_PUSH, Kind::Fixed, InsnClass::Push},
    {X86_INS_POP, Kind::Fixed, InsnClass::Pop},
    {X86_INS_PUSHAL, Kind::Fixed, InsnClass::PushAll},
    {X86_INS_PUSHAW, Kind::Fixed, InsnClass::PushAll},
    {X86_INS_POPAL, Kind::Fixed, InsnClass::PopAll},
    {X86_INS_POPAW, Kind::Fixed, InsnClass::PopAll},
    {X86_INS_MUL, Kind::Fixed, InsnClass::Mul},
    {X86_INS_IMUL, Kind::Fixed, InsnClass::Mul},
    {X86_INS_DIV, Kind::Fixed, InsnClass::Div},
    {X86_INS_IDIV, Kind::Fixed, InsnClass::Div},
    {X86_INS_JMP, Kind::Jump, InsnClass::Jump},
    {X86_INS_LJMP, Kind::Jump, InsnClass::Jump},
    {X86_INS_CALL, Kind::Fixed, InsnClass::Call},
    {X86_INS_LCALL, Kind::Fixed, InsnClass::Call},
    {X86_INS_RET, Kind::Fixed, InsnClass::Ret},
    {X86_INS_RETF, Kind::Fixed, InsnClass::Ret},
    {X86_INS_RETFQ, Kind::Fixed, InsnClass::Ret},
    {X86_INS_MOVSB, Kind::String, InsnClass::String},
    {X86_INS_MOVSW, Kind::String, InsnClass::String},
    {X86_INS_MOVSD, Kind::String, InsnClass::String},
    {X86_INS_MOVSQ, Kind::String, InsnClass::String},
    {X86_INS_STOSB, Kind::String, InsnClass::String},
    {X86_INS_STOSW, Kind::String, InsnClass::String},
    {X86_INS_STOSD, Kind::String, InsnClass::String},
    {X86_INS_STOSQ, Kind::String, InsnClass::String},
    {X86_INS_LODSB, Kind::String, InsnClass::String},
    {X86_INS_LODSW, Kind::String, InsnClass::String},
    {X86_INS_LODSD, Kind::String, InsnClass::String},
    {X86_INS_LODSQ, Kind::String, InsnClass::String},
    {X86_INS_CMPSB, Kind::String, InsnClass::String},
    {X86_INS_CMPSW, Kind::String, InsnClass::String},
    {X86_INS_CMPSD, Kind::String, InsnClass::String},
    {X86_INS_CMPSQ, Kind::String, InsnClass::String},
    {X86_INS_SCASB, Kind::String, InsnClass::String},
    {X86_INS_SCASW, Kind::String, InsnClass::String},
    {X86_INS_SCASD, Kind::String, InsnClass::String},
    {X86_INS_SCASQ, Kind::String, InsnClass::String},
    {X86_INS_PUSHF, Kind::Fixed, InsnClass::Flags},
    {X86_INS_PUSHFD, Kind::Fixed, InsnClass::Flags},
    {X86_INS_PUSHFQ, Kind::Fixed, InsnClass::Flags},
    {X86_INS_POPF, Kind::Fixed, InsnClass::Flags},
    {X86_INS_POPFD, Kind::Fixed, InsnClass::Flags},
    {X86_INS_POPFQ, Kind::Fixed, InsnClass::Flags},
    {X86_INS_SAHF, Kind::Fixed, InsnClass::Flags},
    {X86_INS_LAHF, Kind::Fixed, InsnClass::Flags},
    {X86_INS_CLD, Kind::Fixed, InsnClass::Flags},
    {X86_INS_STD, Kind::Fixed, InsnClass::Flags},
    {X86_INS_CLC, Kind::Fixed, InsnClass::Flags},
    {X86_INS_STC, Kind::Fixed, InsnClass::Flags},
    {X86_INS_CMC, Kind::Fixed, InsnClass::Flags},
    {X86_INS_INT, Kind::Fixed, InsnClass::Syscall},
    {X86_INS_INT3, Kind::Fixed, InsnClass::Syscall},
    {X86_INS_SYSENTER, Kind::Fixed, InsnClass::Syscall},
    {X86_INS_SYSCALL, Kind::Fixed, InsnClass::Syscall},
    {X86_INS_CPUID, Kind::Fixed, InsnClass::Serializing},
    {X86_INS_RDTSC, Kind::Fixed, InsnClass::Serializing},
    {X86_INS_RDTSCP, Kind::Fixed, InsnClass::Serializing},
    {X86_INS_LFENCE, Kind::Fixed, InsnClass::Serializing},
    {X86_INS_MFENCE, Kind::Fixed, InsnClass::Serializing},
    {X86_INS_SFENCE, Kind::Fixed, InsnClass::Serializing},
    {X86_INS_NOP, Kind::Fixed, InsnClass::Nop},
    {X86_INS_ENDBR32, Kind::Fixed, InsnClass::Nop},
    {X86_INS_ENDBR64, Kind::Fixed, InsnClass::Nop},
};

// Instruction id -> row of kKinds (0xFF: none), built once.
const std::array<uint8_t, X86_INS_ENDING>& kind_index() {
  static const auto table = [] {
    std::array<uint8_t, X86_INS_ENDING> t;
    t.fill(0xFF);
    for (size_t i = 0; i < std::size(kKinds); ++i) t[kKinds[i].id] = static_cast<uint8_t>(i);
    return t;
  }();
  return table;
}

bool sse_group(const cs_insn& in) {
  constexpr uint8_t kSse[] = {X86_GRP_SSE1,  X86_GRP_SSE2,  X86_GRP_SSE3, X86_GRP_SSSE3,
                              X86_GRP_SSE41, X86_GRP_SSE42, X86_GRP_AES,  X86_GRP_PCLMUL};
  for (uint8_t g : kSse)
    if (has_group(in, g)) return true;
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

// The cost class (the fallback), and whether the instruction is SSE.
InsnClass classify(const cs_insn& in, bool& sse) {
  sse = false;
  const MemOps m = mem_ops(in);
  const uint8_t row = kind_index()[in.id];
  const Kind kind = row == 0xFF ? Kind::None : kKinds[row].kind;
  switch (kind) {
    case Kind::Fixed:
      return kKinds[row].cls;
    case Kind::Move:
      return m.dest ? InsnClass::Store : m.any ? InsnClass::Load : InsnClass::Mov;
    case Kind::Xchg:
      return m.any ? InsnClass::AluRmw : InsnClass::Mov;
    case Kind::Alu:
      return m.dest ? InsnClass::AluRmw : m.any ? InsnClass::AluLoad : InsnClass::Alu;
    case Kind::Compare:
      return m.any ? InsnClass::AluLoad : InsnClass::Alu;
    case Kind::Shift:
      return m.dest ? InsnClass::AluRmw : InsnClass::Shift;
    case Kind::Jump: {
      const cs_x86& x = in.detail->x86;
      return x.op_count == 1 && x.operands[0].type == X86_OP_IMM ? InsnClass::Jump
                                                                 : InsnClass::JumpIndirect;
    }
    case Kind::String:
      // MOVSD/CMPSD are also SSE2 mnemonics; the SSE forms carry an SSE group.
      if (!has_group(in, X86_GRP_SSE2)) return InsnClass::String;
      break;
    case Kind::None:
      break;
  }
  if (has_group(in, X86_GRP_FPU)) return InsnClass::X87;
  if (has_group(in, X86_GRP_MMX) && !has_group(in, X86_GRP_SSE2)) return InsnClass::Mmx;
  if (sse_group(in)) {
    sse = true;
    return InsnClass::Sse;
  }
  if (has_group(in, X86_GRP_CMOV) || std::strncmp(in.mnemonic, "set", 3) == 0)
    return InsnClass::CmovSet;
  if (has_group(in, X86_GRP_JUMP)) return InsnClass::Branch;  // jcc, loop, jcxz
  return InsnClass::Other;
}

// --- registers ----------------------------------------------------------------------------

// Capstone register -> bit of the block model (timing::reg), 0xFF: not tracked.
const std::array<uint8_t, X86_REG_ENDING>& reg_index() {
  static const auto table = [] {
    std::array<uint8_t, X86_REG_ENDING> t;
    t.fill(0xFF);
    // Sub-registers of one architectural register share its bit.
    const x86_reg gpr[16][4] = {
        {X86_REG_AL, X86_REG_AX, X86_REG_EAX, X86_REG_RAX},
        {X86_REG_CL, X86_REG_CX, X86_REG_ECX, X86_REG_RCX},
        {X86_REG_DL, X86_REG_DX, X86_REG_EDX, X86_REG_RDX},
        {X86_REG_BL, X86_REG_BX, X86_REG_EBX, X86_REG_RBX},
        {X86_REG_SPL, X86_REG_SP, X86_REG_ESP, X86_REG_RSP},
        {X86_REG_BPL, X86_REG_BP, X86_REG_EBP, X86_REG_RBP},
        {X86_REG_SIL, X86_REG_SI, X86_REG_ESI, X86_REG_RSI},
        {X86_REG_DIL, X86_REG_DI, X86_REG_EDI, X86_REG_RDI},
        {X86_REG_R8B, X86_REG_R8W, X86_REG_R8D, X86_REG_R8},
        {X86_REG_R9B, X86_REG_R9W, X86_REG_R9D, X86_REG_R9},
        {X86_REG_R10B, X86_REG_R10W, X86_REG_R10D, X86_REG_R10},
        {X86_REG_R11B, X86_REG_R11W, X86_REG_R11D, X86_REG_R11},
        {X86_REG_R12B, X86_REG_R12W, X86_REG_R12D, X86_REG_R12},
        {X86_REG_R13B, X86_REG_R13W, X86_REG_R13D, X86_REG_R13},
        {X86_REG_R14B, X86_REG_R14W, X86_REG_R14D, X86_REG_R14},
        {X86_REG_R15B, X86_REG_R15W, X86_REG_R15D, X86_REG_R15},
    };
    for (unsigned i = 0; i < 16; ++i)
      for (x86_reg r : gpr[i]) t[r] = static_cast<uint8_t>(timing::reg::kGpr + i);
    t[X86_REG_AH] = timing::reg::kGpr + 0;
    t[X86_REG_CH] = timing::reg::kGpr + 1;
    t[X86_REG_DH] = timing::reg::kGpr + 2;
    t[X86_REG_BH] = timing::reg::kGpr + 3;
    t[X86_REG_EFLAGS] = timing::reg::kFlags;
    for (unsigned i = 0; i < 8; ++i) {
      t[X86_REG_ST0 + i] = static_cast<uint8_t>(timing::reg::kSt + i);
      t[X86_REG_MM0 + i] = static_cast<uint8_t>(timing::reg::kMm + i);
    }
    for (unsigned i = 0; i < 16; ++i)
      t[X86_REG_XMM0 + i] = static_cast<uint8_t>(timing::reg::kXmm + i);
    return t;
  }();
  return table;
}

RegMask mask_of(const cs_regs regs, uint8_t n) {
  RegMask m = 0;
  for (uint8_t i = 0; i < n; ++i) {
    const uint8_t b = regs[i] < X86_REG_ENDING ? reg_index()[regs[i]] : 0xFF;
    if (b != 0xFF) m |= timing::reg_bit(b);
  }
  return m;
}

bool is_st(x86_reg r) {
  return r >= X86_REG_ST0 && r <= X86_REG_ST7;
}

// --- keys ---------------------------------------------------------------------------------

struct Buf {
  char* s;
  size_t cap, n = 0;
  void put(const char* t) {
    while (*t != '\0' && n + 1 < cap) s[n++] = *t++;
    s[n] = '\0';
  }
  void put_upper(const char* t) {
    while (*t != '\0' && n + 1 < cap) s[n++] = static_cast<char>(std::toupper(*t++));
    s[n] = '\0';
  }
};

// Capstone's mnemonic without the prefixes it prints ("rep movsd", "lock add").
const char* bare_mnemonic(const char* m) {
  for (const char* p : {"rep ", "repe ", "repne ", "lock ", "bnd ", "notrack "}) {
    const size_t k = std::strlen(p);
    if (std::strncmp(m, p, k) == 0) return bare_mnemonic(m + k);
  }
  return m;
}

bool shift_count_insn(unsigned id) {
  switch (id) {
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
      return true;
    default:
      return false;
  }
}

// One operand's token (scripts/import_instlat.py documents them), or nullptr.
const char* operand_token(const cs_insn& in, unsigned i, char (&tmp)[8]) {
  const cs_x86_op& op = in.detail->x86.operands[i];
  switch (op.type) {
    case X86_OP_REG: {
      const x86_reg r = op.reg;
      if (r == X86_REG_CL && i > 0 && shift_count_insn(in.id)) return "cl";
      if (is_st(r)) return "st";
      if (r >= X86_REG_MM0 && r <= X86_REG_MM7) return "mm";
      if (r >= X86_REG_XMM0 && r <= X86_REG_XMM31) return "xmm";
      const uint8_t b = reg_index()[r];
      if (b == 0xFF || b >= timing::reg::kFlags) return nullptr;  // segment, control ...
      switch (op.size) {
        case 1:
          return "r8";
        case 2:
          return "r16";
        case 4:
          return "r32";
        case 8:
          return "r64";
        default:
          return nullptr;
      }
    }
    case X86_OP_IMM:
      switch (in.detail->x86.encoding.imm_size) {
        case 0:
          return "1";  // D0/D1 shifts and rotates by one
        case 1:
          return "i8";
        case 2:
          return "i16";
        case 4:
          return "i32";
        case 8:
          return "i64";
        default:
          return nullptr;
      }
    case X86_OP_MEM:
      if (in.id == X86_INS_LEA || std::strncmp(in.mnemonic, "prefetch", 8) == 0 ||
          in.id == X86_INS_CLFLUSH)
        return "m";
      std::snprintf(tmp, sizeof tmp, "m%u", op.size * 8u);
      return tmp;
    default:
      return nullptr;
  }
}

// Condition codes share one row per family in the measured data.
const char* generic_mnemonic(const char* m) {
  if (std::strncmp(m, "fcmov", 5) == 0) return "FCMOVcc";
  if (std::strncmp(m, "cmov", 4) == 0) return "CMOVcc";
  if (std::strncmp(m, "set", 3) == 0) return "SETcc";
  return nullptr;
}

void build_key(const cs_insn& in, InsnTimingInfo& info) {
  Buf b{info.key, sizeof info.key};
  const cs_x86& x = in.detail->x86;
  if (x.prefix[0] == X86_PREFIX_LOCK) b.put("LOCK ");
  const char* m = bare_mnemonic(in.mnemonic);
  if (const char* g = generic_mnemonic(m)) {
    b.put(g);
  } else {
    b.put_upper(m);
  }
  if (info.cls == InsnClass::String) return;  // string instructions: no operands in the key
  for (uint8_t i = 0; i < x.op_count; ++i) {
    char tmp[8];
    const char* t = operand_token(in, i, tmp);
    if (t == nullptr) {
      info.key[0] = '\0';  // no key form: the class applies
      return;
    }
    b.put(i == 0 ? " " : ", ");
    b.put(t);
  }
}

bool is_one_of(unsigned id, std::initializer_list<unsigned> ids) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

void build_rep_key(const cs_insn& in, InsnTimingInfo& info, bool guest64) {
  const cs_x86& x = in.detail->x86;
  const bool compares =
      is_one_of(in.id, {X86_INS_CMPSB, X86_INS_CMPSW, X86_INS_CMPSD, X86_INS_CMPSQ, X86_INS_SCASB,
                        X86_INS_SCASW, X86_INS_SCASD, X86_INS_SCASQ});
  Buf b{info.rep_key, sizeof info.rep_key};
  b.put(!compares ? "REP " : x.prefix[0] == X86_PREFIX_REPNE ? "REPNE " : "REPE ");
  b.put_upper(bare_mnemonic(in.mnemonic));
  const bool addr_override = x.prefix[3] == X86_PREFIX_ADDRSIZE;
  info.count_bits = guest64 ? (addr_override ? 32 : 64) : (addr_override ? 16 : 32);
  info.rep_whole = is_one_of(in.id, {X86_INS_MOVSB, X86_INS_MOVSW, X86_INS_MOVSD, X86_INS_MOVSQ,
                                     X86_INS_STOSB, X86_INS_STOSW, X86_INS_STOSD, X86_INS_STOSQ});
}

}  // namespace

InsnTimingInfo describe_insn(csh cs, const cs_insn& in, bool guest64) {
  InsnTimingInfo info;
  info.cls = classify(in, info.sse);
  const cs_x86& x = in.detail->x86;
  for (uint8_t i = 0; i < x.op_count; ++i)
    if (x.operands[i].type == X86_OP_MEM && in.id != X86_INS_LEA &&
        (x.operands[i].access & CS_AC_READ))
      info.reads_memory = true;
  build_key(in, info);
  cs_regs rd, wr;
  uint8_t nrd = 0, nwr = 0;
  if (cs_regs_access(cs, &in, rd, &nrd, wr, &nwr) == CS_ERR_OK) {
    info.reads = mask_of(rd, nrd);
    info.writes = mask_of(wr, nwr);
  }
  // Registers that form a memory operand's address (base, index) wait for an address-ready
  // value (timing::InsnCost::latency); unless also named as a register operand, they are
  // not data reads.
  RegMask named = 0;
  for (uint8_t i = 0; i < x.op_count; ++i) {
    const cs_x86_op& op = x.operands[i];
    const auto bit = [](x86_reg r) {
      const uint8_t b = r != X86_REG_INVALID && r < X86_REG_ENDING ? reg_index()[r] : 0xFF;
      return b != 0xFF ? timing::reg_bit(b) : RegMask{0};
    };
    if (op.type == X86_OP_MEM) info.addr_reads |= bit(op.mem.base) | bit(op.mem.index);
    if (op.type == X86_OP_REG) named |= bit(op.reg);
  }
  info.reads &= ~(info.addr_reads & ~named);
  // Capstone lists no x87 result register: the destination (operand 0, else ST(0)).
  constexpr RegMask kStBits = ((RegMask{1} << 8) - 1) << timing::reg::kSt;
  if (info.cls == InsnClass::X87 && (info.writes & kStBits) == 0) {
    const bool reg0 =
        x.op_count > 0 && x.operands[0].type == X86_OP_REG && is_st(x.operands[0].reg);
    info.writes |= timing::reg_bit(timing::reg::kSt + (reg0 ? x.operands[0].reg - X86_REG_ST0 : 0));
  }
  if (info.cls == InsnClass::String &&
      (x.prefix[0] == X86_PREFIX_REP || x.prefix[0] == X86_PREFIX_REPNE)) {
    info.rep_string = true;
    build_rep_key(in, info, guest64);
  }
  return info;
}

timing::BlockInsn block_insn(timing::X86Core core, const InsnTimingInfo& info) {
  return {timing::resolve_insn_cost(core, info.key_view(), info.cls, info.reads_memory), info.reads,
          info.writes, info.addr_reads};
}

}  // namespace padlock::emu
