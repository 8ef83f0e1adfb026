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
            .raw_rate_one_source = {95e6, "bit/s", "choice: as Esther (the guide predates Nano); choice: half the two-source rate, as §2.3 gives for Nehemiah"},
            .raw_rate_both_sources = {190e6, "bit/s", "choice: as Esther (the guide predates Nano); §2.3: default bias about 150-200 Mb/s; 190 keeps near the ~500 clocks per buffer at 2 GHz (674)"},
            .raw_rate_scale = {
                {1.0, "x", "choice: as Esther (the guide predates Nano); choice: §2.3 observed 65-320 Mb/s depending on DC bias; factors give 66.5-319 Mb/s"},
                {1.25, "x", "choice"},
                {1.5, "x", "choice"},
                {1.68, "x", "choice"},
                {0.8, "x", "choice"},
                {0.6, "x", "choice"},
                {0.45, "x", "choice"},
                {0.35, "x", "choice"}},
            .raw_one_bias = {
                {0.7, "P(1)", "choice: as Esther (the guide predates Nano); choice: whitened = raw * p(1-p) spans 16.5-78 Mb/s, inside §2.3 15-80 Mb/s"},
                {0.65, "P(1)", "choice"},
                {0.6, "P(1)", "choice"},
                {0.57, "P(1)", "choice"},
                {0.72, "P(1)", "choice"},
                {0.7, "P(1)", "choice"},
                {0.62, "P(1)", "choice"},
                {0.55, "P(1)", "choice"}},
            .clocks_no_data = {30, "clocks", "§2.3 XSTORE table: no data ~30"},
            .clocks_stored = {{55, "clocks", "§2.3 XSTORE table EDX=0"},
                              {310, "clocks", "§2.3 XSTORE table EDX=1 (App. A 7: as printed)"},
                              {200, "clocks", "§2.3 XSTORE table EDX=2"},
                              {120, "clocks", "§2.3 XSTORE table EDX=3"}},
            .rep_single_extra = {7, "clocks", "§2.3: REP XSTORE, one internal XSTORE suffices"},
        },
    .ace =
        {
            .ecb_sse_base = {{{9, "clocks", "§3.3 ECB table 128b, EFLAGS:30=1"},
                              {45, "clocks", "§3.3 ECB table 128b, EFLAGS:30=0, hardware key"},
                              {76, "clocks", "§3.3 ECB table 128b, EFLAGS:30=0, memory key"}},
                             {{11, "clocks", "§3.3 ECB table 2*128b, EFLAGS:30=1"},
                              {47, "clocks", "§3.3 ECB table 2*128b, EFLAGS:30=0, hardware key"},
                              {78, "clocks", "§3.3 ECB table 2*128b, EFLAGS:30=0, memory key"}},
                             {{11, "clocks", "§3.3 ECB table N*128b, EFLAGS:30=1"},
                              {47, "clocks", "§3.3 ECB table N*128b, EFLAGS:30=0, hardware key"},
                              {78, "clocks", "§3.3 ECB table N*128b, EFLAGS:30=0, memory key"}}},
            .ecb_int_base = {{{17, "clocks", "§3.3 ECB table 128b integer, EFLAGS:30=1"},
                              {61, "clocks", "§3.3 ECB table 128b integer, hardware key"},
                              {84, "clocks", "§3.3 ECB table 128b integer, memory key"}},
                             {{12, "clocks", "§3.3 ECB table 2*128b integer, EFLAGS:30=1"},
                              {56, "clocks", "§3.3 ECB table 2*128b integer, hardware key"},
                              {79, "clocks", "§3.3 ECB table 2*128b integer, memory key"}}},
            .ecx0_clocks_min = {10, "clocks", "§3.3: ECX = 0 takes 10..27 clocks; ours with EFLAGS:30=1"},
            .ecx0_clocks_max = {27, "clocks", "§3.3: ECX = 0 takes 10..27 clocks; ours with EFLAGS:30=0"},
            .chain_startup =
                {{29.8, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther aligned table: CBC 16B row clocks minus per-block"},
                 {33, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther aligned table: CFB 16B row clocks minus per-block"},
                 {56.1, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther aligned table: OFB 16B row clocks minus per-block"},
                 {95.8, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther non-aligned table: CTR 16B row minus per-block (no aligned CTR column: the non-aligned one is used)"}},
            .chain_per_block =
                {{22.9, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther aligned table: CBC 8KB row, clocks per block"},
                 {22.9, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther aligned table: CFB 8KB row, clocks per block"},
                 {41, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther aligned table: OFB 8KB row, clocks per block"},
                 {38.9, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther non-aligned table: CTR 8KB row per block (no aligned CTR column: the non-aligned one is used)"}},
            .chain_startup_unaligned =
                {{67.9, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther non-aligned table: CBC 16B row clocks minus per-block"},
                 {74, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther non-aligned table: CFB 16B row clocks minus per-block"},
                 {76.6, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther non-aligned table: OFB 16B row clocks minus per-block"},
                 {95.8, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther non-aligned table: CTR 16B row clocks minus per-block"}},
            .chain_per_block_unaligned =
                {{63.4, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther non-aligned table: CBC 8KB row, clocks per block"},
                 {63.4, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther non-aligned table: CFB 8KB row, clocks per block"},
                 {67.6, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther non-aligned table: OFB 8KB row, clocks per block"},
                 {38.9, "clocks", "choice (no Nano figures in the guide): Esther value; §3.3 1.6 GHz Esther non-aligned table: CTR 8KB row, clocks per block"}},
            .key_load_hw = {36, "clocks", "§3.3 ECB table: 45 - 9 (hardware key row minus loaded row)"},
            .key_load_mem = {67, "clocks", "§3.3 ECB table: 76 - 9 (memory key row minus loaded row)"},
            .ctr_interrupt_granularity = 2,    // §6.6: interrupts after every 2 blocks
            .ctr_interrupt_min_remaining = 3,  // §6.6: none for 1 < ECX < 5
            .chain_interrupt_granularity = 1,  // §7.1: after every block
            .ecb_interrupt_granularity = 2,    // §3.3: ECB always works on two blocks
            // OpenSSL engines/asm/e_padlock-x86_64.pl "prefetch errata" (ecb 128, cbc 64,
            // ctr32 32) and Linux drivers/crypto/padlock-aes.c (Nano stepping 2: ECB 8 blocks,
            // CBC 4 blocks): input is read in groups of this many bytes.
            .prefetch_ecb = 128,
            .prefetch_cbc = 64,
            .prefetch_ctr = 32,
        },
    .phe =
        {
            .sha1_clocks_per_round = {2, "clocks", "§4.2: one SHA-1 round every two clocks"},
            .sha256_clocks_per_round = {3, "clocks", "§4.2: one SHA-256 round every three clocks"},
            .sha1_block_overhead = {512.0 / 2.66 - 80 * 2, "clocks", "§4.2: 512 bits per block at the 2.66 bit/clock asymptote, minus 80 rounds * 2 clocks"},
            .sha256_block_overhead = {512.0 / 2.26 - 64 * 3, "clocks", "§4.2: 512 bits per block at the 2.26 bit/clock asymptote, minus 64 rounds * 3 clocks"},
            .startup = {40, "clocks", "choice: §4.2 names start-up overhead (microcode entry, state load from EDI) without a figure"},
            .padding = {20, "clocks", "choice: §4.2 names padding overhead (building the final block) without a figure"},
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
            .carry_split_clocks = {16, "clocks", "choice: §5.2 factor 2 gives no figure; one inner step, the most that keeps K1 <= 1.06 since it never coincides with factor 1"},
            .tail_int_clocks = {18, "clocks", "choice: §5.2 factor 3; with backlog_max = 18 puts the K1 minimum at [M] = 2304 (§5.2: 0.561 there)"},
            .backlog_max_clocks = {18, "clocks", "choice: §5.2 factor 3; one clock of backlog per inner step (16 - 15), full after 18 steps = [M] 2304"},
            .fill_stall_clocks = {1, "clocks", "§5.2 factor 3: the integer pipeline stalls for one clock once the MMX pipeline fills"},
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
