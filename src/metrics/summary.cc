#include "kvbill/metrics/summary.h"

#include <algorithm>
#include <boost/accumulators/accumulators.hpp>
#include <boost/accumulators/statistics/count.hpp>
#include <boost/accumulators/statistics/max.hpp>
#include <boost/accumulators/statistics/mean.hpp>
#include <boost/accumulators/statistics/stats.hpp>
#include <boost/accumulators/statistics/sum.hpp>
#include <cmath>
#include <vector>

namespace kvbill {

namespace acc = boost::accumulators;

struct SummaryBuilder::Impl {
  acc::accumulator_set<double,
                       acc::stats<acc::tag::count, acc::tag::mean, acc::tag::max, acc::tag::sum>>
      moments;
  std::vector<double> values;
};

SummaryBuilder::SummaryBuilder() : impl_(std::make_unique<Impl>()) {}
SummaryBuilder::~SummaryBuilder() = default;
SummaryBuilder::SummaryBuilder(SummaryBuilder&&) noexcept = default;
SummaryBuilder& SummaryBuilder::operator=(SummaryBuilder&&) noexcept = default;

void SummaryBuilder::Add(double value) {
  impl_->moments(value);
  impl_->values.push_back(value);
}

Summary SummaryBuilder::Build() {
  Summary s;
  s.count = static_cast<std::int64_t>(acc::count(impl_->moments));
  if (s.count == 0) return s;
  s.mean = acc::mean(impl_->moments);
  s.max = acc::max(impl_->moments);
  s.sum = acc::sum(impl_->moments);
  // Three order statistics need no full sort: select the 99th's rank, then
  // the 90th's among the values below it, then the 50th's (the same values
  // a sort gives, in linear time; a sweep builds these for every point).
  std::vector<double>& v = impl_->values;
  const std::int64_t r99 = NearestRank(s.count, 99), r90 = NearestRank(s.count, 90),
                     r50 = NearestRank(s.count, 50);
  std::nth_element(v.begin(), v.begin() + (r99 - 1), v.end());
  std::nth_element(v.begin(), v.begin() + (r90 - 1), v.begin() + r99);
  std::nth_element(v.begin(), v.begin() + (r50 - 1), v.begin() + r90);
  s.p99 = v[static_cast<std::size_t>(r99 - 1)];
  s.p90 = v[static_cast<std::size_t>(r90 - 1)];
  s.p50 = v[static_cast<std::size_t>(r50 - 1)];
  return s;
}

std::int64_t NearestRank(std::int64_t count, double p) {
  // ceil(p/100 × count) computed in integers where p is whole, to avoid
  // 0.9 × 10 = 9.000000000000002 rounding up to rank 10.
  std::int64_t rank = 0;
  if (p == std::floor(p)) {
    const auto whole = static_cast<std::int64_t>(p);
    rank = (whole * count + 99) / 100;
  } else {
    rank = static_cast<std::int64_t>(std::ceil(p / 100.0 * static_cast<double>(count)));
  }
  return std::clamp<std::int64_t>(rank, 1, count);
}

double NearestRankPercentile(const double* sorted, std::int64_t count, double p) {
  return sorted[NearestRank(count, p) - 1];
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace kvbill
