#include "models/ace/ace_timing.hpp"

#include <algorithm>
#include <cmath>

namespace padlock::ace {

namespace {
// Rounds half away from zero, as std::llround does, without its library call (every
// instruction rounds twice). The fraction c - trunc(c) of a double is exact; from 2^63 on
// (beyond any real clock count) std::llround decides as before.
uint64_t clocks(double c) {
  if (c <= 0) return 0;
  if (!(c < 0x1p63)) return static_cast<uint64_t>(std::llround(c));
  const auto whole = static_cast<uint64_t>(c);
  return whole + (c - static_cast<double>(whole) >= 0.5 ? 1 : 0);
}
}  // namespace

// §3.3 REP XCRYPTECB TIMING: SSE = base + var, with var = 2R for one or two blocks and
// N*R for N blocks; odd N > 2 adds R - 2 (ECB always encrypts pairs). Integer clocks are
// tabled for 1 and 2 blocks; for N > 2 the guide says the final overlap is "comparable to
// the extra clocks available when doing a single encryption", so we subtract the
// one-block overlap (SSE minus integer clocks of the 1-block row).
double round_clocks(const AceParams& p, unsigned rounds) {
  // A round is one clock (§3.3 N*R); rounds beyond 10 run while the data path finishes a
  // store, hiding up to store_hidden_by_rounds of its cost (docs/timing.md, "Rounds").
  const double r = static_cast<double>(rounds);
  return std::max(0.0, r - std::min(std::max(0.0, r - 10.0), p.store_hidden_by_rounds.value));
}

BlockClock BlockClock::ecb(const AceParams& p, unsigned rounds, uint64_t n, KeyState ks) {
  const int col = static_cast<int>(ks);
  const double r = round_clocks(p, rounds);
  BlockClock c;
  c.per_block_ = r;
  if (n <= 2) {
    const int row = n <= 1 ? 0 : 1;
    c.base_ = p.ecb_sse_base[row][col];
    c.sse_total_ = clocks(c.base_ + 2 * r);
    c.int_total_ = clocks(p.ecb_int_base[row][col]);
    return c;
  }
  c.base_ = p.ecb_sse_base[2][col];
  double sse = c.base_ + static_cast<double>(n) * r;
  if (n % 2 == 1) sse += r - 2;
  // The guide calls that overlap "comparable to" the single encryption's; its own rates for
  // 4-32 blocks put it ecb_release_many later (docs/timing.md, "PadLock timing parts").
  const double overlap1 = std::max(0.0, p.ecb_sse_base[0][col] + 2 * r - p.ecb_int_base[0][col]);
  c.sse_total_ = clocks(sse);
  c.int_total_ = clocks(std::max(0.0, sse - overlap1 - p.ecb_release_many));
  return c;
}

BlockClock BlockClock::chain(const AceParams& p, ChainMode m, bool unaligned, uint64_t n,
                             KeyState ks, unsigned rounds, bool stores_iv, bool digest) {
  const int i = static_cast<int>(m);
  BlockClock c;
  c.base_ = unaligned ? p.chain_startup_unaligned[i] : p.chain_startup[i];
  c.per_block_ = unaligned ? p.chain_per_block_unaligned[i] : p.chain_per_block[i];
  // The fitted per-block clocks are AES-128's; the rounds cost what they cost ECB.
  c.per_block_ = std::max(0.0, c.per_block_ + round_clocks(p, rounds) - 10.0);
  // Digest mode stores every block at one EDI, and the next block's chaining value is that
  // block: it waits for its store (docs/timing.md, "Digest mode").
  if (digest) c.per_block_ += p.dgest_per_block;
  // A key load (§1.8: EFLAGS[30] = 0) costs what it costs ECB (§3.3 table), and a chaining
  // mode then restarts its chain (docs/timing.md, "PadLock timing parts").
  if (ks == KeyState::Hardware) c.base_ += p.key_load_hw + p.chain_reload[i];
  if (ks == KeyState::Memory) c.base_ += p.key_load_mem + p.chain_reload[i];
  // Gladman's decryptions cost more than his encryptions, which copy the IV back in
  // software (docs/timing.md, "PadLock timing parts").
  if (stores_iv) c.base_ += p.iv_writeback;
  // With ALIGN = 0, CTR encrypts its counters in groups of ctr_interrupt_granularity, the
  // pairs it is interruptible after (§6.6), as ECB always encrypts pairs (§3.3): an odd
  // ECX pays for the unused block too (docs/timing.md, "Aligned CTR").
  const uint64_t charged = ctr_charged_blocks(p, m, unaligned, n);
  double sse = c.base_ + static_cast<double>(charged) * c.per_block_;
  // A chaining instruction runs the same rounds as ECB on its blocks and more: it takes at
  // least what the §3.3 ECB formula gives for them (2R + base for one block), which binds
  // for a single block with the key loaded (docs/timing.md, "PadLock timing parts").
  sse = std::max(sse, static_cast<double>(ecb(p, rounds, n, ks).sse_total()));
  const int col = static_cast<int>(ks);
  const double overlap1 = std::max(
      0.0, p.ecb_sse_base[0][col] + 2.0 * round_clocks(p, rounds) - p.ecb_int_base[0][col]);
  c.sse_total_ = clocks(sse);
  c.int_total_ = clocks(std::max(0.0, sse - overlap1));
  return c;
}

uint64_t ctr_charged_blocks(const AceParams& p, ChainMode m, bool unaligned, uint64_t n) {
  if (m != ChainMode::Ctr || unaligned || n == 0) return n;
  const uint64_t g = std::max(1u, p.ctr_interrupt_granularity);
  return (n + g - 1) / g * g;
}

uint64_t BlockClock::at(uint64_t k) const {
  return clocks(base_ + static_cast<double>(k) * per_block_);
}

uint64_t ecx0_clocks(const AceParams& p, bool key_loaded) {
  return clocks(key_loaded ? p.ecx0_clocks_min : p.ecx0_clocks_max);
}

}  // namespace padlock::ace
