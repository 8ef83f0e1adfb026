#include "emulator/cpu/block_cache.hpp"

#include <capstone/capstone.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "emulator/cpu/x86_classify.hpp"

namespace padlock::emu {

BlockCache::BlockCache(bool guest64, AddressSpace& mem, std::optional<timing::X86Core> core,
                       const ChipFeatures* chip)
    : guest64_(guest64), mem_(mem), core_(core), chip_(chip) {
  csh h = 0;
  if (cs_open(CS_ARCH_X86, guest64 ? CS_MODE_64 : CS_MODE_32, &h) != CS_ERR_OK) {
    throw std::runtime_error("capstone: cannot open the x86 disassembler");
  }
  // Operand details feed the cost model (operands, registers read and written, groups) and
  // the chip check (groups).
  if (core_ || chip_ != nullptr) cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
  cs_ = h;
  blocks_.reserve(4096);
}

BlockCache::~BlockCache() {
  csh h = cs_;
  cs_close(&h);
}

const BlockInfo& BlockCache::slow_lookup(uint64_t address, uint32_t size) {
  auto it = blocks_.find(address);
  if (it != blocks_.end() && it->second.size == size) return it->second;
  BlockInfo info = decode(address, size);
  if (it != blocks_.end()) {
    it->second = info;
    return it->second;
  }
  return blocks_.emplace(address, info).first->second;
}

namespace {

// `call next; pop reg`, the i386 (and x86-64) idiom that reads the PC: E8 with a zero
// displacement pushes the address of the next instruction and jumps there. It is no call:
// nothing returns, so the profiler must not open a frame for it.
bool calls_next(const cs_insn& insn) {
  static constexpr uint8_t kCallNext[] = {0xE8, 0, 0, 0, 0};
  return insn.size == sizeof kCallNext && std::memcmp(insn.bytes, kCallNext, insn.size) == 0;
}

}  // namespace

BlockInfo BlockCache::decode(uint64_t address, uint32_t size) {
  BlockInfo info;
  info.address = address;
  info.size = size;
  ++decoded_;
  const uint64_t avail = mem_.accessible_with(address, size, kPageMapped | kPageRead);
  if (avail == 0) return info;
  cs_insn* insn = cs_malloc(cs_);
  const uint8_t* code = mem_.host(address);
  size_t left = avail;
  uint64_t pc = address;
  timing::BlockTimer timer(core_.value_or(timing::X86Core::Esther));
  while (left > 0 && cs_disasm_iter(cs_, &code, &left, &pc, insn)) {
    ++info.insns;
    if (chip_ != nullptr && info.missing == nullptr) {
      info.missing = missing_feature(*insn, *chip_);
      info.missing_offset = static_cast<uint16_t>(insn->address - address);
    }
    if (core_) {
      const InsnTimingInfo t = describe_insn(cs_, *insn, guest64_);
      if (t.sse || insn->id == X86_INS_CPUID) info.waits_for_ace = true;
      if (t.rep_string) {
        info.rep = {timing::rep_string_cost(*core_, t.rep_key_view()), insn->address,
                    static_cast<uint8_t>(t.count_bits), insn->address == address, t.rep_whole};
        if (t.rep_whole) rep_costs_[insn->address] = info.rep.cost;
      } else {
        timer.add(block_insn(*core_, t));
      }
    }
    info.exit = insn->id == X86_INS_CALL && !calls_next(*insn) ? BlockExit::Call
                : insn->id == X86_INS_RET                      ? BlockExit::Ret
                                                               : BlockExit::Other;
    info.exit_offset = static_cast<uint16_t>(insn->address - address);
    switch (insn->id) {
      case X86_INS_PUSHF:
      case X86_INS_PUSHFD:
      case X86_INS_PUSHFQ:
      case X86_INS_POPF:
      case X86_INS_POPFD:
      case X86_INS_POPFQ:
      case X86_INS_IRET:
      case X86_INS_IRETD:
      case X86_INS_IRETQ:
        info.clears_eflags30 = true;
        break;
      default:
        break;
    }
  }
  cs_free(insn, 1);
  if (info.insns == 0) info.insns = 1;  // undecodable: QEMU still executes something
  // A block that is a REP string instruction alone costs nothing by itself: each execution
  // is one iteration (or the final count check), charged by the hook.
  const bool rep_alone = info.rep.count_bits != 0 && timer.insns() == 0;
  info.cost = !core_ ? info.insns : rep_alone ? 0 : std::max(1u, timer.rounded_clocks());
  return info;
}

namespace {
// Erases the entries whose bytes [key, key + extent(entry)) overlap [va, va + len).
template <typename Map, typename Extent>
bool erase_overlapping(Map& m, uint64_t va, uint64_t len, Extent extent) {
  bool any = false;
  for (auto it = m.begin(); it != m.end();) {
    if (it->first < va + len && va < it->first + extent(it->second)) {
      it = m.erase(it);
      any = true;
    } else {
      ++it;
    }
  }
  return any;
}
}  // namespace

void BlockCache::invalidate(uint64_t va, uint64_t len) {
  if (erase_overlapping(blocks_, va, len, [](const BlockInfo& b) { return b.size + 1ull; })) {
    for (Slot& s : fast_) s = Slot{};
  }
  // A REP instruction's bytes end within 15 bytes of its address.
  if (erase_overlapping(rep_costs_, va, len, [](const timing::RepStringCost&) { return 15ull; })) {
    for (RepSlot& s : rep_fast_) s = RepSlot{};
  }
}

}  // namespace padlock::emu
