#include "kvbill/util/random.h"

#include <algorithm>
#include <cmath>

namespace kvbill {
namespace {

// Φ⁻¹ by P. J. Acklam's rational approximations (relative error < 1.15e-9):
// a central rational function in q = p - 0.5 and tail ones in
// sqrt(-2 ln p), switching at p = 0.02425.
constexpr double kA[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                         1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
constexpr double kB[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                         6.680131188771972e+01, -1.328068155288572e+01};
constexpr double kC[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                         -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
constexpr double kD[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                         3.754408661907416e+00};
constexpr double kTailP = 0.02425;

// Lower-tail value for p < kTailP; the upper tail is its mirror image.
double LowerTail(double p) {
  const double q = std::sqrt(-2 * std::log(p));
  return (((((kC[0] * q + kC[1]) * q + kC[2]) * q + kC[3]) * q + kC[4]) * q + kC[5]) /
         ((((kD[0] * q + kD[1]) * q + kD[2]) * q + kD[3]) * q + 1);
}

}  // namespace

double Rng::NextOpenUnit() {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
  return (static_cast<double>(NextBits() >> 11) + 0.5) * kTwoToMinus53;
}

double NormalQuantile(double p) {
  if (p < kTailP) return LowerTail(p);
  if (p > 1 - kTailP) return -LowerTail(1 - p);
  const double q = p - 0.5;
  const double r = q * q;
  return (((((kA[0] * r + kA[1]) * r + kA[2]) * r + kA[3]) * r + kA[4]) * r + kA[5]) * q /
         (((((kB[0] * r + kB[1]) * r + kB[2]) * r + kB[3]) * r + kB[4]) * r + 1);
}

Distribution Distribution::Constant(double value) { return {Kind::kConstant, value, 0}; }

Distribution Distribution::Lognormal(double median, double sigma) {
  return {Kind::kLognormal, std::log(median), sigma};
}

Distribution Distribution::LognormalFromMedianP90(double median, double p90) {
  return Lognormal(median, std::log(p90 / median) / kNormalZ90);
}

Distribution Distribution::Exponential(double mean) { return {Kind::kExponential, mean, 0}; }

Distribution Distribution::Geometric(double mean) {
  // p = 1 / (mean + 1), so ln(1 - p) = ln(mean / (mean + 1)).
  return {Kind::kGeometric, std::log(mean / (mean + 1)), 0};
}

Distribution Distribution::Shifted(double offset) const {
  Distribution copy = *this;
  copy.offset_ = offset;
  return copy;
}

Distribution Distribution::Clamped(double min, double max) const {
  Distribution copy = *this;
  copy.min_ = min;
  copy.max_ = max;
  return copy;
}

double Distribution::Quantile(double u) const {
  double value = 0;
  switch (kind_) {
    case Kind::kConstant:
      value = a_;
      break;
    case Kind::kLognormal:
      value = std::exp(a_ + b_ * NormalQuantile(u));
      break;
    case Kind::kExponential:
      value = -a_ * std::log1p(-u);
      break;
    case Kind::kGeometric:
      value = std::floor(std::log1p(-u) / a_);
      break;
  }
  return std::clamp(value + offset_, min_, max_);
}

}  // namespace kvbill
