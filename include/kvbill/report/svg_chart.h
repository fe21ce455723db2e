// LineChart: a value describing one line chart, and RenderSvg, which turns it
// into a standalone SVG document. No third-party code; no I/O.
//
// Layout. The chart is `width_px` x `height_px`. The plot area is the chart
// minus `margins_px`, minus `legend_width_px` on the right when the legend is
// placed to the right of the plot. With the defaults (900 x 560, margins
// left 80, right 20, top 70, bottom 60) the plot spans x 80..880 px and
// y 70..500 px. Title and subtitle sit in the top margin, tick labels and the
// x-axis label in the bottom margin, the rotated y-axis label in the left one.
// A legend on the right that needs more than `legend_width_px` (or more rows
// than the chart is high) makes the document wider (or taller); the plot
// area keeps its place and size.
//
// Axes (chart_axis.h) map values to the plot's extent, linearly or in log10
// space; x grows to the right and y upwards.
//
// Labels never hide the data. Annotation and reference-line labels sit where
// their box (grown by 1.5 px) is crossed by no drawn series or reference line
// and overlaps no other label, marker or legend; a label with no such spot
// among its candidates moves into the legend, as a row with its marker or
// line sample. A chart without a legend then gets a boxed one in the plot's
// upper left corner for such rows.
//
// Coinciding series (every point within 1 px of an earlier series' point)
// are drawn as such: the later one in dashes that leave the earlier one's
// colour showing between them, and its legend row says "(same line as
// NAME)".
//
// Invariants that RenderSvg checks (and reports as an Error, never asserts):
// finite axis bounds with min < max, min > 0 on log axes, a plot area of at
// least 1 px in each direction, positive stroke widths, finite tick values.
// Data is never an error: series points that are non-finite, or non-positive
// on a log axis, are skipped (the line breaks there); points outside the
// axis ranges are clipped at the plot's edge. Reference lines and annotations
// outside the ranges are not drawn.
//
// Output is deterministic: numbers are printed with fixed precision through
// std::to_chars (no locale), so equal charts give byte-identical documents.
#ifndef KVBILL_REPORT_SVG_CHART_H_
#define KVBILL_REPORT_SVG_CHART_H_

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/report/chart_axis.h"
#include "kvbill/util/result.h"

namespace kvbill {

// Colour-blind-safe palette (Okabe & Ito, 2008), in the order series take it.
// Yellow is left out: it is unreadable as a thin line on white.
inline constexpr std::array<std::string_view, 8> kChartPalette = {
    "#0072B2",  // blue
    "#D55E00",  // vermillion
    "#009E73",  // bluish green
    "#CC79A7",  // reddish purple
    "#E69F00",  // orange
    "#56B4E9",  // sky blue
    "#000000",  // black
    "#8C6D31",  // brown (not Okabe-Ito; replaces yellow)
};

struct Series {
  std::string name;           // legend text; empty: not in the legend
  std::string color;          // any SVG colour; empty: kChartPalette[index % 8]
  std::vector<Point> points;  // drawn in the given order
  bool dashed = false;
  double stroke_width_px = 2.0;  // > 0
};

// A horizontal line across the whole plot at `y`, labelled at its right end,
// just above the line (e.g. "GPU capacity 71.6 GiB"). When that spot is taken
// by an earlier label, a line or the legend, the label moves to the left end,
// the middle, then the quarter and eighth points from right to left; then
// below the line in the same order; then into the legend.
struct ReferenceLine {
  double y = 0.0;  // axis units
  std::string label;
  std::string color = "#444444";
  bool dashed = true;
};

// A marked point: a small circle and a label beside it. The label goes to the
// upper right of the point; to the left when it would cross the plot's right
// edge; below when it would cross the plot's top edge. A label that would
// cover an earlier label, a marker, a line or the legend takes the next of
// these spots, then the same spots 14, 28, ... 98 px further from the point;
// then it moves into the legend.
//
// Labels of annotations and reference lines sit on a translucent white box
// and never overlap each other or a line as far as text widths can be
// estimated; they are placed in order, annotations first.
struct Annotation {
  double x = 0.0;  // axis units
  double y = 0.0;
  std::string text;  // e.g. "fits up to 43.6k tokens"
  std::string color = "#000000";
};

// A legend row that explains a line style rather than naming a series, e.g.
// "dashed: capacity minus the model's weights". Drawn after the series.
struct LegendNote {
  std::string text;
  std::string color = "#444444";
  bool dashed = false;
  double stroke_width_px = 2.0;  // > 0
};

enum class LegendPlacement {
  kTopLeftInside,  // a boxed legend in the plot's upper left corner
  kRight,          // to the right of the plot, in `legend_width_px` of room
  kNone,
};

struct Margins {
  double left_px = 80.0;
  double right_px = 20.0;
  double top_px = 70.0;
  double bottom_px = 60.0;
};

struct LineChart {
  std::string title;
  std::string subtitle;  // one line, smaller, under the title
  Axis x_axis;
  Axis y_axis;
  int width_px = 900;
  int height_px = 560;
  Margins margins_px;
  LegendPlacement legend = LegendPlacement::kTopLeftInside;
  double legend_width_px = 180.0;  // used by LegendPlacement::kRight only
  std::vector<Series> series;
  std::vector<LegendNote> legend_notes;
  std::vector<ReferenceLine> reference_lines;
  std::vector<Annotation> annotations;
};

// The plot area in pixels of the document (y grows downwards).
struct PlotArea {
  double left_px = 0.0;
  double top_px = 0.0;
  double right_px = 0.0;
  double bottom_px = 0.0;
};

// Where the plot is drawn in `chart`, from its size, margins and legend.
PlotArea PlotAreaOf(const LineChart& chart);

// Whether series `b` of `chart` is drawn on series `a`: both have plottable
// points, as many, and each maps within 1 px of the other's in x and y.
bool SeriesCoincide(const LineChart& chart, std::size_t a, std::size_t b);

// Renders `chart` as a complete SVG 1.1 document ending in "</svg>\n".
// Error: the first broken invariant, e.g.
// `chart "KV footprint": y axis: log scale needs min > 0, got 0`.
Result<std::string> RenderSvg(const LineChart& chart);

// `text` with &, <, >, " and ' replaced by XML entities.
std::string EscapeXml(std::string_view text);

}  // namespace kvbill

#endif  // KVBILL_REPORT_SVG_CHART_H_
