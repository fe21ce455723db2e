#include "kvbill/metrics/growth.h"

#include <Eigen/Dense>
#include <cmath>
#include <set>
#include <string>

#include "kvbill/util/units.h"

namespace kvbill {

Result<PowerLawFit> FitPowerLaw(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> lx, ly;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (x[i] > 0 && y[i] > 0 && std::isfinite(x[i]) && std::isfinite(y[i])) {
      lx.push_back(std::log(x[i]));
      ly.push_back(std::log(y[i]));
    }
  }
  const Eigen::Index n = static_cast<Eigen::Index>(lx.size());
  if (n < 2) return Error("a power-law fit needs at least two positive points");
  Eigen::MatrixXd design(n, 2);
  Eigen::VectorXd target(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    design(i, 0) = 1.0;
    design(i, 1) = lx[static_cast<std::size_t>(i)];
    target(i) = ly[static_cast<std::size_t>(i)];
  }
  if ((design.col(1).array() - design(0, 1)).abs().maxCoeff() == 0) {
    return Error("a power-law fit needs at least two distinct x values");
  }
  const Eigen::Vector2d beta = design.colPivHouseholderQr().solve(target);
  const Eigen::VectorXd residual = target - design * beta;
  const double mean = target.mean();
  const double total = (target.array() - mean).square().sum();
  PowerLawFit fit;
  fit.coefficient = std::exp(beta(0));
  fit.exponent = beta(1);
  fit.r_squared = total > 0 ? 1.0 - residual.squaredNorm() / total : 1.0;
  fit.points = static_cast<int>(n);
  return fit;
}

Result<PowerLawFit> FitGrowth(const std::vector<double>& sizes, const std::vector<double>& costs) {
  std::set<double> distinct;
  for (std::size_t i = 0; i < sizes.size() && i < costs.size(); ++i) {
    if (sizes[i] > 0 && costs[i] > 0 && std::isfinite(sizes[i]) && std::isfinite(costs[i])) {
      distinct.insert(sizes[i]);
    }
  }
  if (static_cast<int>(distinct.size()) < kGrowthMinSizes) {
    return Error("a growth exponent needs tasks of at least " + std::to_string(kGrowthMinSizes) +
                 " distinct sizes; these tasks have " + std::to_string(distinct.size()));
  }
  return FitPowerLaw(sizes, costs);
}

std::string TaskGrowth::CutText() const {
  if (cut == 0) return "";
  return "; " + FormatWithSeparators(cut) + (cut == 1 ? " task" : " tasks") +
         " cut short at the model's context left out";
}

TaskGrowth FitTaskGrowth(const std::vector<TaskMetrics>& tasks) {
  TaskGrowth g;
  for (const TaskMetrics& t : tasks) {
    if (t.unserved_requests > 0) {
      ++g.cut;
      continue;
    }
    g.requests.push_back(t.requests);
    g.costs.push_back(static_cast<double>(t.cost_usd));
  }
  g.fit = FitGrowth(g.requests, g.costs);
  return g;
}

}  // namespace kvbill
