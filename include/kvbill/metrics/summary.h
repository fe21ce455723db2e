// Summary: count, mean, p50, p90, p99, max and sum of a set of values.
//
// Percentiles are exact and deterministic, by the nearest-rank rule: pN is
// the smallest recorded value such that at least N% of the values are less
// than or equal to it, i.e. sorted[ceil(N/100 × count) - 1]. It is always
// one of the recorded values (no interpolation). For that the builder keeps
// every value (8 bytes each). Count, mean, max and sum come from
// Boost.Accumulators inside summary.cc. An empty summary is all zeros.
#ifndef KVBILL_METRICS_SUMMARY_H_
#define KVBILL_METRICS_SUMMARY_H_

#include <cstdint>
#include <memory>
#include <vector>

namespace kvbill {

struct Summary {
  std::int64_t count = 0;
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
  double sum = 0;

  bool operator==(const Summary&) const = default;
};

class SummaryBuilder {
 public:
  SummaryBuilder();
  ~SummaryBuilder();
  SummaryBuilder(SummaryBuilder&&) noexcept;
  SummaryBuilder& operator=(SummaryBuilder&&) noexcept;

  // Records one value. Precondition: finite.
  void Add(double value);

  // The summary of every value added so far. Reorders the stored values
  // (selects the percentiles' ranks); Add and Build may alternate.
  Summary Build();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The nearest rank (1-based) of the p-th percentile among `count` values,
// 0 < p <= 100, count > 0.
std::int64_t NearestRank(std::int64_t count, double p);

// The nearest-rank percentile of `sorted` (ascending, non-empty), 0 < p <= 100.
double NearestRankPercentile(const double* sorted, std::int64_t count, double p);

// The median as numpy and benchmark tools take it: the middle value, or the
// two middle ones averaged; 0 when empty.
double Median(std::vector<double> values);

}  // namespace kvbill

#endif  // KVBILL_METRICS_SUMMARY_H_
