// The one table of PadLock instructions (guide §0, §2.1, §3.1, §4.1, §5.1), and the late
// Nano's and Zhaoxin's (docs/zhaoxin.md: the GMI User Manual Rev 1.0, openEuler's
// arch/x86/crypto/*-zhaoxin-gmi.c, OpenSSL/GnuTLS padlock_sha512_blocks, Intel XED on Zhaoxin
// opcodes). The decoder, trace names, CLI listings and docs/isa.md all read this table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace padlock::isa {

// Phe2: REP XSHA384/512. Ccs: SM3 and SM4 (GMI). Sm2: SM2. Rsa: REP XMODEXP, REP MONTMUL2.
// Rng2: REP XRNG2. The bit pairs of C000_0001 EDX are in models/padlock.hpp.
enum class Unit : uint8_t { Rng, Ace, Phe, Pmm, Phe2, Ccs, Sm2, Rsa, Rng2 };
inline constexpr size_t kUnitCount = 9;

enum class InsnId : uint8_t {
  Xstore,      // 0F A7 C0
  RepXstore,   // F3 0F A7 C0
  XcryptEcb,   // F3 0F A7 C8
  XcryptCbc,   // F3 0F A7 D0
  XcryptCtr,   // F3 0F A7 D8
  XcryptCfb,   // F3 0F A7 E0
  XcryptOfb,   // F3 0F A7 E8
  Montmul,     // F3 0F A6 C0
  Xsha1,       // F3 0F A6 C8
  Xsha256,     // F3 0F A6 D0
  Xsha384,     // F3 0F A6 D8 (PHE2)
  Xsha512,     // F3 0F A6 E0 (PHE2)
  CcsHash,     // F3 0F A6 E8 (SM3)
  CcsEncrypt,  // F3 0F A7 F0 (SM4)
  Sm2,         // F2 0F A6 C0 (F2 selects it; F3 0F A6 C0 is REP MONTMUL)
  Montmul2,    // F3 0F A6 F0 (RSA; no public semantics)
  Xmodexp,     // F3 0F A6 F8 (RSA; no public semantics)
  Xrng2,       // F3 0F A7 F8 (RNG2; no public semantics)
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
  Selects,    // selects this row (REP on REP XSTORE, REPNE on SM2)
  Absent,     // must be absent: it selects another row (REP on plain XSTORE)
  Ignored,    // accepted, no effect (segment overrides, §2.1 "any segment prefix is ignored")
  Undefined,  // the guide calls it undefined (REPNE): see docs/fidelity.md for our choice
  Illegal,    // #UD (operand size on XCRYPT/XSHA, §3.1, §4.1)
};

struct InsnInfo {
  InsnId id;
  const char* mnemonic;    // Capstone 5 mnemonic, so traces and disassembly agree (ours for
                           // the Zhaoxin rows, which Capstone 5 does not know)
  const char* guide_name;  // the guide's name for it
  Unit unit;
  uint8_t opcode2;       // second opcode byte after 0F: A6 or A7
  uint8_t modrm;         // third byte: selects the operation
  PrefixRule rep;        // F3
  PrefixRule repne;      // F2
  PrefixRule opsize;     // 66
  uint16_t reads;        // RegBit set
  uint16_t writes;       // RegBit set
  const char* section;   // guide section (or docs/ page) that defines it
  bool modelled = true;  // false: no public semantics; executing it stops the guest
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
    // PHE2 (docs/fidelity/phe2.md): ECX 128-byte blocks, no padding, as OpenSSL's and GnuTLS's
    // padlock_sha512_blocks call it; EAX is not read.
    {InsnId::Xsha384, "xsha384", "REP XSHA384", Unit::Phe2, 0xA6, 0xD8, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Illegal, kECX | kESI | kEDI | kMemRead,
     kECX | kESI | kMemWrite, "docs/fidelity/phe2.md"},
    {InsnId::Xsha512, "xsha512", "REP XSHA512", Unit::Phe2, 0xA6, 0xE0, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Illegal, kECX | kESI | kEDI | kMemRead,
     kECX | kESI | kMemWrite, "docs/fidelity/phe2.md"},
    // GMI (GMI User Manual §1.1, §1.2; docs/fidelity/gmi.md).
    {InsnId::CcsHash, "ccs_hash", "CCS_HASH (SM3)", Unit::Ccs, 0xA6, 0xE8, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Illegal, kEAX | kECX | kEBX | kESI | kEDI | kMemRead,
     kEAX | kECX | kESI | kMemWrite, "GMI §1.1"},
    {InsnId::CcsEncrypt, "ccs_encrypt", "CCS_ENCRYPT (SM4)", Unit::Ccs, 0xA7, 0xF0,
     PrefixRule::Required, PrefixRule::Undefined, PrefixRule::Illegal,
     kEAX | kECX | kEDX | kEBX | kESI | kEDI | kMemRead, kECX | kESI | kEDI | kMemWrite,
     "GMI §1.2"},
    {InsnId::Sm2, "sm2", "SM2", Unit::Sm2, 0xA6, 0xC0, PrefixRule::Absent, PrefixRule::Selects,
     PrefixRule::Illegal, kEAX | kEDX | kEBX | kESI | kEDI | kMemRead, kECX,
     "docs/fidelity/gmi.md"},
    {InsnId::Montmul2, "montmul2", "REP MONTMUL2", Unit::Rsa, 0xA6, 0xF0, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Illegal, 0, 0, "docs/fidelity/gmi.md", false},
    {InsnId::Xmodexp, "xmodexp", "REP XMODEXP", Unit::Rsa, 0xA6, 0xF8, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Illegal, 0, 0, "docs/fidelity/gmi.md", false},
    {InsnId::Xrng2, "xrng2", "REP XRNG2", Unit::Rng2, 0xA7, 0xF8, PrefixRule::Required,
     PrefixRule::Undefined, PrefixRule::Illegal, 0, 0, "docs/fidelity/gmi.md", false},
};

constexpr const InsnInfo& info(InsnId id) {
  return kInstructions[static_cast<size_t>(id)];
}

constexpr bool is_xcrypt(InsnId id) {
  return info(id).unit == Unit::Ace;
}

const char* unit_name(Unit u);

}  // namespace padlock::isa
