#include "kvbill/util/random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(RngTest, IsTheStandardMersenneTwister) {
  // The standard fixes the 10000th output of a default-seeded (5489)
  // mt19937_64: 9981545732273789042.
  Rng rng(5489);
  for (int i = 1; i < 10000; ++i) rng.NextBits();
  EXPECT_EQ(rng.NextBits(), 9981545732273789042ULL);
}

TEST(RngTest, OpenUnitUsesTheTop53BitsPlusAHalf) {
  Rng rng(42);
  std::mt19937_64 engine(42);
  for (int i = 0; i < 100; ++i) {
    const double expected =
        (static_cast<double>(engine() >> 11) + 0.5) / 9007199254740992.0;  // 2^53
    const double u = rng.NextOpenUnit();
    EXPECT_EQ(u, expected);
    EXPECT_GT(u, 0);
    EXPECT_LT(u, 1);
  }
}

TEST(NormalQuantileTest, MatchesTabulatedValues) {
  // Reference values of Φ⁻¹ to 15 digits (standard normal tables).
  EXPECT_EQ(NormalQuantile(0.5), 0);
  EXPECT_NEAR(NormalQuantile(0.9), kNormalZ90, 1e-8);
  EXPECT_NEAR(NormalQuantile(0.75), 0.674489750196082, 1e-8);
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963984540054, 1e-8);
  EXPECT_NEAR(NormalQuantile(0.001), -3.090232306167813, 1e-8);  // lower tail branch
  EXPECT_NEAR(NormalQuantile(0.999), 3.090232306167813, 1e-8);   // upper tail branch
  EXPECT_NEAR(NormalQuantile(0.1), -kNormalZ90, 1e-8);
}

TEST(DistributionTest, LognormalHitsItsMedianAndP90) {
  const Distribution d = Distribution::LognormalFromMedianP90(46, 68);
  EXPECT_NEAR(d.Median(), 46, 46 * 1e-12);
  EXPECT_NEAR(d.Quantile(0.9), 68, 68 * 1e-8);
  // σ = ln(68 / 46) / 1.28155 = 0.30499; p10 = 46 / (68 / 46) = 31.118.
  EXPECT_NEAR(d.Quantile(0.1), 46.0 * 46.0 / 68.0, 1e-6);
}

TEST(DistributionTest, ExponentialQuantiles) {
  const Distribution d = Distribution::Exponential(30);
  // F(x) = 1 - exp(-x / 30): the median is 30 ln 2, F(30) = 1 - 1/e.
  EXPECT_NEAR(d.Median(), 30 * std::log(2.0), 1e-12);
  EXPECT_NEAR(d.Quantile(1 - std::exp(-1.0)), 30, 1e-9);
}

TEST(DistributionTest, GeometricCountsFailuresBeforeSuccess) {
  // Mean 2: p = 1/3, P(0) = 1/3, P(<= 1) = 5/9, P(<= 2) = 19/27 = 0.7037.
  const Distribution d = Distribution::Geometric(2);
  EXPECT_EQ(d.Quantile(0.30), 0);
  EXPECT_EQ(d.Quantile(0.34), 1);
  EXPECT_EQ(d.Quantile(0.55), 1);
  EXPECT_EQ(d.Quantile(0.56), 2);
  EXPECT_EQ(d.Quantile(0.70), 2);
  EXPECT_EQ(d.Quantile(0.71), 3);
}

TEST(DistributionTest, ShiftThenClamp) {
  const Distribution d = Distribution::Geometric(2).Shifted(1).Clamped(1, 2);
  EXPECT_EQ(d.Quantile(0.30), 1);  // 0 + 1
  EXPECT_EQ(d.Quantile(0.56), 2);  // 2 + 1 = 3, clamped to 2
  EXPECT_EQ(Distribution::Constant(5).Clamped(0, 3).Median(), 3);
  EXPECT_EQ(Distribution::LognormalFromMedianP90(10, 20).Clamped(0, 12).Quantile(0.9), 12);
}

TEST(DistributionTest, SampleMeanApproachesTheMean) {
  // 100,000 exponential draws of mean 30: the standard error of the mean is
  // 30 / sqrt(1e5) = 0.095, so 0.5 is over five standard errors.
  Rng rng(7);
  const Distribution d = Distribution::Exponential(30);
  double sum = 0;
  constexpr int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) sum += d.Sample(rng);
  EXPECT_NEAR(sum / kDraws, 30, 0.5);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
