// CPU model: VIA C3 Nehemiah C5XL, stepping 3 (RNG only).
// Every value cites the guide section (or public source) it comes from; "choice" marks a
// value the guide does not give, documented in docs/fidelity.md.
#include "models/cpu_model.hpp"
#include "models/cpus/cpuid_common.hpp"

namespace padlock::cpus {

namespace {
constexpr CpuidLeaf kCpuid[] = {
    {0x00000000, 0, 0x00000001, kVendorEbx, kVendorEcx, kVendorEdx, "§1.1 vendor CentaurHauls"},
    {0x00000001, 0, signature(6, 9, 3), 0, 0, kFpu | kVme | kDe | kPse | kTsc | kMsr | kCx8 | kSep | kMtrr | kPge | kCmov | kPat | kMmx | kFxsr | kSse,
     "§1.1 family/model/stepping; §7.1 model 9; feature bits of the Nehemiah core"},
    {0x80000000, 0, 0x80000006, 0, 0, 0, "extended leaves up to the L2 descriptor"},
    {0x80000001, 0, 0, 0, 0, 0, "no extended features (no NX, no LM)"},
    {0x80000005, 0, 0, 0, l1_descriptor(64, 4, 32), l1_descriptor(64, 4, 32),
     "L1: 64 KB data, 64 KB instruction"},
    {0x80000006, 0, 0, 0, l2_descriptor(64, 0x8, 32), 0, "L2: 64 KB"},
    {0xC0000000, 0, 0xC0000001, 0, 0, 0, "§1.3: Centaur extended leaves supported"},
    // 0xC0000001 EDX is computed from the units and the MSR enables (§1.3): see padlock.cpp.
    {0xC0000001, 0, 0, 0, 0, 0, "§1.3"},
};
}  // namespace

extern const CpuModel kNehemiahC5XL;
const CpuModel kNehemiahC5XL = {
    .name = "nehemiah-c5xl",
    .aliases = "",
    .core = "Nehemiah",
    .description = "VIA C3 Nehemiah C5XL stepping 3: RNG only, one noise source",
    .brand = "VIA Nehemiah",
    .family = 6,
    .model = 9,
    .stepping = 3,
    .long_mode = false,
    .default_mhz = {1000, "MHz", "choice: C3 Nehemiah parts ran at 1.0-1.4 GHz"},
    .units = {.rng = true, .ace = false, .ace2 = false, .phe = false, .pmm = false},
    .ctr_errata = false,
    .msr_rng_reset = 0x00000040,  // §1.4
    .has_fcr = false,  // §1.5: every processor except Nehemiah stepping 3
    .msr_fcr_reset = 0,  // §1.2/§1.5: PadLock enabled at RESET (bit 28); other bits: choice 0
    .cpuid = kCpuid,
    .rng =
        {
            .variant = RngVariant::Nehemiah,
            .dual_source = false,
            .raw_rate_one_source = {50e6, "bit/s", "§2.3: stepping 3 raw 40-60 Mb/s (midpoint); whitened 8 Mb/s at p = 0.8"},
            .raw_rate_both_sources = {50e6, "bit/s", "§2.2: SRC is reserved before stepping 8: one source only"},
            .raw_rate_scale = {
                {1.0, "x", "choice: §2.2 says BIAS may affect speed; kept within 0.85-1.15 so every setting stays inside the §2.3 40-60 / 6-10 Mb/s ranges"},
                {1.1, "x", "choice"},
                {0.9, "x", "choice"},
                {1.15, "x", "choice"},
                {0.85, "x", "choice"},
                {1.05, "x", "choice"},
                {0.95, "x", "choice"},
                {1.0, "x", "choice"}},
            .raw_one_bias = {
                {0.8, "P(1)", "choice: whitened/raw = p(1-p) = 0.16 gives §2.3 6-10 Mb/s from 40-60 Mb/s raw"},
                {0.79, "P(1)", "choice"},
                {0.81, "P(1)", "choice"},
                {0.79, "P(1)", "choice"},
                {0.81, "P(1)", "choice"},
                {0.8, "P(1)", "choice"},
                {0.8, "P(1)", "choice"},
                {0.78, "P(1)", "choice"}},
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
                {{21.7, "clocks", "§3.3 1.2 GHz Nehemiah aligned table: CBC 16B row clocks minus per-block"},
                 {27.5, "clocks", "§3.3 1.2 GHz Nehemiah aligned table: CFB 16B row clocks minus per-block"},
                 {32.9, "clocks", "§3.3 1.2 GHz Nehemiah aligned table: OFB 16B row clocks minus per-block"},
                 {0, "clocks", "n/a: no CTR on Nehemiah (§0, §7.1)"}},
            .chain_per_block =
                {{23.9, "clocks", "§3.3 1.2 GHz Nehemiah aligned table: CBC 8KB row, clocks per block"},
                 {24, "clocks", "§3.3 1.2 GHz Nehemiah aligned table: CFB 8KB row, clocks per block"},
                 {49.7, "clocks", "§3.3 1.2 GHz Nehemiah aligned table: OFB 8KB row, clocks per block"},
                 {0, "clocks", "n/a: no CTR on Nehemiah (§0, §7.1)"}},
            .chain_startup_unaligned =
                {{21.7, "clocks", "no ALIGN on Nehemiah (§3.2): as aligned, §3.3 1.2 GHz Nehemiah aligned table: CBC 16B row clocks minus per-block"},
                 {27.5, "clocks", "no ALIGN on Nehemiah (§3.2): as aligned, §3.3 1.2 GHz Nehemiah aligned table: CFB 16B row clocks minus per-block"},
                 {32.9, "clocks", "no ALIGN on Nehemiah (§3.2): as aligned, §3.3 1.2 GHz Nehemiah aligned table: OFB 16B row clocks minus per-block"},
                 {0, "clocks", "n/a: no CTR on Nehemiah (§0, §7.1)"}},
            .chain_per_block_unaligned =
                {{23.9, "clocks", "no ALIGN on Nehemiah (§3.2): as aligned, §3.3 1.2 GHz Nehemiah aligned table: CBC 8KB row, clocks per block"},
                 {24, "clocks", "no ALIGN on Nehemiah (§3.2): as aligned, §3.3 1.2 GHz Nehemiah aligned table: CFB 8KB row, clocks per block"},
                 {49.7, "clocks", "no ALIGN on Nehemiah (§3.2): as aligned, §3.3 1.2 GHz Nehemiah aligned table: OFB 8KB row, clocks per block"},
                 {0, "clocks", "n/a: no CTR on Nehemiah (§0, §7.1)"}},
            .key_load_hw = {36, "clocks", "§3.3 ECB table: 45 - 9 (hardware key row minus loaded row)"},
            .key_load_mem = {67, "clocks", "§3.3 ECB table: 76 - 9 (memory key row minus loaded row)"},
            .ctr_interrupt_granularity = 2,    // §6.6: interrupts after every 2 blocks
            .ctr_interrupt_min_remaining = 3,  // §6.6: none for 1 < ECX < 5
            .chain_interrupt_granularity = 1,  // §7.1: after every block
            .ecb_interrupt_granularity = 2,    // §3.3: ECB always works on two blocks
            // §3.1/§3.3: ECB reads pairs (Linux padlock-aes.c ecb_fetch_blocks = 2); no
            // prefetch erratum before Nano.
            .prefetch_ecb = 32,
            .prefetch_cbc = 0,
            .prefetch_ctr = 0,
        },
    .phe =
        {
            .sha1_clocks_per_round = {2, "clocks", "§4.2: one SHA-1 round every two clocks"},
            .sha256_clocks_per_round = {3, "clocks", "§4.2: one SHA-256 round every three clocks"},
            .sha1_block_overhead = {512.0 / 2.66 - 80 * 2, "clocks", "§4.2: 512 bits per block at the 2.66 bit/clock asymptote, minus 80 rounds * 2 clocks"},
            .sha256_block_overhead = {512.0 / 2.26 - 64 * 3, "clocks", "§4.2: 512 bits per block at the 2.26 bit/clock asymptote, minus 64 rounds * 3 clocks"},
            .startup = {40, "clocks", "choice: §4.2 names start-up overhead (microcode entry, state load from EDI) without a figure"},
            .padding = {20, "clocks", "choice: §4.2 names padding overhead (building the final block) without a figure"},
            .partial_rax_minus1 = false,
        },
    .pmm =
        {
            .k2 = {35, "clocks", "§5.2: K2 ~ 35"},
            .k1_min = {0.56, "", "§5.2: 0.56 <= K1"},
            .k1_max = {1.06, "", "§5.2: K1 <= 1.06"},
            .inner_loop_int_clocks = {15, "clocks", "§5.2 factor 3: integer inner loop"},
            .inner_loop_pmm_clocks = {16, "clocks", "§5.2 factor 3: PMM/MMX inner loop"},
            .cache_line_bytes = {32, "bytes", "§5.2 factor 2: carry store crossing a line"},
            .carry_split_clocks = {16, "clocks", "choice: §5.2 factor 2 gives no figure; one inner step, the most that keeps K1 <= 1.06 since it never coincides with factor 1"},
            .tail_int_clocks = {18, "clocks", "choice: §5.2 factor 3; with backlog_max = 18 puts the K1 minimum at [M] = 2304 (§5.2: 0.561 there)"},
            .backlog_max_clocks = {18, "clocks", "choice: §5.2 factor 3; one clock of backlog per inner step (16 - 15), full after 18 steps = [M] 2304"},
            .fill_stall_clocks = {1, "clocks", "§5.2 factor 3: the integer pipeline stalls for one clock once the MMX pipeline fills"},
            .needs_addr_prefix_in_64bit = false,
        },
    .memory =
        {
            .l1d_bytes = {65536, "bytes", "Nehemiah L1 data cache 64 KB"},
            .l2_bytes = {64 * 1024, "bytes", "Nehemiah L2 cache 64 KB"},
            .line_bytes = {32, "bytes", "Nehemiah cache line"},
            .l2_hit_clocks = {20, "clocks", "choice: calibrated against the §3.3 32 KB/64 KB rows"},
            .mem_bytes_per_clock = {0.22, "bytes/clock", "§3.3 Nehemiah 1 MB row: 1.05 Gb/s in place (read + write) at 1.2 GHz"},
        },
};

}  // namespace padlock::cpus
