// Generation rates against the modelled clock (guide §2.3, vectors in
// tests/vectors/rng/rates.vec) and the quality factor's effect on the byte rate (§2.1).
#include <gtest/gtest.h>

#include "rng_test_util.hpp"
#include "tests/common/vector_file.hpp"

namespace padlock::test {
namespace {

// Mb/s delivered into the buffers, measured as REP XSTORE (EDX = 0) of `bytes` from empty
// buffers: bits / modelled seconds.
double measure_mbps(RngBench& b, uint64_t msr, uint64_t bytes) {
  b.reset(msr);
  const Outcome o = b.rep_xstore(0, bytes);
  EXPECT_EQ(o.status, Status::Completed);
  EXPECT_EQ(o.bytes, bytes);
  const double seconds = static_cast<double>(o.cycles) / (b.env.mhz * 1e6);
  return bytes * 8 / seconds / 1e6;
}

// §2.3: every chip, noise-source selection, whitener setting and DC bias of rates.vec.
TEST(RngRate, WithinGuideRanges_S2_3) {
  const auto records = read_vectors("rng/rates.vec");
  ASSERT_GE(records.size(), 14u);
  for (const VectorRecord& r : records) {
    const std::string bias = r.str("Bias");
    const unsigned lo = bias == "all" ? 0 : std::stoul(bias);
    const unsigned hi = bias == "all" ? 7 : lo;
    for (unsigned b = lo; b <= hi; ++b) {
      SCOPED_TRACE(testing::Message() << r.str("Cpu") << " line " << r.line << " bias " << b);
      RngBench bench(r.str("Cpu"), 100 + b);
      const double mbps =
          measure_mbps(bench, msr_value(r.num("Src"), b, r.num("Rbts") != 0), 128 * 1024);
      EXPECT_GE(mbps, static_cast<double>(r.num("MinMbps")));
      EXPECT_LE(mbps, static_cast<double>(r.num("MaxMbps")));
    }
  }
}

// §2.3: the whitened rate emerges from the bias: whitened / raw = p(1 - p) per BIAS.
TEST(RngRate, WhitenedRateFollowsBias_S2_3) {
  for (const char* name : {"nehemiah-c5p", "esther-c5j"}) {
    for (unsigned bias = 0; bias < 8; ++bias) {
      RngBench b(name, 11);
      const double raw = measure_mbps(b, msr_value(2, bias, true), 64 * 1024);
      const double white = measure_mbps(b, msr_value(2, bias, false), 64 * 1024);
      const double p = b.model.rng.raw_one_bias[bias].value;
      EXPECT_NEAR(white / raw, p * (1 - p), 0.01 * p * (1 - p)) << name << " bias " << bias;
    }
  }
}

// §2.3 "Using both noise sources is recommended for faster generation": about twice the
// one-source rate on the dual-source chips.
TEST(RngRate, BothSourcesFaster_S2_3) {
  for (const char* name : {"nehemiah-c5p", "esther-c5j"}) {
    RngBench b(name, 5);
    const double a = measure_mbps(b, msr_value(0, 0, true), 64 * 1024);
    const double bsrc = measure_mbps(b, msr_value(1, 0, true), 64 * 1024);
    const double both = measure_mbps(b, msr_value(2, 0, true), 64 * 1024);
    EXPECT_NEAR(a, bsrc, 0.01 * a) << name;
    EXPECT_NEAR(both / a, 2.0, 0.05) << name;
  }
}

// §2.1 quality factor: each XSTORE takes one 8-byte buffer and returns 8, 4, 2 or 1 bytes,
// so the REP XSTORE byte rate divides by 1, 2, 4, 8.
TEST(RngRate, QualityFactorDividesByteRate_S2_1) {
  RngBench b("esther-c5j", 9);
  double rate[4];
  for (unsigned edx = 0; edx < 4; ++edx) {
    b.reset();
    const uint64_t bytes = 32768 >> edx;
    const Outcome o = b.rep_xstore(edx, bytes);
    rate[edx] = bytes / static_cast<double>(o.cycles);
  }
  for (unsigned edx = 1; edx < 4; ++edx) {
    EXPECT_NEAR(rate[0] / rate[edx], double(1u << edx), 0.03 * (1u << edx)) << edx;
  }
}

// The clock: the same configuration at twice the core clock takes twice the cycles (rates
// are bits per second, §2.3).
TEST(RngRate, FollowsCoreClock_S2_3) {
  RngBench slow("esther-c5j", 4), fast("esther-c5j", 4);
  slow.env.mhz = 1000;
  fast.env.mhz = 2000;
  const double a = measure_mbps(slow, msr_value(2, 0, true), 32768);
  const double c = measure_mbps(fast, msr_value(2, 0, true), 32768);
  EXPECT_NEAR(a, c, 0.01 * a);
}

}  // namespace
}  // namespace padlock::test
