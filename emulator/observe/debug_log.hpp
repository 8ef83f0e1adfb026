// -d ITEMS and -D FILE (docs/debugging.md): qemu-user's log of translated and executed
// blocks, with the same item names for what the two have in common, and PadLock
// instructions and system calls besides.
//   in_asm   each block's disassembly once, when it is first seen
//   exec     each executed block: its address and function
//   cpu      the general registers before each executed block
//   padlock  each PadLock instruction: registers in and out, bytes, cycles, status
//   syscall  each system call as --strace prints it (linux/strace.cpp writes it)
// exec and cpu need the block hook on every block (as --icount does); in_asm and padlock
// do not.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "emulator/cpu/block_cache.hpp"
#include "emulator/cpu/cpu.hpp"
#include "emulator/observe/block_walker.hpp"
#include "emulator/observe/padlock_record.hpp"
#include "emulator/observe/profile/object_map.hpp"
#include "emulator/options/run_options.hpp"
#include "models/unit_interface.hpp"

namespace padlock::emu {

// "in_asm,exec" -> bits of RunOptions::debug_log; throws std::invalid_argument naming the
// first unknown item.
unsigned parse_debug_items(const std::string& list);
// "in_asm, cpu, exec, padlock, syscall"
std::string debug_item_names();
// The -d list that parse_debug_items turns into `bits` ("exec,padlock").
std::string debug_items_text(unsigned bits);

class DebugLog {
 public:
  DebugLog(FILE* out, unsigned items, GuestMemory& mem, const profile::ObjectMap& objects,
           bool guest64);
  ~DebugLog();
  DebugLog(const DebugLog&) = delete;
  DebugLog& operator=(const DebugLog&) = delete;

  bool has(unsigned item) const { return (items_ & item) != 0; }
  FILE* file() const { return out_; }
  void set_cpu(const Cpu* cpu) { cpu_ = cpu; }

  // The block hook's path (exec, cpu, in_asm): before `b` runs.
  void on_block(const BlockInfo& b);
  // The block log's path (in_asm only): blocks[i] for every index not seen before.
  void on_new_blocks(const BlockInfo* const* blocks, size_t nblocks);
  void on_padlock(const PadlockRecord& r);

 private:
  void in_asm(const BlockInfo& b);
  void cpu_state();

  FILE* out_;
  unsigned items_;
  BlockWalker walker_;
  const profile::ObjectMap& objects_;
  bool guest64_;
  const Cpu* cpu_ = nullptr;
  size_t seen_blocks_ = 1;  // block-log indices below this were printed (index 0: none)
};

}  // namespace padlock::emu
