#include "kvbill/report/memory_chart.h"

#include <gtest/gtest.h>

#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
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
  // The curve at 4k tokens: 4,096 x 262,144 B = 1 GiB. It ends at the
  // model's context limit, max_position_embeddings 40,960: 10 GiB.
  EXPECT_EQ(chart->series[0].points.front().x, 4096.0);
  EXPECT_EQ(chart->series[0].points.front().y, 1.0);
  EXPECT_EQ(chart->series[0].points.back().x, 40960.0);
  EXPECT_EQ(chart->series[0].points.back().y, 10.0);
  EXPECT_EQ(chart->series[0].name, "qwen3-32b (context limit 40k)");
}

// The pool of SGLang keeps every token of gpt-oss's sliding layers: at
// 4,096 tokens 24 layers x 8 KV heads x (64 + 64) x 2 bytes x 4,096 =
// 201,326,592 B = 0.1875 GiB, as `fit --engine sglang` counts it; vLLM's
// pool holds the 12 sliding layers' 128-token window (and its prefill
// chunk) alone, less.
TEST(MemoryChartTest, SglangCurveHoldsEveryTokenOfSlidingLayers) {
  MemoryChartOptions o = H100();
  o.pool_engine = "sglang";
  auto sglang = BuildMemoryChart({Catalog("gpt-oss-20b")}, o);
  ASSERT_TRUE(sglang.ok()) << sglang.error().message();
  EXPECT_EQ(sglang->series[0].points.front().x, 4096.0);
  EXPECT_EQ(sglang->series[0].points.front().y, 0.1875);
  auto vllm = BuildMemoryChart({Catalog("gpt-oss-20b")}, H100());
  ASSERT_TRUE(vllm.ok()) << vllm.error().message();
  EXPECT_LT(vllm->series[0].points.front().y, 0.1875);
}

TEST(MemoryChartTest, LinesEndAtEachModelsContextLimit) {
  // Gemma-2-9B: 8,192 tokens; Llama-4-Scout: 10,485,760, past the axis' 1M.
  auto chart = BuildMemoryChart({Catalog("gemma-2-9b"), Catalog("llama-4-scout")}, H100());
  ASSERT_TRUE(chart.ok()) << chart.error().message();
  ASSERT_EQ(chart->series.size(), 2u);
  EXPECT_EQ(chart->series[0].points.back().x, 8192.0);
  for (const Point& p : chart->series[0].points) EXPECT_LE(p.x, 8192.0);
  EXPECT_EQ(chart->series[0].name, "gemma-2-9b (context limit 8k)");
  EXPECT_EQ(chart->series[1].points.back().x, 1048576.0);
  EXPECT_EQ(chart->series[1].name.find("context limit"), std::string::npos);
}

TEST(MemoryChartTest, MarksTheLongestFittingContext) {
  // Two sequences: 11,398,617,743 B free / (2 x 16 x 262,144 B per block
  // pair) = 1,358.8, so 1,358 blocks = 21,728 tokens = 21.22 x 1,024; within
  // the 40,960-token limit.
  MemoryChartOptions o = H100();
  o.batch = 2;
  auto chart = BuildMemoryChart({Catalog("qwen3-32b")}, o);
  ASSERT_TRUE(chart.ok());
  ASSERT_EQ(chart->annotations.size(), 1u);
  EXPECT_EQ(chart->annotations[0].x, 21728.0);
  EXPECT_EQ(chart->annotations[0].text, "qwen3-32b fits up to 21.2k tokens");
}

TEST(MemoryChartTest, MarksTheLineEndWhenTheWholeContextFits) {
  // One sequence fits up to 43,472 tokens (fit_test.cc), past the model's
  // 40,960: the marker sits at the end of the line, 10 GiB.
  auto chart = BuildMemoryChart({Catalog("qwen3-32b")}, H100());
  ASSERT_TRUE(chart.ok());
  ASSERT_EQ(chart->annotations.size(), 1u);
  EXPECT_EQ(chart->annotations[0].x, 40960.0);
  EXPECT_EQ(chart->annotations[0].y, 10.0);
  EXPECT_EQ(chart->annotations[0].text, "qwen3-32b: its whole 40k context fits");
}

TEST(MemoryChartTest, ModelWhoseWeightsDoNotFitHasNoFreeLine) {
  // Llama-3.1-70B: 141 GB of bf16 weights on one 80 GB GPU.
  auto chart = BuildMemoryChart({Catalog("llama-3.1-70b")}, H100());
  ASSERT_TRUE(chart.ok());
  EXPECT_EQ(chart->reference_lines.size(), 1u);
  EXPECT_EQ(chart->series[0].name, "llama-3.1-70b (weights too big; context limit 128k)");
  EXPECT_TRUE(chart->annotations.empty());
}

// At batch 16 Qwen3-32B's sequences fit up to 43,472 / 16 = 2,717 tokens
// each in whole blocks at most (fit_test.cc's free memory), left of the
// axis's 4,096: no marker can sit on the chart, so the legend says it.
TEST(MemoryChartTest, AModelThatStopsFittingLeftOfTheAxisSaysSo) {
  MemoryChartOptions o = H100();
  o.batch = 16;
  auto chart = BuildMemoryChart({Catalog("qwen3-32b")}, o);
  ASSERT_TRUE(chart.ok());
  EXPECT_TRUE(chart->annotations.empty());
  EXPECT_EQ(chart->series[0].name.rfind("qwen3-32b (fits up to ", 0), 0u) << chart->series[0].name;
  EXPECT_NE(chart->series[0].name.find(" tokens, left of the axis; context limit 40k)"),
            std::string::npos)
      << chart->series[0].name;
}

TEST(MemoryChartTest, LegendExplainsTheLineStyles) {
  auto chart = BuildMemoryChart({Catalog("qwen3-32b")}, H100());
  ASSERT_TRUE(chart.ok());
  ASSERT_EQ(chart->legend_notes.size(), 3u);
  EXPECT_FALSE(chart->legend_notes[0].dashed);
  EXPECT_EQ(chart->legend_notes[0].text, "solid: KV memory of one sequence (model colour)");
  EXPECT_TRUE(chart->legend_notes[1].dashed);
  EXPECT_EQ(chart->legend_notes[1].text, "dashed: capacity minus that model's weights");
}

// Block size 0: each model in the block its engine pages it in on the GPU.
// vLLM's FlashMLA takes 64-token blocks for DeepSeek-V3 on Hopper; Llama
// keeps 16. DeepSeek-V3's KV is 61 x (512 + 64) x 2 = 70,272 B a token, so
// 4,096 tokens = 64 whole blocks = 287,834,112 B = 0.268 GiB either way, and
// 4,100 tokens take 65 blocks of 64 (4,160 tokens) where 16-token blocks
// would take 257 (4,112 tokens).
TEST(MemoryChartTest, EachModelInItsEnginesBlocks) {
  MemoryChartOptions o;
  o.deployment.gpu = *LookupGpu("h200");
  o.deployment.tensor_parallel = 8;
  o.kv_format = Fmt("bf16");
  o.block_size = 0;
  o.min_context = 4100;
  o.max_context = 8192;
  auto chart = BuildMemoryChart({Catalog("llama-3.1-8b"), Catalog("deepseek-v3")}, o);
  ASSERT_TRUE(chart.ok()) << chart.error().message();
  EXPECT_NE(chart->subtitle.find("16-token blocks (64 for deepseek-v3)"), std::string::npos)
      << chart->subtitle;
  // The curve is the whole replica's: 8 GPUs each hold the (replicated)
  // latent, so 8 x 4,160 x 70,272 B.
  EXPECT_NEAR(chart->series[1].points.front().y, 8.0 * 4160 * 70272 / kGiB, 1e-9);
  o.block_size = 16;
  auto sixteen = BuildMemoryChart({Catalog("llama-3.1-8b"), Catalog("deepseek-v3")}, o);
  ASSERT_TRUE(sixteen.ok());
  EXPECT_NE(sixteen->subtitle.find(", 16-token blocks, on 8x h200"), std::string::npos)
      << sixteen->subtitle;
  EXPECT_NEAR(sixteen->series[1].points.front().y, 8.0 * 4112 * 70272 / kGiB, 1e-9);
}

TEST(MemoryChartTest, RendersAsSvg) {
  auto chart = BuildMemoryChart({Catalog("qwen3-32b"), Catalog("gpt-oss-20b")}, H100());
  ASSERT_TRUE(chart.ok());
  auto svg = RenderSvg(*chart);
  ASSERT_TRUE(svg.ok()) << svg.error().message();
  EXPECT_NE(svg->find("qwen3-32b: its whole 40k context fits"), std::string::npos);
  EXPECT_NE(svg->find("dashed: capacity minus that model&apos;s weights"), std::string::npos);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
