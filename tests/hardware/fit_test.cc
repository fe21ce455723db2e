#include "kvbill/hardware/fit.h"

#include <gtest/gtest.h>

#include "kvbill/model/hf_config.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace {

FitRequest Qwen32bOnH100(Tokens context, const std::string& kv = "bf16") {
  FitRequest r;
  r.model = Catalog("qwen3-32b");
  r.kv_format = Fmt(kv);
  r.context = context;
  auto gpu = LookupGpu("h100-sxm");
  EXPECT_TRUE(gpu.ok());
  r.deployment.gpu = *gpu;
  return r;
}

// The fit claim. Qwen3-32B weights: 32,762,123,264 params x 2 B =
// 65,524,246,528 B (65.5 GB). One 128k sequence: 32 GiB = 34,359,738,368 B
// (34.4 GB). Capacity: 79.6 GiB usable = round(79.6 x 2^30) = 85,469,849,190 B,
// x 0.9 = 76,922,864,271 B. Needed 99,883,984,896 B: short by 22,961,120,625 B.
TEST(FitTest, Qwen3_32bWithOne128kSequenceDoesNotFitAnH100) {
  auto rep = EvaluateFit(Qwen32bOnH100(131072));
  ASSERT_TRUE(rep.ok());
  EXPECT_FALSE(rep->fits);
  EXPECT_EQ(rep->weights_bytes, 65524246528LL);
  EXPECT_EQ(rep->kv_bytes, 34359738368LL);
  EXPECT_EQ(rep->capacity_bytes, 76922864271LL);
  EXPECT_EQ(rep->headroom_bytes, -22961120625LL);
}

// Longest context at batch 1: free = 76,922,864,271 - 65,524,246,528 =
// 11,398,617,743 B; / 262,144 B per token = 43,482.3 tokens; whole 16-token
// blocks: 2,717 blocks = 43,472 tokens (2,718 blocks need 11,400,118,272 B).
TEST(FitTest, MaxContextCountsWholeBlocks) {
  auto rep = EvaluateFit(Qwen32bOnH100(131072));
  ASSERT_TRUE(rep.ok());
  EXPECT_EQ(rep->max_context, 43472);
  EXPECT_FALSE(rep->max_context_unbounded);
  EXPECT_EQ(rep->max_batch, 0);
}

// Two GPUs: weights 32,762,123,264 B each; 4 KV heads each -> 16 GiB of KV;
// 49.9 GB < 76.9 GB. One GPU does not fit, so the answer is 2.
TEST(FitTest, TwoGpusAreTheFewestThatFit) {
  auto rep = EvaluateFit(Qwen32bOnH100(131072));
  ASSERT_TRUE(rep.ok());
  ASSERT_TRUE(rep->min_gpus.has_value());
  EXPECT_EQ(*rep->min_gpus, 2);
}

// What would fit: FP8 KV alone needs 65,524,246,528 + 17,179,869,184 =
// 82,704,115,712 B > 76.9e9: still does not fit; FP8 KV and FP8 weights
// (linear layers in fp8, embeddings bf16) fits; 43,472 tokens fits; 2 GPUs fit.
TEST(FitTest, AlternativesSayHonestlyWhatFits) {
  const FitRequest r = Qwen32bOnH100(131072);
  auto rep = EvaluateFit(r);
  ASSERT_TRUE(rep.ok());
  const auto alts = SuggestAlternatives(r, *rep);
  auto find = [&](const std::string& change) -> const FitAlternative* {
    for (const auto& a : alts) {
      if (a.change == change) return &a;
    }
    return nullptr;
  };
  const FitAlternative* fp8 = find("fp8-e4m3 KV cache");
  ASSERT_NE(fp8, nullptr);
  EXPECT_FALSE(fp8->fits);
  EXPECT_EQ(fp8->needed_bytes, 82704115712LL);
  ASSERT_NE(find("fp8-e4m3 KV cache and fp8-e4m3 weights"), nullptr);
  EXPECT_TRUE(find("fp8-e4m3 KV cache and fp8-e4m3 weights")->fits);
  ASSERT_NE(find("context 43,472 tokens"), nullptr);
  EXPECT_TRUE(find("context 43,472 tokens")->fits);
  ASSERT_NE(find("2 GPUs (tensor parallel 2)"), nullptr);
  EXPECT_TRUE(find("2 GPUs (tensor parallel 2)")->fits);
  // FP8 weights are offered only where they are smaller than the model's
  // own: an NVFP4 checkpoint (about 4.5 bits a weight) gets FP8 KV alone.
  FitRequest nvfp4 = r;
  auto m = LoadModel(std::string(KVBILL_SOURCE_DIR) +
                     "/tests/data/configs/qwen3.5-397b-a17b-nvfp4.json");
  ASSERT_TRUE(m.ok()) << m.error().message();
  nvfp4.model = *m;
  nvfp4.deployment.tensor_parallel = 4;
  auto nv = EvaluateFit(nvfp4);
  ASSERT_TRUE(nv.ok());
  for (const FitAlternative& a : SuggestAlternatives(nvfp4, *nv)) {
    EXPECT_EQ(a.change.find("fp8-e4m3 weights"), std::string::npos) << a.change;
  }
}

// Max batch at 32k: per sequence 8 GiB = 8,589,934,592 B; 11,398,617,743 /
// 8,589,934,592 = 1.33 -> 1.
TEST(FitTest, MaxBatchAtContext) {
  auto rep = EvaluateFit(Qwen32bOnH100(32768));
  ASSERT_TRUE(rep.ok());
  EXPECT_TRUE(rep->fits);
  EXPECT_EQ(rep->max_batch, 1);
}

// Mistral-7B slides every layer: its KV stops growing at 4,096 tokens, so the
// longest context is not bounded by memory.
TEST(FitTest, SlidingOnlyModelHasUnboundedContext) {
  FitRequest r = Qwen32bOnH100(131072);
  r.model = Catalog("mistral-7b");
  auto rep = EvaluateFit(r);
  ASSERT_TRUE(rep.ok());
  EXPECT_TRUE(rep->fits);
  EXPECT_TRUE(rep->max_context_unbounded);
}

TEST(FitTest, TensorParallelMustSplitHeadsEvenly) {
  const ModelShape q = Catalog("qwen3-32b");  // 64 query heads, 8 KV heads
  EXPECT_TRUE(ValidTensorParallel(q, 8));
  EXPECT_TRUE(ValidTensorParallel(q, 16));  // KV heads replicated
  EXPECT_FALSE(ValidTensorParallel(q, 3));
  // Every layer's KV heads count, not only the largest (Gemma 4's full
  // layers have their own): 12 query heads, sliding layers of 12 KV heads,
  // full ones of 6. Four GPUs split 12 but neither split nor replicate 6.
  ModelShape m;
  m.name = "m";
  for (const std::int64_t kv : {12, 6}) {
    LayerShape l;
    l.query_heads = 12;
    l.qk_head_dim = l.v_head_dim = 64;
    l.kv_heads = kv;
    m.layers.push_back(l);
  }
  EXPECT_TRUE(ValidTensorParallel(m, 2));
  EXPECT_TRUE(ValidTensorParallel(m, 6));
  EXPECT_FALSE(ValidTensorParallel(m, 4));
  EXPECT_NE(TensorParallelProblem(m, 4).find("12 query heads and 6 KV heads"), std::string::npos)
      << TensorParallelProblem(m, 4);
}

// Expert parallelism gives each GPU whole experts: 8 routed experts split
// over 1, 2, 4 or 8 GPUs (also 3: 3, 3 and 2 of them, as vLLM's expert map
// spreads a remainder), not 16 (8 GPUs would hold none); a dense model has
// none to split.
TEST(FitTest, ExpertParallelGivesEachGpuAWholeExpert) {
  ModelShape m;
  m.name = "moe";
  m.moe.layers = 32;
  m.moe.experts = 8;
  m.moe.experts_per_token = 2;
  for (const int ep : {1, 2, 3, 4, 8}) EXPECT_TRUE(ValidExpertParallel(m, ep)) << ep;
  EXPECT_FALSE(ValidExpertParallel(m, 9));
  EXPECT_FALSE(ValidExpertParallel(m, 16));
  EXPECT_EQ(ExpertParallelProblem(m, 8), "");
  EXPECT_EQ(ExpertParallelProblem(m, 16),
            "16 GPUs cannot each hold one of model \"moe\"'s 8 routed experts: vLLM gives each "
            "GPU whole experts, experts / degree of them, so 8 GPUs would hold none and idle in "
            "every MoE layer; expert parallelism needs at most 8 GPUs a replica");
  EXPECT_NE(ExpertParallelProblem(m, 9).find("so 1 GPU would hold none"), std::string::npos);
  ModelShape dense;
  dense.name = "dense";
  EXPECT_TRUE(ValidExpertParallel(dense, 1));
  EXPECT_EQ(ExpertParallelProblem(dense, 2), "model \"dense\" has no routed experts to split");
}

TEST(FitTest, GpuCatalogHasTheDocumentedIds) {
  for (const char* id : {"h100-sxm", "h100-pcie", "h200", "b200", "gb200", "a100-80gb", "l40s",
                         "mi300x", "mi325x"}) {
    EXPECT_TRUE(LookupGpu(id).ok()) << id;
  }
  auto h100 = LookupGpu("h100-sxm");
  EXPECT_DOUBLE_EQ(h100->hbm_bandwidth_bytes_per_s, 3.35e12);
  EXPECT_DOUBLE_EQ(h100->bf16_flops_per_s, 989e12);
  EXPECT_DOUBLE_EQ(h100->DenseFlopsPerS(Fmt("fp8")), 1979e12);
  // No FP4 units: vLLM runs NVFP4 weights through Marlin FP4, weight-only,
  // at the 16-bit rate (format_support_test.cc has every cell).
  EXPECT_DOUBLE_EQ(h100->DenseFlopsPerS(Fmt("nvfp4")), 989e12);
  auto bad = LookupGpu("h900");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message().rfind("--gpu \"h900\": unknown GPU (catalog: h100-sxm,", 0), 0u);
}

TEST(FitTest, GpuCatalogErrorsGiveTheJsonPath) {
  auto r = ParseGpuCatalog(R"({"gpus": [{"id": "x", "memory_gb": 80, "hbm_bandwidth_tb_s": -1,
                                          "dense_tflops": {"bf16": 1}, "usd_per_gpu_hour": 1}]})",
                           "my.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "my.json#/gpus/0/hbm_bandwidth_tb_s: must be a positive number, got -1");
  // Positive but absurd: a bandwidth of 1e-300 TB/s would price a run at
  // 10^300 seconds.
  auto tiny =
      ParseGpuCatalog(R"({"gpus": [{"id": "x", "memory_gb": 80, "hbm_bandwidth_tb_s": 1e-300,
                                             "dense_tflops": {"bf16": 1}, "usd_per_gpu_hour": 1}]})",
                      "my.json");
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.error().message(),
            "my.json#/gpus/0/hbm_bandwidth_tb_s: must be in [0.001, 1000] (docs/hardware.md), got "
            "1e-300");
  // A price may say where it comes from and when; the date is a month or a day.
  auto dated = ParseGpuCatalog(R"({"gpus": [{"id": "x", "memory_gb": 80, "hbm_bandwidth_tb_s": 3,
                                              "dense_tflops": {"bf16": 1}, "usd_per_gpu_hour": 1,
                                              "price_source": "my invoice", "price_date": "2026-13"}]})",
                               "my.json");
  ASSERT_FALSE(dated.ok());
  EXPECT_EQ(dated.error().message(),
            "my.json#/gpus/0/price_date: must be a month like \"2026-05\" or a day like "
            "\"2026-05-14\", got \"2026-13\"");
  // Every GPU of the bundled catalog says where its price comes from and when.
  for (const GpuSpec& g : GpuCatalog()) {
    EXPECT_FALSE(g.price_source.empty()) << g.id;
    EXPECT_EQ(g.price_date.size(), 7u) << g.id;
  }
  // A name that is not a string threw out of the reader before.
  auto name = ParseGpuCatalog(R"({"gpus": [{"id": "x", "name": 5, "memory_gb": 80}]})", "my.json");
  ASSERT_FALSE(name.ok());
  EXPECT_EQ(name.error().message(), "my.json#/gpus/0/name: not a string");
}

}  // namespace
}  // namespace kvbill
