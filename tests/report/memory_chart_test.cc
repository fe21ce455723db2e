#include "kvbill/report/memory_chart.h"

#include <gtest/gtest.h>

#include "model/model_test_util.h"

namespace kvbill {
namespace {

MemoryChartOptions H100() {
  MemoryChartOptions o;
  o.deployment.gpu = *LookupGpu("h100-sxm");
  o.kv_format = Fmt("bf16");
  return o;
}

TEST(MemoryChartTest, OneCurvePerModelWithCapacityAndFreeLines) {
  auto chart = BuildMemoryChart({Catalog("qwen3-32b"), Catalog("llama-3.1-8b")}, H100());
  ASSERT_TRUE(chart.ok()) << chart.error().message();
  ASSERT_EQ(chart->series.size(), 2u);
  // Capacity first: 76,922,864,271 B = 71.64 GiB.
  ASSERT_EQ(chart->reference_lines.size(), 3u);
  EXPECT_NEAR(chart->reference_lines[0].y, 76922864271.0 / kGiB, 1e-9);
  EXPECT_EQ(chart->reference_lines[0].label, "1x h100-sxm capacity: 71.6 GiB");
  // Qwen3-32B's free memory: 11,398,617,743 B = 10.62 GiB.
  EXPECT_EQ(chart->reference_lines[1].label, "capacity - qwen3-32b weights: 10.6 GiB");
  // The curve at 4k tokens: 4,096 x 262,144 B = 1 GiB; at 1M: 256 GiB.
  EXPECT_EQ(chart->series[0].points.front().x, 4096.0);
  EXPECT_EQ(chart->series[0].points.front().y, 1.0);
  EXPECT_EQ(chart->series[0].points.back().x, 1048576.0);
  EXPECT_EQ(chart->series[0].points.back().y, 256.0);
}

TEST(MemoryChartTest, MarksTheLongestFittingContext) {
  auto chart = BuildMemoryChart({Catalog("qwen3-32b")}, H100());
  ASSERT_TRUE(chart.ok());
  ASSERT_EQ(chart->annotations.size(), 1u);
  // 43,472 tokens (fit_test.cc) = 42.45 x 1,024.
  EXPECT_EQ(chart->annotations[0].x, 43472.0);
  EXPECT_EQ(chart->annotations[0].text, "qwen3-32b fits up to 42.5k tokens");
}

TEST(MemoryChartTest, ModelWhoseWeightsDoNotFitHasNoFreeLine) {
  // Llama-3.1-70B: 141 GB of bf16 weights on one 80 GB GPU.
  auto chart = BuildMemoryChart({Catalog("llama-3.1-70b")}, H100());
  ASSERT_TRUE(chart.ok());
  EXPECT_EQ(chart->reference_lines.size(), 1u);
  EXPECT_EQ(chart->series[0].name, "llama-3.1-70b (weights too big)");
  EXPECT_TRUE(chart->annotations.empty());
}

TEST(MemoryChartTest, RendersAsSvg) {
  auto chart = BuildMemoryChart({Catalog("qwen3-32b"), Catalog("gpt-oss-20b")}, H100());
  ASSERT_TRUE(chart.ok());
  auto svg = RenderSvg(*chart);
  ASSERT_TRUE(svg.ok()) << svg.error().message();
  EXPECT_NE(svg->find("qwen3-32b fits up to 42.5k tokens"), std::string::npos);
}

}  // namespace
}  // namespace kvbill
