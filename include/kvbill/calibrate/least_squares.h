// Least-squares fits used by `kvbill calibrate`: non-negative linear least
// squares (Lawson-Hanson) and Levenberg-Marquardt on a residual function
// (Eigen's MINPACK port, with forward-difference Jacobians).
//
// Both are deterministic: the same inputs give the same result bit for bit.
#ifndef KVBILL_CALIBRATE_LEAST_SQUARES_H_
#define KVBILL_CALIBRATE_LEAST_SQUARES_H_

#include <Eigen/Dense>
#include <functional>
#include <vector>

namespace kvbill {

// argmin over x >= 0 of |A x - b|^2. A has at least one column.
Eigen::VectorXd NonNegativeLeastSquares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b);

// Fits x >= 0 to minimise sum_i ((rows_i . x) / y_i - 1)^2: relative errors,
// so small and large kernel times weigh alike. Preconditions: y_i > 0.
Eigen::VectorXd NonNegativeRelativeFit(const Eigen::MatrixXd& rows, const Eigen::VectorXd& y);

struct LmResult {
  Eigen::VectorXd x;
  double sum_squares = 0;  // at x
  int evaluations = 0;
};

// Minimises |r(x)|^2 from x0 with Levenberg-Marquardt. r fills its output
// (residual_count entries) for a parameter vector; it must be finite near
// the solution. max_evaluations bounds the residual evaluations.
LmResult LevenbergMarquardt(
    const std::function<void(const Eigen::VectorXd&, Eigen::VectorXd*)>& residuals,
    int residual_count, const Eigen::VectorXd& x0, int max_evaluations = 2000);

// Levenberg-Marquardt for residuals that are only piecewise smooth (a
// simulation's outputs jump where the order of events changes): the
// Jacobian is taken by forward differences with a fixed step `step` in x, so
// that it sees the trend rather than the jumps. Each iteration costs
// x.size() + 1 to a few more evaluations. Stops after max_evaluations or
// when a step improves the sum of squares by less than 1e-6 relative.
LmResult RobustLevenbergMarquardt(
    const std::function<void(const Eigen::VectorXd&, Eigen::VectorXd*)>& residuals,
    int residual_count, const Eigen::VectorXd& x0, double step, int max_evaluations,
    const std::function<void(int, double)>& progress = {});

// Coordinate search on a grid: for each parameter in turn, tries every
// value of `grid` for it (the others held) and keeps the best sum of
// squares; `rounds` passes over all parameters. Finds basins a gradient
// cannot see from x0: a parameter started on the flat end of its range, or
// residuals that are steps rather than slopes. Costs rounds · x.size() ·
// grid.size() evaluations at most; ties keep the earlier value
// (deterministic).
LmResult CoordinateGridSearch(
    const std::function<void(const Eigen::VectorXd&, Eigen::VectorXd*)>& residuals,
    int residual_count, const Eigen::VectorXd& x0, const std::vector<double>& grid, int rounds,
    const std::function<void(int, double)>& progress = {});

}  // namespace kvbill

#endif  // KVBILL_CALIBRATE_LEAST_SQUARES_H_
