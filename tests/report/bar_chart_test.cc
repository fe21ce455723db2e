#include "kvbill/report/bar_chart.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

BarChart TwoBars() {
  BarChart chart;
  chart.title = "Cost per task";
  chart.axis_label = "USD";
  chart.tick_prefix = "$";
  Bar a;
  a.label = "baseline";
  a.value = 3.3;
  a.value_label = "$3.30";
  Bar b;
  b.label = "fp8";
  b.value = 0.35;
  b.color = "#009E73";
  chart.bars = {a, b};
  return chart;
}

TEST(BarChartTest, PlacesBarsWhereTheLayoutSays) {
  auto svg = RenderBarSvg(TwoBars());
  ASSERT_TRUE(svg.ok()) << svg.error().message();
  // Largest value 3.3: automatic ticks step 0.5 (3.3 / 6 = 0.55 rounds to 5 x 0.1),
  // so the axis ends at the next tick, 3.5. The plot spans x 260..750 (900 - 150),
  // 490 px = 140 px per dollar: 3.3 -> 462 px, 0.35 -> 49 px. Rows are 22 + 10 px
  // from y 70: bar 0 at 75, bar 1 at 107. Height: 70 + 2 x 32 + 60 = 194.
  EXPECT_NE(svg->find("width=\"900\" height=\"194.00\" viewBox=\"0 0 900 194.00\""),
            std::string::npos)
      << *svg;
  EXPECT_NE(svg->find("<rect x=\"260.00\" y=\"75.00\" width=\"462.00\" height=\"22.00\" "
                      "fill=\"#0072B2\"/>"),
            std::string::npos)
      << *svg;
  EXPECT_NE(svg->find("<rect x=\"260.00\" y=\"107.00\" width=\"49.00\" height=\"22.00\" "
                      "fill=\"#009E73\"/>"),
            std::string::npos);
  // Labels end 8 px left of the plot, centred on the bar (75 + 11 + 4 = 90); the
  // value label starts 6 px right of the bar's end (260 + 462 + 6 = 728).
  EXPECT_NE(svg->find("<text x=\"252.00\" y=\"90.00\" font-size=\"12.00\" fill=\"#222222\" "
                      "text-anchor=\"end\">baseline</text>"),
            std::string::npos);
  EXPECT_NE(svg->find("<text x=\"728.00\" y=\"90.00\" font-size=\"12.00\" fill=\"#222222\">"
                      "$3.30</text>"),
            std::string::npos);
  // Tick 0.5 at 260 + 0.5 x 140 = 330, under the plot (70 + 64 + 19 = 153).
  EXPECT_NE(svg->find("<text x=\"330.00\" y=\"153.00\" font-size=\"12.00\" fill=\"#333333\" "
                      "text-anchor=\"middle\">$0.5</text>"),
            std::string::npos);
  EXPECT_EQ(svg->substr(svg->size() - 7), "</svg>\n");
}

TEST(BarChartTest, ExplicitMaximumScalesTheBars) {
  BarChart chart = TwoBars();
  chart.value_max = 7.0;
  auto svg = RenderBarSvg(chart);
  ASSERT_TRUE(svg.ok());
  // 3.3 / 7 of 490 px = 231 px; 0.35 / 7 of it = 24.5 px.
  EXPECT_NE(svg->find("width=\"231.00\""), std::string::npos);
  EXPECT_NE(svg->find("width=\"24.50\""), std::string::npos);
  EXPECT_EQ(BarChartHeightPx(chart), 194.0);
}

TEST(BarChartTest, EscapesEveryText) {
  BarChart chart = TwoBars();
  chart.title = "Tom's \"bars\"";
  chart.bars[0].label = "a & <b>";
  chart.bars[0].value_label = "<1>";
  auto svg = RenderBarSvg(chart);
  ASSERT_TRUE(svg.ok());
  EXPECT_NE(svg->find(">a &amp; &lt;b&gt;</text>"), std::string::npos);
  EXPECT_NE(svg->find(">&lt;1&gt;</text>"), std::string::npos);
  EXPECT_NE(svg->find(">Tom&apos;s &quot;bars&quot;</text>"), std::string::npos);
  EXPECT_EQ(svg->find("<b>"), std::string::npos);
}

TEST(BarChartTest, SameChartGivesTheSameBytes) {
  auto first = RenderBarSvg(TwoBars());
  auto second = RenderBarSvg(TwoBars());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(*first, *second);
}

TEST(BarChartTest, AllZeroValuesGiveAUnitAxis) {
  BarChart chart = TwoBars();
  chart.bars[0].value = 0;
  chart.bars[1].value = 0;
  auto svg = RenderBarSvg(chart);
  ASSERT_TRUE(svg.ok());
  EXPECT_NE(svg->find("width=\"0.00\" height=\"22.00\""), std::string::npos);
  EXPECT_NE(svg->find(">$1.0</text>"), std::string::npos);
}

TEST(BarChartTest, RejectsNegativeValuesNoBarsAndNoRoom) {
  BarChart chart = TwoBars();
  chart.bars[1].value = -1;
  auto svg = RenderBarSvg(chart);
  ASSERT_FALSE(svg.ok());
  EXPECT_EQ(svg.error().message(),
            "chart \"Cost per task\": bar 1 (\"fp8\"): value must be finite and >= 0, got -1");
  chart.bars.clear();
  EXPECT_EQ(RenderBarSvg(chart).error().message(), "chart \"Cost per task\": no bars to draw");
  chart = TwoBars();
  chart.label_width_px = 800;
  EXPECT_EQ(RenderBarSvg(chart).error().message(),
            "chart \"Cost per task\": no room for the plot: 900 px less 800 px of labels and "
            "150 px of values");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
