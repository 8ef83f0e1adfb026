// CPU model: VIA Nano (Isaiah), 64-bit capable.
// Every value cites the guide section (or public source) it comes from; "choice" marks a
// value the guide does not give, documented in docs/fidelity.md.
#include "models/cpu_model.hpp"
#include "models/cpus/cpuid_common.hpp"

namespace padlock::cpus {

namespace {
constexpr CpuidLeaf kCpuid[] = {
    {0x00000000, 0, 0x00000001, kVendorEbx, kVendorEcx, kVendorEdx, "§1.1 vendor CentaurHauls"},
    {0x00000001, 0, signature(6, 15, 2), 0x00000800, kSse3 | kEst | kTm2 | kSsse3 | kCx16 | kXtpr, kFpu | kVme | kDe | kPse | kTsc | kMsr | kPae | kMce | kCx8 | kApic | kSep | kMtrr | kPge | kMca | kCmov | kPat | kClflush | kAcpi | kMmx | kFxsr | kSse | kSse2 | kTm | kPbe | kPse36 | kSs,
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
    .has_fcr = true,  // §1.5: every processor except Nehemiah stepping 3
    .msr_fcr_reset = 0x10000000,  // §1.2/§1.5: PadLock enabled at RESET (bit 28); other bits: choice 0
    .cpuid = kCpuid,
    .rng =
        {
            .variant = RngVariant::Esther,
            .dual_source = true,
            .raw_rate_one_source = {87.5e6, "bit/s", "choice: as Esther (the guide predates Nano)"},
            .raw_rate_both_sources = {175e6, "bit/s", "choice: as Esther (the guide predates Nano)"},
            .raw_one_bias = {{0.65, "P(1)", "choice: whitened/raw = p(1-p) = 0.23 within §2.3 15..80 Mb/s"},
                {0.60, "P(1)", "choice"}, {0.55, "P(1)", "choice"}, {0.50, "P(1)", "choice"},
                {0.70, "P(1)", "choice"}, {0.75, "P(1)", "choice"}, {0.80, "P(1)", "choice"},
                {0.90, "P(1)", "choice"}},
            .clocks_no_data = {30, "clocks", "§2.3 XSTORE table: no data ~30"},
            .clocks_stored = {{55, "clocks", "§2.3 XSTORE table EDX=0"},
                              {310, "clocks", "§2.3 XSTORE table EDX=1"},
                              {200, "clocks", "§2.3 XSTORE table EDX=2"},
                              {120, "clocks", "§2.3 XSTORE table EDX=3"}},
            .rep_single_extra = {7, "clocks", "§2.3: REP XSTORE, one internal XSTORE suffices"},
        },
    .ace =
        {
            .ecb_sse_base = {{{9, "clocks", "§3.3 ECB table 128b, EFLAGS:30=1"},
                              {45, "clocks", "§3.3 ECB table 128b, hardware key"},
                              {76, "clocks", "§3.3 ECB table 128b, memory key"}},
                             {{11, "clocks", "§3.3 ECB table 2*128b, EFLAGS:30=1"},
                              {47, "clocks", "§3.3 ECB table 2*128b, hardware key"},
                              {78, "clocks", "§3.3 ECB table 2*128b, memory key"}},
                             {{11, "clocks", "§3.3 ECB table N*128b, EFLAGS:30=1"},
                              {47, "clocks", "§3.3 ECB table N*128b, hardware key"},
                              {78, "clocks", "§3.3 ECB table N*128b, memory key"}}},
            .ecb_int_base = {{{17, "clocks", "§3.3 ECB table 128b integer"},
                              {61, "clocks", "§3.3 ECB table 128b integer, hardware key"},
                              {84, "clocks", "§3.3 ECB table 128b integer, memory key"}},
                             {{12, "clocks", "§3.3 ECB table 2*128b integer"},
                              {56, "clocks", "§3.3 ECB table 2*128b integer, hardware key"},
                              {79, "clocks", "§3.3 ECB table 2*128b integer, memory key"}}},
            .ecx0_clocks_min = {10, "clocks", "§3.3: ECX = 0 takes 10..27 clocks"},
            .ecx0_clocks_max = {27, "clocks", "§3.3: ECX = 0 takes 10..27 clocks"},
            .chain_startup =
                {
                {29.8, "clocks", "§3.3 Esther 1.6 GHz tables: CBC start-up (16B row minus per-block)"},
                {33.0, "clocks", "§3.3 Esther 1.6 GHz tables: CFB start-up (16B row minus per-block)"},
                {56.1, "clocks", "§3.3 Esther 1.6 GHz tables: OFB start-up (16B row minus per-block)"},
                {95.8, "clocks", "§3.3 Esther 1.6 GHz tables: CTR start-up (16B row minus per-block)"}},
            .chain_per_block =
                {
                {22.9, "clocks", "§3.3 Esther 1.6 GHz tables: CBC per block (8KB row)"},
                {22.9, "clocks", "§3.3 Esther 1.6 GHz tables: CFB per block (8KB row)"},
                {41.0, "clocks", "§3.3 Esther 1.6 GHz tables: OFB per block (8KB row)"},
                {38.9, "clocks", "§3.3 Esther 1.6 GHz tables: CTR per block (8KB row)"}},
            .chain_startup_unaligned =
                {
                {67.9, "clocks", "§3.3 Esther 1.6 GHz tables: CBC unaligned start-up (16B row minus per-block)"},
                {74.0, "clocks", "§3.3 Esther 1.6 GHz tables: CFB unaligned start-up (16B row minus per-block)"},
                {76.6, "clocks", "§3.3 Esther 1.6 GHz tables: OFB unaligned start-up (16B row minus per-block)"},
                {95.8, "clocks", "§3.3 Esther 1.6 GHz tables: CTR unaligned start-up (16B row minus per-block)"}},
            .chain_per_block_unaligned =
                {
                {63.4, "clocks", "§3.3 Esther 1.6 GHz tables: CBC unaligned per block (8KB row)"},
                {63.4, "clocks", "§3.3 Esther 1.6 GHz tables: CFB unaligned per block (8KB row)"},
                {67.6, "clocks", "§3.3 Esther 1.6 GHz tables: OFB unaligned per block (8KB row)"},
                {38.9, "clocks", "§3.3 Esther 1.6 GHz tables: CTR unaligned per block (8KB row)"}},
            .key_load_hw = {36, "clocks", "§3.3 ECB table: 45 - 9 (hardware key row minus loaded row)"},
            .key_load_mem = {67, "clocks", "§3.3 ECB table: 76 - 9 (memory key row minus loaded row)"},
        },
    .phe =
        {
            .sha1_clocks_per_round = {2, "clocks", "§4.2: one SHA-1 round every two clocks"},
            .sha256_clocks_per_round = {3, "clocks", "§4.2: one SHA-256 round every three clocks"},
            .sha1_block_overhead = {32.5, "clocks", "§4.2: 512/2.66 - 160 (asymptote 2.66 bit/clock)"},
            .sha256_block_overhead = {34.5, "clocks", "§4.2: 512/2.26 - 192 (asymptote 2.26 bit/clock)"},
            .startup = {40, "clocks", "choice: §4.2 names start-up overhead without a figure"},
            .padding = {20, "clocks", "choice: §4.2 names padding overhead without a figure"},
            .partial_rax_minus1 = true,
        },
    .pmm =
        {
            .k2 = {35, "clocks", "§5.2: K2 ~ 35"},
            .k1_min = {0.56, "", "§5.2: 0.56 <= K1"},
            .k1_max = {1.06, "", "§5.2: K1 <= 1.06"},
            .inner_loop_int_clocks = {15, "clocks", "§5.2 factor 3: integer inner loop"},
            .inner_loop_pmm_clocks = {16, "clocks", "§5.2 factor 3: PMM/MMX inner loop"},
            .cache_line_bytes = {64, "bytes", "§5.2 factor 2: carry store crossing a line"},
            .needs_addr_prefix_in_64bit = true,
        },
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
