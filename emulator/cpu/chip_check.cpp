#include "emulator/cpu/chip_check.hpp"

namespace padlock::emu {

namespace {

constexpr uint8_t kEax = 0, kEbx = 1, kEcx = 2, kEdx = 3;
constexpr uint32_t kExt = 0x80000001;

// Instruction groups (Capstone) and the CPUID bit each needs. Bit positions: Intel SDM
// vol. 2A, CPUID; names: Linux arch/x86/include/asm/cpufeatures.h (words 0, 4, 6, 9).
struct GroupFeature {
  uint8_t group;
  CpuidFeature feature;
};
constexpr GroupFeature kGroups[] = {
    {X86_GRP_CMOV, {1, kEdx, 15, "cmov"}},      {X86_GRP_MMX, {1, kEdx, 23, "mmx"}},
    {X86_GRP_SSE1, {1, kEdx, 25, "sse"}},       {X86_GRP_SSE2, {1, kEdx, 26, "sse2"}},
    {X86_GRP_SSE3, {1, kEcx, 0, "pni"}},        {X86_GRP_PCLMUL, {1, kEcx, 1, "pclmulqdq"}},
    {X86_GRP_SSSE3, {1, kEcx, 9, "ssse3"}},     {X86_GRP_FMA, {1, kEcx, 12, "fma"}},
    {X86_GRP_SSE41, {1, kEcx, 19, "sse4_1"}},   {X86_GRP_SSE42, {1, kEcx, 20, "sse4_2"}},
    {X86_GRP_AES, {1, kEcx, 25, "aes"}},        {X86_GRP_AVX, {1, kEcx, 28, "avx"}},
    {X86_GRP_F16C, {1, kEcx, 29, "f16c"}},      {X86_GRP_FSGSBASE, {7, kEbx, 0, "fsgsbase"}},
    {X86_GRP_BMI, {7, kEbx, 3, "bmi1"}},        {X86_GRP_AVX2, {7, kEbx, 5, "avx2"}},
    {X86_GRP_BMI2, {7, kEbx, 8, "bmi2"}},       {X86_GRP_RTM, {7, kEbx, 11, "rtm"}},
    {X86_GRP_AVX512, {7, kEbx, 16, "avx512f"}}, {X86_GRP_ADX, {7, kEbx, 19, "adx"}},
    {X86_GRP_SHA, {7, kEbx, 29, "sha_ni"}},     {X86_GRP_SSE4A, {kExt, kEcx, 6, "sse4a"}},
    {X86_GRP_XOP, {kExt, kEcx, 11, "xop"}},     {X86_GRP_FMA4, {kExt, kEcx, 16, "fma4"}},
    {X86_GRP_TBM, {kExt, kEcx, 21, "tbm"}},     {X86_GRP_3DNOW, {kExt, kEdx, 31, "3dnow"}},
};

// Instructions with a feature bit of their own, which Capstone puts in no group.
struct InsnFeature {
  unsigned id;
  CpuidFeature feature;
};
constexpr InsnFeature kInsns[] = {
    {X86_INS_CMPXCHG8B, {1, kEdx, 8, "cx8"}},     {X86_INS_CLFLUSH, {1, kEdx, 19, "clflush"}},
    {X86_INS_FXSAVE, {1, kEdx, 24, "fxsr"}},      {X86_INS_FXRSTOR, {1, kEdx, 24, "fxsr"}},
    {X86_INS_FXSAVE64, {1, kEdx, 24, "fxsr"}},    {X86_INS_FXRSTOR64, {1, kEdx, 24, "fxsr"}},
    {X86_INS_CMPXCHG16B, {1, kEcx, 13, "cx16"}},  {X86_INS_MOVBE, {1, kEcx, 22, "movbe"}},
    {X86_INS_POPCNT, {1, kEcx, 23, "popcnt"}},    {X86_INS_XSAVE, {1, kEcx, 26, "xsave"}},
    {X86_INS_XRSTOR, {1, kEcx, 26, "xsave"}},     {X86_INS_XGETBV, {1, kEcx, 26, "xsave"}},
    {X86_INS_RDRAND, {1, kEcx, 30, "rdrand"}},    {X86_INS_RDSEED, {7, kEbx, 18, "rdseed"}},
    {X86_INS_RDTSCP, {kExt, kEdx, 27, "rdtscp"}},
};

// Encodings that an older chip runs as another instruction instead of raising #UD: TZCNT
// and LZCNT are REP BSF and REP BSR there (Intel SDM vol. 2B, TZCNT and LZCNT), which
// compilers rely on. (Likewise the HLE prefixes, ignored without HLE, are in no row.)
constexpr unsigned kOlderMeaning[] = {X86_INS_TZCNT, X86_INS_LZCNT};

bool in_group(const cs_detail& d, uint8_t g) {
  for (uint8_t i = 0; i < d.groups_count; ++i) {
    if (d.groups[i] == g) return true;
  }
  return false;
}

}  // namespace

ChipFeatures::ChipFeatures(const Padlock& padlock) {
  const auto read = [&](uint32_t leaf, uint32_t(&out)[4]) {
    if (padlock.cpuid(leaf & 0x80000000u, 0).eax < leaf) return;  // beyond the highest leaf
    const CpuidResult r = padlock.cpuid(leaf, 0);
    out[kEax] = r.eax;
    out[kEbx] = r.ebx;
    out[kEcx] = r.ecx;
    out[kEdx] = r.edx;
  };
  read(1, leaf1_);
  read(7, leaf7_);
  read(kExt, ext1_);
}

bool ChipFeatures::has(const CpuidFeature& f) const {
  const uint32_t* regs = f.leaf == 1 ? leaf1_ : f.leaf == 7 ? leaf7_ : ext1_;
  return (regs[f.reg] >> f.bit) & 1u;
}

const CpuidFeature* missing_feature(const cs_insn& insn, const ChipFeatures& chip) {
  if (insn.detail == nullptr) return nullptr;
  for (const unsigned id : kOlderMeaning) {
    if (id == insn.id) return nullptr;
  }
  for (const InsnFeature& i : kInsns) {
    if (i.id == insn.id) return chip.has(i.feature) ? nullptr : &i.feature;
  }
  for (const GroupFeature& g : kGroups) {
    if (in_group(*insn.detail, g.group) && !chip.has(g.feature)) return &g.feature;
  }
  return nullptr;
}

}  // namespace padlock::emu
