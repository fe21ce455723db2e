#include "kvbill/metrics/growth.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
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

// Three API tasks once fitted an exponent of -0.70: a growth exponent is
// fitted only over at least five distinct task sizes.
TEST(GrowthTest, GrowthNeedsFiveDistinctTaskSizes) {
  // Six tasks but four sizes (3 and 5 repeat): no fit, and the error says why.
  auto few = FitGrowth({1, 3, 3, 5, 5, 9}, {1, 2, 2, 3, 3, 4});
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.error().message().find("at least 5 distinct sizes; these tasks have 4"),
            std::string::npos)
      << few.error().message();
  // A task of zero cost does not count as a size.
  EXPECT_FALSE(FitGrowth({1, 2, 4, 8, 16}, {1, 4, 16, 64, 0}).ok());
  // Five sizes on y = x^2 exactly: the exponent is 2.
  auto five = FitGrowth({1, 2, 4, 8, 16}, {1, 4, 16, 64, 256});
  ASSERT_TRUE(five.ok());
  EXPECT_NEAR(five->exponent, 2.0, 1e-12);
  EXPECT_EQ(five->points, 5);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
