#include "emulator/exec/padlock_call.hpp"

#include <cstring>

#include "emulator/cpu/cpu_features.hpp"

namespace padlock::emu {

namespace {

// A 32-bit guest's registers are the low halves (uc_reg_read of EAX truncates).
uint64_t gpr_mask(bool guest64) {
  return guest64 ? ~uint64_t{0} : 0xFFFFFFFFu;
}

void set_state(PadlockCall& c, uint64_t eflags, bool eflags30) {
  std::memcpy(c.state.gpr, c.before, sizeof c.before);
  c.state.eflags = (eflags & ~ArchState::kEflags30) | (eflags30 ? ArchState::kEflags30 : 0);
  c.state.cr4_osfxsr = true;  // §1.2: Linux always sets CR4[9]
  c.state.cr0_ts = false;
}

// The registers from the CPU's own (PadlockCall::live, live32).
void read_live(PadlockCall& c, bool guest64) {
  if (c.live32 != nullptr) {
    for (int i = 0; i < 8; ++i) c.before[i] = c.live32[i];
  } else {
    for (int i = 0; i < 8; ++i) c.before[i] = c.live[i] & gpr_mask(guest64);
  }
}

}  // namespace

void read_padlock_state(const Cpu& cpu, bool guest64, bool eflags30, PadlockCall& c) {
  if (c.live != nullptr || c.live32 != nullptr) {
    read_live(c, guest64);
  } else {
    cpu.read_gpr8(c.before);
  }
  set_state(c, cpu.reg(guest64 ? UC_X86_REG_RFLAGS : UC_X86_REG_EFLAGS), eflags30);
}

namespace {

// Whether `at` holds the memoized bytes (memo.decoded.length of them are readable there).
// 4 to 8 bytes (F3 0F A7 C8 and most others) as two 4-byte words that may overlap, which
// costs less than memcmp's call.
bool same_bytes(const DecodeMemo& memo, const uint8_t* at) {
  const unsigned n = memo.decoded.length;
  if (n < 4 || n > 8) return std::memcmp(memo.bytes, at, n) == 0;
  uint32_t a[2], b[2];
  std::memcpy(&a[0], memo.bytes, 4);
  std::memcpy(&a[1], memo.bytes + n - 4, 4);
  std::memcpy(&b[0], at, 4);
  std::memcpy(&b[1], at + n - 4, 4);
  return a[0] == b[0] && a[1] == b[1];
}

// begin_padlock_call and finish_padlock_call, file-local so that PadlockTrap::run can
// inline them: GCC inlines no function of a -fPIC library that could be interposed.
bool begin_call(const Cpu& cpu, const AddressSpace& mem, bool guest64, bool eflags30,
                PadlockCall& c, const uc_padlock_state* at, DecodeMemo* memo) {
  c.pc = at != nullptr ? at->pc : cpu.pc();
  const uint64_t avail = mem.accessible_with(c.pc, isa::kMaxInsnLength, kPageMapped | kPageExec);
  const uint8_t* bytes = mem.host(c.pc);
  const unsigned memo_len = memo != nullptr ? memo->decoded.length : 0;
  if (memo_len != 0 && memo->pc == c.pc && avail >= memo_len && same_bytes(*memo, bytes)) {
    c.decoded = memo->decoded;
  } else {
    c.decoded =
        isa::decode(bytes, avail, guest64 ? isa::CpuMode::Long64 : isa::CpuMode::Protected32);
    if (memo != nullptr && c.decoded.status != isa::DecodeStatus::NotPadlock) {
      memo->pc = c.pc;
      memo->decoded = c.decoded;
      std::memcpy(memo->bytes, bytes, c.decoded.length);
    }
  }
  if (c.decoded.status == isa::DecodeStatus::NotPadlock) return false;
  if (at == nullptr) {
    c.live = nullptr;
    c.live32 = nullptr;
    read_padlock_state(cpu, guest64, eflags30, c);
    return true;
  }
  c.live = at->gpr;
  c.live32 = at->gpr32;
  read_live(c, guest64);
  set_state(c, at->eflags, eflags30);
  return true;
}

void finish_call(Cpu& cpu, const PadlockCall& c) {
  if (c.live32 != nullptr) {
    // All eight: an unchanged one is stored as it was read (c.before is its zero extension).
    for (int i = 0; i < 8; ++i) c.live32[i] = static_cast<uint32_t>(c.state.gpr[i]);
    return;
  }
  uint8_t changed = 0;
  for (int i = 0; i < 8; ++i) {
    if (c.state.gpr[i] != c.before[i]) changed |= static_cast<uint8_t>(1u << i);
  }
  if (c.live == nullptr) {
    cpu.write_gpr8(c.state.gpr, changed);
    return;
  }
  // As uc_reg_write stores them: a 32-bit guest's zero-extended.
  const bool guest64 = cpu.guest64();
  for (int i = 0; i < 8; ++i) {
    if (changed & (1u << i)) c.live[i] = c.state.gpr[i] & gpr_mask(guest64);
  }
}

}  // namespace

bool begin_padlock_call(const Cpu& cpu, const AddressSpace& mem, bool guest64, bool eflags30,
                        PadlockCall& c, const uc_padlock_state* at, DecodeMemo* memo) {
  return begin_call(cpu, mem, guest64, eflags30, c, at, memo);
}

void finish_padlock_call(Cpu& cpu, const PadlockCall& c) {
  finish_call(cpu, c);
}

int PadlockTrap::cpuid() {
  return answer_cpuid(cpu_, units_, cpu_.guest64());
}

int PadlockTrap::rdtsc() {
  clock_.advance(1);
  const uint64_t t = clock_.now();
  const bool wide = cpu_.guest64();
  cpu_.set_reg(wide ? UC_X86_REG_RAX : UC_X86_REG_EAX, t & 0xFFFFFFFFu);
  cpu_.set_reg(wide ? UC_X86_REG_RDX : UC_X86_REG_EDX, t >> 32);
  return 1;
}

// Flattened: the begin and the finish join this frame.
[[gnu::flatten]] const PadlockRecord* PadlockTrap::run(
    PadlockCall& c, const uc_padlock_state* at, bool eflags30, uint64_t interrupt_at,
    const std::function<void(PadlockCall&)>* before) {
  if (!begin_call(cpu_, mem_, cpu_.guest64(), eflags30, c, at, &memo_)) return nullptr;
  if (before != nullptr) (*before)(c);
  const PadlockRecord& r = core_.execute(c.decoded, c.state, mem_, c.pc, interrupt_at);
  finish_call(cpu_, c);
  return &r;
}

}  // namespace padlock::emu
