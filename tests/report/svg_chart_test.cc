#include "kvbill/report/svg_chart.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// With the default 900 x 560 chart and margins (left 80, right 20, top 70,
// bottom 60) the plot spans x 80..880 px (800 wide) and y 70..500 px (430
// high). Every pixel value below is worked out from that.
Axis MakeAxis(AxisScale scale, double min, double max) {
  Axis axis;
  axis.scale = scale;
  axis.min = min;
  axis.max = max;
  return axis;
}

Series MakeSeries(std::string name, std::vector<Point> points) {
  Series series;
  series.name = std::move(name);
  series.points = std::move(points);
  return series;
}

LineChart UnitChart() {
  LineChart chart;
  chart.x_axis = MakeAxis(AxisScale::kLinear, 0.0, 10.0);
  chart.y_axis = MakeAxis(AxisScale::kLinear, 0.0, 10.0);
  return chart;
}

std::string Render(const LineChart& chart) {
  Result<std::string> svg = RenderSvg(chart);
  EXPECT_TRUE(svg.ok()) << svg.error().message();
  return svg.ok() ? *svg : std::string();
}

// The `d` attribute of the first <path> in `svg`.
std::string FirstPathData(const std::string& svg) {
  const std::size_t path = svg.find("<path d=\"");
  if (path == std::string::npos) return "";
  const std::size_t begin = path + 9;
  return svg.substr(begin, svg.find('"', begin) - begin);
}

// The line of `svg` that starts with `prefix`, or "" if none does.
std::string LineStartingWith(const std::string& svg, const std::string& prefix) {
  const std::size_t begin = svg.find("\n" + prefix);
  if (begin == std::string::npos) return "";
  return svg.substr(begin + 1, svg.find('\n', begin + 1) - begin - 1);
}

// True when every start tag has its matching end tag, in nesting order.
// Text is escaped, so every '<' in the document opens a tag.
bool TagsBalance(const std::string& svg) {
  std::vector<std::string> open;
  for (std::size_t lt = svg.find('<'); lt != std::string::npos; lt = svg.find('<', lt + 1)) {
    const std::size_t gt = svg.find('>', lt);
    if (gt == std::string::npos || gt == lt + 1) return false;
    const std::string tag = svg.substr(lt + 1, gt - lt - 1);
    if (tag.back() == '/') continue;  // self-closing
    if (tag.front() == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return false;
      open.pop_back();
    } else {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
  }
  return open.empty();
}

TEST(SvgChartTest, DefaultPlotAreaLeavesDocumentedMargins) {
  // x: 80 .. 900 - 20; y: 70 .. 560 - 60.
  const PlotArea area = PlotAreaOf(LineChart{});
  EXPECT_EQ(area.left_px, 80.0);
  EXPECT_EQ(area.right_px, 880.0);
  EXPECT_EQ(area.top_px, 70.0);
  EXPECT_EQ(area.bottom_px, 500.0);
}

TEST(SvgChartTest, LegendOnTheRightNarrowsThePlot) {
  // 900 - 20 (margin) - 180 (legend) = 700.
  LineChart chart;
  chart.legend = LegendPlacement::kRight;
  EXPECT_EQ(PlotAreaOf(chart).right_px, 700.0);
}

TEST(SvgChartTest, AnnotationIsDrawnAtItsMappedPixel) {
  // x log 10..1000: 100 -> 480. y linear 0..100: 50 -> 500 - 215 = 285.
  LineChart chart;
  chart.x_axis = MakeAxis(AxisScale::kLog, 10.0, 1000.0);
  chart.y_axis = MakeAxis(AxisScale::kLinear, 0.0, 100.0);
  chart.annotations.push_back({100.0, 50.0, "mid", "#000000"});
  const std::string svg = Render(chart);
  EXPECT_NE(svg.find("<circle cx=\"480.00\" cy=\"285.00\""), std::string::npos) << svg;
  // The label sits 7 px right of and above the point: (487, 278).
  EXPECT_NE(svg.find("<text x=\"487.00\" y=\"278.00\""), std::string::npos) << svg;
}

TEST(SvgChartTest, AnnotationLabelFlipsLeftAndBelowInTheTopRightCorner) {
  // (10, 10) is the corner (880, 70): the label goes 7 px left (873,
  // anchored at its end) and below (70 + 7 + 12 - 2 = 87).
  LineChart chart = UnitChart();
  chart.annotations.push_back({10.0, 10.0, "fits up to 43.6k tokens", "#000000"});
  const std::string svg = Render(chart);
  const std::string label = LineStartingWith(svg, "<text x=\"873.00\" y=\"87.00\"");
  EXPECT_NE(label.find("text-anchor=\"end\""), std::string::npos) << svg;
  EXPECT_TRUE(label.ends_with(">fits up to 43.6k tokens</text>")) << label;
}

TEST(SvgChartTest, ReferenceLineSpansThePlotWithItsLabelAboveTheRightEnd) {
  // y 5 on 0..10 -> 285; label right-aligned 6 px inside (874), its baseline
  // 6 px above (279).
  LineChart chart = UnitChart();
  chart.reference_lines.push_back({5.0, "GPU capacity 71.6 GiB", "#444444", true});
  const std::string svg = Render(chart);
  EXPECT_NE(svg.find("<line x1=\"80.00\" y1=\"285.00\" x2=\"880.00\" y2=\"285.00\""),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("<text x=\"874.00\" y=\"279.00\""), std::string::npos) << svg;
}

TEST(SvgChartTest, ReferenceLabelMovesToTheLeftEndWhenAnAnnotationTakesTheRight) {
  // The annotation at (10, 5) is the pixel (880, 285); its label "x" cannot go
  // right of it, so it sits upper left, ending at 873 with its baseline at 278
  // and covering y 266..281.6 (1.0 em up, 0.3 em down at 12 px). The line
  // label "cap" above the right end, baseline 285 - 6 = 279, would cover
  // x 852.0..874 (c, a, p: 3,681 / 2,048 em x 12 px x 1.03 = 22.2 px) and
  // y 267..282.6, which overlaps; it goes above the left end instead:
  // x 80 + 6 = 86, baseline 279.
  LineChart chart = UnitChart();
  chart.annotations.push_back({10.0, 5.0, "x", "#000000"});
  chart.reference_lines.push_back({5.0, "cap", "#444444", true});
  const std::string svg = Render(chart);
  EXPECT_NE(svg.find("<text x=\"873.00\" y=\"278.00\""), std::string::npos) << svg;
  const std::string label = LineStartingWith(svg, "<text x=\"86.00\" y=\"279.00\"");
  EXPECT_TRUE(label.ends_with(">cap</text>")) << svg;
}

TEST(SvgChartTest, AnnotationLabelAvoidsALineThroughItsFirstSpot) {
  // The point (5, 5) is the pixel (480, 285). Labels above it (baseline 278)
  // cover y 266..281.6; a series at y 5.4 runs at 500 - 0.54 x 430 = 267.8,
  // through both upper spots, so the label goes lower right: x 487, baseline
  // 285 + 7 + 12 - 2 = 302.
  LineChart chart = UnitChart();
  chart.series.push_back(MakeSeries("", {{0, 5.4}, {10, 5.4}}));
  chart.annotations.push_back({5.0, 5.0, "mid", "#000000"});
  const std::string svg = Render(chart);
  EXPECT_NE(svg.find("<text x=\"487.00\" y=\"302.00\""), std::string::npos) << svg;
}

TEST(SvgChartTest, ALabelWithNoFreeSpotMovesToTheLegendWhichWidensTheChart) {
  // 150 'X's: 150 x 1,403 / 2,048 em x 12 px x 1.03 = 1,270.1 px, wider than
  // the plot (80..700 with the legend on the right), so no spot on the plot
  // holds it. It becomes a legend row: sample at 700 + 16 = 716, text from
  // 716 + 28 + 6 = 750 to 2,020.1; the chart widens to 10 px past that, 2,031.
  LineChart chart = UnitChart();
  chart.legend = LegendPlacement::kRight;
  chart.reference_lines.push_back({5.0, std::string(150, 'X'), "#444444", true});
  const std::string svg = Render(chart);
  EXPECT_TRUE(
      svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
                      "width=\"2031\" height=\"560\" viewBox=\"0 0 2031 560\""))
      << svg.substr(0, 200);
  const std::size_t legend = svg.find("<g id=\"legend\">");
  ASSERT_NE(legend, std::string::npos);
  EXPECT_NE(svg.find(">" + std::string(150, 'X') + "</text>", legend), std::string::npos);
  const std::size_t notes = svg.find("<g id=\"annotations\">");
  EXPECT_EQ(svg.substr(notes, legend - notes).find("XXX"), std::string::npos);
}

TEST(SvgChartTest, LegendNotesExplainLineStylesAfterTheSeries) {
  LineChart chart = UnitChart();
  chart.series.push_back(MakeSeries("bf16", {{0, 0}, {10, 10}}));
  chart.legend_notes.push_back({"dashed: capacity minus weights", "#444444", true, 2.0});
  const std::string svg = Render(chart);
  const std::size_t series_row = svg.find(">bf16</text>");
  const std::size_t note_row = svg.find(">dashed: capacity minus weights</text>");
  ASSERT_NE(series_row, std::string::npos);
  ASSERT_NE(note_row, std::string::npos);
  EXPECT_LT(series_row, note_row);
  // The note's sample is dashed: 4 and 3 stroke widths.
  EXPECT_NE(svg.find("stroke-dasharray=\"8.00 6.00\"/>", series_row), std::string::npos);
}

TEST(SvgChartTest, CoincidingSeriesAreDrawnInDashesAndLabelledAsSuch) {
  // y spans 430 px over 0..10: 0.01 is 0.43 px (the same line), 0.03 is
  // 1.29 px (another line).
  LineChart chart = UnitChart();
  chart.series.push_back(MakeSeries("baseline", {{0, 1}, {10, 9}}));
  chart.series.push_back(MakeSeries("lever", {{0, 1.01}, {10, 9}}));
  chart.series.push_back(MakeSeries("other", {{0, 1.03}, {10, 9}}));
  EXPECT_TRUE(SeriesCoincide(chart, 0, 1));
  EXPECT_FALSE(SeriesCoincide(chart, 0, 2));
  const std::string svg = Render(chart);
  // Two members: the later one takes every other 10 px.
  EXPECT_NE(svg.find("stroke=\"#D55E00\" stroke-width=\"2.00\" stroke-dasharray=\"10.00 10.00\" "
                     "stroke-dashoffset=\"-10.00\""),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find(">lever (same line as baseline)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">other</text>"), std::string::npos);
  EXPECT_EQ(svg.find("other (same line"), std::string::npos);
}

TEST(SvgChartTest, EscapesXmlSpecialCharacters) {
  EXPECT_EQ(EscapeXml("a<b>&\"c\" 'd'"), "a&lt;b&gt;&amp;&quot;c&quot; &apos;d&apos;");
  LineChart chart = UnitChart();
  chart.title = "K & V <fp8>";
  chart.series.push_back(MakeSeries("\"bf16\"", {{0, 0}, {10, 10}}));
  const std::string svg = Render(chart);
  EXPECT_NE(svg.find(">K &amp; V &lt;fp8&gt;</text>"), std::string::npos);
  EXPECT_NE(svg.find(">&quot;bf16&quot;</text>"), std::string::npos);
  EXPECT_EQ(svg.find("<fp8>"), std::string::npos);
}

TEST(SvgChartTest, ClipsSegmentsLeavingThePlotAtItsEdge) {
  // (5, 5) -> (480, 285). (15, 5) would be at x 1280, past the right edge at
  // 880; the segment is cut there, and the SVG clip path backs that up.
  LineChart chart = UnitChart();
  chart.series.push_back(MakeSeries("s", {{5, 5}, {15, 5}}));
  const std::string svg = Render(chart);
  EXPECT_EQ(FirstPathData(svg), "M480.00 285.00L880.00 285.00");
  EXPECT_EQ(svg.find("1280.00"), std::string::npos);
  EXPECT_NE(svg.find("<clipPath id=\"plot-area\"><rect x=\"80.00\" y=\"70.00\" "
                     "width=\"800.00\" height=\"430.00\"/></clipPath>"),
            std::string::npos);
  EXPECT_NE(svg.find("clip-path=\"url(#plot-area)\""), std::string::npos);
}

TEST(SvgChartTest, SegmentEnteringFromOutsideStartsAtTheEdge) {
  // (-5, 5) -> (5, 5): enters at x = 0, i.e. 80 px.
  LineChart chart = UnitChart();
  chart.series.push_back(MakeSeries("s", {{-5, 5}, {5, 5}}));
  EXPECT_EQ(FirstPathData(Render(chart)), "M80.00 285.00L480.00 285.00");
}

TEST(SvgChartTest, SkipsNonPositiveValuesOnLogAxisAndBreaksTheLine) {
  // x linear 0..10 (x px = 80 + 80 x); y log 1..100 (1 -> 500, 10 -> 285,
  // 100 -> 70). The points at x 4 and 6 have y 0 and -5: they are skipped and
  // the line restarts at x 8.
  LineChart chart = UnitChart();
  chart.y_axis = MakeAxis(AxisScale::kLog, 1.0, 100.0);
  chart.series.push_back(MakeSeries("s", {{0, 1}, {2, 10}, {4, 0}, {6, -5}, {8, 10}, {10, 100}}));
  EXPECT_EQ(FirstPathData(Render(chart)), "M80.00 500.00L240.00 285.00M720.00 285.00L880.00 70.00");
}

TEST(SvgChartTest, SeriesWithoutColourTakeThePaletteInOrder) {
  LineChart chart = UnitChart();
  chart.series.push_back(MakeSeries("a", {{0, 0}, {10, 10}}));
  chart.series.push_back(MakeSeries("b", {{0, 10}, {10, 0}}));
  const std::string svg = Render(chart);
  EXPECT_NE(svg.find("stroke=\"#0072B2\""), std::string::npos);
  EXPECT_NE(svg.find("stroke=\"#D55E00\""), std::string::npos);
}

TEST(SvgChartTest, DashedSeriesGetADashArray) {
  // Dashes are 4 and 3 stroke widths: 8 and 6 px for a 2 px line.
  LineChart chart = UnitChart();
  chart.series.push_back(MakeSeries("s", {{0, 0}, {10, 10}}));
  chart.series.back().dashed = true;
  EXPECT_NE(Render(chart).find("stroke-dasharray=\"8.00 6.00\""), std::string::npos);
}

TEST(SvgChartTest, ExplicitTicksOutsideTheAxisAreDropped) {
  LineChart chart = UnitChart();
  chart.x_axis.ticks = {{5.0, "five"}, {50.0, "fifty"}};
  const std::string svg = Render(chart);
  EXPECT_NE(svg.find(">five</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">fifty</text>"), std::string::npos);
}

TEST(SvgChartTest, RejectsLogAxisWithNonPositiveMin) {
  LineChart chart = UnitChart();
  chart.title = "KV footprint";
  chart.y_axis.scale = AxisScale::kLog;
  const Result<std::string> svg = RenderSvg(chart);
  ASSERT_FALSE(svg.ok());
  EXPECT_EQ(svg.error().message(),
            "chart \"KV footprint\": y axis: log scale needs min > 0, got 0");
}

TEST(SvgChartTest, RejectsAxisWithMinNotBelowMax) {
  LineChart chart = UnitChart();
  chart.x_axis.min = 5.0;
  chart.x_axis.max = 1.0;
  const Result<std::string> svg = RenderSvg(chart);
  ASSERT_FALSE(svg.ok());
  EXPECT_EQ(svg.error().message(), "chart: x axis: min 5 must be below max 1");
}

TEST(SvgChartTest, RejectsNonPositiveStrokeWidth) {
  LineChart chart = UnitChart();
  chart.series.push_back(MakeSeries("bf16", {}));
  chart.series.back().stroke_width_px = 0.0;
  const Result<std::string> svg = RenderSvg(chart);
  ASSERT_FALSE(svg.ok());
  EXPECT_EQ(svg.error().message(),
            "chart: series 0 (\"bf16\"): stroke width must be positive, got 0");
}

LineChart FullChart() {
  LineChart chart;
  chart.title = "KV cache per sequence";
  chart.subtitle = "Llama-3.1-70B, bf16 weights";
  chart.x_axis = MakeAxis(AxisScale::kLog, 4096, 1 << 20);
  chart.x_axis.label = "context length (tokens)";
  chart.x_axis.ticks = PowerOfTwoTokenTicks(4096, 1 << 20);
  chart.y_axis = MakeAxis(AxisScale::kLog, 0.1, 1000);
  chart.y_axis.label = "GiB";
  chart.series.push_back(MakeSeries("bf16", {{4096, 1.25}, {1 << 20, 320}}));
  chart.series.push_back(MakeSeries("fp8", {{4096, 0.625}, {1 << 20, 160}}));
  chart.series.back().dashed = true;
  chart.reference_lines.push_back({71.6, "GPU capacity 71.6 GiB", "#444444", true});
  chart.annotations.push_back({234700, 71.6, "fits up to 229k tokens", "#0072B2"});
  return chart;
}

TEST(SvgChartTest, SameChartRendersByteIdentically) {
  EXPECT_EQ(Render(FullChart()), Render(FullChart()));
}

TEST(SvgChartTest, OutputIsAStandaloneDocumentWithBalancedTags) {
  const std::string svg = Render(FullChart());
  EXPECT_TRUE(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  EXPECT_NE(svg.find("font-family=\"DejaVu Sans, Arial, sans-serif\""), std::string::npos);
  EXPECT_TRUE(TagsBalance(svg));
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
