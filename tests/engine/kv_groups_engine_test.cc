// The engine with KV cache groups: sliding-window and chunked layers free
// their blocks outside the window (kv_groups.h, docs/engine.md).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/engine_test_util.h"
#include "kvbill/cache/kv_groups.h"
#include "kvbill/engine/simulator.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/weight_bytes.h"
#include "kvbill/trace/generator.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

struct HybridWorkload {
  const char* name;
  const char* model;
  std::vector<ConfigOverride> overrides;
  Tokens capacity_tokens;  // 0: what memory holds
  std::uint64_t seed;
  int tasks;
  int replicas = 1;
  Seconds pin_s = 0;
};

TEST(KvGroupsEngineTest, EventSkippingAgreesWithStepModeOnHybridModels) {
  const HybridWorkload workloads[] = {
      {"gpt-oss, tight pool", "gpt-oss-20b", {}, 60000, 11, 8},
      {"gpt-oss, memory pool, two replicas", "gpt-oss-20b", {}, 0, 12, 12, 2},
      {"gemma-3-like 5:1, tight pool",
       "gemma-2-9b",
       {{"model_type", "gemma3_text"}, {"sliding_window", "1024"}},
       200000,
       13,
       8},
      {"llama-4 chunked 3:1", "llama-4-scout", {}, 120000, 14, 6},
      {"gpt-oss, pinning", "gpt-oss-20b", {}, 200000, 15, 8, 1, 4.0},
      // Windows that cross block boundaries at odd offsets: 8 tokens (less
      // than a block) and 40-token chunks (not a multiple of 16).
      {"window of 8, tight pool", "gpt-oss-20b", {{"sliding_window", "8"}}, 110000, 16, 8},
      {"mistral, every layer sliding", "mistral-7b", {}, 100000, 18, 6},
      {"chunks of 40, tight pool", "llama-4-scout", {{"attention_chunk_size", "40"}}, 40000, 17, 6},
  };
  for (const HybridWorkload& w : workloads) {
    SCOPED_TRACE(w.name);
    auto preset = FindGeneratorPreset("coding-agent");
    ASSERT_TRUE(preset.ok());
    preset->arrivals_per_s = 0.5;  // crowd the replica
    TraceGenerator gen(*preset, w.seed);
    std::vector<Task> tasks;
    for (int i = 0; i < w.tasks; ++i) tasks.push_back(gen.Next());
    SimulationConfig c = Config(w.model);
    c.model = Catalog(w.model, w.overrides);
    c.replicas = w.replicas;
    c.capacity_tokens = w.capacity_tokens;
    c.pin_during_tool_s = w.pin_s;
    const SimulationResult event = RunSim(c, tasks);
    c.step_mode = true;
    const SimulationResult step = RunSim(c, tasks);
    ExpectSameRuns(event, step);
    EXPECT_LT(event.steps_advanced * 5, step.steps_advanced);  // it did skip
    std::int64_t preemptions = 0;
    for (const RequestRecord& r : event.requests) preemptions += r.preemptions;
    std::cout << "[ measured ] " << w.name << ": " << event.requests.size() << " requests, "
              << event.evicted_blocks << " pages evicted, " << preemptions << " preemptions, "
              << step.steps_advanced << " steps vs " << event.steps_advanced << " fused\n";
  }
}

// A gpt-oss-like toy of two layers (full, sliding window of 32), 2 KV heads
// of 64 + 64 elements: 512 bytes per token per layer in bf16, and 1,000,000
// bf16 embedding parameters (2,000,000 bytes of weights). On a GPU of
// 100,000,000 usable bytes at memory fraction 1: 98,000,000 bytes of KV.
// Two groups of one layer: a page is 16 x 512 = 8,192 bytes, so
// floor(98,000,000 / 8,192) = 11,962 pages (8,192 x 11,962 = 97,992,704).
// Counted at full size a block was 16,384 bytes: 5,981 blocks.
TEST(KvGroupsEngineTest, ToyPoolPagesFromTheByteArithmetic) {
  SimulationConfig c = Config("gpt-oss-20b");
  ModelShape m;
  m.name = "toy";
  m.architecture = "toy";
  m.hidden_size = 256;
  m.vocab_size = 1000;
  LayerShape full;
  full.query_heads = 4;
  full.qk_head_dim = 64;
  full.v_head_dim = 64;
  full.kv_heads = 2;
  LayerShape sliding = full;
  sliding.kind = LayerKind::kSlidingWindow;
  sliding.window = 32;
  m.layers = {full, sliding};
  m.params.embedding = 1000000;
  c.model = m;
  c.gpu.usable_memory_bytes = 100000000;
  c.memory_fraction = 1.0;
  auto weights = ComputeWeightBytes(c.model, c.weight_format);
  ASSERT_TRUE(weights.ok());
  EXPECT_EQ(weights->total, 2000000);
  const SimulationResult r = RunSim(c, {LoopTask("t", 1, 100, 0, 10, 0)});
  EXPECT_EQ(r.kv_pool_blocks, 11962);
  ASSERT_EQ(r.requests.size(), 1u);
  // The request ends with 109 tokens computed and the 110th reserved:
  // full blocks [0, 7), sliding from floor((109 - 31) / 16) = 4: 3 pages;
  // the most it held was after its 100-token prefill, 7 + 7 pages: 14 x 8,192.
  EXPECT_EQ(r.requests[0].peak_kv_bytes, 14 * 8192);
}

// gpt-oss-120b (36 layers: 18 full, 18 sliding of 128 tokens; 8 KV heads of
// 64 + 64 elements: 2,048 bytes per token per layer in bf16) on one H100.
// With sliding blocks counted at full size a block of 16 tokens is
// 36 x 2,048 x 16 = 1,179,648 bytes; with two groups a page is
// 18 x 2,048 x 16 = 589,824 bytes, half, so the pool has twice the pages
// (or one more). A long sequence of L tokens then holds L / 16 full pages
// and at most ceil(128 / 16) + 1 = 9 sliding ones (plus a prefill chunk's),
// so the tokens one sequence can reach nearly double: (P - 9) x 16 against
// P / 2 x 16 before.
TEST(KvGroupsEngineTest, FreeingSlidingBlocksDoublesGptOss120bCapacity) {
  std::string types = "[";
  for (int i = 0; i < 36; ++i)
    types += i % 2 == 0 ? "\"sliding_attention\"," : "\"full_attention\",";
  types.back() = ']';
  SimulationConfig c = Config("gpt-oss-20b");
  c.model =
      Catalog("gpt-oss-20b",
              {{"num_hidden_layers", "36"}, {"num_local_experts", "128"}, {"layer_types", types}});
  const KvGroupLayout layout = MakeKvGroupLayout(c.model, c.kv_format, 1, 16);
  ASSERT_EQ(layout.groups.size(), 2u);
  EXPECT_EQ(layout.page_bytes, 589824);

  const SimulationResult r = RunSim(c, {LoopTask("t", 1, 1000, 0, 10, 0)});
  auto weights = ComputeWeightBytes(c.model, c.weight_format);
  ASSERT_TRUE(weights.ok());
  const long double left =
      std::floor(static_cast<long double>(c.gpu.usable_memory_bytes) * c.memory_fraction) -
      static_cast<long double>(weights->total);
  const auto counted_full = static_cast<std::int64_t>(left / 1179648);
  EXPECT_EQ(r.kv_pool_blocks, static_cast<std::int64_t>(left / 589824));
  EXPECT_EQ(r.kv_cache_groups, 2);
  EXPECT_GE(r.kv_pool_blocks, 2 * counted_full);
  EXPECT_LE(r.kv_pool_blocks, 2 * counted_full + 1);
  const Tokens before = counted_full * 16;
  const Tokens after = (r.kv_pool_blocks - 9) * 16;
  const double ratio = static_cast<double>(after) / static_cast<double>(before);
  EXPECT_GT(ratio, 1.99);
  EXPECT_LT(ratio, 2.0);
  std::cout << "[ measured ] gpt-oss-120b on one H100: weights " << weights->total << " B, "
            << counted_full << " blocks (" << before << " tokens) counted at full size, "
            << r.kv_pool_blocks << " pages (" << after
            << " tokens) with sliding blocks freed: " << ratio << "x\n";
}

TEST(KvGroupsEngineTest, LinearStateModelsNeedPrefixCachingOff) {
  SimulationConfig c = Config("jamba-1.5-mini");
  c.capacity_tokens = 1000000;
  const std::vector<Task> tasks = {LoopTask("t", 2, 1000, 100, 10, 1)};
  auto r = Simulate(c, tasks, PlanAll(tasks, "keep_all"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "model \"jamba-1.5-mini\" has constant-state (SSM / linear attention / short "
            "convolution) layers, whose state a block prefix cache cannot reuse (vLLM serves "
            "such models without prefix caching unless opted in): set prefix_cache.enabled to "
            "false");
  c.prefix_caching = false;
  const SimulationResult ok = RunSim(c, tasks);
  ASSERT_EQ(ok.requests.size(), 2u);
  EXPECT_EQ(ok.requests[1].cached_tokens, 0);
  // 1,000,000 tokens = 62,500 blocks of the single attention group.
  EXPECT_EQ(ok.kv_pool_blocks, 62500);
  EXPECT_EQ(ok.kv_cache_groups, 1);
}

TEST(KvGroupsEngineTest, OffloadTierIsAnErrorWithSlidingLayers) {
  SimulationConfig c = Config("gpt-oss-20b");
  c.offload_capacity_tokens = 1000000;
  const std::vector<Task> tasks = {LoopTask("t", 1, 1000, 0, 10, 0)};
  auto r = Simulate(c, tasks, PlanAll(tasks, "keep_all"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "the host offload tier (prefix_cache.offload) is not modelled for models with "
            "sliding-window, chunked or compressed attention layers");
}

ModelShape DeepSeekV4Flash() {
  auto m = LoadModel(std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/deepseek-v4-flash.json");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return m.ok() ? *m : ModelShape{};
}

// DeepSeek-V4-Flash in fp8 (584-byte latents, 132-byte indexer keys; 21
// ratio-4, 20 ratio-128 and 2 window-only layers) in 256-token blocks, as
// vLLM serves it: one group whose page holds a block's compressed latents,
// 21 x 64 x (584 + 132) + 20 x 2 x 584 = 962,304 + 23,360 = 985,664 bytes
// (3,850.25 a token); in 16-token blocks a ratio-128 layer still takes one
// entry a block: 21 x 4 x 716 + 20 x 584 = 71,824. The windows (43 x 128 x
// 584 = 3,214,336) and the compressors' fp32 state (12,206,080) are
// 15,420,416 bytes a sequence: 16 pages of 985,664 (15.6 rounded up), held
// while the sequence is, and no bar to prefix caching.
TEST(KvGroupsEngineTest, CompressedLayersPageTheirEntriesAndHoldWindowsPerSequence) {
  const ModelShape v4 = DeepSeekV4Flash();
  const KvGroupLayout l = MakeKvGroupLayout(v4, Fmt("fp8"), 4, 256);
  ASSERT_EQ(l.groups.size(), 1u);
  EXPECT_EQ(l.groups[0].kind, KvGroupKind::kFull);
  EXPECT_EQ(l.page_bytes, 985664);
  EXPECT_EQ(l.state_bytes, 15420416);
  EXPECT_EQ(l.state_pages, 16);
  EXPECT_FALSE(l.state_stops_prefix_caching);
  EXPECT_EQ(MakeKvGroupLayout(v4, Fmt("fp8"), 4, 16).page_bytes, 71824);
  EXPECT_TRUE(
      MakeKvGroupLayout(Catalog("jamba-1.5-mini"), Fmt("bf16"), 1, 16).state_stops_prefix_caching);
}

// The engine replays it (4 x H200, fp8 KV, 256-token blocks) with the
// prefix cache on and a pool tight enough to evict and preempt: event
// skipping equals step mode, and later turns hit their prefix.
TEST(KvGroupsEngineTest, CompressedModelEventSkippingAgreesWithStepMode) {
  SimulationConfig c = Config("qwen3-8b", "h200");
  c.model = DeepSeekV4Flash();
  c.kv_format = Fmt("fp8");
  c.gpus_per_replica = 4;
  c.block_size = 256;
  c.capacity_tokens = 400000;
  const std::vector<Task> tasks = PresetTasks("coding-agent", 0.5, 21, 8);
  const SimulationResult event = RunBothModes(c, tasks);
  Tokens cached = 0;
  for (const RequestRecord& r : event.requests) cached += r.cached_tokens;
  EXPECT_GT(cached, 0);
  EXPECT_EQ(event.kv_cache_groups, 1);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
