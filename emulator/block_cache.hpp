// Facts about each translated block, computed once with Capstone when the block is first
// seen and cached by address: how many instructions it has (for the cycle counter) and
// whether it stores or loads EFLAGS, which leaves EFLAGS[30] = 0 (§1.8, §3.2).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "emulator/address_space.hpp"

namespace padlock::emu {

struct BlockInfo {
  uint64_t address = 0;
  uint32_t size = 0;
  uint32_t insns = 0;
  // Contains PUSHF (§1.8, §3.2: storing EFLAGS clears bit 30) or POPF/IRET (§1.8 step 3:
  // a load sets EFLAGS:30 to 0, since no instruction that loads EFLAGS can set it to 1).
  bool clears_eflags30 = false;
};

class BlockCache {
 public:
  BlockCache(bool guest64, AddressSpace& mem);
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // The block at `address` of `size` bytes; decoded on first sight (or when its size
  // changed, i.e. QEMU retranslated it differently).
  const BlockInfo& lookup(uint64_t address, uint32_t size) {
    Slot& s = fast_[(address ^ (address >> 12)) & (kFastSlots - 1)];
    if (s.info != nullptr && s.info->address == address && s.info->size == size) return *s.info;
    const BlockInfo& info = slow_lookup(address, size);
    s.info = &info;
    return info;
  }

  // Forget blocks overlapping [va, va+len): code was unmapped, remapped or reprotected.
  void invalidate(uint64_t va, uint64_t len);

  uint64_t decoded() const { return decoded_; }

 private:
  static constexpr size_t kFastSlots = 1 << 14;
  struct Slot {
    const BlockInfo* info = nullptr;
  };
  const BlockInfo& slow_lookup(uint64_t address, uint32_t size);
  BlockInfo decode(uint64_t address, uint32_t size);

  bool guest64_;
  AddressSpace& mem_;
  size_t cs_ = 0;  // csh
  std::unordered_map<uint64_t, BlockInfo> blocks_;
  Slot fast_[kFastSlots];
  uint64_t decoded_ = 0;
};

}  // namespace padlock::emu
