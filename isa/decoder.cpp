#include "isa/decoder.hpp"

namespace padlock::isa {

namespace {

// (opcode2, modrm) -> row; the REP form of XSTORE is chosen after prefixes are known, and
// F2 (REPNE) selects SM2 at 0F A6 C0 (openEuler sm2-zhaoxin-gmi.c) before any other row.
const InsnInfo* find_row(uint8_t opcode2, uint8_t modrm, bool rep, bool repne) {
  if (repne) {
    for (const InsnInfo& row : kInstructions) {
      if (row.opcode2 == opcode2 && row.modrm == modrm && row.repne == PrefixRule::Selects)
        return &row;
    }
  }
  for (const InsnInfo& row : kInstructions) {
    if (row.opcode2 != opcode2 || row.modrm != modrm) continue;
    if (row.repne == PrefixRule::Selects) continue;
    if (row.rep == PrefixRule::Selects && !rep) continue;
    if (row.rep == PrefixRule::Absent && rep) continue;
    return &row;
  }
  return nullptr;
}

}  // namespace

const char* unit_name(Unit u) {
  switch (u) {
    case Unit::Rng:
      return "RNG";
    case Unit::Ace:
      return "ACE";
    case Unit::Phe:
      return "PHE";
    case Unit::Pmm:
      return "PMM";
    case Unit::Phe2:
      return "PHE2";
    case Unit::Ccs:
      return "CCS";
    case Unit::Sm2:
      return "SM2";
    case Unit::Rsa:
      return "RSA";
    case Unit::Rng2:
      return "RNG2";
  }
  return "?";
}

Decoded decode(const uint8_t* bytes, size_t avail, CpuMode mode) {
  Decoded d;
  const size_t limit = avail < kMaxInsnLength ? avail : kMaxInsnLength;
  // F2 and F3 share one prefix group: the last one given is the one that counts.
  uint8_t rep_prefix = 0;
  bool addr_toggle = false;
  size_t i = 0;
  for (; i < limit; ++i) {
    const uint8_t b = bytes[i];
    bool rex = false;
    if (b == 0xF3 || b == 0xF2) {
      rep_prefix = b;
    } else if (b == 0x66) {
      d.opsize = true;
    } else if (b == 0x67) {
      addr_toggle = true;
    } else if (b == 0xF0) {
      d.lock = true;
    } else if (b == 0x26 || b == 0x2E || b == 0x36 || b == 0x3E || b == 0x64 || b == 0x65) {
      d.segment_override = true;
    } else if (mode == CpuMode::Long64 && (b & 0xF0) == 0x40) {
      rex = true;
    } else {
      break;
    }
    // A REX prefix only counts when it is the last prefix; a legacy prefix after it
    // cancels it. REX changes nothing for PadLock either way.
    d.rex = rex;
  }
  // The 15-byte limit: an instruction that does not fit is not decoded (x86 raises #GP;
  // we report NotPadlock, see docs/isa.md). So is one cut short by `avail`.
  if (i + 3 > limit) {
    if (avail < kMaxInsnLength) {
      d.cut_short = (i >= limit || bytes[i] == 0x0F) &&
                    (i + 1 >= limit || bytes[i + 1] == 0xA6 || bytes[i + 1] == 0xA7);
    }
    return d;
  }
  if (bytes[i] != 0x0F || (bytes[i + 1] != 0xA6 && bytes[i + 1] != 0xA7)) return d;

  // REPNE is undefined (§2.1, §3.1, §4.1, §5.1). Our choice (docs/fidelity.md):
  // it acts as REP and the model reports a diagnostic; on 0F A6 C0 it selects SM2.
  const bool any_rep = rep_prefix != 0;
  const InsnInfo* row = find_row(bytes[i + 1], bytes[i + 2], any_rep, rep_prefix == 0xF2);
  d.repne = rep_prefix == 0xF2 && row != nullptr && row->repne != PrefixRule::Selects;
  if (row == nullptr) {
    // 0F A6/A7 with an unknown third byte is an ordinary invalid opcode.
    return d;
  }
  d.id = row->id;
  d.length = static_cast<uint8_t>(i + 3);
  if (mode == CpuMode::Long64) {
    d.addr_size = addr_toggle ? 32 : 64;
  } else {
    d.addr_size = addr_toggle ? 16 : 32;
  }
  d.rep_missing = row->rep == PrefixRule::Required && !any_rep;
  const bool opsize_ud = d.opsize && row->opsize == PrefixRule::Illegal;
  d.status =
      (d.lock || opsize_ud || d.rep_missing) ? DecodeStatus::InvalidOpcode : DecodeStatus::Ok;
  return d;
}

}  // namespace padlock::isa
