#include "kvbill/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <utility>

#include "report/decimal_text.h"
#include "report/label_layout.h"

namespace kvbill {
namespace {

constexpr double kTitleFontPx = 18.0;
constexpr double kSubtitleFontPx = 13.0;
constexpr double kAxisLabelFontPx = 13.0;
constexpr double kSmallFontPx = 12.0;  // ticks, legend, line and point labels
constexpr double kTickLengthPx = 5.0;
constexpr double kLabelGapPx = 7.0;
constexpr std::string_view kGridColor = "#e5e5e5";
constexpr std::string_view kMajorGridColor = "#c8c8c8";
constexpr std::string_view kAxisColor = "#333333";
constexpr std::string_view kClipId = "plot-area";

std::string Quoted(const std::string& text) { return "\"" + text + "\""; }

Status Validate(const LineChart& chart) {
  const Margins& m = chart.margins_px;
  for (double margin : {m.left_px, m.right_px, m.top_px, m.bottom_px, chart.legend_width_px}) {
    if (!std::isfinite(margin) || margin < 0.0) {
      return Error("margins and legend width must be finite and >= 0, got " + ShortestText(margin));
    }
  }
  const PlotArea area = PlotAreaOf(chart);
  if (!(area.right_px - area.left_px >= 1.0) || !(area.bottom_px - area.top_px >= 1.0)) {
    return Error("no room for the plot: " + std::to_string(chart.width_px) + " x " +
                 std::to_string(chart.height_px) + " px less margins and legend leaves " +
                 ShortestText(area.right_px - area.left_px) + " x " +
                 ShortestText(area.bottom_px - area.top_px) + " px");
  }
  if (Status s = ValidateAxis(chart.x_axis); !s) return s.error().Within("x axis");
  if (Status s = ValidateAxis(chart.y_axis); !s) return s.error().Within("y axis");
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const double width = chart.series[i].stroke_width_px;
    if (!std::isfinite(width) || width <= 0.0) {
      return Error("series " + std::to_string(i) + " (" + Quoted(chart.series[i].name) +
                   "): stroke width must be positive, got " + ShortestText(width));
    }
  }
  for (const LegendNote& note : chart.legend_notes) {
    if (!std::isfinite(note.stroke_width_px) || note.stroke_width_px <= 0.0) {
      return Error("legend note " + Quoted(note.text) + ": stroke width must be positive, got " +
                   ShortestText(note.stroke_width_px));
    }
  }
  return OkStatus();
}

// Clips the segment (x0, y0)-(x1, y1) to `area` in place (Liang-Barsky).
// Returns false when no part of it is inside. An endpoint inside the area is
// left bit-for-bit unchanged.
bool ClipSegment(const PlotArea& area, double& x0, double& y0, double& x1, double& y1) {
  const double dx = x1 - x0;
  const double dy = y1 - y0;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {x0 - area.left_px, area.right_px - x0, y0 - area.top_px,
                       area.bottom_px - y0};
  double t0 = 0.0;
  double t1 = 1.0;
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0.0) {
      if (q[i] < 0.0) return false;
      continue;
    }
    const double r = q[i] / p[i];
    if (p[i] < 0.0) {
      if (r > t1) return false;
      t0 = std::max(t0, r);
    } else {
      if (r < t0) return false;
      t1 = std::min(t1, r);
    }
  }
  const double ox = x0;
  const double oy = y0;
  if (t0 > 0.0) {
    x0 = ox + t0 * dx;
    y0 = oy + t0 * dy;
  }
  if (t1 < 1.0) {
    x1 = ox + t1 * dx;
    y1 = oy + t1 * dy;
  }
  return true;
}

// ---- SVG primitives -------------------------------------------------------

std::string DashAttr(bool dashed, double stroke_width_px) {
  if (!dashed) return "";
  const double w = std::max(stroke_width_px, 1.0);
  return " stroke-dasharray=\"" + Px(4.0 * w) + " " + Px(3.0 * w) + "\"";
}

void AppendLine(std::string& out, double x1, double y1, double x2, double y2,
                std::string_view color, double width_px, bool dashed = false) {
  out += "<line x1=\"" + Px(x1) + "\" y1=\"" + Px(y1) + "\" x2=\"" + Px(x2) + "\" y2=\"" + Px(y2) +
         "\" stroke=\"" + EscapeXml(color) + "\" stroke-width=\"" + Px(width_px) + "\"" +
         DashAttr(dashed, width_px) + "/>\n";
}

struct TextStyle {
  double font_px = kSmallFontPx;
  TextAnchor anchor = TextAnchor::kStart;
  std::string_view fill = "#222222";
  bool bold = false;
};

void AppendText(std::string& out, double x, double y, std::string_view text, const TextStyle& style,
                std::string_view extra_attrs = "") {
  out += "<text x=\"" + Px(x) + "\" y=\"" + Px(y) + "\" font-size=\"" + Px(style.font_px) +
         "\" fill=\"" + EscapeXml(style.fill) + "\"";
  if (style.anchor == TextAnchor::kMiddle) out += " text-anchor=\"middle\"";
  if (style.anchor == TextAnchor::kEnd) out += " text-anchor=\"end\"";
  if (style.bold) out += " font-weight=\"bold\"";
  out += std::string(extra_attrs) + ">" + EscapeXml(text) + "</text>\n";
}

std::string SeriesColor(const LineChart& chart, std::size_t index) {
  const std::string& color = chart.series[index].color;
  return color.empty() ? std::string(kChartPalette[index % kChartPalette.size()]) : color;
}

// ---- Chart parts ----------------------------------------------------------

struct Frame {
  const LineChart& chart;
  PlotArea area;

  double X(double value) const {
    return AxisToPixel(chart.x_axis, value, area.left_px, area.right_px);
  }
  double Y(double value) const {
    return AxisToPixel(chart.y_axis, value, area.bottom_px, area.top_px);
  }
};

std::vector<Tick> TicksOf(const Axis& axis) {
  std::vector<Tick> ticks = axis.ticks.empty() ? AutomaticTicks(axis) : axis.ticks;
  std::erase_if(ticks, [&](const Tick& t) { return !IsWithinAxis(axis, t.value); });
  return ticks;
}

bool IsPowerOfTen(double value) {
  const double exponent = std::log10(value);
  return std::fabs(exponent - std::round(exponent)) < 1e-9;
}

std::string_view GridColor(const Axis& axis, double value) {
  return axis.scale == AxisScale::kLog && IsPowerOfTen(value) ? kMajorGridColor : kGridColor;
}

void AppendGridAndTicks(std::string& out, const Frame& f) {
  const PlotArea& a = f.area;
  const std::vector<Tick> x_ticks = TicksOf(f.chart.x_axis);
  const std::vector<Tick> y_ticks = TicksOf(f.chart.y_axis);
  out += "<g id=\"grid\">\n";
  for (const Tick& t : x_ticks) {
    const double x = f.X(t.value);
    AppendLine(out, x, a.top_px, x, a.bottom_px, GridColor(f.chart.x_axis, t.value), 1.0);
  }
  for (const Tick& t : y_ticks) {
    const double y = f.Y(t.value);
    AppendLine(out, a.left_px, y, a.right_px, y, GridColor(f.chart.y_axis, t.value), 1.0);
  }
  out += "</g>\n<g id=\"ticks\">\n";
  const TextStyle tick_style{.anchor = TextAnchor::kMiddle, .fill = "#333333"};
  for (const Tick& t : x_ticks) {
    const double x = f.X(t.value);
    AppendLine(out, x, a.bottom_px, x, a.bottom_px + kTickLengthPx, kAxisColor, 1.0);
    AppendText(out, x, a.bottom_px + kTickLengthPx + 14.0, t.label, tick_style);
  }
  const TextStyle y_tick_style{.anchor = TextAnchor::kEnd, .fill = "#333333"};
  for (const Tick& t : y_ticks) {
    const double y = f.Y(t.value);
    AppendLine(out, a.left_px - kTickLengthPx, y, a.left_px, y, kAxisColor, 1.0);
    AppendText(out, a.left_px - kTickLengthPx - 3.0, y + 4.0, t.label, y_tick_style);
  }
  out += "</g>\n";
}

void AppendAxisLabels(std::string& out, const Frame& f) {
  const PlotArea& a = f.area;
  const TextStyle style{.font_px = kAxisLabelFontPx, .anchor = TextAnchor::kMiddle};
  if (!f.chart.x_axis.label.empty()) {
    AppendText(out, (a.left_px + a.right_px) / 2.0, a.bottom_px + 44.0, f.chart.x_axis.label,
               style);
  }
  if (!f.chart.y_axis.label.empty()) {
    const double x = 18.0;
    const double y = (a.top_px + a.bottom_px) / 2.0;
    AppendText(out, x, y, f.chart.y_axis.label, style,
               " transform=\"rotate(-90 " + Px(x) + " " + Px(y) + ")\"");
  }
}

struct PixelPoint {
  double x = 0.0;
  double y = 0.0;
};

// The pixels series `index` is drawn through: runs of connected points,
// clipped to the plot. A new run starts where a point is not plottable or
// where a segment re-enters the plot.
std::vector<std::vector<PixelPoint>> SeriesRuns(const Frame& f, std::size_t index) {
  std::vector<std::vector<PixelPoint>> runs;
  bool have_previous = false;  // the previous point is plottable
  double px = 0.0;
  double py = 0.0;
  bool pen_at_previous = false;  // the last run ends at (px, py)
  for (const Point& p : f.chart.series[index].points) {
    const bool ok =
        IsPlottable(f.chart.x_axis.scale, p.x) && IsPlottable(f.chart.y_axis.scale, p.y);
    const double x = ok ? f.X(p.x) : 0.0;
    const double y = ok ? f.Y(p.y) : 0.0;
    if (!ok || !std::isfinite(x) || !std::isfinite(y)) {
      have_previous = false;
      pen_at_previous = false;
      continue;
    }
    if (have_previous) {
      double x0 = px, y0 = py, x1 = x, y1 = y;
      if (ClipSegment(f.area, x0, y0, x1, y1)) {
        if (!pen_at_previous || x0 != px || y0 != py) runs.push_back({{x0, y0}});
        runs.back().push_back({x1, y1});
        pen_at_previous = x1 == x && y1 == y;
      } else {
        pen_at_previous = false;
      }
    }
    have_previous = true;
    px = x;
    py = y;
  }
  return runs;
}

// Every plottable point of series `index`, in pixels.
std::vector<PixelPoint> PlottedPoints(const Frame& f, std::size_t index) {
  std::vector<PixelPoint> out;
  for (const Point& p : f.chart.series[index].points) {
    if (!IsPlottable(f.chart.x_axis.scale, p.x) || !IsPlottable(f.chart.y_axis.scale, p.y)) {
      continue;
    }
    const double x = f.X(p.x), y = f.Y(p.y);
    if (std::isfinite(x) && std::isfinite(y)) out.push_back({x, y});
  }
  return out;
}

bool Coincide(const Frame& f, std::size_t a, std::size_t b) {
  const std::vector<PixelPoint> pa = PlottedPoints(f, a), pb = PlottedPoints(f, b);
  if (pa.empty() || pa.size() != pb.size()) return false;
  for (std::size_t i = 0; i < pa.size(); ++i) {
    if (std::fabs(pa[i].x - pb[i].x) > 1.0 || std::fabs(pa[i].y - pb[i].y) > 1.0) return false;
  }
  return true;
}

// How a series is stroked: its own dash pattern, or, for a series drawn on
// an earlier one, dashes that leave a slot of every period to each member of
// the group (kCoincidentDashPx long) so that all their colours show.
struct Stroke {
  std::string color;
  double width_px = 2.0;
  std::string dash;  // the stroke-dasharray and -dashoffset attributes, or ""
};

constexpr double kCoincidentDashPx = 10.0;

// Series groups: head[i] is the first series that series i coincides with
// (i itself when none does); slot[i] its place in the group (0 for the head)
// and members[head] the group's size.
struct Coincidence {
  std::vector<std::size_t> head;
  std::vector<std::size_t> slot;
  std::vector<std::size_t> members;
};

Coincidence CoincidenceOf(const Frame& f) {
  const std::size_t n = f.chart.series.size();
  Coincidence c{std::vector<std::size_t>(n), std::vector<std::size_t>(n, 0),
                std::vector<std::size_t>(n, 1)};
  for (std::size_t j = 0; j < n; ++j) {
    c.head[j] = j;
    for (std::size_t i = 0; i < j; ++i) {
      if (c.head[i] == i && Coincide(f, i, j)) {
        c.head[j] = i;
        c.slot[j] = c.members[i]++;
        break;
      }
    }
  }
  return c;
}

Stroke StrokeOf(const Frame& f, const Coincidence& c, std::size_t index) {
  const Series& series = f.chart.series[index];
  Stroke stroke{SeriesColor(f.chart, index), series.stroke_width_px,
                DashAttr(series.dashed, series.stroke_width_px)};
  const std::size_t head = c.head[index];
  if (head != index && !series.dashed && !f.chart.series[head].dashed) {
    const double n = static_cast<double>(c.members[head]);
    stroke.dash = " stroke-dasharray=\"" + Px(kCoincidentDashPx) + " " +
                  Px((n - 1.0) * kCoincidentDashPx) + "\" stroke-dashoffset=\"" +
                  Px(-static_cast<double>(c.slot[index]) * kCoincidentDashPx) + "\"";
  }
  return stroke;
}

void AppendSeries(std::string& out, const Frame& f, const Coincidence& c, std::size_t index) {
  std::string d;
  for (const std::vector<PixelPoint>& run : SeriesRuns(f, index)) {
    d += "M" + Px(run.front().x) + " " + Px(run.front().y);
    for (std::size_t i = 1; i < run.size(); ++i) d += "L" + Px(run[i].x) + " " + Px(run[i].y);
  }
  if (d.empty()) return;
  const Stroke stroke = StrokeOf(f, c, index);
  out += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + EscapeXml(stroke.color) +
         "\" stroke-width=\"" + Px(stroke.width_px) + "\"" + stroke.dash +
         " stroke-linejoin=\"round\" stroke-linecap=\"round\" clip-path=\"url(#" +
         std::string(kClipId) + ")\"/>\n";
}

void AppendReferenceLines(std::string& out, const Frame& f) {
  for (const ReferenceLine& line : f.chart.reference_lines) {
    if (!IsWithinAxis(f.chart.y_axis, line.y)) continue;
    const double y = f.Y(line.y);
    AppendLine(out, f.area.left_px, y, f.area.right_px, y, line.color, 1.5, line.dashed);
  }
}

// Every straight piece of the drawn series and reference lines.
std::vector<PixelSegment> DrawnLines(const Frame& f) {
  std::vector<PixelSegment> out;
  for (std::size_t i = 0; i < f.chart.series.size(); ++i) {
    for (const std::vector<PixelPoint>& run : SeriesRuns(f, i)) {
      for (std::size_t k = 1; k < run.size(); ++k) {
        out.push_back({run[k - 1].x, run[k - 1].y, run[k].x, run[k].y});
      }
    }
  }
  for (const ReferenceLine& line : f.chart.reference_lines) {
    if (!IsWithinAxis(f.chart.y_axis, line.y)) continue;
    const double y = f.Y(line.y);
    out.push_back({f.area.left_px, y, f.area.right_px, y});
  }
  return out;
}

// One row of the legend: a sample (a stretch of line, or a marker) and text.
struct LegendRow {
  std::string text;
  std::string color;
  bool marker = false;        // a circle instead of a line sample
  std::string under_color;    // a coinciding series: its group head's stroke,
  double under_width_px = 0;  // drawn first under the sample
  double width_px = 2.0;
  std::string dash;  // as Stroke::dash
};

std::vector<LegendRow> SeriesAndNoteRows(const Frame& f, const Coincidence& c) {
  std::vector<LegendRow> rows;
  for (std::size_t i = 0; i < f.chart.series.size(); ++i) {
    const Series& s = f.chart.series[i];
    if (s.name.empty()) continue;
    const Stroke stroke = StrokeOf(f, c, i);
    LegendRow row{s.name, stroke.color, false, "", 0.0, stroke.width_px, stroke.dash};
    const std::size_t head = c.head[i];
    if (head != i) {
      const Series& h = f.chart.series[head];
      row.text += " (same line as " + (h.name.empty() ? "an unnamed series" : h.name) + ")";
      row.under_color = SeriesColor(f.chart, head);
      row.under_width_px = h.stroke_width_px;
    }
    rows.push_back(row);
  }
  for (const LegendNote& note : f.chart.legend_notes) {
    rows.push_back({note.text, note.color, false, "", 0.0, note.stroke_width_px,
                    DashAttr(note.dashed, note.stroke_width_px)});
  }
  return rows;
}

// Where the legend's rows go and, when it sits inside the plot, its box.
struct LegendGeometry {
  std::vector<LegendRow> rows;
  bool boxed = false;
  PixelBox box;
  double first_row_y_px = 0.0;
  double sample_left_px = 0.0;
  double right_px = 0.0;   // where the longest row ends
  double bottom_px = 0.0;  // below the last row
};

constexpr double kLegendRowPx = 18.0;
constexpr double kLegendSamplePx = 28.0;
constexpr double kLegendPadPx = 8.0;

LegendGeometry LegendOf(const Frame& f, std::vector<LegendRow> rows) {
  LegendGeometry legend;
  legend.rows = std::move(rows);
  const LegendPlacement placement = f.chart.legend;
  if (legend.rows.empty()) return legend;
  double text_width = 0.0;
  for (const LegendRow& row : legend.rows) {
    text_width = std::max(text_width, EstimateTextWidthPx(row.text, kSmallFontPx));
  }
  const double n = static_cast<double>(legend.rows.size());
  if (placement == LegendPlacement::kRight) {
    legend.sample_left_px = f.area.right_px + 16.0;
    legend.first_row_y_px = f.area.top_px + kLegendRowPx / 2.0;
  } else {  // inside the plot, boxed (kTopLeftInside; kNone for moved labels)
    legend.boxed = true;
    legend.box.left_px = f.area.left_px + 10.0;
    legend.box.top_px = f.area.top_px + 10.0;
    legend.box.right_px =
        legend.box.left_px + 2.0 * kLegendPadPx + kLegendSamplePx + 6.0 + text_width;
    legend.box.bottom_px = legend.box.top_px + 2.0 * kLegendPadPx + kLegendRowPx * n - 4.0;
    legend.sample_left_px = legend.box.left_px + kLegendPadPx;
    legend.first_row_y_px = legend.box.top_px + kLegendPadPx + kLegendRowPx / 2.0;
  }
  legend.right_px = legend.sample_left_px + kLegendSamplePx + 6.0 + text_width;
  legend.bottom_px = legend.first_row_y_px + kLegendRowPx * (n - 0.5);
  return legend;
}

void AppendLegend(std::string& out, const LegendGeometry& legend) {
  if (legend.rows.empty()) return;
  out += "<g id=\"legend\">\n";
  if (legend.boxed) {
    const PixelBox& b = legend.box;
    out += "<rect x=\"" + Px(b.left_px) + "\" y=\"" + Px(b.top_px) + "\" width=\"" +
           Px(b.right_px - b.left_px) + "\" height=\"" + Px(b.bottom_px - b.top_px) +
           "\" fill=\"#ffffff\" fill-opacity=\"0.9\" stroke=\"#cccccc\" stroke-width=\"1.00\"/>\n";
  }
  const double x = legend.sample_left_px;
  double y = legend.first_row_y_px;
  for (const LegendRow& row : legend.rows) {
    if (row.marker) {
      out += "<circle cx=\"" + Px(x + kLegendSamplePx / 2.0) + "\" cy=\"" + Px(y) +
             "\" r=\"4.00\" fill=\"" + EscapeXml(row.color) +
             "\" stroke=\"#ffffff\" stroke-width=\"1.50\"/>\n";
    } else {
      if (!row.under_color.empty()) {
        AppendLine(out, x, y, x + kLegendSamplePx, y, row.under_color, row.under_width_px);
      }
      out += "<line x1=\"" + Px(x) + "\" y1=\"" + Px(y) + "\" x2=\"" + Px(x + kLegendSamplePx) +
             "\" y2=\"" + Px(y) + "\" stroke=\"" + EscapeXml(row.color) + "\" stroke-width=\"" +
             Px(row.width_px) + "\"" + row.dash + "/>\n";
    }
    AppendText(out, x + kLegendSamplePx + 6.0, y + 4.0, row.text, {});
    y += kLegendRowPx;
  }
  out += "</g>\n";
}

// A label of a point or line: text on a translucent white box, so that it
// stays readable where it crosses lines.
void AppendLabel(std::string& out, const LabelPosition& at, double width_px, std::string_view text,
                 std::string_view color) {
  const PixelBox box = Grown(LabelBox(at, width_px, kSmallFontPx), LabelLayout::kLabelPadPx);
  out += "<rect x=\"" + Px(box.left_px) + "\" y=\"" + Px(box.top_px) + "\" width=\"" +
         Px(box.right_px - box.left_px) + "\" height=\"" + Px(box.bottom_px - box.top_px) +
         "\" fill=\"#ffffff\" fill-opacity=\"0.85\"/>\n";
  AppendText(out, at.x_px, at.baseline_px, text, {.anchor = at.anchor, .fill = color});
}

// Label positions around a point at (x, y), best first: upper right, upper
// left, lower right, lower left, then the same again further away.
std::vector<LabelPosition> AnnotationCandidates(double x, double y) {
  std::vector<LabelPosition> candidates;
  for (int step = 0; step < 8; ++step) {
    const double extra = 14.0 * step;
    const double above = y - kLabelGapPx - extra;
    const double below = y + kLabelGapPx + kSmallFontPx - 2.0 + extra;
    candidates.push_back({x + kLabelGapPx, above, TextAnchor::kStart});
    candidates.push_back({x - kLabelGapPx, above, TextAnchor::kEnd});
    candidates.push_back({x + kLabelGapPx, below, TextAnchor::kStart});
    candidates.push_back({x - kLabelGapPx, below, TextAnchor::kEnd});
  }
  return candidates;
}

// Label positions for a reference line at y, best first: above its right
// end, its left end and its middle, then at the quarter and eighth points
// from right to left; then below it in the same order. Above, the baseline
// is 6 px over the line: the descent (0.3 em, 3.6 px) and the room kept from
// lines (1.5 px) stay clear of it.
std::vector<LabelPosition> ReferenceCandidates(const PlotArea& a, double y) {
  std::vector<LabelPosition> candidates;
  const double width = a.right_px - a.left_px;
  for (double baseline : {y - 6.0, y + 5.0 + kSmallFontPx - 2.0}) {
    candidates.push_back({a.right_px - 6.0, baseline, TextAnchor::kEnd});
    candidates.push_back({a.left_px + 6.0, baseline, TextAnchor::kStart});
    for (double share : {0.5, 0.75, 0.25, 0.875, 0.625, 0.375, 0.125}) {
      candidates.push_back({a.left_px + share * width, baseline, TextAnchor::kMiddle});
    }
  }
  return candidates;
}

// The markers and placed labels of a chart, and the labels that found no
// free spot and go to the legend instead.
struct Labels {
  struct Marker {
    double x;
    double y;
    const Annotation* note;
  };
  struct Placed {
    LabelPosition at;
    double width_px;
    std::string text;
    std::string color;
  };
  std::vector<Marker> markers;
  std::vector<Placed> placed;
  std::vector<LegendRow> moved;
};

// Places the labels of annotations, then of reference lines, clear of each
// other, the markers, the drawn lines and (when boxed) the legend. Labels
// listed in `moved` (by their text and colour) are not tried again.
Labels LayoutLabels(const Frame& f, const LegendGeometry& legend,
                    const std::vector<PixelSegment>& lines, const std::vector<LegendRow>& moved) {
  const PlotArea& a = f.area;
  LabelLayout layout({a.left_px + 2.0, a.top_px + 2.0, a.right_px - 2.0, a.bottom_px - 2.0});
  if (legend.boxed && !legend.rows.empty()) layout.Block(legend.box);
  for (const PixelSegment& line : lines) layout.BlockLine(line);
  Labels out;
  for (const Annotation& note : f.chart.annotations) {
    if (!IsWithinAxis(f.chart.x_axis, note.x) || !IsWithinAxis(f.chart.y_axis, note.y)) continue;
    out.markers.push_back({f.X(note.x), f.Y(note.y), &note});
    const Labels::Marker& m = out.markers.back();
    layout.Block({m.x - 5.0, m.y - 5.0, m.x + 5.0, m.y + 5.0});
  }
  auto was_moved = [&](const std::string& text, const std::string& color) {
    return std::any_of(moved.begin(), moved.end(), [&](const LegendRow& row) {
      return row.text == text && row.color == color;
    });
  };
  for (const Labels::Marker& m : out.markers) {
    const Annotation& note = *m.note;
    if (note.text.empty()) continue;
    const double width = EstimateTextWidthPx(note.text, kSmallFontPx);
    std::optional<LabelPosition> at;
    if (!was_moved(note.text, note.color)) {
      at = layout.PlaceFree(AnnotationCandidates(m.x, m.y), width, kSmallFontPx);
    }
    if (at) {
      out.placed.push_back({*at, width, note.text, note.color});
    } else {
      out.moved.push_back({note.text, note.color, true, "", 0.0, 2.0, ""});
    }
  }
  for (const ReferenceLine& line : f.chart.reference_lines) {
    if (line.label.empty() || !IsWithinAxis(f.chart.y_axis, line.y)) continue;
    const double width = EstimateTextWidthPx(line.label, kSmallFontPx);
    std::optional<LabelPosition> at;
    if (!was_moved(line.label, line.color)) {
      at = layout.PlaceFree(ReferenceCandidates(a, f.Y(line.y)), width, kSmallFontPx);
    }
    if (at) {
      out.placed.push_back({*at, width, line.label, line.color});
    } else {
      out.moved.push_back(
          {line.label, line.color, false, "", 0.0, 1.5, DashAttr(line.dashed, 1.5)});
    }
  }
  return out;
}

void AppendMarkersAndLabels(std::string& out, const Labels& labels) {
  out += "<g id=\"annotations\">\n";
  for (const Labels::Marker& m : labels.markers) {
    out += "<circle cx=\"" + Px(m.x) + "\" cy=\"" + Px(m.y) + "\" r=\"4.00\" fill=\"" +
           EscapeXml(m.note->color) + "\" stroke=\"#ffffff\" stroke-width=\"1.50\"/>\n";
  }
  for (const Labels::Placed& p : labels.placed) {
    AppendLabel(out, p.at, p.width_px, p.text, p.color);
  }
  out += "</g>\n";
}

}  // namespace

PlotArea PlotAreaOf(const LineChart& chart) {
  const Margins& m = chart.margins_px;
  const double legend = chart.legend == LegendPlacement::kRight ? chart.legend_width_px : 0.0;
  return {.left_px = m.left_px,
          .top_px = m.top_px,
          .right_px = chart.width_px - m.right_px - legend,
          .bottom_px = chart.height_px - m.bottom_px};
}

bool SeriesCoincide(const LineChart& chart, std::size_t a, std::size_t b) {
  return Coincide(Frame{chart, PlotAreaOf(chart)}, a, b);
}

Result<std::string> RenderSvg(const LineChart& chart) {
  if (Status s = Validate(chart); !s) {
    return s.error().Within(chart.title.empty() ? "chart" : "chart " + Quoted(chart.title));
  }
  const Frame f{chart, PlotAreaOf(chart)};
  const PlotArea& a = f.area;
  const Coincidence coincidence = CoincidenceOf(f);
  const std::vector<LegendRow> rows = chart.legend == LegendPlacement::kNone
                                          ? std::vector<LegendRow>{}
                                          : SeriesAndNoteRows(f, coincidence);
  const std::vector<PixelSegment> lines = DrawnLines(f);
  // Labels without a free spot join the legend; a boxed legend then grows
  // and blocks more of the plot, so place again until no more move (each
  // round moves at least one more label, or stops).
  std::vector<LegendRow> moved;
  LegendGeometry legend = LegendOf(f, rows);
  Labels labels = LayoutLabels(f, legend, lines, moved);
  while (labels.moved.size() > moved.size()) {
    moved = labels.moved;
    std::vector<LegendRow> all = rows;
    all.insert(all.end(), moved.begin(), moved.end());
    legend = LegendOf(f, all);
    if (!legend.boxed) {
      labels.moved = moved;
      break;
    }
    labels = LayoutLabels(f, legend, lines, moved);
  }
  // A legend on the right may need more room than the chart gave it.
  double width = chart.width_px, height = chart.height_px;
  if (chart.legend == LegendPlacement::kRight && !legend.rows.empty()) {
    width = std::max(width, std::ceil(legend.right_px + 10.0));
    height = std::max(height, std::ceil(legend.bottom_px + 10.0));
  }
  const std::string w = std::to_string(static_cast<int>(width));
  const std::string h = std::to_string(static_cast<int>(height));
  std::string out;
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + w + "\" height=\"" +
         h + "\" viewBox=\"0 0 " + w + " " + h + "\" font-family=\"" + kChartFontFamily + "\">\n";
  out += "<defs><clipPath id=\"" + std::string(kClipId) + "\"><rect x=\"" + Px(a.left_px) +
         "\" y=\"" + Px(a.top_px) + "\" width=\"" + Px(a.right_px - a.left_px) + "\" height=\"" +
         Px(a.bottom_px - a.top_px) + "\"/></clipPath></defs>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  AppendGridAndTicks(out, f);
  out += "<g id=\"reference-lines\">\n";
  AppendReferenceLines(out, f);
  out += "</g>\n<g id=\"series\">\n";
  for (std::size_t i = 0; i < chart.series.size(); ++i) AppendSeries(out, f, coincidence, i);
  out += "</g>\n";
  out += "<rect x=\"" + Px(a.left_px) + "\" y=\"" + Px(a.top_px) + "\" width=\"" +
         Px(a.right_px - a.left_px) + "\" height=\"" + Px(a.bottom_px - a.top_px) +
         "\" fill=\"none\" stroke=\"" + std::string(kAxisColor) + "\" stroke-width=\"1.00\"/>\n";
  AppendMarkersAndLabels(out, labels);
  AppendLegend(out, legend);
  AppendAxisLabels(out, f);
  if (!chart.title.empty()) {
    AppendText(out, 16.0, 28.0, chart.title, {.font_px = kTitleFontPx, .bold = true});
  }
  if (!chart.subtitle.empty()) {
    AppendText(out, 16.0, 50.0, chart.subtitle, {.font_px = kSubtitleFontPx, .fill = "#555555"});
  }
  out += "</svg>\n";
  return out;
}

std::string EscapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace kvbill
