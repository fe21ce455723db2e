#include "kvbill/hardware/fit.h"

#include <gtest/gtest.h>

#include "kvbill/cache/kv_groups.h"
#include "kvbill/cost/engine_profile.h"
#include "kvbill/engine/simulator.h"
#include "kvbill/hardware/kv_blocks.h"
#include "kvbill/model/hf_config.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
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
  // Nor for an fp8 checkpoint: DeepSeek-V3's fp8 linear weights, of
  // 128 x 128 blocks, would shed only their block scales (671e9 / 16,384 x
  // 4 B = 164 MB, a quarter of a percent), while its router and a few
  // projections stay bf16 (under a tenth of its linear weights).
  FitRequest fp8_checkpoint = r;
  auto v3 = LoadModel("deepseek-v3");
  ASSERT_TRUE(v3.ok()) << v3.error().message();
  fp8_checkpoint.model = *v3;
  fp8_checkpoint.deployment.tensor_parallel = 8;
  fp8_checkpoint.deployment.gpu = *LookupGpu("h200");
  fp8_checkpoint.context = 32768;
  auto v3_report = EvaluateFit(fp8_checkpoint);
  ASSERT_TRUE(v3_report.ok()) << v3_report.error().message();
  const auto v3_alts = SuggestAlternatives(fp8_checkpoint, *v3_report);
  ASSERT_FALSE(v3_alts.empty());
  EXPECT_EQ(v3_alts[0].change, "fp8-e4m3 KV cache");
  for (const FitAlternative& a : v3_alts) {
    EXPECT_EQ(a.change.find("fp8-e4m3 weights"), std::string::npos) << a.change;
  }
}

// A KV format no engine runs on the GPU (NVFP4 on the H100: Blackwell's
// alone) has sizes but no deployment: a shorter context, a smaller batch or
// more GPUs keep it and run no better. What is offered is the narrowest KV
// format that runs, FP8: Qwen3-32B at 32k x 64 then needs 65,524,246,528
// B of weights + 64 x 32,768 x 131,072 B = 274,877,906,944 B of KV, far
// past the 76,922,864,271 B an H100 holds: it does not fit either.
TEST(FitTest, AKvFormatThatDoesNotRunIsReplacedNotKept) {
  FitRequest r = Qwen32bOnH100(32768, "nvfp4");
  r.batch = 64;
  auto rep = EvaluateFit(r);
  ASSERT_TRUE(rep.ok());
  const auto alts = SuggestAlternatives(r, *rep);
  ASSERT_EQ(alts.size(), 1u);
  EXPECT_EQ(alts[0].change, "fp8-e4m3 KV cache (nvfp4 does not run here)");
  EXPECT_FALSE(alts[0].fits);
  EXPECT_EQ(alts[0].needed_bytes, 65524246528LL + 274877906944LL);
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

// One full layer and one sliding layer of a 100-token window, each one KV
// head of 64 + 64 bf16 elements: 256 B a token, 4,096 B a 16-token block.
// No weights; 1,000,000 B of memory, all of it for KV: 244 blocks
// (1,000,000 / 4,096 = 244.1).
ModelShape FullAndSlidingLayers() {
  ModelShape m;
  m.name = "full-and-sliding";
  for (const LayerKind kind : {LayerKind::kFullAttention, LayerKind::kSlidingWindow}) {
    LayerShape l;
    l.kind = kind;
    l.query_heads = 1;
    l.kv_heads = 1;
    l.qk_head_dim = l.v_head_dim = 64;
    if (kind == LayerKind::kSlidingWindow) l.window = 100;
    m.layers.push_back(l);
  }
  return m;
}

FitRequest FullAndSlidingRequest(Tokens context, Tokens prefill_chunk) {
  FitRequest r;
  r.model = FullAndSlidingLayers();
  r.kv_format = Fmt("bf16");
  r.context = context;
  r.prefill_chunk_tokens = prefill_chunk;
  r.deployment.gpu.id = "test";
  r.deployment.gpu.usable_memory_bytes = 1000000;
  r.deployment.memory_fraction = 1.0;
  return r;
}

// Computing 48 tokens an iteration, the sliding layer holds at most
// ceil(100 / 16) + ceil(48 / 16) + 1 = 7 + 3 + 1 = 11 blocks: its window,
// the chunk and one for a window not starting on a block boundary. The full
// layer may take 244 - 11 = 233 blocks: 233 x 16 = 3,728 tokens. At that
// context KV is 244 x 4,096 = 999,424 B, the exact figure (3,728 + min(3,728,
// 100 - 1 + 48) = 3,875 tokens) x 256 = 992,000 B. Without the chunk the
// sliding layer holds its window alone, in the pool's count ceil(100 / 16)
// + 1 = 8 blocks (one more for a window not starting on a block boundary,
// WindowedPeakBlocks with no chunk): 236 x 16 = 3,776 tokens.
TEST(FitTest, SlidingLayersHoldThePrefillChunkBesideTheirWindow) {
  auto rep = EvaluateFit(FullAndSlidingRequest(3728, 48));
  ASSERT_TRUE(rep.ok()) << rep.error().message();
  EXPECT_EQ(rep->weights_bytes, 0);
  EXPECT_EQ(rep->max_context, 3728);
  EXPECT_TRUE(rep->fits);
  EXPECT_EQ(rep->kv_bytes, 999424);
  EXPECT_EQ(rep->kv_exact_bytes, 992000);
  EXPECT_EQ(rep->max_batch, 1);
  auto past = EvaluateFit(FullAndSlidingRequest(3729, 48));  // 234 + 11 = 245 blocks
  ASSERT_TRUE(past.ok());
  EXPECT_FALSE(past->fits);
  EXPECT_EQ(past->kv_bytes, 245 * 4096);
  auto stored = EvaluateFit(FullAndSlidingRequest(3728, 0));
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->max_context, 3776);
  EXPECT_EQ(
      KvPool(MakeKvGroupLayout(FullAndSlidingLayers(), Fmt("bf16"), 1, 16), 244).LongestSequence(0),
      3776);
  // The engine's pool of those 244 pages (one page a block of one layer,
  // two groups) holds the same longest sequence.
  const KvPool pool(MakeKvGroupLayout(FullAndSlidingLayers(), Fmt("bf16"), 1, 16), 244);
  EXPECT_EQ(pool.layout().page_bytes, 4096);
  EXPECT_EQ(pool.LongestSequence(48), 3728);
}

// Two full layers and three sliding ones (a 100-token window), each 256 B
// a token as above. vLLM groups them in groups of the fewest layers of a
// kind, 2: full (2), sliding (2), sliding (1, padded to 2), so a page is 16
// tokens of 2 layers, 8,192 B, and 1,000,000 B hold 122 pages (122.07).
// Computing 48 tokens an iteration, each sliding group holds at most
// ceil(100 / 16) + ceil(48 / 16) + 1 = 11 pages, the full group one page a
// block: 122 - 2 x 11 = 100 blocks, 1,600 tokens. Counted layer by layer
// (no padding: 2 x 4,096 B a block of the full layers beside 3 x 11 x 4,096
// = 135,168 B) it would be floor((1,000,000 - 135,168) / 8,192) = 105
// blocks, 1,680 tokens, more than the engine's pool admits.
ModelShape PaddedSlidingGroup() {
  ModelShape m = FullAndSlidingLayers();
  m.name = "padded-sliding-group";
  m.layers.push_back(m.layers[1]);
  m.layers.push_back(m.layers[0]);
  m.layers.push_back(m.layers[1]);
  for (std::size_t i = 0; i < m.layers.size(); ++i) m.layers[i].index = static_cast<int>(i);
  return m;
}

TEST(FitTest, SeveralKvGroupsCountThePoolsPaddedPages) {
  FitRequest r = FullAndSlidingRequest(1600, 48);
  r.model = PaddedSlidingGroup();
  auto rep = EvaluateFit(r);
  ASSERT_TRUE(rep.ok()) << rep.error().message();
  EXPECT_TRUE(rep->fits);
  EXPECT_EQ(rep->max_context, 1600);
  EXPECT_EQ(rep->kv_bytes, 122 * 8192);
  // Exact: (2 x 1,600 + 3 x min(1,600, 100 - 1 + 48)) x 256 B.
  EXPECT_EQ(rep->kv_exact_bytes, (2 * 1600 + 3 * 147) * 256);
  r.context = 1601;  // 101 + 22 = 123 pages
  auto past = EvaluateFit(r);
  ASSERT_TRUE(past.ok());
  EXPECT_FALSE(past->fits);
  // The engine's pool of 122 such pages holds the same longest sequence.
  const KvPool pool(MakeKvGroupLayout(PaddedSlidingGroup(), Fmt("bf16"), 1, 16), 122);
  EXPECT_EQ(pool.layout().page_bytes, 8192);
  EXPECT_EQ(pool.layout().groups.size(), 3U);
  EXPECT_EQ(pool.LongestSequence(48), 1600);
}

// No kind with 1.25 times the fewest layers: vLLM groups by the most. 22
// full and 20 sliding layers (256 B a token each, as above) make two groups
// of 22, the sliding one padded by 2 (not three of 20, one full group
// padded by 18): a page of 16 tokens of 22 layers, 90,112 B. 1,000,000 B
// hold 11 pages; at 48 tokens an iteration the sliding group holds
// min(ceil(c / 16), 11) pages, so a sequence of 5 blocks (80 tokens) takes
// 5 + 5 = 10 pages and one of 6 blocks (96 tokens) 12: the longest is 80.
TEST(FitTest, NearlyEqualKindsAreGroupedByTheMost) {
  FitRequest r = FullAndSlidingRequest(80, 48);
  r.model.layers.clear();
  for (int i = 0; i < 42; ++i) {
    LayerShape l = FullAndSlidingLayers().layers[i < 22 ? 0 : 1];
    l.index = i;
    r.model.layers.push_back(l);
  }
  const KvGroupLayout layout = MakeKvGroupLayout(r.model, Fmt("bf16"), 1, 16);
  EXPECT_EQ(layout.layers_per_group, 22);
  EXPECT_EQ(layout.groups.size(), 2U);
  EXPECT_EQ(layout.page_bytes, 90112);
  auto rep = EvaluateFit(r);
  ASSERT_TRUE(rep.ok()) << rep.error().message();
  EXPECT_EQ(rep->max_context, 80);
  EXPECT_EQ(rep->kv_bytes, 10 * 90112);
}

// A batch holds one prefill chunk, not one a sequence: the iteration's
// token budget is shared, so one sequence is prefilled at the peak while the
// others decode, a token beside their windows. At context 500 with 480
// tokens an iteration: the full layer 32 blocks (500 / 16 = 31.25); the
// sliding layer min(32, ceil(100 / 16) + ceil(480 / 16) + 1 = 38) = 32
// blocks while prefilling, min(32, 7 + 1 + 1) = 9 decoding. So 64 blocks
// (262,144 B) for the first sequence and 41 (167,936 B) for each other:
// three take 262,144 + 2 x 167,936 = 598,016 B (not 3 x 262,144 =
// 786,432), and 1,000,000 B hold 1 + floor(737,856 / 167,936) = 5 (not
// floor(1,000,000 / 262,144) = 3). Simulate's pool holds the same: it
// never gives a decoding sequence a chunk.
TEST(FitTest, ABatchHoldsOnePrefillChunk) {
  FitRequest r = FullAndSlidingRequest(500, 480);
  r.batch = 3;
  auto rep = EvaluateFit(r);
  ASSERT_TRUE(rep.ok()) << rep.error().message();
  EXPECT_EQ(rep->kv_bytes, 598016);
  EXPECT_EQ(rep->max_batch, 5);
  r.batch = 5;
  auto five = EvaluateFit(r);
  ASSERT_TRUE(five.ok());
  EXPECT_TRUE(five->fits);
  EXPECT_EQ(five->kv_bytes, 262144 + 4 * 167936);
  r.batch = 6;
  auto six = EvaluateFit(r);
  ASSERT_TRUE(six.ok());
  EXPECT_FALSE(six->fits);
  // Without a window the chunk changes nothing: Qwen3-32B's 32k sequence
  // is 8 GiB whatever the batch's prefill.
  FitRequest q = Qwen32bOnH100(32768);
  q.batch = 2;
  q.prefill_chunk_tokens = 8192;
  auto two = EvaluateFit(q);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->kv_bytes, 2 * 8589934592LL);
}

// fit answers what simulate's pool holds: gpt-oss-20b on an L4 at a memory
// fraction of 0.72, vLLM's defaults (its activation reserve, its token
// budget for a GPU below 70 GiB, 2,048 tokens, and its block size). Its 12
// sliding layers (a 128-token window) hold ceil(128 / 16) + ceil(2,048 / 16)
// + 1 = 137 blocks at most; without the chunk ceil(128 / 16) + 1 = 9. fit
// without the chunk says 137 - 9 = 128 blocks of the full group, 128 x 16 =
// 2,048 tokens, more than the engine admits.
TEST(FitTest, LongestContextIsTheEnginePoolsLongestSequence) {
  auto gpu = LookupGpu("l4");
  ASSERT_TRUE(gpu.ok());
  const ModelShape model = Catalog("gpt-oss-20b");
  const Tokens chunk = DefaultEngineLimits("vllm", *gpu, 1).max_num_batched_tokens;
  ASSERT_EQ(chunk, 2048);
  auto reserve_gib = DefaultReserveGib("vllm", *gpu, 1, model.hidden_size);
  ASSERT_TRUE(reserve_gib.ok());

  SimulationConfig c;
  c.model = model;
  c.kv_format = Fmt("bf16");
  c.gpu = *gpu;
  c.memory_fraction = 0.72;
  c.activation_reserve_gib = *reserve_gib;
  c.max_num_batched_tokens = chunk;
  c.block_size = DefaultKvBlockSize("vllm", model, *gpu);
  ASSERT_EQ(c.block_size, 16);
  auto pool = SizeReplicaPool(c);
  ASSERT_TRUE(pool.ok()) << pool.error().message();

  FitRequest r;
  r.model = model;
  r.kv_format = Fmt("bf16");
  r.context = 1;
  r.block_size = c.block_size;
  r.prefill_chunk_tokens = chunk;
  r.deployment.gpu = *gpu;
  r.deployment.memory_fraction = 0.72;
  r.deployment.activation_reserve_bytes = static_cast<Bytes>(*reserve_gib * kBytesPerGiB);
  auto rep = EvaluateFit(r);
  ASSERT_TRUE(rep.ok()) << rep.error().message();
  EXPECT_EQ(rep->max_context, pool->sequence_tokens);
  EXPECT_EQ(rep->max_context % 16, 0);

  r.prefill_chunk_tokens = 0;
  auto stored = EvaluateFit(r);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->max_context - rep->max_context, 2048);
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

// A block-FP8 checkpoint leaves each GPU whole 128 x 128 blocks of its MLP's
// intermediate dimension, or vLLM and SGLang refuse to load it.
// DeepSeek-V3: dense layers of 18,432, experts of 2,048; over 16 GPUs 1,152
// (9 blocks) and 128 (one); over 32, 576 (4.5 blocks): refused, expert
// parallelism or not (the dense layers are split either way). MiniMax-M2.5:
// experts of 1,536 and no dense MLP; over 8 GPUs 192 (1.5 blocks): refused
// unless expert parallelism keeps each expert whole; over 4, 384 (three).
TEST(FitTest, TensorParallelKeepsWholeQuantizationBlocks) {
  auto v3 = LoadModel("deepseek-v3");
  ASSERT_TRUE(v3.ok()) << v3.error().message();
  EXPECT_TRUE(ValidTensorParallel(*v3, 16));
  EXPECT_FALSE(ValidTensorParallel(*v3, 32));
  EXPECT_FALSE(ValidTensorParallel(*v3, 32, /*experts_split=*/false));
  EXPECT_NE(TensorParallelProblem(*v3, 32).find(
                "(intermediate size 18,432) into whole 128-element quantization blocks: 576 a "
                "GPU (vLLM and SGLang refuse"),
            std::string::npos)
      << TensorParallelProblem(*v3, 32);
  auto m2 = LoadModel(std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/minimax-m2.5.json");
  ASSERT_TRUE(m2.ok()) << m2.error().message();
  EXPECT_TRUE(ValidTensorParallel(*m2, 4));
  EXPECT_FALSE(ValidTensorParallel(*m2, 8));
  EXPECT_TRUE(ValidTensorParallel(*m2, 8, /*experts_split=*/false));
  EXPECT_NE(TensorParallelProblem(*m2, 8).find(
                "(intermediate size 1,536) into whole 128-element quantization blocks: 192 a GPU"),
            std::string::npos)
      << TensorParallelProblem(*m2, 8);
  EXPECT_NE(TensorParallelProblem(*m2, 8).find("expert parallelism keeps the routed experts whole"),
            std::string::npos);
  // The bf16 catalog model of the same shape splits anywhere its heads do.
  EXPECT_TRUE(ValidTensorParallel(Catalog("qwen3-32b"), 16));
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
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
