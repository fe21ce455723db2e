#include "kvbill/metrics/growth.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace {

TEST(GrowthTest, RecoversAnExactPowerLaw) {
  // y = 3 x^2 at x = 1, 2, 4, 8: ln y = ln 3 + 2 ln x exactly.
  auto fit = FitPowerLaw({1, 2, 4, 8}, {3, 12, 48, 192});
  ASSERT_TRUE(fit.ok());
  EXPECT_NEAR(fit->exponent, 2.0, 1e-12);
  EXPECT_NEAR(fit->coefficient, 3.0, 1e-12);
  EXPECT_NEAR(fit->r_squared, 1.0, 1e-12);
}

TEST(GrowthTest, SkipsNonPositivePoints) {
  auto fit = FitPowerLaw({0, 1, 10, -1}, {5, 2, 20, 3});  // only (1,2), (10,20) count
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit->points, 2);
  EXPECT_NEAR(fit->exponent, 1.0, 1e-12);
}

TEST(GrowthTest, NeedsTwoDistinctPoints) {
  EXPECT_FALSE(FitPowerLaw({1}, {1}).ok());
  EXPECT_FALSE(FitPowerLaw({2, 2}, {1, 3}).ok());
}

}  // namespace
}  // namespace kvbill
