// CPUID building blocks shared by the model files.
#pragma once

#include <array>
#include <cstdint>

#include "models/cpu_model.hpp"

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

// What differs between the models' CPUID answers.
struct CpuidIdentity {
  uint32_t family, model, stepping;          // §1.1, §7.1
  uint32_t leaf1_ebx, leaf1_ecx, leaf1_edx;  // feature bits of the core
  const char* leaf1_source;
  uint32_t ext_ecx, ext_edx;  // leaf 0x80000001
  const char* ext_source;
  uint32_t line_bytes;  // cache line
  uint32_t l2_kb;
};

// The leaves every model answers, in one layout. 0xC0000001 EDX is computed from the units
// and the MSR enables (§1.3): see Padlock::cpuid.
constexpr std::array<CpuidLeaf, kCpuidLeaves> standard_leaves(const CpuidIdentity& id) {
  return {{
      {0x00000000, 0, 0x00000001, kVendorEbx, kVendorEcx, kVendorEdx, "§1.1 vendor CentaurHauls"},
      {0x00000001, 0, signature(id.family, id.model, id.stepping), id.leaf1_ebx, id.leaf1_ecx,
       id.leaf1_edx, id.leaf1_source},
      {0x80000000, 0, 0x80000006, 0, 0, 0, "extended leaves up to the L2 descriptor"},
      {0x80000001, 0, 0, 0, id.ext_ecx, id.ext_edx, id.ext_source},
      {0x80000005, 0, 0, 0, l1_descriptor(64, 4, id.line_bytes),
       l1_descriptor(64, 4, id.line_bytes), "L1: 64 KB data, 64 KB instruction"},
      {0x80000006, 0, 0, 0, l2_descriptor(id.l2_kb, 0x8, id.line_bytes), 0, "L2 descriptor"},
      {0xC0000000, 0, 0xC0000001, 0, 0, 0, "§1.3: Centaur extended leaves supported"},
      {0xC0000001, 0, 0, 0, 0, 0, "§1.3: EDX from the units and MSR enables"},
  }};
}

}  // namespace padlock::cpus
