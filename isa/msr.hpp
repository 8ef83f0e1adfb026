// PadLock MSRs: 0x110B, the RNG control/status register (guide §1.4, §2.2), 0x1107, the
// Function Control Register (guide §1.5), and Zhaoxin's 0x1257 (docs/zhaoxin.md).
#pragma once

#include <cstdint>

namespace padlock::isa {

inline constexpr uint32_t kMsrRng = 0x110B;
inline constexpr uint32_t kMsrFcr = 0x1107;
// Zhaoxin's enable register on the family-7 parts: bit 7 enables ACE, bit 8 the RNG
// (Linux arch/x86/kernel/cpu/zhaoxin.c, MSR_ZHAOXIN_FCR57, ACE_FCR, RNG_ENABLE).
inline constexpr uint32_t kMsrFcr57 = 0x1257;
inline constexpr uint32_t kFcr57AceEnable = 1u << 7;
inline constexpr uint32_t kFcr57RngEnable = 1u << 8;

// The PadLock MSRs a processor model may answer (the others are not ours).
inline constexpr bool is_padlock_msr(uint32_t msr) {
  return msr == kMsrRng || msr == kMsrFcr || msr == kMsrFcr57;
}

// §1.4: RESET value of MSR 0x110B on every processor with RNG.
inline constexpr uint32_t kMsrRngReset = 0x00000040;

// §1.5: FCR[28] enables ACE/ACE2/PHE/PMM (not RNG).
inline constexpr uint32_t kFcrPadlockEnable = 1u << 28;

// MSR 0x110B field layout (§2.2). Fields marked * are RES on Esther.
struct RngMsr {
  uint32_t raw = kMsrRngReset;

  unsigned bcnt() const { return raw & 0x1F; }        // [4:0]  (O) byte count / buffer mask
  bool enbl() const { return raw >> 6 & 1; }          // [6]    (I) RNG enable
  unsigned src() const { return raw >> 8 & 3; }       // [9:8]  (I) noise source select
  unsigned bias() const { return raw >> 10 & 7; }     // [12:10](I) DC bias
  bool rbts() const { return raw >> 13 & 1; }         // [13]   (I) raw bits (whitener off)
  bool fltr() const { return raw >> 14 & 1; }         // [14]*  (I) string filter enable
  bool fail() const { return raw >> 15 & 1; }         // [15]*  (I/O) string filter fail
  unsigned fcnt() const { return raw >> 16 & 0x3F; }  // [21:16]*(I) string filter count

  static constexpr uint32_t kBcntMask = 0x1F;
  static constexpr uint32_t kEnblBit = 1u << 6;
  static constexpr uint32_t kFailBit = 1u << 15;
  // Bits software may write (§2.2): ENBL, SRC, BIAS, RBTS, FLTR, FAIL, FCNT.
  static constexpr uint32_t kWritableMask = 0x003FFF40;
  // RES bits 5, 7 and 31:22 (§2.2 editor's note).
  static constexpr uint32_t kReservedMask = 0xFFC000A0;
};

}  // namespace padlock::isa
