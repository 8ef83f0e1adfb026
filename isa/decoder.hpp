// Decoder for PadLock instructions at the guest PC (guide §2.1, §3.1, §4.1, §5.1).
// Given the bytes at the PC it returns the table row, the length and the effective
// address size after prefixes. It runs once per trap, never per executed x86 instruction.
#pragma once

#include <cstddef>
#include <cstdint>

#include "isa/instruction_table.hpp"

namespace padlock::isa {

enum class CpuMode : uint8_t { Protected32, Long64 };

enum class DecodeStatus : uint8_t {
  Ok,            // a PadLock instruction; `id` is valid
  NotPadlock,    // not a PadLock encoding (an ordinary invalid opcode: SIGILL)
  InvalidOpcode  // a PadLock encoding whose prefixes make it #UD (66h, LOCK, missing REP)
};

struct Decoded {
  DecodeStatus status = DecodeStatus::NotPadlock;
  InsnId id = InsnId::Count;
  uint8_t length = 0;      // total bytes including prefixes
  uint8_t addr_size = 32;  // 16, 32 or 64: effective address size (§3.1 "REP prefix")
  bool repne = false;      // F2 seen (undefined, §2.1/§3.1/§4.1/§5.1): reported as a diagnostic
  bool rep_missing = false;       // F3 absent on an instruction that requires it
  bool opsize = false;            // 66h seen
  bool lock = false;              // F0 seen
  bool segment_override = false;  // ignored: ES is always used (§2.1, §3.1)
  bool rex = false;               // a REX prefix (64-bit mode only); it has no effect
  // NotPadlock only because `avail` ended inside what began as a PadLock encoding: the
  // chip's fetch of the next byte faults there (#PF), it does not raise #UD.
  bool cut_short = false;

  const InsnInfo& info() const { return isa::info(id); }
};

// The longest x86 instruction: the decoder examines no more.
constexpr size_t kMaxInsnLength = 15;

// Decode at most `avail` bytes. Up to 15 bytes are examined, as on x86.
Decoded decode(const uint8_t* bytes, size_t avail, CpuMode mode);

}  // namespace padlock::isa
