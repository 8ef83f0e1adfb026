// CPUID building blocks shared by the model files.
#pragma once

#include <cstdint>

namespace padlock::cpus {

// "CentaurHauls" in EBX, EDX, ECX order (§1.1; App. A 1).
inline constexpr uint32_t kVendorEbx = 0x746E6543;  // "Cent"
inline constexpr uint32_t kVendorEdx = 0x48727561;  // "aurH"
inline constexpr uint32_t kVendorEcx = 0x736C7561;  // "auls"

constexpr uint32_t signature(uint32_t family, uint32_t model, uint32_t stepping) {
  return (family << 8) | (model << 4) | stepping;  // type 0 (§1.1)
}

// Leaf 1 EDX bits.
enum Leaf1Edx : uint32_t {
  kFpu = 1u << 0,
  kVme = 1u << 1,
  kDe = 1u << 2,
  kPse = 1u << 3,
  kTsc = 1u << 4,
  kMsr = 1u << 5,
  kPae = 1u << 6,
  kMce = 1u << 7,
  kCx8 = 1u << 8,
  kApic = 1u << 9,
  kSep = 1u << 11,
  kMtrr = 1u << 12,
  kPge = 1u << 13,
  kMca = 1u << 14,
  kCmov = 1u << 15,
  kPat = 1u << 16,
  kPse36 = 1u << 17,
  kClflush = 1u << 19,
  kAcpi = 1u << 22,
  kMmx = 1u << 23,
  kFxsr = 1u << 24,
  kSse = 1u << 25,
  kSse2 = 1u << 26,
  kSs = 1u << 27,
  kTm = 1u << 29,
  kPbe = 1u << 31,
};
// Leaf 1 ECX bits.
enum Leaf1Ecx : uint32_t {
  kSse3 = 1u << 0,
  kEst = 1u << 7,
  kTm2 = 1u << 8,
  kSsse3 = 1u << 9,
  kCx16 = 1u << 13,
  kXtpr = 1u << 14,
};
// Leaf 0x80000001 bits.
enum ExtLeafBits : uint32_t {
  kSyscall = 1u << 11,
  kNx = 1u << 20,
  kLm = 1u << 29,     // EDX
  kLahfLm = 1u << 0,  // ECX
};

// AMD-style L1 descriptor for leaf 0x80000005 ECX/EDX: size KB, ways, lines/tag, line size.
constexpr uint32_t l1_descriptor(uint32_t kb, uint32_t ways, uint32_t line) {
  return (kb << 24) | (ways << 16) | (1u << 8) | line;
}
// Leaf 0x80000006 ECX: size KB, associativity code, lines/tag, line size.
constexpr uint32_t l2_descriptor(uint32_t kb, uint32_t assoc_code, uint32_t line) {
  return (kb << 16) | (assoc_code << 12) | (1u << 8) | line;
}

}  // namespace padlock::cpus
