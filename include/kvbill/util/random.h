// Seeded randomness whose output is the same on every standard library.
//
// std::mt19937_64 is specified bit for bit by the standard, but the std::
// distributions are not (libstdc++, libc++ and MSVC turn the same engine
// output into different numbers). So kvbill draws a uniform double from the
// raw 64-bit output itself and turns it into other distributions by their
// inverse CDF, with code of its own. One uniform draw makes one sample, in a
// fixed order, so a seed fixes the whole stream.
//
// The inverse CDFs use std::log and std::exp, which libraries may round
// differently in the last bit; callers that need byte-identical files round
// samples to whole tokens or milliseconds, which absorbs that (a tie at
// exactly .5 is the only way through, and it does not happen in practice).
//
// No global state: every Rng is an explicit value seeded by its owner.
#ifndef KVBILL_UTIL_RANDOM_H_
#define KVBILL_UTIL_RANDOM_H_

#include <cstdint>
#include <limits>
#include <random>

namespace kvbill {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  // The engine's next raw 64-bit output.
  std::uint64_t NextBits() { return engine_(); }

  // Uniform on the open interval (0, 1): (top 53 bits + 0.5) / 2^53, so
  // neither 0 nor 1 is ever returned and log(u) is always finite.
  double NextOpenUnit();

 private:
  std::mt19937_64 engine_;
};

// The standard normal quantile Φ⁻¹(p), 0 < p < 1; relative error below 1e-9.
double NormalQuantile(double p);

// Φ⁻¹(0.9): how many standard deviations the 90th percentile lies above the median.
inline constexpr double kNormalZ90 = 1.2815515655446004;

// A distribution of real values sampled by inverse CDF from one uniform draw,
// then shifted and clamped to [min, max]. A value type: build it with a factory below.
class Distribution {
 public:
  // Always `value`.
  static Distribution Constant(double value);
  // exp(N(ln median, sigma²)). Precondition: median > 0, sigma >= 0.
  static Distribution Lognormal(double median, double sigma);
  // The lognormal whose median and 90th percentile are the given values:
  // sigma = ln(p90 / median) / Φ⁻¹(0.9). Precondition: 0 < median <= p90.
  static Distribution LognormalFromMedianP90(double median, double p90);
  // Exponential with the given mean (> 0): -mean × ln(1 - u).
  static Distribution Exponential(double mean);
  // Failures before the first success on {0, 1, 2, ...}, success
  // probability 1 / (mean + 1), so the mean is `mean` (> 0):
  // floor(ln(1 - u) / ln(1 - p)).
  static Distribution Geometric(double mean);

  // A copy whose samples are `offset` plus this one's (e.g. 1 + a geometric
  // count), applied before clamping.
  Distribution Shifted(double offset) const;
  // A copy clamped to [min, max] (min <= max).
  Distribution Clamped(double min, double max) const;

  // The inverse CDF at u, 0 < u < 1, clamped: pure, for tests and docs.
  double Quantile(double u) const;
  double Median() const { return Quantile(0.5); }

  // One sample: Quantile of one uniform draw.
  double Sample(Rng& rng) const { return Quantile(rng.NextOpenUnit()); }

 private:
  enum class Kind { kConstant, kLognormal, kExponential, kGeometric };

  Distribution(Kind kind, double a, double b) : kind_(kind), a_(a), b_(b) {}

  Kind kind_;
  double a_;  // constant value, lognormal ln(median), exponential mean, geometric ln(1 - p)
  double b_;  // lognormal sigma; unused otherwise
  double offset_ = 0;
  double min_ = -std::numeric_limits<double>::infinity();
  double max_ = std::numeric_limits<double>::infinity();
};

}  // namespace kvbill

#endif  // KVBILL_UTIL_RANDOM_H_
