// --mix FILE: how often each x86 instruction and each PadLock instruction ran, in total
// and per function, as SDE's -mix reports it (docs/debugging.md). Cheap by construction:
// a block is decoded once, when it is first seen, into a record of its instruction ids;
// each execution adds one to that record's count (in generated code, from Unicorn's block
// log in batches, or from the block hook); the histogram is built from records and counts
// at the end.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "emulator/cpu/block_cache.hpp"
#include "emulator/observe/block_walker.hpp"
#include "emulator/observe/padlock_record.hpp"
#include "emulator/observe/profile/object_map.hpp"
#include "models/unit_interface.hpp"

namespace padlock::emu::mix {

class InstructionMix {
 public:
  InstructionMix(const profile::ObjectMap& objects, GuestMemory& mem, bool guest64);
  ~InstructionMix();
  InstructionMix(const InstructionMix&) = delete;
  InstructionMix& operator=(const InstructionMix&) = delete;

  // One execution of block `b` (the block hook's path).
  void on_block(const BlockInfo& b) { ++counts_[record(b)]; }
  // The counter of block `b`'s record, for generated code to increment on each execution
  // (Unicorn's UC_CTL_BLOCK_COUNT); valid as long as this object.
  uint64_t* counter(const BlockInfo& b) { return &counts_[record(b)]; }
  // A batch of Unicorn's block log (Process::replay_block_log): entry i names
  // blocks[block_log::index(entry)].
  void on_block_log(const uint64_t* begin, const uint64_t* end, const BlockInfo* const* blocks,
                    size_t nblocks) {
    // Log indices are handed out in order as blocks are translated: decode the new ones
    // (their blocks are alive now), then count each entry by its index alone. Runs of one
    // entry (a loop of one block) are counted in a register: incrementing the same counter
    // in memory entry after entry waits for each store to reach the next load, which cost
    // more than the guest's own code on loops of short blocks.
    if (nblocks > log_records_.size()) add_log_blocks(blocks, nblocks);
    if (begin == end) return;
    uint64_t* const counts = log_counts_.data();
    uint64_t entry = *begin, run = 1;
    for (const uint64_t* p = begin + 1; p != end; ++p) {
      if (*p == entry) {
        ++run;
        continue;
      }
      counts[block_log::index(entry)] += run;
      entry = *p;
      run = 1;
    }
    counts[block_log::index(entry)] += run;
  }
  // A PadLock instruction; one that an interrupt or a fault stopped is counted when it
  // completes (it runs again from the same PC).
  void on_padlock(const PadlockRecord& r);

  // The report: totals, then each function by its instruction count.
  void write(FILE* out, const std::string& command) const;

 private:
  struct Record {
    uint32_t first = 0, count = 0;     // ids_[first .. first + count)
    uint32_t function = 0;             // ObjectMap function id
    const BlockInfo* block = nullptr;  // whose BlockInfo::mix_record names it
  };
  uint32_t record(const BlockInfo& b);
  uint32_t decode(const BlockInfo& b);
  void add_log_blocks(const BlockInfo* const* blocks, size_t nblocks);

  const profile::ObjectMap& objects_;
  BlockWalker walker_;
  std::vector<Record> records_;        // index 0: none
  std::deque<uint64_t> counts_;        // executions per record (addresses stay: counter())
  std::vector<uint16_t> ids_;          // Capstone instruction ids of all records
  std::vector<uint32_t> log_records_;  // block-log index -> record (index 0: none)
  std::vector<uint64_t> log_counts_;   // executions per block-log index
  // PadLock instructions: (function, InsnId) -> completed executions.
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> padlock_;
};

}  // namespace padlock::emu::mix
