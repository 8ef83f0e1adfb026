// Where the bits come from: reproducible from the seed, host entropy on request, uniform
// after the whitener, biased by the DC-bias setting when raw (guide §2.2 BIAS, RBTS; §2.3).
#include <gtest/gtest.h>

#include <cmath>

#include "rng_test_util.hpp"

namespace padlock::test {
namespace {

constexpr uint64_t kBuf = RngBench::kBuf;

struct Sample {
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> cycles;
};

Sample sample(const char* name, uint64_t seed, bool host, uint64_t msr) {
  RngBench b(name, seed, host);
  b.reset(msr);
  Sample r;
  for (unsigned edx = 0; edx < 4; ++edx) {
    r.cycles.push_back(b.rep_xstore(edx, 512, kBuf + 1024 * edx).cycles);
  }
  r.bytes = b.bytes(kBuf, 4096);
  return r;
}

// Bits and cycle counts are reproducible from the seed; another seed differs.
TEST(RngBits, ReproducibleFromSeed) {
  for (const char* name : {"nehemiah-c5p", "esther-c5j"}) {
    for (uint64_t msr :
         {msr_value(2, 0, false), msr_value(2, 3, true), msr_value(2, 0, true, true, 9)}) {
      const Sample a = sample(name, 42, false, msr), b = sample(name, 42, false, msr);
      EXPECT_EQ(a.bytes, b.bytes) << name;
      EXPECT_EQ(a.cycles, b.cycles) << name;
      const Sample c = sample(name, 43, false, msr);
      EXPECT_NE(a.bytes, c.bytes) << name;
    }
  }
}

// host_entropy: two units with the same seed store different bytes; cycle counts still
// follow the seed (generation timing is always seeded).
TEST(RngBits, HostEntropy) {
  const uint64_t msr = msr_value(2, 0, false);
  const Sample a = sample("esther-c5j", 42, true, msr), b = sample("esther-c5j", 42, true, msr);
  EXPECT_NE(a.bytes, b.bytes);
  EXPECT_EQ(a.cycles, b.cycles);
  const Sample seeded = sample("esther-c5j", 42, false, msr);
  EXPECT_NE(a.bytes, seeded.bytes);
}

double chi_square_bytes(const std::vector<uint8_t>& v) {
  double count[256] = {};
  for (uint8_t x : v) count[x] += 1;
  const double e = v.size() / 256.0;
  double chi = 0;
  for (double c : count) chi += (c - e) * (c - e) / e;
  return chi;
}

double ones_fraction(const std::vector<uint8_t>& v) {
  size_t ones = 0;
  for (uint8_t x : v) ones += __builtin_popcount(x);
  return static_cast<double>(ones) / (8.0 * v.size());
}

// §2.2 RBTS = 0: von Neumann output of independent bits is unbiased: the byte histogram
// passes a chi-square test (255 degrees of freedom; bounds at p ~ 1e-6 either side) for
// every quality factor (§2.1 bit selection).
TEST(RngBits, WhitenedOutputUniform_S2_2) {
  for (const char* name : {"nehemiah-c5xl", "nehemiah-c5p", "esther-c5j", "nano"}) {
    for (unsigned edx = 0; edx < 4; ++edx) {
      RngBench b(name, 2024);
      b.reset(msr_value(2, 0, false));
      const size_t n = 65536;
      b.rep_xstore(edx, n);
      const double chi = chi_square_bytes(b.bytes(kBuf, n));
      EXPECT_GT(chi, 160.0) << name << " edx " << edx;
      EXPECT_LT(chi, 370.0) << name << " edx " << edx;
      EXPECT_NEAR(ones_fraction(b.bytes(kBuf, n)), 0.5, 0.005);
    }
  }
}

// §2.2 RBTS = 1 delivers the raw bits; BIAS sets their bias (the model's raw_one_bias).
TEST(RngBits, RawBitsCarryTheBias_S2_2) {
  for (const char* name : {"nehemiah-c5p", "esther-c5j"}) {
    for (unsigned bias = 0; bias < 8; ++bias) {
      for (unsigned edx : {0u, 3u}) {
        RngBench b(name, 77 + bias);
        b.reset(msr_value(2, bias, true));
        const size_t n = 32768;
        b.rep_xstore(edx, n);
        const double p = b.model.rng.raw_one_bias[bias].value;
        EXPECT_NEAR(ones_fraction(b.bytes(kBuf, n)), p, 0.006) << name << " bias " << bias;
      }
    }
  }
}

}  // namespace
}  // namespace padlock::test
