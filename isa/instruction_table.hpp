// The one table of PadLock instructions (guide §0, §2.1, §3.1, §4.1, §5.1).
// The decoder, trace names, CLI listings and docs/isa.md all read this table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace padlock::isa {

enum class Unit : uint8_t { Rng, Ace, Phe, Pmm };

enum class InsnId : uint8_t {
  Xstore,     // 0F A7 C0
  RepXstore,  // F3 0F A7 C0
  XcryptEcb,  // F3 0F A7 C8
  XcryptCbc,  // F3 0F A7 D0
  XcryptCtr,  // F3 0F A7 D8
  XcryptCfb,  // F3 0F A7 E0
  XcryptOfb,  // F3 0F A7 E8
  Montmul,    // F3 0F A6 C0
  Xsha1,      // F3 0F A6 C8
  Xsha256,    // F3 0F A6 D0
  Count
};
inline constexpr size_t kInsnCount = static_cast<size_t>(InsnId::Count);

// Register bits for the read/write sets. EFLAGS30 is the ACE key-cache bit (§3.2).
enum RegBit : uint16_t {
  kEAX = 1u << 0,
  kECX = 1u << 1,
  kEDX = 1u << 2,
  kEBX = 1u << 3,
  kESI = 1u << 6,
  kEDI = 1u << 7,
  kEFLAGS30 = 1u << 8,
  kMemRead = 1u << 9,
  kMemWrite = 1u << 10,
};

// How a prefix affects an instruction.
enum class PrefixRule : uint8_t {
  Required,   // must be present (REP on XCRYPT/XSHA/MONTMUL, §3.1, §4.1, §5.1)
  Selects,    // selects this row (REP on REP XSTORE)
  Absent,     // must be absent: it selects another row (REP on plain XSTORE)
  Ignored,    // accepted, no effect (segment overrides, §2.1 "any segment prefix is ignored")
  Undefined,  // the guide calls it undefined (REPNE): see docs/fidelity.md for our choice
  Illegal,    // #UD (operand size on XCRYPT/XSHA, §3.1, §4.1)
};

struct InsnInfo {
  InsnId id;
  const char* mnemonic;    // Capstone 5 mnemonic, so traces and disassembly agree
  const char* guide_name;  // the guide's name for it
  Unit unit;
  uint8_t opcode2;      // second opcode byte after 0F: A6 or A7
  uint8_t modrm;        // third byte: selects the operation
  PrefixRule rep;       // F3
  PrefixRule repne;     // F2
  PrefixRule opsize;    // 66
  uint16_t reads;       // RegBit set
  uint16_t writes;      // RegBit set
  const char* section;  // guide section that defines it
};

inline constexpr InsnInfo kInstructions[kInsnCount] = {
    {InsnId::Xstore, "xstore", "XSTORE", Unit::Rng, 0xA7, 0xC0, PrefixRule::Absent,
     PrefixRule::Undefined, PrefixRule::Illegal, kEDX | kEDI, kEAX | kEDI | kMemWrite, "§2.1"},
    {InsnId::RepXstore, "xstore", "REP XSTORE", Unit::Rng, 0xA7, 0xC0, PrefixRule::Selects,
     PrefixRule::Undefined, PrefixRule::Illegal, kECX | kEDX | kEDI, kEAX | kECX | kEDI | kMemWrite,
     "§2.1"},
    {InsnId::XcryptEcb, "xcryptecb", "REP XCRYPTECB", Unit::Ace, 0xA7, 0xC8, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Illegal,
     kECX | kEDX | kEBX | kESI | kEDI | kEFLAGS30 | kMemRead,
     kECX | kESI | kEDI | kEFLAGS30 | kMemWrite, "§3.1"},
    {InsnId::XcryptCbc, "xcryptcbc", "REP XCRYPTCBC", Unit::Ace, 0xA7, 0xD0, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Illegal,
     kEAX | kECX | kEDX | kEBX | kESI | kEDI | kEFLAGS30 | kMemRead,
     kEAX | kECX | kESI | kEDI | kEFLAGS30 | kMemWrite, "§3.1"},
    {InsnId::XcryptCtr, "xcryptctr", "REP XCRYPTCTR", Unit::Ace, 0xA7, 0xD8, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Illegal,
     kEAX | kECX | kEDX | kEBX | kESI | kEDI | kEFLAGS30 | kMemRead,
     kECX | kESI | kEDI | kEFLAGS30 | kMemWrite, "§3.1"},
    {InsnId::XcryptCfb, "xcryptcfb", "REP XCRYPTCFB", Unit::Ace, 0xA7, 0xE0, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Illegal,
     kEAX | kECX | kEDX | kEBX | kESI | kEDI | kEFLAGS30 | kMemRead,
     kEAX | kECX | kESI | kEDI | kEFLAGS30 | kMemWrite, "§3.1"},
    {InsnId::XcryptOfb, "xcryptofb", "REP XCRYPTOFB", Unit::Ace, 0xA7, 0xE8, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Illegal,
     kEAX | kECX | kEDX | kEBX | kESI | kEDI | kEFLAGS30 | kMemRead,
     kECX | kESI | kEDI | kEFLAGS30 | kMemWrite, "§3.1"},
    // §5.1: "The full 32-bit EAX and ECX registers are used regardless of any address or
    // operand prefix", so 66h is accepted and ignored on MONTMUL.
    {InsnId::Montmul, "montmul", "REP MONTMUL", Unit::Pmm, 0xA6, 0xC0, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Ignored, kEAX | kECX | kESI | kMemRead,
     kEAX | kECX | kEDX | kMemWrite, "§5.1"},
    {InsnId::Xsha1, "xsha1", "REP XSHA1", Unit::Phe, 0xA6, 0xC8, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Illegal, kEAX | kECX | kESI | kEDI | kMemRead,
     kEAX | kESI | kEFLAGS30 | kMemWrite, "§4.1"},
    {InsnId::Xsha256, "xsha256", "REP XSHA256", Unit::Phe, 0xA6, 0xD0, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Illegal, kEAX | kECX | kESI | kEDI | kMemRead,
     kEAX | kESI | kEFLAGS30 | kMemWrite, "§4.1"},
};

constexpr const InsnInfo& info(InsnId id) {
  return kInstructions[static_cast<size_t>(id)];
}

constexpr bool is_xcrypt(InsnId id) {
  return info(id).unit == Unit::Ace;
}

const char* unit_name(Unit u);

}  // namespace padlock::isa
