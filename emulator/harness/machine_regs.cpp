// Registers of the function harness by their x86 names: one table from name to Unicorn
// register and width, so Python and the stub argument reader share it.
#include <unicorn/unicorn.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "emulator/harness/machine.hpp"

namespace padlock::emu {

namespace {

struct RegRow {
  std::string_view name;
  int id;
  uint8_t width;   // bits
  bool long_only;  // only in 64-bit mode
};

constexpr RegRow kRegs[] = {
    {"rax", UC_X86_REG_RAX, 64, true},         {"rbx", UC_X86_REG_RBX, 64, true},
    {"rcx", UC_X86_REG_RCX, 64, true},         {"rdx", UC_X86_REG_RDX, 64, true},
    {"rsi", UC_X86_REG_RSI, 64, true},         {"rdi", UC_X86_REG_RDI, 64, true},
    {"rbp", UC_X86_REG_RBP, 64, true},         {"rsp", UC_X86_REG_RSP, 64, true},
    {"r8", UC_X86_REG_R8, 64, true},           {"r9", UC_X86_REG_R9, 64, true},
    {"r10", UC_X86_REG_R10, 64, true},         {"r11", UC_X86_REG_R11, 64, true},
    {"r12", UC_X86_REG_R12, 64, true},         {"r13", UC_X86_REG_R13, 64, true},
    {"r14", UC_X86_REG_R14, 64, true},         {"r15", UC_X86_REG_R15, 64, true},
    {"rip", UC_X86_REG_RIP, 64, true},         {"rflags", UC_X86_REG_RFLAGS, 64, true},
    {"eax", UC_X86_REG_EAX, 32, false},        {"ebx", UC_X86_REG_EBX, 32, false},
    {"ecx", UC_X86_REG_ECX, 32, false},        {"edx", UC_X86_REG_EDX, 32, false},
    {"esi", UC_X86_REG_ESI, 32, false},        {"edi", UC_X86_REG_EDI, 32, false},
    {"ebp", UC_X86_REG_EBP, 32, false},        {"esp", UC_X86_REG_ESP, 32, false},
    {"eip", UC_X86_REG_EIP, 32, false},        {"eflags", UC_X86_REG_EFLAGS, 32, false},
    {"r8d", UC_X86_REG_R8D, 32, true},         {"r9d", UC_X86_REG_R9D, 32, true},
    {"r10d", UC_X86_REG_R10D, 32, true},       {"r11d", UC_X86_REG_R11D, 32, true},
    {"r12d", UC_X86_REG_R12D, 32, true},       {"r13d", UC_X86_REG_R13D, 32, true},
    {"r14d", UC_X86_REG_R14D, 32, true},       {"r15d", UC_X86_REG_R15D, 32, true},
    {"ax", UC_X86_REG_AX, 16, false},          {"bx", UC_X86_REG_BX, 16, false},
    {"cx", UC_X86_REG_CX, 16, false},          {"dx", UC_X86_REG_DX, 16, false},
    {"si", UC_X86_REG_SI, 16, false},          {"di", UC_X86_REG_DI, 16, false},
    {"bp", UC_X86_REG_BP, 16, false},          {"sp", UC_X86_REG_SP, 16, false},
    {"r8w", UC_X86_REG_R8W, 16, true},         {"r9w", UC_X86_REG_R9W, 16, true},
    {"r10w", UC_X86_REG_R10W, 16, true},       {"r11w", UC_X86_REG_R11W, 16, true},
    {"r12w", UC_X86_REG_R12W, 16, true},       {"r13w", UC_X86_REG_R13W, 16, true},
    {"r14w", UC_X86_REG_R14W, 16, true},       {"r15w", UC_X86_REG_R15W, 16, true},
    {"al", UC_X86_REG_AL, 8, false},           {"bl", UC_X86_REG_BL, 8, false},
    {"cl", UC_X86_REG_CL, 8, false},           {"dl", UC_X86_REG_DL, 8, false},
    {"ah", UC_X86_REG_AH, 8, false},           {"bh", UC_X86_REG_BH, 8, false},
    {"ch", UC_X86_REG_CH, 8, false},           {"dh", UC_X86_REG_DH, 8, false},
    {"sil", UC_X86_REG_SIL, 8, true},          {"dil", UC_X86_REG_DIL, 8, true},
    {"bpl", UC_X86_REG_BPL, 8, true},          {"spl", UC_X86_REG_SPL, 8, true},
    {"r8b", UC_X86_REG_R8B, 8, true},          {"r9b", UC_X86_REG_R9B, 8, true},
    {"r10b", UC_X86_REG_R10B, 8, true},        {"r11b", UC_X86_REG_R11B, 8, true},
    {"r12b", UC_X86_REG_R12B, 8, true},        {"r13b", UC_X86_REG_R13B, 8, true},
    {"r14b", UC_X86_REG_R14B, 8, true},        {"r15b", UC_X86_REG_R15B, 8, true},
    {"cs", UC_X86_REG_CS, 16, false},          {"ds", UC_X86_REG_DS, 16, false},
    {"es", UC_X86_REG_ES, 16, false},          {"fs", UC_X86_REG_FS, 16, false},
    {"gs", UC_X86_REG_GS, 16, false},          {"ss", UC_X86_REG_SS, 16, false},
    {"fs_base", UC_X86_REG_FS_BASE, 64, true}, {"gs_base", UC_X86_REG_GS_BASE, 64, true},
};

const RegRow* find_reg(std::string_view name) {
  for (const RegRow& r : kRegs) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::string lower(const std::string& s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

bool Machine::is_register(const std::string& name) {
  return find_reg(lower(name)) != nullptr;
}

void Machine::reg_checked(const std::string& name, int& id, unsigned& width) const {
  const RegRow* r = find_reg(lower(name));
  if (r == nullptr) throw MachineError("unknown register '" + name + "'");
  if (r->long_only && !guest64_) {
    throw MachineError("register '" + name +
                       "' exists only in 64-bit mode (this Machine is 32-bit)");
  }
  id = r->id;
  width = r->width;
}

uint64_t Machine::reg(const std::string& name) const {
  int id = 0;
  unsigned width = 0;
  reg_checked(name, id, width);
  uint64_t v = cpu_->reg(id);
  // EFLAGS[30] lives in the harness (§1.8): show the live bit.
  if (id == UC_X86_REG_EFLAGS || id == UC_X86_REG_RFLAGS) {
    v = (v & ~ArchState::kEflags30) | (eflags30_ ? ArchState::kEflags30 : 0);
  }
  return width == 64 ? v : v & ((uint64_t{1} << width) - 1);
}

void Machine::set_reg(const std::string& name, uint64_t value) {
  int id = 0;
  unsigned width = 0;
  reg_checked(name, id, width);
  if (width < 64) value &= (uint64_t{1} << width) - 1;
  if (id == UC_X86_REG_EFLAGS || id == UC_X86_REG_RFLAGS) {
    eflags30_ = (value & ArchState::kEflags30) != 0;  // a debugger may set it; code cannot
    value &= ~ArchState::kEflags30;
  }
  // A 32-bit general-register write zero-extends into the 64-bit register (Unicorn keeps
  // the upper half, unlike the instruction).
  static constexpr int kFull[8][2] = {
      {UC_X86_REG_EAX, UC_X86_REG_RAX}, {UC_X86_REG_EBX, UC_X86_REG_RBX},
      {UC_X86_REG_ECX, UC_X86_REG_RCX}, {UC_X86_REG_EDX, UC_X86_REG_RDX},
      {UC_X86_REG_ESI, UC_X86_REG_RSI}, {UC_X86_REG_EDI, UC_X86_REG_RDI},
      {UC_X86_REG_EBP, UC_X86_REG_RBP}, {UC_X86_REG_ESP, UC_X86_REG_RSP}};
  if (guest64_ && width == 32) {
    for (const auto& pair : kFull) {
      if (pair[0] == id) id = pair[1];
    }
    static constexpr int kR32[8][2] = {
        {UC_X86_REG_R8D, UC_X86_REG_R8},   {UC_X86_REG_R9D, UC_X86_REG_R9},
        {UC_X86_REG_R10D, UC_X86_REG_R10}, {UC_X86_REG_R11D, UC_X86_REG_R11},
        {UC_X86_REG_R12D, UC_X86_REG_R12}, {UC_X86_REG_R13D, UC_X86_REG_R13},
        {UC_X86_REG_R14D, UC_X86_REG_R14}, {UC_X86_REG_R15D, UC_X86_REG_R15}};
    for (const auto& pair : kR32) {
      if (pair[0] == id) id = pair[1];
    }
  }
  cpu_->set_reg(id, value);
}

}  // namespace padlock::emu
