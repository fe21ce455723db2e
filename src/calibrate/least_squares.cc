#include "kvbill/calibrate/least_squares.h"

#include <cmath>
#include <limits>
#include <unsupported/Eigen/NonLinearOptimization>
#include <unsupported/Eigen/NumericalDiff>
#include <vector>

namespace kvbill {

Eigen::VectorXd NonNegativeLeastSquares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  // Lawson and Hanson, "Solving Least Squares Problems" (1974), ch. 23.
  const Eigen::Index n = a.cols();
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  std::vector<bool> passive(static_cast<std::size_t>(n), false);
  const double tol = 1e-12 * std::max(1.0, a.norm() * b.norm());
  auto solve_passive = [&](Eigen::VectorXd* z) {
    std::vector<Eigen::Index> cols;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (passive[static_cast<std::size_t>(j)]) cols.push_back(j);
    }
    Eigen::MatrixXd ap(a.rows(), static_cast<Eigen::Index>(cols.size()));
    for (std::size_t c = 0; c < cols.size(); ++c)
      ap.col(static_cast<Eigen::Index>(c)) = a.col(cols[c]);
    const Eigen::VectorXd s = ap.colPivHouseholderQr().solve(b);
    z->setZero(n);
    for (std::size_t c = 0; c < cols.size(); ++c) (*z)(cols[c]) = s(static_cast<Eigen::Index>(c));
  };
  for (int outer = 0; outer < 3 * n + 10; ++outer) {
    const Eigen::VectorXd w = a.transpose() * (b - a * x);
    Eigen::Index best = -1;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (!passive[static_cast<std::size_t>(j)] && w(j) > tol && (best < 0 || w(j) > w(best)))
        best = j;
    }
    if (best < 0) break;
    passive[static_cast<std::size_t>(best)] = true;
    for (int inner = 0; inner < 3 * n + 10; ++inner) {
      Eigen::VectorXd z;
      solve_passive(&z);
      bool feasible = true;
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<std::size_t>(j)] && z(j) <= 0) feasible = false;
      }
      if (feasible) {
        x = z;
        break;
      }
      double alpha = std::numeric_limits<double>::infinity();
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<std::size_t>(j)] && z(j) <= 0) {
          alpha = std::min(alpha, x(j) / (x(j) - z(j)));
        }
      }
      x += alpha * (z - x);
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<std::size_t>(j)] && x(j) <= tol) {
          passive[static_cast<std::size_t>(j)] = false;
          x(j) = 0;
        }
      }
    }
  }
  return x;
}

Eigen::VectorXd NonNegativeRelativeFit(const Eigen::MatrixXd& rows, const Eigen::VectorXd& y) {
  Eigen::MatrixXd weighted = rows;
  for (Eigen::Index i = 0; i < rows.rows(); ++i) weighted.row(i) /= y(i);
  // Scale columns to unit norm so that features of very different sizes
  // (seconds per item against counts) condition alike.
  Eigen::VectorXd scale(rows.cols());
  for (Eigen::Index j = 0; j < rows.cols(); ++j) {
    const double norm = weighted.col(j).norm();
    scale(j) = norm > 0 ? norm : 1.0;
    weighted.col(j) /= scale(j);
  }
  Eigen::VectorXd x = NonNegativeLeastSquares(weighted, Eigen::VectorXd::Ones(rows.rows()));
  for (Eigen::Index j = 0; j < rows.cols(); ++j) x(j) /= scale(j);
  return x;
}

namespace {

struct Functor {
  using Scalar = double;
  enum { InputsAtCompileTime = Eigen::Dynamic, ValuesAtCompileTime = Eigen::Dynamic };
  using InputType = Eigen::VectorXd;
  using ValueType = Eigen::VectorXd;
  using JacobianType = Eigen::MatrixXd;

  const std::function<void(const Eigen::VectorXd&, Eigen::VectorXd*)>* residuals = nullptr;
  int n_inputs = 0;
  int n_values = 0;
  mutable int calls = 0;

  int inputs() const { return n_inputs; }
  int values() const { return n_values; }
  int operator()(const Eigen::VectorXd& x, Eigen::VectorXd& fvec) const {
    ++calls;
    (*residuals)(x, &fvec);
    for (Eigen::Index i = 0; i < fvec.size(); ++i) {
      if (!std::isfinite(fvec(i))) fvec(i) = 1e6;  // steer away from invalid regions
    }
    return 0;
  }
};

}  // namespace

LmResult LevenbergMarquardt(
    const std::function<void(const Eigen::VectorXd&, Eigen::VectorXd*)>& residuals,
    int residual_count, const Eigen::VectorXd& x0, int max_evaluations) {
  Functor f;
  f.residuals = &residuals;
  f.n_inputs = static_cast<int>(x0.size());
  f.n_values = residual_count;
  Eigen::NumericalDiff<Functor> diff(f);
  Eigen::LevenbergMarquardt<Eigen::NumericalDiff<Functor>, double> lm(diff);
  lm.parameters.maxfev = max_evaluations;
  Eigen::VectorXd x = x0;
  lm.minimize(x);
  LmResult result;
  Eigen::VectorXd r(residual_count);
  residuals(x, &r);
  result.x = x;
  result.sum_squares = r.squaredNorm();
  result.evaluations = static_cast<int>(lm.nfev);
  return result;
}

LmResult RobustLevenbergMarquardt(
    const std::function<void(const Eigen::VectorXd&, Eigen::VectorXd*)>& residuals,
    int residual_count, const Eigen::VectorXd& x0, double step, int max_evaluations,
    const std::function<void(int, double)>& progress) {
  LmResult out;
  Eigen::VectorXd x = x0, r(residual_count);
  residuals(x, &r);
  out.evaluations = 1;
  double cost = r.squaredNorm();
  double lambda = 1e-2;
  const Eigen::Index n = x.size();
  Eigen::MatrixXd jac(residual_count, n);
  while (out.evaluations + n + 1 <= max_evaluations) {
    for (Eigen::Index j = 0; j < n; ++j) {
      Eigen::VectorXd xj = x, rj(residual_count);
      xj(j) += step;
      residuals(xj, &rj);
      jac.col(j) = (rj - r) / step;
    }
    out.evaluations += static_cast<int>(n);
    const Eigen::MatrixXd jtj = jac.transpose() * jac;
    const Eigen::VectorXd jtr = jac.transpose() * r;
    bool improved = false;
    for (int tries = 0; tries < 8 && out.evaluations < max_evaluations; ++tries) {
      Eigen::MatrixXd a = jtj;
      for (Eigen::Index j = 0; j < n; ++j) a(j, j) += lambda * std::max(jtj(j, j), 1e-9);
      const Eigen::VectorXd delta = a.ldlt().solve(-jtr);
      Eigen::VectorXd x_new = x + delta, r_new(residual_count);
      residuals(x_new, &r_new);
      ++out.evaluations;
      const double new_cost = r_new.squaredNorm();
      if (new_cost < cost) {
        const double gain = (cost - new_cost) / std::max(cost, 1e-300);
        x = x_new;
        r = r_new;
        cost = new_cost;
        lambda = std::max(lambda / 3, 1e-6);
        improved = gain > 1e-6;
        if (progress) progress(out.evaluations, cost);
        break;
      }
      lambda *= 4;
    }
    if (!improved) break;
  }
  out.x = x;
  out.sum_squares = cost;
  return out;
}

LmResult CoordinateGridSearch(
    const std::function<void(const Eigen::VectorXd&, Eigen::VectorXd*)>& residuals,
    int residual_count, const Eigen::VectorXd& x0, const std::vector<double>& grid, int rounds,
    const std::function<void(int, double)>& progress) {
  LmResult out;
  Eigen::VectorXd x = x0, r(residual_count);
  residuals(x, &r);
  out.evaluations = 1;
  double cost = r.squaredNorm();
  for (int round = 0; round < rounds; ++round) {
    bool moved = false;
    for (Eigen::Index j = 0; j < x.size(); ++j) {
      for (const double v : grid) {
        if (v == x(j)) continue;
        Eigen::VectorXd xj = x;
        xj(j) = v;
        residuals(xj, &r);
        ++out.evaluations;
        const double c = r.squaredNorm();
        if (c < cost) {
          cost = c;
          x = xj;
          moved = true;
          if (progress) progress(out.evaluations, cost);
        }
      }
    }
    if (!moved) break;
  }
  out.x = x;
  out.sum_squares = cost;
  return out;
}

}  // namespace kvbill
