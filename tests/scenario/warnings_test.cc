// Each warning code: a run that should raise it does, a clean run does not
// (docs/engine.md#warnings), and budgets count them (warnings.<code>).
#include "kvbill/scenario/warnings.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "engine/engine_test_util.h"
#include "kvbill/cache/prefix_cache.h"
#include "kvbill/scenario/budget.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// A clean run: calibrated, busy, under every bound below.
struct FakeRun {
  Scenario scenario;
  SimulationTotals totals;
  RunSummary summary;
  FakeRun() {
    scenario.source = "s.json";
    scenario.deployment.gpu = "a100-80gb";
    totals.cost_model.calibrated = true;
    summary.requests = 10;
    summary.cost_usd = 10;
    summary.idle_usd = 5;  // exactly half: not dominant
    summary.idle_gpu_usd = 5;
    summary.queue_s.count = 10;
    summary.queue_s.p50 = kOverloadedQueueP50Seconds;  // at the bound: not overloaded
  }
  std::vector<std::string> Codes() const {
    std::vector<std::string> codes;
    for (const RunWarning& w : EngineRunWarnings(scenario, totals, summary))
      codes.push_back(w.code);
    return codes;
  }
  std::string Message(const std::string& code) const {
    for (const RunWarning& w : EngineRunWarnings(scenario, totals, summary)) {
      if (w.code == code) return w.message;
    }
    return "";
  }
};

using Codes = std::vector<std::string>;

TEST(WarningsTest, CleanRunRaisesNone) { EXPECT_EQ(FakeRun().Codes(), Codes{}); }

// A run raising many codes at once lists them in WarningCodes' order, and
// every code it can raise is listed there (budgets and the schema take
// their names from that list).
TEST(WarningsTest, RaisedCodesAreListedAndInTheListsOrder) {
  FakeRun r;
  r.totals.rejected_requests = 1;                          // context_limit
  r.totals.memory_pool_tokens = 1000;                      // pool_beyond_memory
  r.totals.pool_tokens = 2000;                             //
  r.scenario.prefix_cache.block_size = 8;                  // block_size_unserved
  r.scenario.declared_kv_format = "fp8-e4m3";              // kv_format_default
  r.scenario.model.set["hidden_size"] = "null";            // config_defaulted
  r.summary.queue_s.p50 = 2 * kOverloadedQueueP50Seconds;  // overloaded
  r.summary.idle_gpu_usd = 9;                              // idle_dominant
  r.totals.placeholder_outputs = 1;                        // placeholder_outputs
  r.totals.cost_model.calibrated = false;                  // uncalibrated
  const Codes raised = r.Codes();
  EXPECT_EQ(raised.size(), 9u);
  const std::vector<std::string>& all = WarningCodes();
  std::size_t at = 0;
  for (const std::string& code : raised) {
    const auto it = std::find(all.begin() + static_cast<std::ptrdiff_t>(at), all.end(), code);
    ASSERT_NE(it, all.end()) << code << " is not listed, or out of order";
    at = static_cast<std::size_t>(it - all.begin()) + 1;
  }
}

// Speculation whose verification steps cost more than they save: 200
// steps of 3 sequences advancing 1.5 tokens each, 0.5 s with speculation
// against 0.4 s for the same 900 tokens without: 0.8x as fast.
TEST(WarningsTest, SpeculationSlowerWhenItsStepsCostMoreThanTheySave) {
  FakeRun r;
  r.scenario.deployment.speculative = ScenarioSpeculative{};
  r.scenario.deployment.speculative->method = "eagle3";
  r.scenario.deployment.speculative->acceptance_rate = {0.5};
  r.totals.speculation = {200, 600, 900, 0.5L, 0.4L};
  EXPECT_EQ(r.Codes(), Codes{"speculation_slower"});
  EXPECT_NE(r.Message("speculation_slower")
                .find("0.80x the decode tokens a second of the same deployment without it, at its "
                      "batches (3.0 sequences a verification step on average, 1.50 tokens "
                      "advanced a sequence a step)"),
            std::string::npos)
      << r.Message("speculation_slower");
  r.totals.speculation.plain_s = 0.5L;  // as fast: nothing to say
  EXPECT_EQ(r.Codes(), Codes{});
  r.totals.speculation = {};  // no verification step ran
  EXPECT_EQ(r.Codes(), Codes{});
}

// An A100's link to its host is PCIe Gen4 x16: 16 GT/s x 16 lanes x
// 128/130 / 8 = 31.5 GB/s one way, read as 32. The default link_gb_s, 50,
// is above it; 25 is not. An H100's Gen5 link (63 GB/s, read 64) carries 50.
// 10,000 GiB over 8 GPUs is 1,250 GiB a GPU, above the 1 TiB a GPU 8-GPU
// servers hold; 8,000 GiB is 1,000.
TEST(WarningsTest, OffloadImplausibleForALinkOrMemoryNoServerHas) {
  FakeRun r;
  EXPECT_EQ(r.Codes(), Codes{});  // no tier
  r.scenario.prefix_cache.offload_capacity_gib = 100;
  EXPECT_EQ(r.Codes(), Codes{"offload_implausible"});
  EXPECT_EQ(
      r.Message("offload_implausible"),
      "prefix_cache.offload.link_gb_s 50 GB/s (kvbill's default) is more than a100-80gb's link "
      "to its host carries one way (PCIe Gen4 x16, 32 GB/s raw; copies reach about 26): "
      "reloads from the host tier are timed too fast; set link_gb_s to what the host's "
      "copies reach");
  r.scenario.prefix_cache.offload_link_gb_s = 25;
  EXPECT_EQ(r.Codes(), Codes{});
  r.scenario.deployment.gpu = "h100-sxm";
  r.scenario.prefix_cache.offload_link_gb_s = 50;
  EXPECT_EQ(r.Codes(), Codes{});
  r.scenario.prefix_cache.offload_link_gb_s = 65;
  EXPECT_NE(r.Message("offload_implausible").find("(PCIe Gen5 x16, 64 GB/s raw"),
            std::string::npos);
  r.scenario.prefix_cache.offload_link_gb_s = 50;
  r.scenario.deployment.gpus_per_replica = 8;
  r.scenario.prefix_cache.offload_capacity_gib = 8000;
  EXPECT_EQ(r.Codes(), Codes{});
  r.scenario.prefix_cache.offload_capacity_gib = 10000;
  EXPECT_NE(r.Message("offload_implausible").find("is 1,250 GiB of host memory a GPU"),
            std::string::npos)
      << r.Message("offload_implausible");
  r.scenario.prefix_cache.enabled = false;  // no cache, no tier
  EXPECT_EQ(r.Codes(), Codes{});
}

TEST(WarningsTest, ContextLimitWhenRequestsWereRefused) {
  FakeRun r;
  r.totals.rejected_requests = 2;
  r.totals.unsent_requests = 1;
  r.totals.max_model_len = 2300;
  r.totals.longest_rejected_tokens = 3100;
  EXPECT_EQ(r.Codes(), Codes{"context_limit"});
  EXPECT_EQ(r.Message("context_limit"),
            "2 requests were refused: prompt plus output tokens over max_model_len 2,300 (the "
            "longest 3,100 tokens); each ends its task, whose 1 later request was never sent. A "
            "context_policy that keeps prompts under the limit, or a model with a longer "
            "context, serves them");
  // No later request unsent, and one task that served nothing: said so.
  r.totals.unsent_requests = 0;
  r.totals.unserved_tasks = 1;
  EXPECT_EQ(r.Message("context_limit"),
            "2 requests were refused: prompt plus output tokens over max_model_len 2,300 (the "
            "longest 3,100 tokens); each ends its task (1 task was refused at its first request "
            "and served nothing). A context_policy that keeps prompts under the limit, or a "
            "model with a longer context, serves them");
  // Their ids, three of them, then how many more.
  r.totals.unserved_tasks = 5;
  r.totals.unserved_task_ids = {"a", "b", "c", "d", "e"};
  EXPECT_NE(r.Message("context_limit")
                .find("(5 tasks were refused at their first request and served nothing: a, b, c "
                      "and 2 more)"),
            std::string::npos)
      << r.Message("context_limit");
}

// A LongRoPE model starts at its original length (4,096 for Phi-4-mini)
// and takes up to 131,072 when asked: the warning says how to serve more.
TEST(WarningsTest, ContextLimitNamesALongRopeModelsLongerLimit) {
  FakeRun r;
  r.totals.rejected_requests = 1;
  r.totals.unsent_requests = 0;
  r.totals.max_model_len = 4096;
  r.totals.model_max_model_len = 131072;
  r.totals.longest_rejected_tokens = 9000;
  EXPECT_EQ(r.Codes(), Codes{"context_limit"});
  EXPECT_NE(r.Message("context_limit")
                .find("(the model uses LongRoPE: vLLM starts it at its "
                      "original_max_position_embeddings 4,096; engine.max_model_len up to "
                      "131,072 serves longer ones)"),
            std::string::npos)
      << r.Message("context_limit");
  // Chosen by the scenario, below the model's 131,072: the scenario's own
  // limit is what to raise (it advised "a model with a longer context").
  r.scenario.engine.max_model_len = 4096;
  EXPECT_EQ(r.Message("context_limit").find("LongRoPE"), std::string::npos);
  EXPECT_NE(r.Message("context_limit")
                .find("A context_policy that keeps prompts under the limit, or "
                      "engine.max_model_len raised towards the model's 131,072 (the scenario "
                      "sets 4,096), serves them"),
            std::string::npos)
      << r.Message("context_limit");
  // A pool that holds 32,144 tokens of one sequence: raising the limit past
  // it would stop vLLM starting, so the advice stops there first ...
  r.totals.pool_sequence_tokens = 32144;
  EXPECT_NE(r.Message("context_limit")
                .find("engine.max_model_len raised towards the 32,144 tokens a replica's KV "
                      "pool holds of one sequence (the scenario sets 4,096), and past them "
                      "towards the model's 131,072 with more memory for KV"),
            std::string::npos)
      << r.Message("context_limit");
  // ... and at the pool's length already, only more memory serves more.
  r.scenario.engine.max_model_len = 32144;
  EXPECT_NE(r.Message("context_limit")
                .find("or more memory for KV (GPUs, a smaller KV format: a replica's pool "
                      "holds 32,144 tokens of one sequence) with engine.max_model_len raised "
                      "towards the model's 131,072 (the scenario sets 32,144), serves them"),
            std::string::npos)
      << r.Message("context_limit");
}

TEST(WarningsTest, ContextLimitWhenTheScenarioRaisesTheLimitPastTheModels) {
  FakeRun r;
  r.totals.model_max_model_len = 40960;
  r.scenario.engine.max_model_len = 40960;
  EXPECT_EQ(r.Codes(), Codes{});
  r.scenario.engine.max_model_len = 65536;
  EXPECT_EQ(r.Codes(), Codes{"context_limit"});
  EXPECT_NE(
      r.Message("context_limit").find("vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"),
      std::string::npos)
      << r.Message("context_limit");
  // SGLang's own check names its own switch.
  r.scenario.deployment.engine = "sglang";
  EXPECT_NE(r.Message("context_limit")
                .find("SGLang refuses a context length above the model's unless "
                      "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"),
            std::string::npos)
      << r.Message("context_limit");
  EXPECT_EQ(r.Message("context_limit").find("vLLM"), std::string::npos);
}

// A pool that cannot hold one request of max_model_len: vLLM would not
// start (check_enough_kv_cache_memory), so the run says so.
TEST(WarningsTest, ContextLimitWhenThePoolCannotHoldOneMaxLengthRequest) {
  FakeRun r;
  r.totals.max_model_len = 40960;
  r.totals.pool_tokens = 32144;
  r.totals.pool_sequence_tokens = 32144;
  r.totals.memory_pool_tokens = 32144;
  EXPECT_EQ(r.Codes(), Codes{});
  r.totals.max_model_len_fits_pool = false;
  EXPECT_EQ(r.Codes(), Codes{"context_limit"});
  EXPECT_NE(r.Message("context_limit")
                .find("a replica's KV pool holds 32,144 tokens of a sequence, less than one "
                      "request of max_model_len 40,960 needs: vLLM refuses to start"),
            std::string::npos)
      << r.Message("context_limit");
}

// With sliding-window or chunked layers a sequence holds at most a window
// of them, so the pool holds a longer sequence than its pages over the
// groups say: the message quotes the sequence (gpt-oss-20b on an L4 at
// memory_fraction 0.72: 38,176 tokens of pages, a sequence of 74,160),
// the figure engine.max_model_len can be set to.
TEST(WarningsTest, ContextLimitQuotesTheLongestSequenceThePoolHolds) {
  FakeRun r;
  r.totals.max_model_len = 131072;
  r.totals.pool_tokens = 38176;
  r.totals.pool_sequence_tokens = 74160;
  r.totals.memory_pool_tokens = 38176;
  r.totals.max_model_len_fits_pool = false;
  const std::string m = r.Message("context_limit");
  EXPECT_NE(m.find("a replica's KV pool holds 74,160 tokens of a sequence, less than one request "
                   "of max_model_len 131,072 needs"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("38,176"), std::string::npos) << m;
}

// SGLang starts on such a pool and refuses past it: the message says so
// and names the cap, not vLLM's start-up check.
TEST(WarningsTest, ContextLimitOnSglangNamesItsPoolCap) {
  FakeRun r;
  r.totals.max_model_len = 40960;
  r.totals.pool_tokens = 16256;
  r.totals.pool_sequence_tokens = 16256;
  r.totals.memory_pool_tokens = 16256;
  r.totals.max_model_len_fits_pool = false;
  r.totals.pool_context_len = 16254;
  r.totals.request_len_limit = 16254;
  r.totals.rejected_requests = 1;
  r.totals.longest_rejected_tokens = 24835;
  EXPECT_EQ(r.Codes(), Codes{"context_limit"});
  const std::string m = r.Message("context_limit");
  EXPECT_EQ(m.rfind("1 request was refused: prompt plus output tokens over the 16,254 tokens "
                    "SGLang serves (the longest 24,835 tokens)",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find("SGLang starts anyway and serves requests of at most 16,254 tokens"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("vLLM"), std::string::npos) << m;
}

// SGLang refuses below its context length too (max_req_len =
// context length - 1, outputs cut to end below it): gemma-2-9b's 8,192
// serves prompt plus output up to 8,190, and the message names that, not
// max_model_len alone.
TEST(WarningsTest, ContextLimitOnSglangNamesItsMaxReqLen) {
  FakeRun r;
  r.totals.max_model_len = 8192;
  r.totals.request_len_limit = 8190;
  r.totals.rejected_requests = 1;
  r.totals.longest_rejected_tokens = 8192;
  const std::string m = r.Message("context_limit");
  EXPECT_EQ(m.rfind("1 request was refused: prompt plus output tokens over the 8,190 tokens "
                    "SGLang serves at max_model_len 8,192 (the longest 8,192 tokens)",
                    0),
            0u)
      << m;
  EXPECT_EQ(RequestLimitText(40960, 0, 40960), "max_model_len 40,960");
}

// prefix_cache.capacity_tokens above what memory holds: the running
// sequences share the pool, so the run assumes memory the GPUs lack. The
// ratio 3,145,728 / 461,312 = 6.819 (Llama-3.1-70B on 4 H100s, 512-token
// blocks: SimulateCliTest.ACapacityOverrideBeyondMemoryIsWarned works the
// pool). A smaller override (a cache
// study below memory) warns nothing.
TEST(WarningsTest, PoolBeyondMemoryWhenTheCapacityOverrideExceedsTheMemory) {
  FakeRun r;
  r.totals.memory_pool_tokens = 461312;
  r.totals.pool_tokens = 200000;
  EXPECT_EQ(r.Codes(), Codes{});
  r.totals.pool_tokens = 461312;
  EXPECT_EQ(r.Codes(), Codes{});
  r.totals.pool_tokens = 3145728;
  EXPECT_EQ(r.Codes(), Codes{"pool_beyond_memory"});
  EXPECT_EQ(r.Message("pool_beyond_memory")
                .rfind("prefix_cache.capacity_tokens makes a replica's KV pool 3,145,728 tokens, "
                       "6.8x what its memory holds after the weights and the activation reserve "
                       "(461,312 tokens): running sequences",
                       0),
            0u)
      << r.Message("pool_beyond_memory");
  r.totals.pool_tokens = kUnlimitedBlocks;
  EXPECT_NE(r.Message("pool_beyond_memory")
                .find("unlimited (never evict), where its memory holds 461,312 tokens"),
            std::string::npos);
  r.totals.memory_pool_tokens = 0;  // the weights alone do not fit
  EXPECT_NE(r.Message("pool_beyond_memory").find("where its memory holds none"), std::string::npos);
}

// vLLM's CUDA attention backends page KV in multiples of 16 tokens; SGLang
// pages token by token (page_size 1), so block size 1 is its own default.
TEST(WarningsTest, KvFormatDefaultWhenTheCheckpointDeclaresAnother) {
  FakeRun r;
  EXPECT_EQ(r.Codes(), Codes{});
  r.scenario.declared_kv_format = "fp8-e4m3";
  EXPECT_EQ(r.Codes(), Codes{"kv_format_default"});
  EXPECT_NE(r.Message("kv_format_default").find("declares a fp8-e4m3 KV cache"), std::string::npos);
  EXPECT_NE(r.Message("kv_format_default").find("kv_format \"auto\""), std::string::npos);
}

// model.set hidden_size: null removes the key, and Qwen3Config's default
// (configuration_qwen3.py: hidden_size=4096) sizes the model: said.
TEST(WarningsTest, ConfigDefaultedWhenTheConfigOmitsASizingKey) {
  FakeRun r;
  r.scenario.model.name = "qwen3-8b";
  r.scenario.model.set["hidden_size"] = "null";
  EXPECT_EQ(r.Codes(), Codes{"config_defaulted"});
  EXPECT_EQ(r.Message("config_defaulted"),
            "models/qwen3-8b.json omits a key that sizes the model, read at the class defaults "
            "of model_type \"qwen3\" (hidden_size = 4096; transformers "
            "src/transformers/models/qwen3/configuration_qwen3.py): the weights, KV bytes and "
            "pool rest on them; check them against the model card, or give them with model.set");
  r.scenario.model.set.clear();  // the catalog config gives it
  EXPECT_EQ(r.Codes(), Codes{});
}

TEST(WarningsTest, BlockSizeUnservedOffSixteensMultiplesOnVllm) {
  FakeRun r;
  for (const Tokens bs : {16, 32, 512}) {
    r.scenario.prefix_cache.block_size = bs;
    EXPECT_EQ(r.Codes(), Codes{}) << bs;
  }
  for (const Tokens bs : {1, 8, 24}) {
    r.scenario.prefix_cache.block_size = bs;
    EXPECT_EQ(r.Codes(), Codes{"block_size_unserved"}) << bs;
  }
  EXPECT_EQ(r.Message("block_size_unserved")
                .rfind("prefix_cache.block_size 24 is not a multiple "
                       "of 16",
                       0),
            0u);
  r.scenario.deployment.engine = "sglang";
  r.scenario.prefix_cache.block_size = 1;
  EXPECT_EQ(r.Codes(), Codes{});
  // DeepSeek-V4 on vLLM: its compressed caches are paged in 256-token
  // blocks, so 16 (a multiple of 16) is one vLLM does not run for it.
  r.scenario.deployment.engine = "vllm";
  r.scenario.model.name =
      std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/deepseek-v4-flash.json";
  r.scenario.prefix_cache.block_size = 256;
  EXPECT_EQ(r.Codes(), Codes{});
  r.scenario.prefix_cache.block_size = 16;
  EXPECT_EQ(r.Codes(), Codes{"block_size_unserved"});
  EXPECT_NE(r.Message("block_size_unserved").find("256-token blocks only"), std::string::npos);
}

// MLA on an H200: vLLM's FlashMLA backend keeps multiples of 64 only and
// runs 64-token blocks whatever --block-size says; on an A100 (Triton MLA)
// 16 is vLLM's own default.
TEST(WarningsTest, BlockSizeUnservedByTheMlaBackend) {
  FakeRun r;
  r.scenario.model.name = std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/deepseek-v3.json";
  r.scenario.deployment.gpu = "h200";
  for (const Tokens bs : {64, 128}) {
    r.scenario.prefix_cache.block_size = bs;
    EXPECT_EQ(r.Codes(), Codes{}) << bs;
  }
  r.scenario.prefix_cache.block_size = 16;
  EXPECT_EQ(r.Codes(), Codes{"block_size_unserved"});
  EXPECT_NE(r.Message("block_size_unserved")
                .find("FlashMLA (Hopper), which takes blocks in multiples of 64: vLLM serves it "
                      "in 64-token blocks"),
            std::string::npos)
      << r.Message("block_size_unserved");
  r.scenario.deployment.gpu = "a100-80gb";
  EXPECT_EQ(r.Codes(), Codes{});
}

// A part whose time no kernel table measures is named, with the assumption.
TEST(WarningsTest, TimingAssumedNamesThePartsWithoutAMeasurement) {
  FakeRun r;
  r.totals.cost_model.formats.push_back(
      {"weights", "bf16", "BF16", "cuBLAS", "measured: GEMM bf16 table"});
  EXPECT_EQ(r.Codes(), Codes{});
  r.totals.cost_model.formats.push_back(
      {"kv_cache", "int4-g128", "16-bit attention", "Triton attention",
       "assumed: the bf16 KV attention curves at int4-g128's byte count"});
  EXPECT_EQ(r.Codes(), Codes{"timing_assumed"});
  EXPECT_NE(r.Message("timing_assumed")
                .find("kv_cache stored as int4-g128 (Triton attention): the bf16 KV attention "
                      "curves at int4-g128's byte count"),
            std::string::npos)
      << r.Message("timing_assumed");
}

// A context past the 131,072 tokens the decode tables reach extends the
// fitted curve: named with the longest served, on a calibrated model only
// (an uncalibrated one says so already).
TEST(WarningsTest, TimingAssumedNamesAContextPastTheTables) {
  FakeRun r;
  r.totals.cost_model.calibrated = true;
  r.summary.longest_sequence_tokens = 131072;
  EXPECT_EQ(r.Codes(), Codes{});
  r.summary.longest_sequence_tokens = 131073;
  EXPECT_EQ(r.Codes(), Codes{"timing_assumed"});
  EXPECT_NE(r.Message("timing_assumed")
                .find("decode attention over contexts up to 131,073 tokens (the longest request "
                      "served): the kernel tables measure it to 131,072 tokens, and the fitted "
                      "curve is extended past them"),
            std::string::npos)
      << r.Message("timing_assumed");
}

// A collective no table measures (an all-reduce over 16 GPUs where the
// tables stop at 8) is named too.
TEST(WarningsTest, TimingAssumedNamesCollectivesWithoutAMeasurement) {
  FakeRun r;
  r.totals.cost_model.assumed_collectives = {"all_reduce over 16 GPUs of h100-sxm not measured"};
  EXPECT_EQ(r.Codes(), Codes{"timing_assumed"});
  EXPECT_NE(r.Message("timing_assumed").find("all_reduce over 16 GPUs of h100-sxm not measured"),
            std::string::npos)
      << r.Message("timing_assumed");
}

TEST(WarningsTest, OverloadedAboveTheMedianQueueingBound) {
  FakeRun r;
  r.summary.queue_s.p50 = 1.5;
  EXPECT_EQ(r.Codes(), Codes{"overloaded"});
  EXPECT_EQ(r.Message("overloaded").find("API server"), std::string::npos);
  EXPECT_EQ(r.Message("overloaded").find("pins"), std::string::npos);
  EXPECT_EQ(r.Message("overloaded").find("head-of-line"), std::string::npos);  // 10 requests
  // Two requests cannot tell a backlog from one waiting behind a long
  // prefill: still warned, and said so.
  r.summary.queue_s.count = 2;
  EXPECT_NE(r.Message("overloaded")
                .find("; only 2 requests, so this may be head-of-line waiting behind one long "
                      "prefill rather than a backlog"),
            std::string::npos)
      << r.Message("overloaded");
  r.summary.queue_s.count = 10;
  // Pins that gave way to waiting requests hold the pool the queue waits
  // for: named beside the replicas (it read as arrivals only).
  r.scenario.prefix_cache.pin_during_tool_s = 60;
  r.totals.pins_yielded = 13;
  EXPECT_NE(
      r.Message("overloaded")
          .find("; pins held KV through tool waits (prefix_cache.pin_during_tool_s 1.0 min) and "
                "13 of them gave way to waiting requests: they hold the pool the queue "
                "waits for, so shorter pins may shorten it"),
      std::string::npos)
      << r.Message("overloaded");
}

// A quick median with a slow mean: a backlog part of the requests carries
// (the QA run of 60 agents on one H100: median 0.09 s, mean 11.6 s).
TEST(WarningsTest, OverloadedAboveTheMeanQueueingBound) {
  FakeRun r;
  r.summary.queue_s.p50 = 0.09;
  r.summary.queue_s.mean = 1.0;  // at the bound: not overloaded
  EXPECT_EQ(r.Codes(), Codes{});
  r.summary.queue_s.mean = 11.6;
  r.summary.queue_s.p90 = 32.1;
  EXPECT_EQ(r.Codes(), Codes{"overloaded"});
  EXPECT_EQ(r.Message("overloaded")
                .rfind("requests waited 11.6 s on average to be admitted "
                       "(median 0.090 s, p90 32.1 s",
                       0),
            0u)
      << r.Message("overloaded");
}

// A quick median and a mean under the bound, but a slow tenth: the bundled
// default at trace.load 5 (median 0.018 s, mean 0.862 s, p90 3.295 s, 162
// preemptions; at load 1 the p90 is 0.027 s).
TEST(WarningsTest, OverloadedAboveTheP90QueueingBound) {
  FakeRun r;
  r.summary.queue_s.p50 = 0.018;
  r.summary.queue_s.mean = 0.862;
  r.summary.queue_s.p90 = kOverloadedQueueP90Seconds;  // at the bound: not overloaded
  EXPECT_EQ(r.Codes(), Codes{});
  r.summary.queue_s.p90 = 3.295;
  r.summary.preemptions = 162;
  EXPECT_EQ(r.Codes(), Codes{"overloaded"});
  EXPECT_EQ(r.Message("overloaded")
                .rfind("a tenth of the requests waited more than 3.295 s to be admitted (p90; "
                       "median 0.018 s, mean 0.862 s, 162 preemptions: a backlog part of them "
                       "carries; a p90 above 2.000 s is one)",
                       0),
            0u)
      << r.Message("overloaded");
  // In units of the median's bound: 3.295 / 2.
  EXPECT_DOUBLE_EQ(OverloadedDelay(r.summary.queue_s), 3.295 / 2);
}

// Plan's verdicts name the bound of the rule that fired, not the median's
// or the mean's when it was the 90th percentile's: the acceptance run of
// 6,000 tasks a day on one H100 waited a median 0.01 s, a mean 0.9 s
// (both under 1 s) and a p90 2.239 s (above 2 s), and read "mean queueing
// delay 0.9 s, above 1 s".
TEST(WarningsTest, OverloadedFiguresNameTheBoundThatFired) {
  Summary q;
  q.count = 100;
  q.p50 = 0.01;
  q.mean = 0.9;
  q.p90 = 2.0;  // every figure at or under its bound
  EXPECT_EQ(OverloadedFigures(q), "");
  EXPECT_FALSE(OverloadedBy(q));
  q.p90 = 2.239;  // 2.239 > 2: to one decimal 2.2
  ASSERT_TRUE(OverloadedBy(q));
  EXPECT_EQ(OverloadedBy(q)->statistic, OverloadedBound::Statistic::kP90);
  EXPECT_EQ(OverloadedFigures(q),
            "p90 queueing delay 2.2 s, above 2 s; median 0.01 s, mean 0.90 s");
  q.mean = 11.6;  // the mean comes before the p90: 11.6 > 1
  EXPECT_EQ(OverloadedFigures(q), "mean queueing delay 11.6 s, above 1 s; median 0.01 s");
  q.p50 = 1.5;  // the median before both: 1.5 > 1
  EXPECT_EQ(OverloadedFigures(q), "median queueing delay 1.5 s, above 1 s");
  q.count = 0;  // no request: no backlog whatever the figures
  EXPECT_EQ(OverloadedFigures(q), "");
}

TEST(WarningsTest, OverloadedSaysWhenTheApiServerHoldsTheBacklog) {
  // Of a 1.5-s median queueing delay, 0.75 s waiting for the API server is
  // half: not most of it; 0.8 s is.
  FakeRun r;
  r.summary.queue_s.p50 = 1.5;
  r.summary.frontend_wait_s.p50 = 0.75;
  EXPECT_EQ(r.Message("overloaded").find("API server"), std::string::npos);
  r.summary.frontend_wait_s.p50 = 0.8;
  EXPECT_NE(r.Message("overloaded").find("most of it (median 0.800 s) waiting for the API server"),
            std::string::npos)
      << r.Message("overloaded");
}

TEST(WarningsTest, SloViolatedWhenATargetIsExceeded) {
  FakeRun r;
  r.scenario.slo = {{"ttft_s.p90", 2.0}, {"tpot_s.p50", 0.05}};
  r.summary.requests = 4;
  r.summary.ttft_s.count = 4;
  r.summary.tpot_s.count = 4;
  r.summary.ttft_s.p90 = 2.0;  // at the target: held
  r.summary.tpot_s.p50 = 0.04;
  EXPECT_EQ(r.Codes(), Codes{});
  r.summary.ttft_s.p90 = 2.5;
  EXPECT_EQ(r.Codes(), Codes{"slo_violated"});
  EXPECT_EQ(r.Message("slo_violated"),
            "1 of 2 latency targets violated: ttft_s.p90 2.500 s > 2.000 s");
  // A target without samples is not held either, and says why.
  r.summary.ttft_s.p90 = 2.0;
  r.summary.tpot_s.count = 0;
  EXPECT_EQ(r.Message("slo_violated"),
            "1 of 2 latency targets violated: tpot_s.p50 not measured (no served request had a "
            "second output token, the first TPOT measures)");
}

TEST(WarningsTest, IdleDominantAboveHalfTheBill) {
  FakeRun r;
  r.summary.idle_usd = 6;  // 60% of $10, on its own line (dedicated)
  r.summary.idle_gpu_usd = 6;
  EXPECT_EQ(r.Codes(), Codes{"idle_dominant"});
  // Amortized: the same $6 of idle GPU time spread over the tasks (no line
  // of its own) is still 60% of the bill.
  r.summary.billing = BillingRule::kAmortized;
  r.summary.idle_usd = 0;
  EXPECT_EQ(r.Codes(), Codes{"idle_dominant"});
  EXPECT_NE(r.Message("idle_dominant").find("60% of the bill (amortized into the tasks' costs)"),
            std::string::npos)
      << r.Message("idle_dominant");
  // Busy billing: the idle time is in no one's bill.
  r.summary.billing = BillingRule::kBusy;
  EXPECT_EQ(r.Codes(), Codes{});
}

// The advice used to be release "after_finish" in every run, the default
// one included, which already releases that way.
TEST(WarningsTest, IdleDominantAdviceFitsTheRunsRelease) {
  FakeRun r;
  r.summary.idle_usd = 6;  // 60% of $10
  r.summary.idle_gpu_usd = 6;
  r.summary.tasks = 10;
  r.summary.requests = 40;  // four turns a task
  r.scenario.deployment.replicas = 2;
  ASSERT_EQ(r.scenario.trace.release, "after_finish");  // the default
  EXPECT_EQ(r.Message("idle_dominant"),
            "idle GPU time is 60% of the bill ($6.0000 of $10.0000): the GPUs mostly wait "
            "between arrivals, so the bill is the rental, not the work; turns already go out as "
            "soon as the previous one finishes (release \"after_finish\"), so the waits are the "
            "trace's tool waits and the gaps between task arrivals; a denser load (trace.load) "
            "or fewer replicas shows what busy GPUs cost");
  r.scenario.trace.release = "recorded";
  EXPECT_EQ(r.Message("idle_dominant"),
            "idle GPU time is 60% of the bill ($6.0000 of $10.0000): the GPUs mostly wait "
            "between arrivals, so the bill is the rental, not the work; a denser load "
            "(trace.load), release \"after_finish\" instead of recorded gaps, or fewer replicas "
            "shows what busy GPUs cost");
  // Every task one request (a serving trace such as Azure's): no gaps
  // between a task's turns for after_finish to close, so no such advice.
  const std::int64_t requests = r.summary.requests;
  r.summary.requests = r.summary.tasks;
  EXPECT_EQ(r.Message("idle_dominant"),
            "idle GPU time is 60% of the bill ($6.0000 of $10.0000): the GPUs mostly wait "
            "between arrivals, so the bill is the rental, not the work; a denser load "
            "(trace.load) or fewer replicas shows what busy GPUs cost");
  r.summary.requests = requests;
  // One task on one replica: no arrivals to bring closer, no replica to
  // drop (a denser load changed nothing); busy billing is what is left.
  r.scenario.trace.release = "after_finish";
  r.summary.tasks = 1;
  r.scenario.deployment.replicas = 1;
  EXPECT_EQ(r.Message("idle_dominant"),
            "idle GPU time is 60% of the bill ($6.0000 of $10.0000): the GPUs mostly wait "
            "between arrivals, so the bill is the rental, not the work; turns already go out as "
            "soon as the previous one finishes (release \"after_finish\"), so the waits are the "
            "trace's tool waits and the gaps between task arrivals; one task on one replica "
            "waits out its own tool calls: deployment.billing \"busy\" (the GPU time used, as a "
            "shared fleet bills it) shows what busy GPUs cost");
  // One request has no tool calls to wait out: its idle time is around its
  // own iterations.
  r.summary.requests = 1;
  EXPECT_NE(r.Message("idle_dominant")
                .find("; one request on one replica leaves the GPU idle around its own "
                      "iterations (the API server's time, its arrival): deployment.billing"),
            std::string::npos)
      << r.Message("idle_dominant");
  r.summary.requests = requests;
  // Several tasks on one replica: the load, not the replicas.
  r.summary.tasks = 5;
  EXPECT_NE(r.Message("idle_dominant").find("; a denser load (trace.load) shows what busy GPUs"),
            std::string::npos)
      << r.Message("idle_dominant");
}

TEST(WarningsTest, PolicyNoEffectWhenAPolicyEditedNoPrompt) {
  FakeRun r;
  r.scenario.context_policy.kind = "drop_tool_results";
  EXPECT_EQ(r.Codes(), Codes{"policy_no_effect"});
  r.totals.edited_requests = 1;
  EXPECT_EQ(r.Codes(), Codes{});
}

// Every task refused at its first request: nothing served, nothing edited,
// the same run as keep_all (docs/engine.md#warnings names this case).
TEST(WarningsTest, PolicyNoEffectWhenEveryTaskWasRefusedAtItsFirstRequest) {
  FakeRun r;
  r.scenario.context_policy.kind = "sliding_window";
  r.summary.requests = 0;
  r.totals.rejected_requests = 4;
  r.totals.unsent_requests = 152;
  r.totals.unserved_tasks = 4;
  EXPECT_EQ(r.Message("policy_no_effect"),
            "context_policy \"sliding_window\" changed no prompt that was served: 4 tasks were "
            "refused at their first request, over the context limit, and served nothing "
            "(docs/policies.md says what each policy needs of a trace, e.g. tool spans for "
            "drop_tool_results): the run is the same as keep_all");
  // An empty run (no task planned) has nothing to say.
  FakeRun empty;
  empty.scenario.context_policy.kind = "sliding_window";
  empty.summary.requests = 0;
  EXPECT_EQ(empty.Message("policy_no_effect"), "");
}

TEST(WarningsTest, PlaceholderOutputsWhenTheTraceHasThem) {
  FakeRun r;
  r.totals.placeholder_outputs = 3;
  EXPECT_EQ(r.Codes(), Codes{"placeholder_outputs"});
}

TEST(WarningsTest, UnsupportedFormatWhenFp8WeightsRunWeightOnly) {
  FakeRun r;
  r.totals.cost_model.formats = {
      {"weights", "fp8-e4m3", "W8A8 (FP8)", "CUTLASS scaled_mm", "measured"}};
  EXPECT_EQ(r.Codes(), Codes{});
  r.totals.cost_model.formats = {
      {"weights", "fp8-e4m3", "W8A16", "Marlin (FP8 weight-only)", "measured"}};
  EXPECT_EQ(r.Codes(), Codes{"unsupported_format"});
  // Weight-only formats made to be weight-only (int4) are not a fallback.
  r.totals.cost_model.formats = {
      {"weights", "int4-g128", "W4A16", "Marlin (AWQ / GPTQ)", "measured"}};
  EXPECT_EQ(r.Codes(), Codes{});
}

TEST(WarningsTest, LinearStateUnmeasuredWhenTheModelKeepsARecurrentState) {
  FakeRun r;
  r.totals.cost_model.linear_state_layers = 24;  // Qwen3.5-9B: 24 of 32 layers
  EXPECT_EQ(r.Codes(), Codes{"linear_state_unmeasured"});
  EXPECT_NE(r.Message("linear_state_unmeasured").find("24 layers of the model keep a recurrent"),
            std::string::npos)
      << r.Message("linear_state_unmeasured");
  EXPECT_EQ(r.Message("linear_state_unmeasured").find("prefix caching is off"), std::string::npos);
  // Run without prefix caching (the block cache cannot reuse their state),
  // the cost is an upper bound where engines cache such prefixes: it says so.
  r.scenario.prefix_cache.enabled = false;
  EXPECT_EQ(r.Codes(), Codes{"linear_state_unmeasured"});
  EXPECT_NE(r.Message("linear_state_unmeasured")
                .find("; and prefix caching is off (kvbill's block cache cannot reuse a "
                      "recurrent state)"),
            std::string::npos)
      << r.Message("linear_state_unmeasured");
  EXPECT_NE(r.Message("linear_state_unmeasured").find("so on that count the cost here is too high"),
            std::string::npos);
}

// vLLM speculating on a model with recurrent-state layers: TTFT is read as
// low (host waits kvbill does not time). Not without speculation, not on
// SGLang, not on a model without such layers.
TEST(WarningsTest, SpeculativeHostWaitsOnVllmWithRecurrentStateLayers) {
  FakeRun r;
  ScenarioSpeculative mtp;
  mtp.method = "mtp";
  mtp.acceptance_rate = {0.45};
  r.scenario.deployment.speculative = mtp;
  EXPECT_EQ(r.Codes(), Codes{});  // a dense model
  r.totals.cost_model.linear_state_layers = 24;
  EXPECT_EQ(r.Codes(), (Codes{"linear_state_unmeasured", "speculative_host_waits"}));
  EXPECT_NE(r.Message("speculative_host_waits").find("17-41 ms above kvbill's"), std::string::npos);
  r.scenario.deployment.engine = "sglang";
  EXPECT_EQ(r.Codes(), Codes{"linear_state_unmeasured"});
  r.scenario.deployment.engine = "vllm";
  r.scenario.deployment.speculative.reset();
  EXPECT_EQ(r.Codes(), Codes{"linear_state_unmeasured"});
}

TEST(WarningsTest, SpeculativeAcceptanceAssumedWhenTheScenarioSetsNoRate) {
  FakeRun r;
  ScenarioSpeculative mtp;
  mtp.method = "mtp";
  r.scenario.deployment.speculative = mtp;
  EXPECT_EQ(r.Codes(), Codes{"speculative_acceptance_assumed"});
  // The message names the method's default it ran at (mtp: 0.85).
  EXPECT_NE(r.Message("speculative_acceptance_assumed")
                .find("\"mtp\" method's default "
                      "acceptance rate, 0.85"),
            std::string::npos)
      << r.Message("speculative_acceptance_assumed");
  EXPECT_EQ(r.Message("speculative_acceptance_assumed").find("positions"), std::string::npos);
  // Three MTP drafts a step: the one-token module's rate, extrapolated, says so.
  r.scenario.deployment.speculative->num_speculative_tokens = 3;
  EXPECT_NE(r.Message("speculative_acceptance_assumed")
                .find("the default is the second token's rate of a one-token MTP module, "
                      "applied here at each of 3 positions"),
            std::string::npos)
      << r.Message("speculative_acceptance_assumed");
  // A rate of the scenario's own, one for every position or one each: no warning.
  r.scenario.deployment.speculative->acceptance_rate = {0.4};
  EXPECT_EQ(r.Codes(), Codes{});
  ScenarioSpeculative eagle;
  eagle.method = "eagle";
  eagle.num_speculative_tokens = 2;
  eagle.acceptance_rate = {0.7, 0.6};
  r.scenario.deployment.speculative = eagle;
  EXPECT_EQ(r.Codes(), Codes{});
}

TEST(WarningsTest, UncalibratedWhenTheCostModelSaysSo) {
  FakeRun r;
  r.totals.cost_model.calibrated = false;
  r.totals.cost_model.profile = "roofline";
  EXPECT_EQ(r.Codes(), Codes{"uncalibrated"});
  // The roofline times no collective: over several GPUs a replica it says so.
  EXPECT_EQ(r.Message("uncalibrated").find("all-reduces"), std::string::npos);
  r.scenario.deployment.gpus_per_replica = 8;
  EXPECT_NE(r.Message("uncalibrated")
                .find("nor does it time tensor parallelism's all-reduces (two a layer over 8 "
                      "GPUs;"),
            std::string::npos)
      << r.Message("uncalibrated");
}

// A calibrated run whose regime the profile lists: quiet at a median miss
// of 25% leaving the model out, warned above it, and warned when the profile
// lists regimes but not this one. A profile listing none (older files) and
// the roofline stay quiet.
TEST(WarningsTest, WeaklyValidatedByTheRegimesMedianMissLeavingTheModelOut) {
  FakeRun r;
  r.totals.cost_model.profile = "vllm";
  r.totals.cost_model.regime = DescribeRegime("h100-sxm", true, true);
  EXPECT_EQ(r.totals.cost_model.regime,
            "h100-sxm, mixture-of-experts models, several GPUs a replica");
  EXPECT_EQ(r.Codes(), Codes{});  // regimes not known
  r.totals.cost_model.regimes_known = true;
  EXPECT_EQ(r.Codes(), Codes{"weakly_validated"});
  EXPECT_EQ(r.Message("weakly_validated"),
            "no published run of the \"vllm\" profile's engine in this regime (h100-sxm, "
            "mixture-of-experts models, several GPUs a replica) was replayed, so its times rest "
            "on the fit to other GPUs, model kinds or parallelism; treat latency and cost as "
            "unvalidated (docs/validation.md#by-regime)");
  ValidationRegime v;
  v.gpu = "h100-sxm";
  v.moe = v.several_gpus = true;
  v.points = 61;
  v.median_error = 0.4;  // in sample: not what decides
  v.lomo_points = 60;
  v.lomo_median_error = kWeaklyValidatedError;
  r.totals.cost_model.regime_validation = v;
  EXPECT_EQ(r.Codes(), Codes{});
  r.totals.cost_model.regime_validation->lomo_median_error = 0.3;
  r.totals.cost_model.regime_validation->median_error = 0.2;
  EXPECT_EQ(r.Codes(), Codes{"weakly_validated"});
  EXPECT_EQ(r.Message("weakly_validated"),
            "published runs in this regime (h100-sxm, mixture-of-experts models, several GPUs a "
            "replica) were missed by a median of 30% when their model was left out of the fit "
            "(20% in sample; 60 points): latency and cost here are about that uncertain "
            "(docs/validation.md#by-regime)");
  // Without a leave-one-model-out figure the fit was never checked on runs
  // it did not see: weakly validated however small its in-sample miss (a
  // profile fitted to one benchmark by 14 parameters missed it by 2%).
  r.totals.cost_model.regime_validation->lomo_points = 0;
  r.totals.cost_model.regime_validation->median_error = 0.02;
  r.totals.cost_model.profile = "sglang";
  EXPECT_EQ(r.Codes(), Codes{"weakly_validated"});
  EXPECT_EQ(r.Message("weakly_validated"),
            "the profile was fitted to this regime's published runs (h100-sxm, "
            "mixture-of-experts models, several GPUs a replica: 61 points, 2% median miss in "
            "sample) but never checked on runs left out of the fit (no leave-one-model-out: "
            "calibrate without --no-lomo, with runs of several models), so its error on other "
            "runs is unknown (docs/validation-sglang.md#by-regime)");
  // An uncalibrated run says so instead.
  r.totals.cost_model.calibrated = false;
  EXPECT_EQ(r.Codes(), Codes{"uncalibrated"});
}

TEST(WarningsTest, SeveralComeInTheFixedOrder) {
  FakeRun r;
  r.totals.cost_model.calibrated = false;
  r.summary.idle_usd = 9;
  r.summary.idle_gpu_usd = 9;
  r.totals.rejected_requests = 1;
  r.summary.queue_s.p50 = 30;
  EXPECT_EQ(r.Codes(), (Codes{"context_limit", "overloaded", "idle_dominant", "uncalibrated"}));
}

TEST(WarningsTest, BudgetsCountWarningsByCode) {
  EXPECT_TRUE(IsBudgetMetric("warnings.overloaded"));
  EXPECT_TRUE(IsBudgetMetric("warnings.context_limit"));
  EXPECT_FALSE(IsBudgetMetric("warnings.overload"));
  RunMetrics m;
  m.warnings = {{"overloaded", ""}, {"uncalibrated", ""}};
  EXPECT_EQ(MetricValue(m, "warnings.overloaded"), 1);
  EXPECT_EQ(MetricValue(m, "warnings.context_limit"), 0);
  const std::vector<BudgetCheck> checks = CheckBudgets({Budget{"warnings.overloaded", 0.0, {}}}, m);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_FALSE(checks[0].ok);
}

// The engine's counters behind policy_no_effect and placeholder_outputs.
TEST(WarningsTest, EngineCountsEditedPromptsAndPlaceholderOutputs) {
  // LoopTask's later turns carry 500-token tool results: drop_tool_results
  // (older than 1 turn, the default stub) edits the prompts after them.
  std::vector<Task> tasks = {LoopTask("a", 4, 1000, 500, 100, 1.0)};
  tasks[0].turns[2].output_is_placeholder = true;
  const SimulationConfig c = Config("llama-3.1-8b");
  const SimulationResult keep = RunSim(c, tasks);
  EXPECT_EQ(keep.edited_requests, 0);
  EXPECT_EQ(keep.placeholder_outputs, 1);
  ContextPolicyParams p;
  p.kind = "drop_tool_results";
  p.older_than_turns = 1;
  auto policy = MakeContextPolicy(p);
  ASSERT_TRUE(policy.ok());
  auto dropped = Simulate(c, tasks, {(*policy)->Plan(tasks[0])});
  ASSERT_TRUE(dropped.ok());
  EXPECT_GT(dropped->edited_requests, 0);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
