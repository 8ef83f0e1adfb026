// Facts about each translated block, computed once with Capstone when the block is first
// seen and cached by address: how many instructions it has (for the cycle counter) and
// whether it stores or loads EFLAGS, which leaves EFLAGS[30] = 0 (§1.8, §3.2).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "emulator/cpu/chip_check.hpp"
#include "emulator/memory/address_space.hpp"
#include "models/timing/x86_measured.hpp"

namespace padlock::emu {

// How a block ends, for the profiler's shadow stack (emulator/observe/profile/profiler.hpp).
enum class BlockExit : uint8_t { Other, Call, Ret };

struct BlockInfo {
  uint64_t address = 0;
  uint32_t size = 0;
  uint32_t insns = 0;
  BlockExit exit = BlockExit::Other;  // the last instruction is a near CALL / RET
  uint16_t exit_offset = 0;           // offset of that instruction in the block
  // Contains PUSHF (§1.8, §3.2: storing EFLAGS clears bit 30) or POPF/IRET (§1.8 step 3:
  // a load sets EFLAGS:30 to 0, since no instruction that loads EFLAGS can set it to 1).
  bool clears_eflags30 = false;
  // Timing (docs/timing.md): clocks of the block on the chip's pipeline from measured
  // instruction costs and register dependencies (models/timing/x86_block_model.hpp),
  // computed once here, charged per execution; and whether it waits for ACE: an SSE
  // instruction does (§3.3 overlap), and so does a serializing one (CPUID), which waits for
  // every earlier instruction to finish.
  uint32_t cost = 0;
  bool waits_for_ace = false;
  // A REP string instruction, which QEMU always translates as the last instruction of a
  // block and runs one iteration per execution of a block that starts at it
  // (docs/timing.md, "REP string instructions"). Its clocks are not in `cost`: the block
  // hook charges the start-up once per execution of the instruction and each element as it
  // is processed (Process::charge_rep_string); a REP MOVS or REP STOS run whole by our
  // Unicorn patch (UC_CTL_REP_STRING) is charged once, before its loop
  // (Process::on_rep_string).
  struct RepString {
    timing::RepStringCost cost;
    uint64_t pc = 0;         // address of the REP instruction
    uint8_t count_bits = 0;  // width of the count register (CX/ECX/RCX); 0: no REP string
    bool at_start = false;   // the block is the REP instruction alone
    bool whole = false;      // REP MOVS or REP STOS (the patch's loop can run it)
  } rep;
  // The profiler's record of this block and the object-map generation it was found in
  // (profile/profiler.hpp): saves a hash lookup per executed block.
  mutable uint32_t profile_record = 0;
  mutable uint64_t profile_generation = 0;
  // The chip check (chip_check.hpp): the first instruction that needs a CPUID feature the
  // modelled chip lacks, and that feature (nullptr: none, or no check).
  const CpuidFeature* missing = nullptr;
  uint16_t missing_offset = 0;
  // Its index in the Process's block-log table (0: none yet), so that retranslating the
  // block does not grow the table.
  mutable uint32_t log_index = 0;
  // Its record in --mix's table (observe/mix/instruction_mix.hpp; 0: none yet).
  mutable uint32_t mix_record = 0;
  // -d in_asm printed it (observe/debug_log.hpp).
  mutable bool in_asm_logged = false;
};

// An entry of Unicorn's block log (UC_CTL_BLOCK_LOG; Process::block_cost sets it, the
// profiler reads it): the block's cost in the high half, so that a batch sums without
// touching the blocks; in the low half the block's log index and, for a block that
// neither calls nor returns, its instruction count, so that the profiler can count it
// without touching it either (profile::Profiler::on_block_log).
namespace block_log {
constexpr uint64_t kWhole = uint64_t{1} << 31;  // set: bits 0-30 are the index
constexpr unsigned kInsnsShift = 21;            // clear: bits 21-30 instructions,
constexpr uint64_t kInsnsMask = 0x3FF;          //        bits 0-20 the index
constexpr uint64_t kPackedIndexMask = (uint64_t{1} << kInsnsShift) - 1;

inline uint64_t entry(uint32_t cost, const BlockInfo& b) {
  const uint64_t high = static_cast<uint64_t>(cost) << 32;
  if (b.exit == BlockExit::Other && b.log_index <= kPackedIndexMask && b.insns <= kInsnsMask) {
    return high | static_cast<uint64_t>(b.insns) << kInsnsShift | b.log_index;
  }
  return high | kWhole | b.log_index;
}
inline bool packed(uint64_t e) {
  return (e & kWhole) == 0;
}
inline uint32_t index(uint64_t e) {
  return static_cast<uint32_t>(e & (packed(e) ? kPackedIndexMask : kWhole - 1));
}
inline uint32_t insns(uint64_t e) {
  return static_cast<uint32_t>((e >> kInsnsShift) & kInsnsMask);
}
inline uint32_t cost(uint64_t e) {
  return static_cast<uint32_t>(e >> 32);
}
}  // namespace block_log

class BlockCache {
 public:
  // `core`: the chip's core for the x86 costs (none: no costs, cost = insns). `chip`: the
  // features to check instructions against (nullptr: no chip check).
  BlockCache(bool guest64, AddressSpace& mem, std::optional<timing::X86Core> core = {},
             const ChipFeatures* chip = nullptr);
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // The block at `address` of `size` bytes; decoded on first sight (or when its size
  // changed, i.e. QEMU retranslated it differently).
  const BlockInfo& lookup(uint64_t address, uint32_t size) { return *slot(address, size).info; }

  // The hot facts of a block, copied into the direct-mapped slot so that the per-executed-
  // block hook (timing) reads one cache line and chases no pointer.
  struct Slot {
    uint64_t address = ~0ull;
    uint32_t size = 0;
    uint32_t cost = 0;
    uint32_t insns = 0;
    uint8_t flags = 0;  // kSlotClears30, kSlotSse, kSlotRep
    const BlockInfo* info = nullptr;
  };
  // kSlotRep: a REP string instruction charged per element by the block hook (not a REP
  // MOVS or STOS while they run whole, set_whole_reps).
  static constexpr uint8_t kSlotClears30 = 1, kSlotSse = 2, kSlotRep = 4;
  const Slot& slot(uint64_t address, uint32_t size) {
    Slot& s = fast_[(address ^ (address >> 12)) & (kFastSlots - 1)];
    if (s.address == address && s.size == size && s.info != nullptr) return s;
    const BlockInfo& info = slow_lookup(address, size);
    s.address = address;
    s.size = size;
    s.cost = info.cost;
    s.insns = info.insns;
    s.flags = static_cast<uint8_t>(
        (info.clears_eflags30 ? kSlotClears30 : 0) | (info.waits_for_ace ? kSlotSse : 0) |
        (info.rep.count_bits != 0 && !(whole_reps_ && info.rep.whole) ? kSlotRep : 0));
    s.info = &info;
    return s;
  }

  // Whether REP MOVS and REP STOS run whole (our Unicorn patch's UC_CTL_REP_STRING),
  // charged once by their callback rather than per element through kSlotRep.
  void set_whole_reps(bool on) {
    whole_reps_ = on;
    for (Slot& s : fast_) s = Slot{};
  }

  // The cost of the REP MOVS or REP STOS at `pc`, in a block decoded before (nullptr:
  // none there).
  const timing::RepStringCost* rep_cost(uint64_t pc) {
    RepSlot& s = rep_fast_[(pc ^ (pc >> 12)) & (kRepSlots - 1)];
    if (s.pc == pc && s.cost != nullptr) return s.cost;
    const auto it = rep_costs_.find(pc);
    if (it == rep_costs_.end()) return nullptr;
    s = RepSlot{pc, &it->second};
    return s.cost;
  }

  // Forget blocks overlapping [va, va+len): code was unmapped, remapped or reprotected.
  void invalidate(uint64_t va, uint64_t len);

  uint64_t decoded() const { return decoded_; }

 private:
  static constexpr size_t kFastSlots = 1 << 13;
  const BlockInfo& slow_lookup(uint64_t address, uint32_t size);
  BlockInfo decode(uint64_t address, uint32_t size);

  bool guest64_;
  AddressSpace& mem_;
  std::optional<timing::X86Core> core_;
  const ChipFeatures* chip_;
  size_t cs_ = 0;  // csh
  std::unordered_map<uint64_t, BlockInfo> blocks_;
  Slot fast_[kFastSlots];
  bool whole_reps_ = false;  // set_whole_reps
  // REP MOVS and REP STOS by address (rep_cost), with a direct-mapped cache in front.
  struct RepSlot {
    uint64_t pc = ~0ull;
    const timing::RepStringCost* cost = nullptr;
  };
  static constexpr size_t kRepSlots = 256;
  std::unordered_map<uint64_t, timing::RepStringCost> rep_costs_;
  RepSlot rep_fast_[kRepSlots];
  uint64_t decoded_ = 0;
};

}  // namespace padlock::emu
