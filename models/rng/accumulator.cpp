#include "models/rng/accumulator.hpp"

#include <algorithm>
#include <cmath>

namespace padlock::rng {

Accumulator::Accumulator(uint64_t seed, bool host_entropy)
    : bits_(seed, host_entropy), timing_(seed ^ 0x52474E54494D4531ull) {}

void Accumulator::load_reset(uint64_t now, const NoiseConfig& config, bool enabled) {
  config_ = config;
  enabled_ = enabled;
  head_ = count_ = 0;
  fail_ = pending_fail_ = false;
  run_bit_ = run_len_ = 0;
  running_ = false;
  if (enabled_) start_buffer(static_cast<double>(now));
}

uint64_t Accumulator::next_ready() const {
  return static_cast<uint64_t>(std::ceil(done_));
}

void Accumulator::advance(uint64_t now) {
  const double t = static_cast<double>(now);
  while (running_ && done_ <= t) {
    buf_[(head_ + count_) % kBuffers] = pending_;
    ++count_;
    fail_ |= pending_fail_;
    if (count_ < kBuffers) {
      start_buffer(done_);
    } else {
      running_ = false;  // §2.3: generator clocks off while all four buffers are full
    }
  }
}

uint64_t Accumulator::take(uint64_t now) {
  const uint64_t v = buf_[head_];
  head_ = (head_ + 1) % kBuffers;
  --count_;
  if (!running_ && enabled_) start_buffer(static_cast<double>(now));  // §2.3: re-enabled
  return v;
}

unsigned Accumulator::bytes_accumulated(uint64_t now) const {
  unsigned bytes = count_ * 8;
  if (running_ && done_ > start_) {
    const double frac = (static_cast<double>(now) - start_) / (done_ - start_);
    bytes += static_cast<unsigned>(std::clamp(frac, 0.0, 1.0) * 8.0) % 8;
  }
  return bytes;
}

double Accumulator::normal() {
  if (have_spare_normal_) {
    have_spare_normal_ = false;
    return spare_normal_;
  }
  double u1 = timing_.unit();
  while (u1 <= 0) u1 = timing_.unit();
  const double u2 = timing_.unit();
  const double r = std::sqrt(-2.0 * std::log(u1));
  spare_normal_ = r * std::sin(2.0 * M_PI * u2);
  have_spare_normal_ = true;
  return r * std::cos(2.0 * M_PI * u2);
}

// Raw bits the noise source spends to deliver `output_bits` bits to the buffers.
uint64_t Accumulator::raw_bits_for(uint64_t output_bits) {
  if (!config_.whiten) return output_bits;
  // §2.2 RBTS = 0: a raw pair (a, b) gives a bit only when a != b: probability 2p(1-p).
  const double p = config_.p_one16 / 65536.0;
  const double q = 2.0 * p * (1.0 - p);
  if (q <= 0) return UINT64_MAX / 4;  // a stuck source never yields a bit
  const double n = static_cast<double>(output_bits);
  const double mean = n / q;
  const double sd = std::sqrt(n * (1.0 - q)) / q;
  const double pairs = std::max(n, std::round(mean + sd * normal()));
  return 2 * static_cast<uint64_t>(pairs);
}

// §2.2 FLTR: drops bits that would make a run of equal bits longer than FCNT.
uint64_t Accumulator::draw_filtered(uint64_t& input_bits, bool& failed) {
  uint64_t out = 0;
  unsigned have = 0;
  const unsigned limit = std::max(1u, config_.filter_count);
  while (have < kBufferBits) {
    const uint64_t word = config_.whiten ? bits_.uniform64() : bits_.biased64(config_.p_one16);
    for (unsigned i = 0; i < 64 && have < kBufferBits; ++i) {
      const unsigned b = word >> i & 1;
      ++input_bits;
      if (run_len_ > 0 && b == run_bit_) {
        if (run_len_ >= limit) {
          failed = true;
          continue;
        }
        ++run_len_;
      } else {
        run_bit_ = b;
        run_len_ = 1;
      }
      out |= static_cast<uint64_t>(b) << have++;
    }
  }
  return out;
}

void Accumulator::start_buffer(double t) {
  uint64_t delivered = kBufferBits;  // bits entering the filter (or the buffer)
  pending_fail_ = false;
  if (config_.filter) {
    delivered = 0;
    pending_ = draw_filtered(delivered, pending_fail_);
  } else if (config_.whiten) {
    pending_ = bits_.uniform64();
  } else {
    pending_ = bits_.biased64(config_.p_one16);
  }
  const uint64_t raw = raw_bits_for(delivered);
  start_ = t;
  done_ = t + static_cast<double>(raw) * config_.cycles_per_raw_bit;
  running_ = true;
}

}  // namespace padlock::rng
