#include "kvbill/report/chart_axis.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <string_view>

#include "kvbill/util/units.h"
#include "report/decimal_text.h"

namespace kvbill {
namespace {

double ToScale(AxisScale scale, double value) {
  return scale == AxisScale::kLog ? std::log10(value) : value;
}

double FromScale(AxisScale scale, double value) {
  return scale == AxisScale::kLog ? std::pow(10.0, value) : value;
}

// `value` with the fewest decimals (up to 6) that keep it within 1e-9.
std::string FewestDecimals(double value) {
  for (int decimals = 0; decimals < 6; ++decimals) {
    const std::string s = FixedText(value, decimals);
    double back = 0.0;
    std::from_chars(s.data(), s.data() + s.size(), back);
    if (std::fabs(back - value) <= 1e-9 * std::max(1.0, std::fabs(value))) return s;
  }
  return FixedText(value, 6);
}

struct SiUnit {
  double divisor;
  std::string_view suffix;
};

SiUnit SiUnitFor(double magnitude) {
  if (magnitude >= 1e9) return {1e9, "G"};
  if (magnitude >= 1e6) return {1e6, "M"};
  if (magnitude >= 1e4) return {1e3, "k"};
  return {1.0, ""};
}

std::vector<Tick> LinearTicks(const Axis& axis) {
  const double raw_step = (axis.max - axis.min) / 6.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw_step)));
  const double norm = raw_step / magnitude;
  const double step = (norm < 1.5 ? 1.0 : norm < 3.5 ? 2.0 : norm < 7.5 ? 5.0 : 10.0) * magnitude;
  const double first = std::ceil(axis.min / step - 1e-9);
  const double last = std::floor(axis.max / step + 1e-9);
  // One unit and one number of decimals for the whole axis: 0, 0.2, 0.4 or
  // 0, 20k, 40k, never a mix.
  const SiUnit unit = SiUnitFor(std::max(std::fabs(axis.min), std::fabs(axis.max)));
  const int decimals =
      std::max(0, static_cast<int>(std::ceil(-std::log10(step / unit.divisor) - 1e-9)));
  std::vector<Tick> ticks;
  for (double i = first; i <= last; i += 1.0) {
    const double value = i * step;
    const std::string suffix = value == 0.0 ? "" : std::string(unit.suffix);
    ticks.push_back({value, FixedText(value / unit.divisor, decimals) + suffix});
  }
  return ticks;
}

std::vector<Tick> LogTicks(const Axis& axis) {
  const double lo = std::log10(axis.min);
  const double hi = std::log10(axis.max);
  const bool fine = hi - lo <= 3.0 + 1e-9;
  const double first = std::floor(lo);
  const double last = std::ceil(hi);
  const double every = std::max(1.0, std::ceil((last - first + 1.0) / 10.0));
  std::vector<Tick> ticks;
  for (double k = first; k <= last; k += every) {
    const double power = std::pow(10.0, k);
    for (double mantissa : {1.0, 2.0, 5.0}) {
      if (!fine && mantissa != 1.0) continue;
      const double value = mantissa * power;
      if (!IsWithinAxis(axis, value)) continue;
      const SiUnit unit = SiUnitFor(value);
      ticks.push_back({value, FewestDecimals(value / unit.divisor) + std::string(unit.suffix)});
    }
  }
  return ticks;
}

}  // namespace

Status ValidateAxis(const Axis& axis) {
  if (!std::isfinite(axis.min) || !std::isfinite(axis.max)) {
    return Error("min and max must be finite, got " + ShortestText(axis.min) + " and " +
                 ShortestText(axis.max));
  }
  if (!(axis.min < axis.max)) {
    return Error("min " + ShortestText(axis.min) + " must be below max " + ShortestText(axis.max));
  }
  if (axis.scale == AxisScale::kLog && axis.min <= 0.0) {
    return Error("log scale needs min > 0, got " + ShortestText(axis.min));
  }
  for (std::size_t i = 0; i < axis.ticks.size(); ++i) {
    if (!std::isfinite(axis.ticks[i].value)) {
      return Error("tick " + std::to_string(i) + " (\"" + axis.ticks[i].label +
                   "\") is not finite");
    }
  }
  return OkStatus();
}

bool IsPlottable(AxisScale scale, double value) {
  return std::isfinite(value) && (scale == AxisScale::kLinear || value > 0.0);
}

bool IsWithinAxis(const Axis& axis, double value) {
  if (!IsPlottable(axis.scale, value)) return false;
  const double lo = ToScale(axis.scale, axis.min);
  const double hi = ToScale(axis.scale, axis.max);
  const double slack = 1e-9 * (hi - lo);
  const double s = ToScale(axis.scale, value);
  return s >= lo - slack && s <= hi + slack;
}

double AxisToPixel(const Axis& axis, double value, double min_px, double max_px) {
  const double lo = ToScale(axis.scale, axis.min);
  const double hi = ToScale(axis.scale, axis.max);
  const double t = (ToScale(axis.scale, value) - lo) / (hi - lo);
  return min_px + t * (max_px - min_px);
}

std::vector<Tick> AutomaticTicks(const Axis& axis) {
  return axis.scale == AxisScale::kLinear ? LinearTicks(axis) : LogTicks(axis);
}

std::vector<Tick> PowerOfTwoTokenTicks(double min_tokens, double max_tokens) {
  std::vector<double> powers;
  for (int e = 0; e < 62; ++e) {
    const double value = std::ldexp(1.0, e);
    if (value >= min_tokens && value <= max_tokens) powers.push_back(value);
  }
  const std::size_t every = powers.size() > 12 ? 2 : 1;
  std::vector<Tick> ticks;
  for (std::size_t i = 0; i < powers.size(); i += every) {
    ticks.push_back({powers[i], FormatTokenCount(static_cast<Tokens>(powers[i]))});
  }
  return ticks;
}

std::optional<double> CrossingX(const std::vector<Point>& points, double y, AxisScale x_scale,
                                AxisScale y_scale) {
  if (!IsPlottable(y_scale, y)) return std::nullopt;
  const double target = ToScale(y_scale, y);
  for (std::size_t i = 1; i < points.size(); ++i) {
    const Point& p = points[i - 1];
    const Point& q = points[i];
    if (!IsPlottable(x_scale, p.x) || !IsPlottable(y_scale, p.y) || !IsPlottable(x_scale, q.x) ||
        !IsPlottable(y_scale, q.y)) {
      continue;
    }
    const double y0 = ToScale(y_scale, p.y);
    const double y1 = ToScale(y_scale, q.y);
    if (!(y0 < target && target <= y1)) continue;
    const double t = (target - y0) / (y1 - y0);
    const double x0 = ToScale(x_scale, p.x);
    const double x1 = ToScale(x_scale, q.x);
    return FromScale(x_scale, x0 + t * (x1 - x0));
  }
  return std::nullopt;
}

}  // namespace kvbill
