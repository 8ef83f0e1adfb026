// CPUID building blocks shared by the model files.
#pragma once

#include <array>
#include <cstdint>

#include "models/cpu_model.hpp"

namespace padlock::cpus {

// Leaf 0's vendor string, 12 characters in EBX, EDX, ECX order (§1.1; App. A 1).
inline constexpr const char* kCentaurHauls = "CentaurHauls";
// Zhaoxin's own vendor string (Linux arch/x86/kernel/cpu/zhaoxin.c; VirtualBox's CPU
// database, ZHAOXIN_KaiXian_KX_U5581_1_8GHz.h).
inline constexpr const char* kShanghai = "  Shanghai  ";

// Four characters of a vendor string as CPUID returns them (little-endian).
constexpr uint32_t vendor_word(const char* v, int word) {
  uint32_t w = 0;
  for (int i = 0; i < 4; ++i) w |= uint32_t(uint8_t(v[4 * word + i])) << (8 * i);
  return w;
}

// Leaf 1 EAX, type 0 (§1.1); a model above 15 puts its high nibble in the extended model
// field (bits 19:16), as the Zhaoxin dumps show (7/0x3B/2 is 000307B2).
constexpr uint32_t signature(uint32_t family, uint32_t model, uint32_t stepping) {
  return ((model >> 4) << 16) | (family << 8) | ((model & 0xF) << 4) | stepping;
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
// Leaf 1 ECX features the emulator cannot execute (Unicorn's QEMU 5 TCG has no AVX, F16C,
// FMA or XSAVE state; RDRAND and MOVBE are not in its Westmere model) and that a guest
// must therefore not see: FMA, MOVBE, XSAVE, OSXSAVE, AVX, F16C, RDRAND. A model that
// takes its leaf 1 from a dump clears these (docs/zhaoxin.md, "CPUID").
inline constexpr uint32_t kLeaf1EcxNotExecutable =
    (1u << 12) | (1u << 22) | (1u << 26) | (1u << 27) | (1u << 28) | (1u << 29) | (1u << 30);
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
  // Zero until given: the Zhaoxin models name only some fields and let zhaoxin_identity()
  // fill the others (models/cpus/late_nano.hpp).
  uint32_t family = 0, model = 0, stepping = 0;          // §1.1, §7.1
  uint32_t leaf1_ebx = 0, leaf1_ecx = 0, leaf1_edx = 0;  // feature bits of the core
  const char* leaf1_source = nullptr;
  uint32_t ext_ecx = 0, ext_edx = 0;  // leaf 0x80000001
  const char* ext_source = nullptr;
  uint32_t line_bytes = 0;  // cache line
  uint32_t l2_kb = 0;
  // Leaf 0's vendor string and where it comes from.
  const char* vendor = kCentaurHauls;
  const char* vendor_source = "§1.1 vendor CentaurHauls";
  // Leaves 0x80000005 ECX/EDX and 0x80000006 ECX as a dump gives them; 0: built from
  // line_bytes and l2_kb as on the VIA models.
  uint32_t l1d_descriptor = 0, l1i_descriptor = 0, l2_descriptor = 0;
  const char* cache_source = nullptr;
  // Leaf 0xC0000001 EAX: the Nano 3000 and Zhaoxin dumps repeat the signature there.
  bool centaur_leaf_signature = false;
};

// The leaves every model answers, in one layout. 0xC0000001 EDX is computed from the units
// and the MSR enables (§1.3): see Padlock::cpuid.
constexpr std::array<CpuidLeaf, kCpuidLeaves> standard_leaves(const CpuidIdentity& id) {
  const uint32_t sig = signature(id.family, id.model, id.stepping);
  const bool dumped = id.cache_source != nullptr;
  return {{
      {0x00000000, 0, 0x00000001, vendor_word(id.vendor, 0), vendor_word(id.vendor, 2),
       vendor_word(id.vendor, 1), id.vendor_source},
      {0x00000001, 0, sig, id.leaf1_ebx, id.leaf1_ecx, id.leaf1_edx, id.leaf1_source},
      {0x80000000, 0, 0x80000006, 0, 0, 0, "extended leaves up to the L2 descriptor"},
      {0x80000001, 0, 0, 0, id.ext_ecx, id.ext_edx, id.ext_source},
      {0x80000005, 0, 0, 0, dumped ? id.l1d_descriptor : l1_descriptor(64, 4, id.line_bytes),
       dumped ? id.l1i_descriptor : l1_descriptor(64, 4, id.line_bytes),
       dumped ? id.cache_source : "L1: 64 KB data, 64 KB instruction"},
      {0x80000006, 0, 0, 0, dumped ? id.l2_descriptor : l2_descriptor(id.l2_kb, 0x8, id.line_bytes),
       0, dumped ? id.cache_source : "L2 descriptor"},
      {0xC0000000, 0, 0xC0000001, 0, 0, 0, "§1.3: Centaur extended leaves supported"},
      {0xC0000001, 0, id.centaur_leaf_signature ? sig : 0, 0, 0, 0,
       "§1.3: EDX from the units and MSR enables"},
  }};
}

}  // namespace padlock::cpus
