// Chart axes: a linear or log10 scale over [min, max], the mapping of values
// to pixels, tick marks, and where a polyline crosses a level. Pure functions
// used by the SVG chart (svg_chart.h) and by code that builds charts.
//
// A value v maps to the fraction t = (S(v) - S(min)) / (S(max) - S(min)) of
// the axis' extent, where S is the identity on a linear axis and log10 on a
// log axis. An axis is valid when min and max are finite, min < max, and
// min > 0 on a log axis (ValidateAxis). Values that are non-finite, or
// non-positive on a log axis, are not plottable: callers skip them.
#ifndef KVBILL_REPORT_CHART_AXIS_H_
#define KVBILL_REPORT_CHART_AXIS_H_

#include <optional>
#include <string>
#include <vector>

#include "kvbill/util/result.h"

namespace kvbill {

enum class AxisScale { kLinear, kLog };

// A data point in axis units (not pixels).
struct Point {
  double x = 0.0;
  double y = 0.0;
};

// A tick mark at `value` (axis units) with a grid line across the plot.
struct Tick {
  double value = 0.0;
  std::string label;
};

struct Axis {
  std::string label;  // e.g. "context length (tokens)"
  AxisScale scale = AxisScale::kLinear;
  double min = 0.0;  // axis units; > 0 on a log axis
  double max = 1.0;  // axis units; > min
  // Explicit ticks; values outside [min, max] are dropped. Empty: automatic
  // ticks (AutomaticTicks below).
  std::vector<Tick> ticks;
};

// OK when `axis` is valid, else an Error such as "min 5 must be below max 1",
// "log scale needs min > 0, got 0" or `tick 2 ("8k") is not finite`.
Status ValidateAxis(const Axis& axis);

// Whether `value` can be drawn on an axis of this scale at all.
bool IsPlottable(AxisScale scale, double value);

// Whether `value` is plottable and within [axis.min, axis.max] (with a
// relative slack of 1e-9 of the axis' extent in scale space).
bool IsWithinAxis(const Axis& axis, double value);

// Maps `value` (axis units) to pixels, placing axis.min at `min_px` and
// axis.max at `max_px` and interpolating in the axis' scale space. Values
// outside the range extrapolate. Preconditions: the axis is valid and the
// value plottable.
double AxisToPixel(const Axis& axis, double value, double min_px, double max_px);

// The ticks drawn when axis.ticks is empty. Linear: 4 to 10 ticks at a step of
// 1, 2 or 5 x 10^k. Log: ticks at 1, 2 and 5 x 10^k when the axis spans at
// most 3 decades, else at 10^k only (every n-th power when more than 10).
// Labels are plain numbers below 10,000 and use SI suffixes above
// ("20k" = 20,000, "1M" = 10^6). Precondition: the axis is valid.
std::vector<Tick> AutomaticTicks(const Axis& axis);

// Ticks at the powers of two in [min_tokens, max_tokens], labelled as token
// counts ("4k" = 4,096, "1M" = 2^20); every other power when there would be
// more than 12. For log x axes of context length.
std::vector<Tick> PowerOfTwoTokenTicks(double min_tokens, double max_tokens);

// The x at which the polyline `points` first crosses the horizontal line at
// `y` going upwards: the first segment with y_i < y <= y_{i+1}. The crossing
// is interpolated linearly in the scale space of both axes (so a straight
// line on a log-log plot is crossed where it is drawn to cross). Points that
// are not plottable break the polyline as they do in a chart: no segment
// touches them. Nullopt when there is no such crossing, or when y itself is
// not plottable.
std::optional<double> CrossingX(const std::vector<Point>& points, double y, AxisScale x_scale,
                                AxisScale y_scale);

}  // namespace kvbill

#endif  // KVBILL_REPORT_CHART_AXIS_H_
