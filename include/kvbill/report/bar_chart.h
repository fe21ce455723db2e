// BarChart: a value describing a horizontal bar chart (one bar per category,
// e.g. cost per task by lever), and RenderBarSvg, which turns it into a
// standalone SVG document. No third-party code; no I/O.
//
// Layout, with the defaults (width 900, label column 260, value room 150,
// bars 22 px high, 10 px apart): title and subtitle sit in the top 70 px;
// the plot spans x from `label_width_px` (260) to `width_px -
// value_room_px` (750) and y from 70 to 70 + 32 n for n bars. Bar i (from 0,
// drawn top to bottom in the given order) is the rectangle x = 260, y = 70 +
// 5 + 32 i, height 22 and width value / axis max x the plot's width. Its
// label is right-aligned 8 px left of the plot; its value label starts 6 px
// right of the bar's end. Ticks and the value axis' label fill the bottom
// 60 px, so the document is 70 + 32 n + 60 px high.
//
// The value axis is linear from 0. Its maximum is `value_max` when positive,
// else the largest value rounded up to the next automatic tick (chart_axis.h);
// 1 when every value is 0.
//
// Invariants that RenderBarSvg checks (and reports as an Error): at least one
// bar, every value finite and >= 0, room for the plot (label column plus
// value room narrower than the chart), a positive bar height, a finite
// value_max. Output is deterministic: fixed-precision numbers printed without
// the locale, all text XML-escaped.
#ifndef KVBILL_REPORT_BAR_CHART_H_
#define KVBILL_REPORT_BAR_CHART_H_

#include <string>
#include <vector>

#include "kvbill/util/result.h"

namespace kvbill {

struct Bar {
  std::string label;        // the category, left of the bar
  double value = 0.0;       // axis units, >= 0
  std::string value_label;  // printed right of the bar's end, e.g. "$0.0123"; empty: none
  std::string color;        // any SVG colour; empty: kChartPalette[0]
};

struct BarChart {
  std::string title;
  std::string subtitle;     // one line, smaller, under the title
  std::string axis_label;   // under the value axis, e.g. "dollars per task"
  std::string tick_prefix;  // put before every tick label, e.g. "$"
  std::vector<Bar> bars;
  int width_px = 900;
  double label_width_px = 260.0;  // x where the plot starts; bar labels end 8 px left of it
  double value_room_px = 150.0;   // right of the plot, for value labels
  double bar_height_px = 22.0;    // > 0
  double bar_gap_px = 10.0;       // between bars, >= 0
  double value_max = 0.0;         // axis maximum; 0: automatic
};

// Pixel height of the rendered chart: 70 + n x (bar height + gap) + 60.
double BarChartHeightPx(const BarChart& chart);

// Renders `chart` as a complete SVG 1.1 document ending in "</svg>\n".
// Error: the first broken invariant, e.g.
// `chart "Cost per task": bar 2 ("fp8"): value must be finite and >= 0, got -1`.
Result<std::string> RenderBarSvg(const BarChart& chart);

}  // namespace kvbill

#endif  // KVBILL_REPORT_BAR_CHART_H_
