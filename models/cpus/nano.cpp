// CPU model: VIA Nano (Isaiah), 64-bit capable.
// Every value cites the guide section (or public source) it comes from; "choice" marks a
// value the guide does not give, documented in docs/fidelity.md.
#include "models/cpu_model.hpp"
#include "models/cpus/cpuid_common.hpp"
#include "models/cpus/families.hpp"

namespace padlock::cpus {

namespace {
constexpr CpuidLeaf kCpuid[] = {
    {0x00000000, 0, 0x00000001, kVendorEbx, kVendorEcx, kVendorEdx, "§1.1 vendor CentaurHauls"},
    {0x00000001, 0, signature(6, 15, 2), 0x00000800, kSse3 | kEst | kTm2 | kSsse3 | kCx16 | kXtpr,
     kFpu | kVme | kDe | kPse | kTsc | kMsr | kPae | kMce | kCx8 | kApic | kSep | kMtrr | kPge |
         kMca | kCmov | kPat | kClflush | kAcpi | kMmx | kFxsr | kSse | kSse2 | kTm | kPbe |
         kPse36 | kSs,
     "§1.1 family/model/stepping; §7.1 model 15; feature bits of the Nano core"},
    {0x80000000, 0, 0x80000006, 0, 0, 0, "extended leaves up to the L2 descriptor"},
    {0x80000001, 0, 0, 0, kLahfLm, kSyscall | kNx | kLm, "SYSCALL, NX, long mode"},
    {0x80000005, 0, 0, 0, l1_descriptor(64, 4, 64), l1_descriptor(64, 4, 64),
     "L1: 64 KB data, 64 KB instruction"},
    {0x80000006, 0, 0, 0, l2_descriptor(1024, 0x8, 64), 0, "L2: 1024 KB"},
    {0xC0000000, 0, 0xC0000001, 0, 0, 0, "§1.3: Centaur extended leaves supported"},
    // 0xC0000001 EDX is computed from the units and the MSR enables (§1.3): see padlock.cpp.
    {0xC0000001, 0, 0, 0, 0, 0, "§1.3"},
};
}  // namespace

// The guide predates Nano: its ACE, RNG, PHE and PMM figures are Esther's (choice), except
// what real 64-bit clients rely on (OpenSSL engines/asm/e_padlock-x86_64.pl, GnuTLS
// lib/accelerated/x86, Linux drivers/crypto/padlock-*.c): see docs/fidelity/ace.md, phe.md.
constexpr AceParams nano_ace() {
  AceParams a = esther_ace();
  // OpenSSL "prefetch errata" (ecb 128, cbc 64, ctr32 32) and Linux padlock-aes.c (Nano
  // stepping 2: ECB 8 blocks, CBC 4 blocks): input is read in groups of this many bytes.
  a.prefetch_ecb = 128;
  a.prefetch_cbc = 64;
  a.prefetch_ctr = 32;
  return a;
}
constexpr PheParams nano_phe() {
  PheParams p = guide_phe();
  p.partial_rax_minus1 = true;  // RAX = -1: whole blocks, no padding (OpenSSL, GnuTLS)
  return p;
}
constexpr PmmParams nano_pmm() {
  PmmParams p = guide_pmm(64);
  p.needs_addr_prefix_in_64bit = true;  // see docs/fidelity/pmm.md
  return p;
}

extern const CpuModel kNano;
const CpuModel kNano = {
    .name = "nano",
    .aliases = "",
    .core = "Nano",
    .description = "VIA Nano L2200 (Isaiah): 64-bit capable; RNG, ACE2, PHE, PMM",
    .brand = "VIA Nano processor L2200@1600MHz",
    .family = 6,
    .model = 15,
    .stepping = 2,
    .long_mode = true,
    .default_mhz = {1600, "MHz", "VIA Nano L2200 runs at 1.6 GHz"},
    .units = {.rng = true, .ace = true, .ace2 = true, .phe = true, .pmm = true},
    .ctr_errata = false,
    .msr_rng_reset = 0x00000040,  // §1.4
    .has_fcr = true,              // §1.5: every processor except Nehemiah stepping 3
    .msr_fcr_reset =
        0x10000000,  // §1.2/§1.5: PadLock enabled at RESET (bit 28); other bits: choice 0
    .cpuid = kCpuid,
    .rng = esther_rng(),
    .ace = nano_ace(),
    .phe = nano_phe(),
    .pmm = nano_pmm(),
    .memory =
        {
            .l1d_bytes = {65536, "bytes", "Nano L1 data cache 64 KB"},
            .l2_bytes = {1024 * 1024, "bytes", "Nano L2 cache 1024 KB"},
            .line_bytes = {64, "bytes", "Nano cache line"},
            .l2_hit_clocks = {15, "clocks", "choice: calibrated against the §3.3 32 KB/64 KB rows"},
            .mem_bytes_per_clock = {1.0, "bytes/clock", "choice: the guide predates Nano"},
        },
};

}  // namespace padlock::cpus
