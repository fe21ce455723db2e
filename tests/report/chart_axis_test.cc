#include "kvbill/report/chart_axis.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

Axis MakeAxis(AxisScale scale, double min, double max) {
  Axis axis;
  axis.scale = scale;
  axis.min = min;
  axis.max = max;
  return axis;
}

std::vector<std::string> Labels(const std::vector<Tick>& ticks) {
  std::vector<std::string> labels;
  for (const Tick& t : ticks) labels.push_back(t.label);
  return labels;
}

TEST(ChartAxisTest, LogAxisMapsDecadesToEqualWidths) {
  // log10 spans 1..3 over 800 px, so each decade is 400 px:
  // 10 -> 80, 100 -> 80 + 400 = 480, 1000 -> 880.
  const Axis axis = MakeAxis(AxisScale::kLog, 10.0, 1000.0);
  EXPECT_DOUBLE_EQ(AxisToPixel(axis, 10.0, 80.0, 880.0), 80.0);
  EXPECT_DOUBLE_EQ(AxisToPixel(axis, 100.0, 80.0, 880.0), 480.0);
  EXPECT_DOUBLE_EQ(AxisToPixel(axis, 1000.0, 80.0, 880.0), 880.0);
}

TEST(ChartAxisTest, LinearYAxisGrowsUpwards) {
  // 20 on 0..80 is a quarter of the way up from 500 to 70: 500 - 430/4 = 392.5.
  const Axis axis = MakeAxis(AxisScale::kLinear, 0.0, 80.0);
  EXPECT_DOUBLE_EQ(AxisToPixel(axis, 20.0, 500.0, 70.0), 392.5);
}

TEST(ChartAxisTest, AutomaticLogTicksAreOneTwoFiveWithinThreeDecades) {
  using Strings = std::vector<std::string>;
  EXPECT_EQ(Labels(AutomaticTicks(MakeAxis(AxisScale::kLog, 1.0, 1000.0))),
            (Strings{"1", "2", "5", "10", "20", "50", "100", "200", "500", "1000"}));
  // 0.5 .. 30: ticks at 1, 2, 5 x 10^k inside, decimals only where needed.
  EXPECT_EQ(Labels(AutomaticTicks(MakeAxis(AxisScale::kLog, 0.05, 30.0))),
            (Strings{"0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "20"}));
}

TEST(ChartAxisTest, AutomaticLogTicksArePowersOfTenOverWideRanges) {
  EXPECT_EQ(Labels(AutomaticTicks(MakeAxis(AxisScale::kLog, 1.0, 1e6))),
            (std::vector<std::string>{"1", "10", "100", "1000", "10k", "100k", "1M"}));
}

TEST(ChartAxisTest, AutomaticLinearTicksUseNiceSteps) {
  // 0..80: raw step 80 / 6 = 13.3 rounds to 10. 0..1: 0.167 rounds to 0.2.
  // 0..131072: 21845 rounds to 20000, labelled in thousands; zero is plain.
  using Strings = std::vector<std::string>;
  EXPECT_EQ(Labels(AutomaticTicks(MakeAxis(AxisScale::kLinear, 0.0, 80.0))),
            (Strings{"0", "10", "20", "30", "40", "50", "60", "70", "80"}));
  EXPECT_EQ(Labels(AutomaticTicks(MakeAxis(AxisScale::kLinear, 0.0, 1.0))),
            (Strings{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}));
  EXPECT_EQ(Labels(AutomaticTicks(MakeAxis(AxisScale::kLinear, 0.0, 131072.0))),
            (Strings{"0", "20k", "40k", "60k", "80k", "100k", "120k"}));
}

TEST(ChartAxisTest, PowerOfTwoTokenTicksAreLabelledAsTokenCounts) {
  // 2^12 .. 2^20: nine ticks.
  EXPECT_EQ(
      Labels(PowerOfTwoTokenTicks(4096, 1 << 20)),
      (std::vector<std::string>{"4k", "8k", "16k", "32k", "64k", "128k", "256k", "512k", "1M"}));
  // 2^10 .. 2^30 is 21 powers: every other one, 11 ticks.
  EXPECT_EQ(PowerOfTwoTokenTicks(1024, 1 << 30).size(), 11u);
}

TEST(ChartAxisTest, CrossingXOfProportionalDataIsTheSameOnAnyScale) {
  // y = x / 2048 GiB: 32k tokens -> 16, 64k -> 32. y = 20 is a quarter of the
  // way: 32768 + 32768 / 4 = 40960. On log-log, log2(20/16) = log2(1.25), so
  // x = 32768 * 1.25 = 40960 as well.
  const std::vector<Point> line = {{32768, 16}, {65536, 32}};
  EXPECT_NEAR(*CrossingX(line, 20.0, AxisScale::kLinear, AxisScale::kLinear), 40960.0, 1e-9);
  EXPECT_NEAR(*CrossingX(line, 20.0, AxisScale::kLog, AxisScale::kLog), 40960.0, 1e-6);
}

TEST(ChartAxisTest, CrossingXInterpolatesInLogSpace) {
  // x log, y linear: y 0 -> 10 over log10 x 3 -> 5; y 5 is halfway, 10^4.
  const std::vector<Point> line = {{1e3, 0}, {1e5, 10}};
  EXPECT_NEAR(*CrossingX(line, 5.0, AxisScale::kLog, AxisScale::kLinear), 1e4, 1e-6);
}

TEST(ChartAxisTest, CrossingXTakesTheFirstUpwardCrossing) {
  // Down through y 5 at x 0.5 (ignored), up through it at x 1.5.
  const std::vector<Point> line = {{0, 10}, {1, 0}, {2, 10}};
  EXPECT_DOUBLE_EQ(*CrossingX(line, 5.0, AxisScale::kLinear, AxisScale::kLinear), 1.5);
}

TEST(ChartAxisTest, CrossingXIsEmptyWhenTheLineStaysBelow) {
  const std::vector<Point> line = {{0, 1}, {1, 2}};
  EXPECT_FALSE(CrossingX(line, 5.0, AxisScale::kLinear, AxisScale::kLinear).has_value());
  EXPECT_FALSE(CrossingX(line, 0.0, AxisScale::kLinear, AxisScale::kLog).has_value());
}

TEST(ChartAxisTest, CrossingXIgnoresSegmentsTouchingSkippedPoints) {
  // On a log y axis the point at y 0 is skipped, so 1 -> 0 -> 100 has no
  // segment rising through 10; the next segment 100 -> 1000 never crosses it.
  const std::vector<Point> line = {{1, 1}, {2, 0}, {3, 100}, {4, 1000}};
  EXPECT_FALSE(CrossingX(line, 10.0, AxisScale::kLinear, AxisScale::kLog).has_value());
}

TEST(ChartAxisTest, ValidatesBoundsAndScale) {
  EXPECT_TRUE(ValidateAxis(MakeAxis(AxisScale::kLog, 0.5, 2.0)).ok());
  EXPECT_EQ(ValidateAxis(MakeAxis(AxisScale::kLinear, 5.0, 1.0)).error().message(),
            "min 5 must be below max 1");
  EXPECT_EQ(ValidateAxis(MakeAxis(AxisScale::kLog, -1.0, 1.0)).error().message(),
            "log scale needs min > 0, got -1");
}

TEST(ChartAxisTest, NonPositiveValuesAreNotPlottableOnLogAxes) {
  EXPECT_TRUE(IsPlottable(AxisScale::kLinear, 0.0));
  EXPECT_FALSE(IsPlottable(AxisScale::kLog, 0.0));
  EXPECT_FALSE(IsPlottable(AxisScale::kLinear, std::nan("")));
  EXPECT_TRUE(IsWithinAxis(MakeAxis(AxisScale::kLog, 1.0, 100.0), 100.0));
  EXPECT_FALSE(IsWithinAxis(MakeAxis(AxisScale::kLog, 1.0, 100.0), 100.5));
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
