#include "kvbill/report/bar_chart.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "kvbill/report/chart_axis.h"
#include "kvbill/report/svg_chart.h"
#include "report/decimal_text.h"

namespace kvbill {
namespace {

constexpr double kTopPx = 70.0;
constexpr double kBottomPx = 60.0;
constexpr double kBarLabelGapPx = 8.0;
constexpr double kValueGapPx = 6.0;

Status Validate(const BarChart& chart) {
  if (chart.bars.empty()) return Error("no bars to draw");
  if (!(chart.bar_height_px > 0.0) || !std::isfinite(chart.bar_height_px)) {
    return Error("bar height must be positive, got " + ShortestText(chart.bar_height_px));
  }
  if (!(chart.bar_gap_px >= 0.0) || !std::isfinite(chart.bar_gap_px)) {
    return Error("bar gap must be >= 0, got " + ShortestText(chart.bar_gap_px));
  }
  const double plot = chart.width_px - chart.label_width_px - chart.value_room_px;
  if (!(chart.label_width_px >= 0.0) || !(chart.value_room_px >= 0.0) || !(plot >= 1.0)) {
    return Error("no room for the plot: " + std::to_string(chart.width_px) + " px less " +
                 ShortestText(chart.label_width_px) + " px of labels and " +
                 ShortestText(chart.value_room_px) + " px of values");
  }
  if (!std::isfinite(chart.value_max) || chart.value_max < 0.0) {
    return Error("value_max must be finite and >= 0, got " + ShortestText(chart.value_max));
  }
  for (std::size_t i = 0; i < chart.bars.size(); ++i) {
    const double v = chart.bars[i].value;
    if (!std::isfinite(v) || v < 0.0) {
      return Error("bar " + std::to_string(i) + " (\"" + chart.bars[i].label +
                   "\"): value must be finite and >= 0, got " + ShortestText(v));
    }
  }
  return OkStatus();
}

// The value axis: [0, value_max] or [0, the largest value rounded up to a tick].
Axis ValueAxis(const BarChart& chart) {
  Axis axis;
  axis.label = chart.axis_label;
  axis.min = 0.0;
  if (chart.value_max > 0.0) {
    axis.max = chart.value_max;
    return axis;
  }
  double largest = 0.0;
  for (const Bar& b : chart.bars) largest = std::max(largest, b.value);
  if (largest <= 0.0) {
    axis.max = 1.0;
    return axis;
  }
  axis.max = largest;
  const std::vector<Tick> ticks = AutomaticTicks(axis);
  if (ticks.size() >= 2) {
    const double step = ticks[1].value - ticks[0].value;
    axis.max = std::ceil(largest / step - 1e-9) * step;
  }
  return axis;
}

void AppendText(std::string& out, double x, double y, std::string_view text, double font_px,
                std::string_view anchor, std::string_view fill, bool bold = false) {
  out += "<text x=\"" + Px(x) + "\" y=\"" + Px(y) + "\" font-size=\"" + Px(font_px) + "\" fill=\"" +
         EscapeXml(fill) + "\"";
  if (anchor != "start") out += " text-anchor=\"" + std::string(anchor) + "\"";
  if (bold) out += " font-weight=\"bold\"";
  out += ">" + EscapeXml(text) + "</text>\n";
}

}  // namespace

double BarChartHeightPx(const BarChart& chart) {
  return kTopPx +
         static_cast<double>(chart.bars.size()) * (chart.bar_height_px + chart.bar_gap_px) +
         kBottomPx;
}

Result<std::string> RenderBarSvg(const BarChart& chart) {
  if (Status s = Validate(chart); !s) {
    return s.error().Within(chart.title.empty() ? "chart" : "chart \"" + chart.title + "\"");
  }
  const Axis axis = ValueAxis(chart);
  const double left = chart.label_width_px;
  const double right = chart.width_px - chart.value_room_px;
  const double pitch = chart.bar_height_px + chart.bar_gap_px;
  const double top = kTopPx;
  const double bottom = top + static_cast<double>(chart.bars.size()) * pitch;
  const double height = BarChartHeightPx(chart);
  const std::string w = std::to_string(chart.width_px);
  const std::string h = Px(height);
  std::string out;
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + w + "\" height=\"" +
         h + "\" viewBox=\"0 0 " + w + " " + h + "\" font-family=\"" + kChartFontFamily + "\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";

  out += "<g id=\"grid\">\n";
  std::vector<Tick> ticks = AutomaticTicks(axis);
  std::erase_if(ticks, [&](const Tick& t) { return !IsWithinAxis(axis, t.value); });
  for (const Tick& t : ticks) {
    const double x = AxisToPixel(axis, t.value, left, right);
    out += "<line x1=\"" + Px(x) + "\" y1=\"" + Px(top) + "\" x2=\"" + Px(x) + "\" y2=\"" +
           Px(bottom + 5.0) + "\" stroke=\"#e5e5e5\" stroke-width=\"1.00\"/>\n";
    AppendText(out, x, bottom + 19.0, chart.tick_prefix + t.label, 12.0, "middle", "#333333");
  }
  out += "</g>\n<g id=\"bars\">\n";
  for (std::size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& bar = chart.bars[i];
    const double y = top + chart.bar_gap_px / 2.0 + static_cast<double>(i) * pitch;
    const double end = AxisToPixel(axis, std::min(bar.value, axis.max), left, right);
    const std::string color = bar.color.empty() ? std::string(kChartPalette[0]) : bar.color;
    out += "<rect x=\"" + Px(left) + "\" y=\"" + Px(y) + "\" width=\"" + Px(end - left) +
           "\" height=\"" + Px(chart.bar_height_px) + "\" fill=\"" + EscapeXml(color) + "\"/>\n";
    const double baseline = y + chart.bar_height_px / 2.0 + 4.0;
    AppendText(out, left - kBarLabelGapPx, baseline, bar.label, 12.0, "end", "#222222");
    if (!bar.value_label.empty()) {
      AppendText(out, end + kValueGapPx, baseline, bar.value_label, 12.0, "start", "#222222");
    }
  }
  out += "</g>\n";
  out += "<line x1=\"" + Px(left) + "\" y1=\"" + Px(top) + "\" x2=\"" + Px(left) + "\" y2=\"" +
         Px(bottom) + "\" stroke=\"#333333\" stroke-width=\"1.00\"/>\n";
  out += "<line x1=\"" + Px(left) + "\" y1=\"" + Px(bottom) + "\" x2=\"" + Px(right) + "\" y2=\"" +
         Px(bottom) + "\" stroke=\"#333333\" stroke-width=\"1.00\"/>\n";
  if (!chart.axis_label.empty()) {
    AppendText(out, (left + right) / 2.0, bottom + 44.0, chart.axis_label, 13.0, "middle",
               "#222222");
  }
  if (!chart.title.empty())
    AppendText(out, 16.0, 28.0, chart.title, 18.0, "start", "#222222", true);
  if (!chart.subtitle.empty()) {
    AppendText(out, 16.0, 50.0, chart.subtitle, 13.0, "start", "#555555");
  }
  out += "</svg>\n";
  return out;
}

}  // namespace kvbill
