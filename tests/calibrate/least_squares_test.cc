#include "kvbill/calibrate/least_squares.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(LeastSquaresTest, NonNegativeLeastSquaresClampsANegativeSolution) {
  // Unconstrained, y = 2 a - 1 b fits exactly; with b >= 0 the best is b = 0
  // and a the least-squares fit of the first column alone:
  // a = (1x3 + 2x5 + 3x7) / (1 + 4 + 9) = 34 / 14.
  Eigen::MatrixXd a(3, 2);
  a << 1, -1, 2, -1, 3, -1;
  Eigen::VectorXd b(3);
  b << 3, 5, 7;
  const Eigen::VectorXd x = NonNegativeLeastSquares(a, b);
  EXPECT_NEAR(x(0), 34.0 / 14.0, 1e-12);
  EXPECT_NEAR(x(1), 0.0, 1e-12);
}

TEST(LeastSquaresTest, RelativeFitRecoversExactCoefficients) {
  // y = 3e-6 + 2 f1 + 0.5 f2 exactly: the fit must return those.
  Eigen::MatrixXd rows(5, 3);
  Eigen::VectorXd y(5);
  const double f1[] = {1e-6, 3e-6, 1e-5, 4e-5, 1e-4};
  const double f2[] = {2e-5, 1e-6, 7e-6, 3e-5, 5e-4};
  for (int i = 0; i < 5; ++i) {
    rows(i, 0) = 1;
    rows(i, 1) = f1[i];
    rows(i, 2) = f2[i];
    y(i) = 3e-6 + 2 * f1[i] + 0.5 * f2[i];
  }
  const Eigen::VectorXd x = NonNegativeRelativeFit(rows, y);
  EXPECT_NEAR(x(0), 3e-6, 1e-12);
  EXPECT_NEAR(x(1), 2, 1e-6);
  EXPECT_NEAR(x(2), 0.5, 1e-6);
}

TEST(LeastSquaresTest, LevenbergMarquardtFitsAnExponentialDecay) {
  // y = 5 exp(-0.3 t) on t = 0..9, fitted from (1, 1).
  auto r = [](const Eigen::VectorXd& p, Eigen::VectorXd* out) {
    out->resize(10);
    for (int t = 0; t < 10; ++t) (*out)(t) = p(0) * std::exp(-p(1) * t) - 5 * std::exp(-0.3 * t);
  };
  Eigen::VectorXd x0(2);
  x0 << 1, 1;
  const LmResult fit = LevenbergMarquardt(r, 10, x0);
  EXPECT_NEAR(fit.x(0), 5, 1e-6);
  EXPECT_NEAR(fit.x(1), 0.3, 1e-6);
  const LmResult robust = RobustLevenbergMarquardt(r, 10, x0, 1e-4, 500);
  EXPECT_NEAR(robust.x(0), 5, 1e-3);
  EXPECT_NEAR(robust.x(1), 0.3, 1e-3);
}

TEST(LeastSquaresTest, RobustFitSeesTheTrendThroughSmallSteps) {
  // A staircase (floor to 0.01) over a parabola: a derivative from a tiny
  // step sees flat treads; a 0.1 step sees the slope and finds the minimum
  // near 2.
  auto r = [](const Eigen::VectorXd& p, Eigen::VectorXd* out) {
    out->resize(1);
    (*out)(0) = std::floor((p(0) - 2) * 100) / 100;
  };
  Eigen::VectorXd x0(1);
  x0 << 0;
  const LmResult fit = RobustLevenbergMarquardt(r, 1, x0, 0.1, 200);
  EXPECT_NEAR(fit.x(0), 2, 0.02);
}

TEST(LeastSquaresTest, GridSearchLeavesAFlatStartThatAGradientCannot) {
  // The residual is flat (1) for x0 < 3 and 0.1 beyond, wherever x1 is; x1
  // has its own minimum at 1. From (0, 0) a forward difference of 0.1 sees
  // no slope in x0; the grid finds x0 = 4 and x1 = 1.
  auto r = [](const Eigen::VectorXd& p, Eigen::VectorXd* out) {
    out->resize(2);
    (*out)(0) = p(0) > 3 ? 0.1 : 1.0;
    (*out)(1) = p(1) - 1;
  };
  Eigen::VectorXd x0(2);
  x0 << 0, 0;
  const LmResult lm = RobustLevenbergMarquardt(r, 2, x0, 0.1, 200);
  EXPECT_LT(lm.x(0), 3);  // stuck on the flat start
  const LmResult grid = CoordinateGridSearch(r, 2, x0, {-4, -1, 1, 4}, 2);
  EXPECT_DOUBLE_EQ(grid.x(0), 4);
  EXPECT_DOUBLE_EQ(grid.x(1), 1);
  // 0.1^2 + 0^2 at (4, 1).
  EXPECT_NEAR(grid.sum_squares, 0.01, 1e-12);
  // Round one: 1 + 2 x 4 evaluations (the start is not on the grid), round
  // two moves nothing and stops after 2 x 3 (the current values skipped).
  EXPECT_EQ(grid.evaluations, 1 + 8 + 6);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
