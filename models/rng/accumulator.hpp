// The RNG hardware behind XSTORE (guide §2.2, §2.3): the noise source(s), the von Neumann
// whitener, the Nehemiah string filter and the four 8-byte accumulation buffers, run
// against the caller's cycle clock.
//
// Buffers are filled one at a time. When a buffer starts filling, its 64 bits are drawn and
// the number of raw noise bits needed to produce them decides when it is full:
//   - whitener off (RBTS = 1): 64 raw bits, each 1 with probability p (the DC-bias setting);
//   - whitener on: each raw pair yields one output bit with probability 2p(1-p), so a
//     buffer needs a negative-binomial number of pairs (sampled, normal approximation);
//     the output bits of a von Neumann whitener over independent bits are uniform;
//   - string filter (FLTR = 1, Nehemiah): bits that would extend a run of equal bits past
//     FCNT are dropped and FAIL is latched; dropped bits cost generation time.
// Generation stops while all four buffers are full (§2.3) and resumes when one is taken.
#pragma once

#include <cstdint>

#include "models/rng/entropy_source.hpp"
#include "models/rng/xoshiro256.hpp"

namespace padlock::rng {

struct NoiseConfig {
  double cycles_per_raw_bit = 1;  // core clocks per raw bit from the selected source(s)
  uint32_t p_one16 = 32768;       // P(raw bit = 1) * 65536, from the DC bias (§2.2 BIAS)
  bool whiten = true;             // §2.2 RBTS = 0
  bool filter = false;            // §2.2 FLTR = 1 (Nehemiah only)
  unsigned filter_count = 63;     // §2.2 FCNT: longest run kept (>= 1)
};

class Accumulator {
 public:
  static constexpr unsigned kBuffers = 4;  // §2.3: four 8-byte accumulation buffers
  static constexpr unsigned kBufferBits = 64;

  Accumulator(uint64_t seed, bool host_entropy);

  // Load reset (§2.2) or RESET (§1.6): buffers cleared, filter state cleared; when enabled,
  // generation starts at `now`.
  void load_reset(uint64_t now, const NoiseConfig& config, bool enabled);
  // Changes the configuration for buffers not yet started (a new core clock).
  void set_config(const NoiseConfig& config) { config_ = config; }
  const NoiseConfig& config() const { return config_; }

  // Fills buffers up to cycle `now` (never moves backwards).
  void advance(uint64_t now);
  unsigned full() const { return count_; }
  bool generating() const { return running_; }
  // First cycle at which the buffer being filled is full (valid when generating()).
  uint64_t next_ready() const;
  // Removes the oldest full buffer (full() > 0) at cycle `now`; restarts a stopped generator.
  uint64_t take(uint64_t now);
  // Whole bytes accumulated at the last advance(): full buffers plus the buffer in progress.
  unsigned bytes_accumulated(uint64_t now) const;

  bool filter_failed() const { return fail_; }

 private:
  void start_buffer(double t);
  uint64_t draw_filtered(uint64_t& input_bits, bool& failed);
  uint64_t raw_bits_for(uint64_t output_bits);
  double normal();

  EntropySource bits_;
  Xoshiro256 timing_;  // generation-time jitter: always seeded, so cycle counts reproduce
  NoiseConfig config_;
  bool enabled_ = false;
  bool running_ = false;
  double start_ = 0, done_ = 0;  // the buffer in progress, in cycles
  uint64_t pending_ = 0;
  bool pending_fail_ = false;
  uint64_t buf_[kBuffers] = {};
  unsigned head_ = 0, count_ = 0;
  bool fail_ = false;
  // String filter state: the last bit delivered and the length of its run.
  unsigned run_bit_ = 0, run_len_ = 0;
  bool have_spare_normal_ = false;
  double spare_normal_ = 0;
};

}  // namespace padlock::rng
