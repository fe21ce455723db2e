// Whole scenarios through the engine: the claims docs/engine.md reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "kvbill/cost/roofline.h"
#include "kvbill/scenario/run.h"
#include "kvbill/scenario/warnings.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

ScenarioOutcome RunJson(const std::string& json) {
  auto s = ParseScenario(json, "inline.json");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
  auto out = RunScenario(*s);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message());
  return out.ok() ? std::move(*out) : ScenarioOutcome{};
}

// model.text_only leaves the vision tower out of what the replica loads.
// Qwen3.5-9B's tower (its vision_config, Qwen3-VL's layout), worked by hand:
// patch embedding Conv3d 3 x 2 x 16 x 16 x 1,152 + 1,152 = 1,770,624;
// position table 2,304 x 1,152 = 2,654,208; 27 blocks of two LayerNorms
// 4,608, qkv 1,152 x 3,456 + 3,456, proj 1,152^2 + 1,152, fc1 1,152 x 4,304
// + 4,304, fc2 4,304 x 1,152 + 1,152 = 15,239,504 each: 411,466,608; merger
// LayerNorm 2,304 + 4,608^2 + 4,608 + 4,608 x 4,096 + 4,096 = 40,119,040.
// Sum: 456,010,480 parameters.
TEST(ScenarioRunTest, TextOnlyLeavesTheVisionTowerOut) {
  const std::string base = R"({"prefix_cache": {"enabled": false}, "model": {"name": "qwen3.5-9b")";
  auto whole = ParseScenario(base + "}}", "inline.json");
  auto text = ParseScenario(base + R"(, "text_only": true}})", "inline.json");
  ASSERT_TRUE(whole.ok() && text.ok());
  EXPECT_FALSE(whole->model.text_only);
  EXPECT_TRUE(text->model.text_only);
  auto with_tower = BuildSimulationConfig(*whole);
  auto without = BuildSimulationConfig(*text);
  ASSERT_TRUE(with_tower.ok() && without.ok());
  EXPECT_EQ(with_tower->model.params.vision, 456010480);
  EXPECT_EQ(without->model.params.vision, 0);
  EXPECT_EQ(with_tower->model.params.Total() - without->model.params.Total(), 456010480);
}

// A hybrid model's recurrent-state layers are priced without a measured
// kernel, and the run says so: Qwen3.5-9B keeps a Gated DeltaNet state in
// 24 of its 32 layers (config.json layer_types: 3 linear, then 1 full
// attention, 8 times); Qwen3-8B keeps none.
// vLLM's SchedulerConfig refuses a token budget below the sequence cap. On
// an H100 vLLM's defaults are 8,192 tokens and 1,024 sequences
// (DefaultEngineLimits), so a budget of 512 alone is refused, naming the
// key that was set; 512 with 256 sequences is accepted, and SGLang, which
// has no such rule, takes 512 tokens beside its 2,048 running requests.
TEST(ScenarioRunTest, ATokenBudgetBelowTheSequenceCapIsRefused) {
  // Read as a rule of the scenario (a sweep point that breaks it is a row
  // marked not runnable).
  auto build = [](const std::string& engine) -> Status {
    auto s = ParseScenario(R"({"engine": )" + engine + "}", "s.json");
    if (!s) return s.error();
    auto c = BuildSimulationConfig(*s);
    if (!c) return c.error();
    return OkStatus();
  };
  auto low = build(R"({"max_num_batched_tokens": 512})");
  ASSERT_FALSE(low.ok());
  EXPECT_EQ(low.error().message(),
            "s.json#/engine/max_num_batched_tokens: max_num_batched_tokens 512 is below the "
            "default max_num_seqs 1,024: vLLM refuses it (its SchedulerConfig needs a token "
            "budget of at least one token per running request); raise "
            "engine.max_num_batched_tokens or lower engine.max_num_seqs");
  auto seqs = build(R"({"max_num_seqs": 9000})");
  ASSERT_FALSE(seqs.ok());
  EXPECT_EQ(seqs.error().message().rfind("s.json#/engine/max_num_seqs: the default "
                                         "max_num_batched_tokens 8,192 is below max_num_seqs "
                                         "9,000",
                                         0),
            0u)
      << seqs.error().message();
  EXPECT_TRUE(build(R"({"max_num_batched_tokens": 512, "max_num_seqs": 256})").ok());
  auto sglang = ParseScenario(
      R"({"deployment": {"engine": "sglang"}, "engine": {"max_num_batched_tokens": 512}})",
      "s.json");
  ASSERT_TRUE(sglang.ok()) << sglang.error().message();
  EXPECT_TRUE(BuildSimulationConfig(*sglang).ok());
  // kvbill's SGLang cuts a prompt's chunk at a block: 15 tokens an iteration
  // beside 16-token blocks would admit no prompt (a run that stalled).
  auto no_block = ParseScenario(
      R"({"deployment": {"engine": "sglang"}, "engine": {"max_num_batched_tokens": 15}})",
      "s.json");
  ASSERT_FALSE(no_block.ok());
  EXPECT_EQ(no_block.error().message().rfind(
                "s.json#/engine/max_num_batched_tokens: max_num_batched_tokens 15 is below one KV "
                "block of 16 tokens",
                0),
            0u)
      << no_block.error().message();
  // SGLang keeps 1.5 MiB per chunk token for activations out of its memory
  // fraction: on an H100 (79.6 GiB = 81,510.4 MiB) a chunk of 65,536 tokens
  // keeps 512 + 98,304 + 2 x 256 (graphs) + 128 = 99,456 MiB, more than
  // there is: (81,510.4 - 99,456) / 81,510.4 = -0.220, and SGLang would not
  // start; 49,152 tokens keep 74,880 MiB and leave 0.081.
  auto sglang_chunk = [](int tokens) {
    return ParseScenario(R"({"deployment": {"engine": "sglang"}, "engine": )"
                         R"({"max_num_batched_tokens": )" +
                             std::to_string(tokens) + "}}",
                         "s.json");
  };
  EXPECT_TRUE(sglang_chunk(49152).ok());
  auto no_memory = sglang_chunk(65536);
  ASSERT_FALSE(no_memory.ok());
  EXPECT_EQ(no_memory.error().message(),
            "s.json#/engine/max_num_batched_tokens: SGLang derives its memory fraction "
            "(mem_fraction_static) from the GPU's memory less 1.5 MiB per token of its chunked "
            "prefill size for activations: max_num_batched_tokens 65,536 on h100-sxm leaves "
            "-0.220, no memory for weights and KV, and SGLang would not start; lower "
            "engine.max_num_batched_tokens or set deployment.memory_fraction");
}

// vLLM's int4 KV cache (int4_per_token_head) keeps one fp32 scale per token
// and KV head: for Qwen3-8B's 128-element heads that is int4-g128, 128 x 4 +
// 32 bits = 68 bytes a head and token, 36 layers x 8 KV heads x 2 (K, V) x
// 68 = 39,168 bytes a token (KIVI's int4-g32 would be 46,080). "int4" names
// it; another group size is refused on vLLM. No kernel table times it, so
// the run says its attention time is assumed.
TEST(ScenarioRunTest, Int4KvIsVllmsPerTokenHeadLayoutAndItsTimingIsAssumed) {
  auto parse = [](const std::string& kv) {
    return ParseScenario(R"({"model": "qwen3-8b", "kv_format": ")" + kv + R"("})", "s.json");
  };
  auto build = [&](const std::string& kv) {
    auto s = parse(kv);
    EXPECT_TRUE(s.ok());
    return BuildSimulationConfig(*s);
  };
  auto int4 = build("int4");
  ASSERT_TRUE(int4.ok()) << int4.error().message();
  EXPECT_EQ(int4->kv_format.name, "int4-g128");
  auto roofline = Roofline::Make(int4->model, int4->kv_format, "auto", int4->gpu, RooflineParams{});
  ASSERT_TRUE(roofline.ok());
  EXPECT_EQ(roofline->KvWriteBytesPerToken(), 39168);
  EXPECT_TRUE(build("int4-g128").ok());
  auto g32 = parse("int4-g32");
  ASSERT_FALSE(g32.ok());
  EXPECT_EQ(g32.error().message(),
            "s.json#/kv_format: vLLM stores an int4 KV cache with one scale per token and KV head "
            "(int4_per_token_head): int4-g128 for this model's 128-element heads, not int4-g32 "
            "(\"int4\" names vLLM's)");
  const ScenarioOutcome run = RunJson(
      R"({"model": "qwen3-8b", "kv_format": "int4", "trace": {"generator": "chat", "tasks": 2}})");
  std::string message;
  for (const RunWarning& w :
       RunWarnings(ParseScenario(R"({"kv_format": "int4"})", "s.json").value(), run)) {
    if (w.code == "timing_assumed") message = w.message;
  }
  EXPECT_NE(message.find("kv_cache stored as int4-g128"), std::string::npos) << message;
}

// SGLang stores its KV cache as the model's dtype or fp8 (--kv-cache-dtype
// auto, bf16, fp8_e4m3, fp8_e5m2): int4, per-token-head fp8 and NVFP4 (on
// a B200, where vLLM runs it) are refused naming kv_format; fp8 runs.
TEST(ScenarioRunTest, SglangRunsOnlyTheKvFormatsItStores) {
  auto parse = [](const std::string& kv, const std::string& gpu) {
    return ParseScenario(R"({"model": "qwen3-8b", "kv_format": ")" + kv +
                             R"(", "deployment": {"engine": "sglang", "gpu": ")" + gpu + R"("}})",
                         "s.json");
  };
  for (const char* kv : {"int4", "fp8-per-token-head"}) {
    auto s = parse(kv, "h100-sxm");
    ASSERT_FALSE(s.ok()) << kv;
    EXPECT_EQ(s.error().message().rfind(std::string("s.json#/kv_format: SGLang stores no "), 0), 0u)
        << s.error().message();
  }
  auto nvfp4 = parse("nvfp4", "b200");
  ASSERT_FALSE(nvfp4.ok());
  EXPECT_NE(nvfp4.error().message().find("SGLang stores no nvfp4 KV cache: its --kv-cache-dtype "
                                         "is the model's dtype, bf16, fp8_e4m3 or fp8_e5m2"),
            std::string::npos)
      << nvfp4.error().message();
  EXPECT_TRUE(parse("fp8", "h100-sxm").ok());
  EXPECT_TRUE(parse("bf16", "h100-sxm").ok());
  // The same NVFP4 cache on vLLM runs on a B200.
  EXPECT_TRUE(ParseScenario(R"({"model": "qwen3-8b", "kv_format": "nvfp4",
      "deployment": {"gpu": "b200"}})",
                            "s.json")
                  .ok());
}

// vLLM serves a latent (MLA) cache on its MLA backends, whose
// supported_kv_cache_dtypes are auto, bfloat16, fp8 and fp8_e4m3 (FlashMLA,
// FlashInfer MLA, CUTLASS MLA, Triton MLA): DeepSeek-V3 with vLLM's int4 or
// per-token-head fp8 cache (Triton attention backend only) is refused
// naming kv_format, as is NVFP4 on a B200 where Llama runs it; bf16 and fp8
// run.
TEST(ScenarioRunTest, VllmRunsOnlyTheKvFormatsItsMlaBackendsStore) {
  auto parse = [](const std::string& model, const std::string& kv, const std::string& gpu) {
    return ParseScenario(R"({"model": ")" + model + R"(", "kv_format": ")" + kv +
                             R"(", "deployment": {"gpu": ")" + gpu +
                             R"(", "gpus_per_replica": 8}})",
                         "s.json");
  };
  for (const char* kv : {"int4", "int4-g128", "fp8-per-token-head"}) {
    auto s = parse("deepseek-v3", kv, "h200");
    ASSERT_FALSE(s.ok()) << kv;
    EXPECT_EQ(s.error().message().rfind("s.json#/kv_format: vLLM stores no ", 0), 0u)
        << s.error().message();
    EXPECT_NE(s.error().message().find("KV cache for deepseek-v3's latent (MLA) attention"),
              std::string::npos)
        << s.error().message();
  }
  auto nvfp4 = parse("deepseek-v3", "nvfp4", "b200");
  ASSERT_FALSE(nvfp4.ok());
  EXPECT_EQ(nvfp4.error().message().rfind("s.json#/kv_format: vLLM stores no nvfp4 KV cache", 0),
            0u)
      << nvfp4.error().message();
  for (const char* kv : {"bf16", "fp8", "fp8-e4m3"}) {
    auto s = parse("deepseek-v3", kv, "h200");
    EXPECT_TRUE(s.ok()) << kv << ": " << (s.ok() ? "" : s.error().message());
  }
  // A model with per-head attention keeps them: NVFP4 on a B200, int4 on H200.
  EXPECT_TRUE(parse("llama-3.1-70b", "nvfp4", "b200").ok());
  EXPECT_TRUE(parse("llama-3.1-70b", "int4", "h200").ok());
}

// Without deployment.memory_fraction vLLM takes 0.9 of the GPU and SGLang
// its own mem_fraction_static: on one H100 (81,510.8 MiB usable: 0.9 of it
// is the 76,922,864,271 B of fit_test.cc) SGLang reserves 512 + 1.5 x 8,192
// (its chunk) + 2 x 256 (its CUDA graphs) + 128 x 1 GPU = 13,440 MiB, so
// 1 - 13,440 / 81,510.8 = 0.8351, rounded to three decimals 0.835
// (engine.md, "Batching, SGLang"). A fraction given is kept.
TEST(ScenarioRunTest, SglangTakesItsOwnMemoryFractionByDefault) {
  auto fraction = [](const std::string& deployment) {
    auto s = ParseScenario(R"({"deployment": )" + deployment + "}", "s.json");
    EXPECT_TRUE(s.ok());
    auto c = BuildSimulationConfig(*s);
    EXPECT_TRUE(c.ok()) << c.error().message();
    return c.ok() ? c->memory_fraction : 0.0;
  };
  EXPECT_DOUBLE_EQ(fraction(R"({"engine": "vllm"})"), 0.9);
  EXPECT_DOUBLE_EQ(fraction(R"({"engine": "sglang"})"), 0.835);
  EXPECT_DOUBLE_EQ(fraction(R"({"engine": "sglang", "memory_fraction": 0.9})"), 0.9);
}

TEST(ScenarioRunTest, HybridModelsWarnThatTheirStateIsUnmeasured) {
  auto codes = [](const std::string& model) {
    auto s = ParseScenario(R"({"model": ")" + model + R"(", "deployment": {"gpu": "h100-sxm"},
                               "prefix_cache": {"enabled": false},
                               "trace": {"generator": "coding-agent", "tasks": 1}, "seed": 1})",
                           "inline.json");
    EXPECT_TRUE(s.ok());
    auto out = RunScenario(*s);
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message());
    std::vector<std::string> got;
    for (const RunWarning& w : EngineRunWarnings(*s, out->result, out->summary)) {
      got.push_back(w.code);
    }
    return std::make_pair(out->result.cost_model.linear_state_layers, got);
  };
  const auto [hybrid_layers, hybrid] = codes("qwen3.5-9b");
  EXPECT_EQ(hybrid_layers, 24);
  EXPECT_NE(std::find(hybrid.begin(), hybrid.end(), "linear_state_unmeasured"), hybrid.end());
  const auto [dense_layers, dense] = codes("qwen3-8b");
  EXPECT_EQ(dense_layers, 0);
  EXPECT_EQ(std::find(dense.begin(), dense.end(), "linear_state_unmeasured"), dense.end());
}

// SGLang's pool keeps every token of gpt-oss's sliding layers (its
// disable_hybrid_swa_memory): one group of all 24 layers, a page of 16
// tokens x 24 layers x 8 KV heads x 128 x 2 bytes = 786,432 bytes. At
// memory fraction 0.8 of the H100's 85,469,849,190 usable bytes less the
// 13,761,264,768 bytes of weights, 54,614,614,584 bytes: 69,446 pages
// (69,446.07). vLLM's pool pages 12 layers at a time (393,216 bytes), twice
// the pages, and frees the sliding group's past its window.
TEST(ScenarioRunTest, SglangPoolHoldsEveryTokenOfGptOssSlidingLayers) {
  const std::string base =
      R"({"model": "gpt-oss-20b", "trace": {"generator": "coding-agent", "tasks": 2}, "seed": 1,
          "deployment": {"gpu": "h100-sxm", "memory_fraction": 0.8, "activation_reserve_gib": 0,
                         "engine": )";
  const ScenarioOutcome sglang = RunJson(base + "\"sglang\"}}");
  EXPECT_EQ(sglang.summary.kv_pool_blocks, 69446);
  const ScenarioOutcome vllm = RunJson(base + "\"vllm\"}}");
  EXPECT_EQ(vllm.summary.kv_pool_blocks, 138892);
}

// FP8 halves the bytes of every token of KV. On a memory-bound agent
// workload (24 concurrent coding agents, Qwen3-8B on one H100) that does two
// things: each decode step reads half the KV, and the pool holds twice the
// tokens, so fewer cached prefixes are evicted and fewer prefills recomputed.
// Qwen3-8B with its YaRN scaling (131,072 tokens, as scenarios/claims/
// fp8-vs-bf16.json): one agent's last requests are past even that and refused.
TEST(ScenarioRunTest, Fp8KvGivesMoreHitsAndCheaperTasksThanBf16) {
  const std::string base =
      R"({"model": {"name": "qwen3-8b", "set": {"rope_scaling": {"rope_type": "yarn", "factor": 4,
                                  "original_max_position_embeddings": 32768}}},
          "deployment": {"gpu": "h100-sxm", "activation_reserve_gib": 0},
          "trace": {"generator": "coding-agent", "tasks": 24}, "seed": 7, "kv_format": )";
  const ScenarioOutcome bf16 = RunJson(base + "\"bf16\"}");
  const ScenarioOutcome fp8 = RunJson(base + "\"fp8\"}");
  // The pool: (0.9 x 79.6 GiB - 16.38 GB of weights) / (16 x 147,456 B) for
  // bf16, twice as many blocks for fp8 (one block fewer from rounding down).
  EXPECT_EQ(fp8.summary.kv_pool_blocks, 2 * bf16.summary.kv_pool_blocks + 1);
  EXPECT_GT(fp8.summary.hit_rate, bf16.summary.hit_rate);
  EXPECT_LT(fp8.summary.prefill_tokens, bf16.summary.prefill_tokens);
  EXPECT_LT(fp8.summary.cost_per_task_usd.mean, bf16.summary.cost_per_task_usd.mean);
  std::cout << "[ measured ] hit rate bf16 " << bf16.summary.hit_rate << " fp8 "
            << fp8.summary.hit_rate << "; cost per task bf16 "
            << bf16.summary.cost_per_task_usd.mean << " fp8 " << fp8.summary.cost_per_task_usd.mean
            << "\n";
}

// The Mooncake paper (FAST'25, Fig. 9) replays its synthetic trace against an
// LRU cache of 512-token blocks: 3M tokens of cache reach under half of the
// hit rate an unlimited cache reaches, and about 50M tokens nearly all of it.
TEST(ScenarioRunTest, MooncakeSyntheticCacheCapacityCurve) {
  const std::string trace =
      std::string(KVBILL_SHARED_DATA_DIR) + "/traces/mooncake/synthetic_trace.jsonl";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << trace << " is not present";
  auto run = [&](const std::string& capacity) {
    return RunJson(R"({"model": "llama-3.1-8b", "prefix_cache": {"block_size": 512,
                       "capacity_tokens": )" +
                   capacity + R"(}, "trace": {"file": ")" + trace + R"("}})");
  };
  const double unlimited = run("\"unlimited\"").summary.hit_rate;
  const double small = run("\"3M\"").summary.hit_rate;
  const double large = run("\"50M\"").summary.hit_rate;
  // The paper's cache ratio for this trace is 66%.
  EXPECT_NEAR(unlimited, 0.66, 0.03);
  EXPECT_LT(small, 0.5 * unlimited);
  EXPECT_GT(small, 0.35 * unlimited);
  EXPECT_GT(large, 0.97 * unlimited);
  std::cout << "[ measured ] hit rate 3M " << small << ", 50M " << large << ", unlimited "
            << unlimited << "\n";
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// "A 128K request costs 3-5x an 8K one even with GQA" (docs/claims.md #12):
// Llama-3.1-70B on 4 H100s, 500 output tokens, each request alone.
TEST(ScenarioRunTest, A128kRequestCostsThreeToFiveTimesAn8kOne) {
  auto s = LoadScenario("scenarios/claims/8k-vs-128k.json");
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto out = RunScenario(*s);
  ASSERT_TRUE(out.ok()) << out.error().message();
  ASSERT_EQ(out->tasks.size(), 2u);
  ASSERT_EQ(out->tasks[0].id, "prompt-8k");
  const double ratio = static_cast<double>(out->tasks[1].cost_usd / out->tasks[0].cost_usd);
  EXPECT_GT(ratio, 3.0);
  EXPECT_LT(ratio, 5.0);
  std::cout << "[ measured ] 128k / 8k request cost " << ratio << "\n";
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
