// Growth exponents: how a cost grows with the length of an agent loop.
// A log-log least-squares fit of y = a x^b over points with x, y > 0 (Eigen).
#ifndef KVBILL_METRICS_GROWTH_H_
#define KVBILL_METRICS_GROWTH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kvbill/metrics/task_metrics.h"
#include "kvbill/util/result.h"

namespace kvbill {

struct PowerLawFit {
  double exponent = 0;     // b
  double coefficient = 0;  // a
  double r_squared = 0;    // of the fit in log-log space
  int points = 0;
};

// Fits y = a x^b by least squares on (ln x, ln y). Points with x <= 0 or
// y <= 0 are skipped. Error when fewer than two usable points remain or all
// x are equal.
Result<PowerLawFit> FitPowerLaw(const std::vector<double>& x, const std::vector<double>& y);

// The fewest distinct task sizes a growth exponent is fitted on: with fewer,
// a log-log line through a handful of tasks says more about those tasks than
// about growth (three tasks of an API run once fitted -0.70).
inline constexpr int kGrowthMinSizes = 5;

// How cost per task grows with task size (requests per task): FitPowerLaw
// over tasks with at least kGrowthMinSizes distinct sizes; otherwise an
// error saying how many there are.
Result<PowerLawFit> FitGrowth(const std::vector<double>& sizes, const std::vector<double>& costs);

// FitGrowth over a run's tasks served whole: a task cut short at the
// model's context (TaskMetrics::unserved_requests) costs unfinished work and
// is left out, counted. compare and the report fit the same points.
struct TaskGrowth {
  std::vector<double> requests, costs;  // the tasks fitted, in input order
  std::int64_t cut = 0;                 // tasks left out
  Result<PowerLawFit> fit = Error("not fitted");
  // "; 2 tasks cut short at the model's context left out", or "" when none.
  std::string CutText() const;
};
TaskGrowth FitTaskGrowth(const std::vector<TaskMetrics>& tasks);

}  // namespace kvbill

#endif  // KVBILL_METRICS_GROWTH_H_
