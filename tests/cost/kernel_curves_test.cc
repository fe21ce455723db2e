#include "kvbill/cost/kernel_curves.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

constexpr KernelSpec kSpec{2e12, 1e15, 2e15};

TEST(KernelCurvesTest, GemmIsFixedTimePlusSmoothMaxOfMemoryAndCompute) {
  GemmCurve c;
  c.t0_s = 5e-6;
  c.mem_eff = 0.5;
  c.compute_eff = 0.8;
  c.smoothness = 2;
  // m = 1, n = k = 1000: bytes = 1e6 x 2 + 1000 x 2 + 1000 x 2 = 2,004,000,
  // at 2e12 x 0.5 = 2.004 us; FLOPs 2e6 at 1e15 x 0.8 = 0.0025 us.
  // sqrt(2.004^2 + 0.0025^2) = 2.0040016 us, plus 5 us.
  EXPECT_NEAR(c.Seconds(kSpec, 1, 1000, 1000), 5e-6 + 2.0040016e-6, 1e-12);
  // m = 10,000, n = k = 4096: compute 2 x 1e4 x 4096^2 / 8e14 = 419.43 us;
  // bytes 4096^2 x 2 + 2 x 1e4 x 4096 x 2 = 197.4 MB at 1e12 = 197.39 us;
  // sqrt(419.43^2 + 197.39^2) = 463.56 us.
  const double tm = (4096.0 * 4096 * 2 + 2 * 1e4 * 4096 * 2) / 1e12;
  const double tc = 2 * 1e4 * 4096.0 * 4096 / 8e14;
  EXPECT_NEAR(c.Seconds(kSpec, 1e4, 4096, 4096), 5e-6 + std::sqrt(tm * tm + tc * tc), 1e-12);
  // An activation-quantisation term adds 3 m k bytes at BW x eq.
  c.quant_eff = 0.5;
  EXPECT_NEAR(c.Seconds(kSpec, 1e4, 4096, 4096) - 5e-6 - std::sqrt(tm * tm + tc * tc),
              3 * 1e4 * 4096 / 1e12, 1e-12);
}

TEST(KernelCurvesTest, UniformRoutingTouchesTheExpectedDistinctExperts) {
  // alpha = 0: every expert equally likely, q = k / E = 8 / 64; T tokens
  // touch E (1 - (1 - q)^T) experts and make T k pairs.
  const MoeLoad load = ExpectedMoeLoad(10, 64, 8, 0.0, 64);
  EXPECT_NEAR(load.touched_experts, 64 * (1 - std::pow(1 - 0.125, 10)), 1e-9);
  EXPECT_NEAR(load.pairs, 80, 1e-9);
  // Each touched expert gets 80 / touched < 64 tokens: one 64-row tile each.
  EXPECT_NEAR(load.padded_pairs, 64 * load.touched_experts, 1e-9);
}

TEST(KernelCurvesTest, SkewedRoutingTouchesFewerExperts) {
  const MoeLoad uniform = ExpectedMoeLoad(16, 128, 8, 0.0, 128);
  const MoeLoad skewed = ExpectedMoeLoad(16, 128, 8, 1.2, 128);
  EXPECT_LT(skewed.touched_experts, uniform.touched_experts);
  EXPECT_NEAR(skewed.pairs, 16 * 8, 1e-9);  // every token still picks 8 experts
}

TEST(KernelCurvesTest, RoutingProbabilitiesCapTheFavouritesAndShareTheRest) {
  // 4 experts, top-2, alpha = 2: popularity 1, 1/4, 1/9, 1/16. Uncapped,
  // c = 2 / (1 + 1/4 + 1/9 + 1/16) would give the first 1.41 > 1, so it is
  // certain and the rest share 1: c = 1 / (1/4 + 1/9 + 1/16) = 144 / 61.
  const std::vector<double> q = RoutingProbabilities(4, 2, 2.0);
  EXPECT_DOUBLE_EQ(q[0], 1.0);
  EXPECT_NEAR(q[1], 36.0 / 61, 1e-12);
  EXPECT_NEAR(q[2], 16.0 / 61, 1e-12);
  EXPECT_NEAR(q[3], 9.0 / 61, 1e-12);
}

TEST(KernelCurvesTest, AllReduceInterpolatesLogLogAndExtrapolatesLinearly) {
  AllReduceCurve c{2, "test", {{1e3, 1e-5}, {1e5, 1e-4}, {1e6, 5e-4}}};
  EXPECT_DOUBLE_EQ(c.Seconds(500), 1e-5);
  // Halfway in log between 1e3 and 1e5 is 1e4: halfway in log between the
  // times, sqrt(1e-5 x 1e-4).
  EXPECT_NEAR(c.Seconds(1e4), std::sqrt(1e-5 * 1e-4), 1e-15);
  // Beyond the last point: the last segment's slope, 4e-4 s per 9e5 bytes.
  EXPECT_NEAR(c.Seconds(2e6), 5e-4 + 1e6 * 4e-4 / 9e5, 1e-15);
}

TEST(KernelCurvesTest, LinearCurveSumsCoefficientsTimesFeatures) {
  LinearCurve c{"k", {1e-5, 2e-8, 0, 1.25}, {}};
  // 10 us + 64 x 0.02 us + 1 GB / 2 TB/s x 1.25 = 10 + 1.28 + 625 us.
  const auto f = DecodeAttentionFeatures(kSpec, 64, 32, 128, 1e9);
  EXPECT_NEAR(c.Seconds(f), 1e-5 + 64 * 2e-8 + 1.25 * 1e9 / 2e12, 1e-15);
}

TEST(KernelCurvesTest, ParseErrorsNameTheJsonPointer) {
  auto r = ParseKernelCurves(R"({"gpus": [{"gpu": "x", "spec": {"hbm_bytes_per_s": 1,
      "bf16_flops_per_s": 1, "fp8_flops_per_s": 1}, "moe": {"bf16": {"kernel": "k", "coef": [1, -2]}}}]})",
                             "c.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "c.json#/gpus/0/moe/bf16/coef/1: must be a number >= 0");
  auto missing = ParseKernelCurves(R"({"gpus": [{"spec": {}}]})", "c.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), "c.json#/gpus/0/gpu: missing or not a string");
}

TEST(KernelCurvesTest, BundledCurvesCoverTheMeasuredGpusAndRoundTrip) {
  const KernelCurveSet& set = BundledKernelCurves();
  for (const char* gpu : {"a100-80gb", "h100-sxm", "h200"}) {
    const GpuKernelCurves* g = set.For(gpu);
    ASSERT_NE(g, nullptr) << gpu;
    EXPECT_TRUE(g->gemm.count("bf16")) << gpu;
    EXPECT_TRUE(g->decode_attention.count("bf16")) << gpu;
    EXPECT_NE(g->PrefillFor("bf16", 128), nullptr) << gpu;
    EXPECT_TRUE(g->moe.count("bf16")) << gpu;
    EXPECT_NE(g->AllReduceFor(8), nullptr) << gpu;
    // Every fitted curve says how well it reproduces its table.
    EXPECT_GT(g->gemm.at("bf16").error.rows, 1000) << gpu;
    EXPECT_LT(g->gemm.at("bf16").error.median, 0.15) << gpu;
  }
  auto again = ParseKernelCurves(KernelCurvesToJson(set), "round trip");
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(KernelCurvesToJson(*again), KernelCurvesToJson(set));
}

TEST(KernelCurvesTest, BusiestGpuShareIsTheMeanPlusTheExpectedMaximumDeviation) {
  // q = {1, 0.5, 0.5, 0} over 2 GPUs of 2 experts: mean share 2 x 0.5 = 1;
  // variance of q 0.125; of a 2-of-4 draw's sum 2 x 0.125 x (4 - 2) / 3 =
  // 1 / 6, sd 0.408248; E[max of 2 normals] = 1 / sqrt(pi) = 0.5642:
  // 1 + 0.5642 x 0.408248 = 1.230333. Exactly: expert 0's partner is one
  // of {0.5, 0.5, 0} alike, so the busiest GPU holds 1.5 (2 in 3) or 1 (its
  // partner 0, the other GPU 1): 4 / 3, the bound of the GPU holding
  // q = 1 with an average other, 1 + (2 - 1) / 3.
  EXPECT_NEAR(ExpectedBusiestShare({1, 0.5, 0.5, 0}, 2), 4.0 / 3.0, 1e-12);
  // Mixtral's 8 experts, top 2, over 8 GPUs, one each: the busiest holds
  // the most popular, q0 = 2 / (1 + 2^-1.2 + ... + 8^-1.2) = 2 / 2.333018
  // = 0.857259 (42.9% of the pairs; the approximation gave 0.602).
  const std::vector<double> mixtral = RoutingProbabilities(8, 2, 1.2);
  EXPECT_NEAR(ExpectedBusiestShare(mixtral, 8), 0.857259, 1e-6);
  // 16 experts of q 1, 0.5, 0.5 and 13 x 0 over 2 GPUs: mean q 0.125,
  // variance 0.078125, sd of an 8-of-16 draw's sum sqrt(8 x 0.078125 x 8 /
  // 15) = 0.577350, so the approximation is 1 + 0.5642 x 0.577350 =
  // 1.325741, below the GPU holding q = 1 with 7 average others,
  // 1 + 7 x (2 - 1) / 15 = 1.466667: the bound is taken.
  EXPECT_NEAR(ExpectedBusiestShare({1, 0.5, 0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 2),
              1.0 + 7.0 / 15.0, 1e-12);
  // One GPU holds every expert: the whole share, 2.
  EXPECT_DOUBLE_EQ(ExpectedBusiestShare({1, 0.5, 0.5, 0}, 1), 2.0);
  // Equal popularity has no skew: 8 experts of q 0.25 over 4 GPUs, 0.5 each.
  EXPECT_DOUBLE_EQ(ExpectedBusiestShare(std::vector<double>(8, 0.25), 4), 0.5);
}

// Masked pairs (routed to another GPU's experts, vLLM's expert_map) add
// row traffic and nothing else. kSpec: 2 TB/s, bf16 peak 1 PFLOP/s. An
// expert of hidden 4,096 and width 1,536 (Qwen3-235B's, whole): FLOPs per
// pair 6 x 4,096 x 1,536 = 37,748,736.
TEST(KernelCurvesTest, RowTrafficFollowsTheExpertWidthAndMaskedRowsCostNoFlops) {
  MoeLoad load;
  load.touched_experts = 2;
  load.pairs = 10;
  load.padded_pairs = 64;
  load.expert_bytes = 1e6;
  load.expert_flops_per_pair = 6.0 * 4096 * 1536;
  load.hidden = 4096;
  const auto local = MoeFeatures(kSpec, load, false);
  load.masked_pairs = 30;
  const auto masked = MoeFeatures(kSpec, load, false);
  // Weights 2 x 1e6 B / 2e12 = 1 us; FLOPs 10 x 37,748,736 / 1e15 =
  // 0.37748736 us; padded 64 x 37,748,736 / 1e15 = 2.415919104 us: the same
  // with or without masked pairs.
  for (std::size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(masked[i], local[i]) << i;
  EXPECT_DOUBLE_EQ(masked[1], 1e-6);
  EXPECT_NEAR(masked[2], 3.7748736e-7, 1e-20);
  EXPECT_NEAR(masked[3], 2.415919104e-6, 1e-19);
  // An own row: 2 B x (3 x 4,096 + 6 x 1,536) = 43,008 B; 10 of them at
  // 2 TB/s = 0.21504 us. A masked row: 2 B x (2 x 4,096 + 5 x 1,536) =
  // 31,744 B; 30 more add 952,320 B: 1,382,400 B = 0.6912 us.
  EXPECT_NEAR(local[4], 2.1504e-7, 1e-19);
  EXPECT_NEAR(masked[4], 6.912e-7, 1e-19);
  // Tensor parallelism over 4 splits the width to 384: 2 x (12,288 + 2,304)
  // = 29,184 B a row, 10 rows = 0.14592 us.
  load.masked_pairs = 0;
  load.expert_flops_per_pair = 6.0 * 4096 * 384;
  EXPECT_NEAR(MoeFeatures(kSpec, load, false)[4], 1.4592e-7, 1e-19);
}

TEST(KernelCurvesTest, MoeShapeTableInterpolatesLogLogByTokensAndExtrapolatesLinearly) {
  MoeShapeTable t;
  t.tokens = {1, 16, 256};
  t.seconds = {1e-5, 4e-5, 1e-3};
  EXPECT_DOUBLE_EQ(t.Seconds(0.5), 1e-5);
  // 4 tokens are halfway in log from 1 to 16: sqrt(1e-5 x 4e-5) = 2e-5.
  EXPECT_NEAR(t.Seconds(4), 2e-5, 1e-18);
  // 512 tokens: the last segment's 9.6e-4 s per 240 tokens, 256 more.
  EXPECT_NEAR(t.Seconds(512), 1e-3 + 256 * 9.6e-4 / 240, 1e-15);
}

// A model's experts find their shape by hidden size, the expert's width
// (recovered from its parameters, biases allowed), top-k, expert count,
// tensor-parallel degree and routing.
TEST(KernelCurvesTest, MoeTableForMatchesTheExpertShapeBiasesIncluded) {
  GpuKernelCurves g;
  MoeShapeTable t;
  t.dtype = "mxfp4";
  t.hidden = 2880;
  t.inter = 2880;
  t.top_k = 4;
  t.experts = 32;
  t.tensor_parallel = 1;
  t.alpha = 1.2;
  t.tokens = {1, 2};
  t.seconds = {1e-5, 2e-5};
  g.moe_tables.push_back(t);
  // gpt-oss-20b: 3 x 2,880 x 2,880 weights and 2 x 2,880 + 2,880 biases.
  const std::int64_t with_biases = 3LL * 2880 * 2880 + 3 * 2880;
  EXPECT_NE(g.MoeTableFor("mxfp4", 2880, with_biases, 4, 32, 1, 1.2), nullptr);
  EXPECT_NE(g.MoeTableFor("mxfp4", 2880, 3LL * 2880 * 2880, 4, 32, 1, 1.2), nullptr);
  // One more bias than the projections have outputs: another shape.
  EXPECT_EQ(g.MoeTableFor("mxfp4", 2880, with_biases + 1, 4, 32, 1, 1.2), nullptr);
  EXPECT_EQ(g.MoeTableFor("bf16", 2880, with_biases, 4, 32, 1, 1.2), nullptr);
  EXPECT_EQ(g.MoeTableFor("mxfp4", 2880, with_biases, 4, 32, 2, 1.2), nullptr);
  EXPECT_EQ(g.MoeTableFor("mxfp4", 2880, with_biases, 4, 32, 1, 1.01), nullptr);
  EXPECT_EQ(g.MoeTableFor("mxfp4", 2880, with_biases, 4, 128, 1, 1.2), nullptr);

  KernelCurveSet set;
  set.source = "tables [a b] \"quoted [c d]\"";  // strings keep their spaces
  g.gpu = "h100-sxm";
  g.spec = KernelSpec{1, 1, 1};
  set.gpus.push_back(g);
  const std::string text = KernelCurvesToJson(set);
  EXPECT_NE(text.find("\"tokens\": [1.0,2.0]"), std::string::npos);  // numbers on one line
  auto back = ParseKernelCurves(text, "c.json");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->source, set.source);
  ASSERT_EQ(back->gpus[0].moe_tables.size(), 1u);
  const MoeShapeTable* read = back->gpus[0].MoeTableFor("mxfp4", 2880, with_biases, 4, 32, 1, 1.2);
  ASSERT_NE(read, nullptr);
  EXPECT_DOUBLE_EQ(read->Seconds(2), 2e-5);
  auto bad = ParseKernelCurves(
      R"({"gpus": [{"gpu": "g", "spec": {"hbm_bytes_per_s": 1, "bf16_flops_per_s": 1,
      "fp8_flops_per_s": 1}, "moe_tables": [{"dtype": "bf16", "hidden": 8, "inter": 8,
      "top_k": 2, "experts": 8, "tensor_parallel": 1, "alpha": 1.2, "tokens": [1, 4],
      "seconds": [1e-5]}]}]})",
      "c.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(),
            "c.json#/gpus/0/moe_tables/0: needs at least two tokens and one time per token count");
  auto huge = ParseKernelCurves(
      R"({"gpus": [{"gpu": "g", "spec": {"hbm_bytes_per_s": 1, "bf16_flops_per_s": 1,
      "fp8_flops_per_s": 1}, "moe_tables": [{"dtype": "bf16", "hidden": 1e300, "inter": 8,
      "top_k": 2, "experts": 8, "tensor_parallel": 1, "alpha": 1.2, "tokens": [1, 4],
      "seconds": [1e-5, 2e-5]}]}]})",
      "c.json");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().message(), "c.json#/gpus/0/moe_tables/0/hidden: out of range");
}

TEST(KernelCurvesTest, CollectiveTablesRoundTripThroughJson) {
  KernelCurveSet set;
  GpuKernelCurves g;
  g.gpu = "h100-sxm";
  g.spec = KernelSpec{1, 1, 1};
  g.all_to_all.push_back(CollectiveCurve{4, "NCCL a2a", {{512, 1e-5}, {1024, 2e-5}}});
  g.all_gather.push_back(CollectiveCurve{8, "NCCL ag", {{512, 3e-5}, {2048, 4e-5}}});
  set.gpus.push_back(g);
  auto back = ParseKernelCurves(KernelCurvesToJson(set), "c.json");
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_NE(back->gpus[0].AllToAllFor(4), nullptr);
  EXPECT_EQ(back->gpus[0].AllToAllFor(4)->kernel, "NCCL a2a");
  EXPECT_DOUBLE_EQ(back->gpus[0].AllToAllFor(4)->Seconds(1024), 2e-5);
  ASSERT_NE(back->gpus[0].AllGatherFor(8), nullptr);
  EXPECT_EQ(back->gpus[0].AllGatherFor(2), nullptr);
  auto bad = ParseKernelCurves(
      R"({"gpus": [{"gpu": "g", "spec": {"hbm_bytes_per_s": 1, "bf16_flops_per_s": 1,
      "fp8_flops_per_s": 1}, "all_to_all": [{"gpus": 2, "points": [[2, 1], [1, 1]]}]}]})",
      "c.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "c.json#/gpus/0/all_to_all/0/points: bytes must increase");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
