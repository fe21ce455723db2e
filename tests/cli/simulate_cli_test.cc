// End-to-end runs of `kvbill simulate`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>
#include <vector>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunKvbill;

nlohmann::json WithoutWallClock(nlohmann::json j) {
  j["summary"].erase("wall_s");
  return j;
}

TEST(SimulateCliTest, DefaultScenarioJsonHasTheDocumentedFields) {
  const auto r = RunKvbill("simulate --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["tasks"].size(), 20u);  // scenarios/default.json: 20 generated tasks
  for (const char* key :
       {"id", "requests", "prompt_tokens", "cached_tokens", "prefill_tokens", "output_tokens",
        "kv_read_bytes", "gpu_seconds", "cost_usd", "completion_s"}) {
    EXPECT_TRUE(j["tasks"][0].contains(key)) << key;
  }
  const auto& s = j["summary"];
  for (const char* key :
       {"tasks", "requests", "prompt_tokens", "cached_tokens", "hit_rate", "kv_read_bytes",
        "cost_usd", "cost_per_task_usd", "simulated_s", "wall_s"}) {
    EXPECT_TRUE(s.contains(key)) << key;
  }
  for (const char* key : {"mean", "p50", "p90", "p99"}) {
    EXPECT_TRUE(s["cost_per_task_usd"].contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(s["hit_rate"].get<double>(),
                   s["cached_tokens"].get<double>() / s["prompt_tokens"].get<double>());
  // The bill is what tasks paid plus idle time.
  EXPECT_NEAR(s["cost_usd"].get<double>(),
              s["task_cost_usd"].get<double>() + s["idle_cost_usd"].get<double>(), 1e-9);
  // One API server keeps up with 20 tasks' requests: no request waits for
  // it, exactly (not the 1e-14 s left over from subtracting its times).
  EXPECT_EQ(s["frontend_wait_s"]["p50"].get<double>(), 0.0);
}

TEST(SimulateCliTest, SameScenarioGivesTheSameOutputAndStepModeAgrees) {
  const auto a = RunKvbill("simulate --format json");
  const auto b = RunKvbill("simulate --format json");
  const auto step = RunKvbill("simulate --format json --engine step");
  ASSERT_EQ(a.exit_status, 0);
  ASSERT_EQ(step.exit_status, 0);
  EXPECT_EQ(WithoutWallClock(nlohmann::json::parse(a.out)).dump(),
            WithoutWallClock(nlohmann::json::parse(b.out)).dump());
  const auto ja = nlohmann::json::parse(a.out), js = nlohmann::json::parse(step.out);
  for (std::size_t i = 0; i < ja["tasks"].size(); ++i) {
    EXPECT_EQ(ja["tasks"][i]["cached_tokens"], js["tasks"][i]["cached_tokens"]);
    EXPECT_NEAR(ja["tasks"][i]["cost_usd"].get<double>(), js["tasks"][i]["cost_usd"].get<double>(),
                1e-9 * ja["tasks"][i]["cost_usd"].get<double>());
  }
  EXPECT_EQ(RunKvbill("simulate --format csv").out, RunKvbill("simulate --format csv").out);
}

TEST(SimulateCliTest, ReplaysATraceFile) {
  const auto r =
      RunKvbill("simulate --scenario scenarios/examples/mooncake-replay.json --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["summary"]["requests"].get<int>(), 0);
}

// Llama-3.1-70B on 4 H100s: per GPU 76,922,864,271 B of the 90% share, less
// vLLM's reserve 33.655264748504614 x 8,192 x 8,192 / 2^30 + 1.4511113 =
// 3.5545654 GiB = 3,816,685,507 B, less 70,553,706,496 x 2 / 4 =
// 35,276,853,248 B of weights, leaves 37,829,325,516 B; a 512-token block
// is 512 x 80 layers x 2 KV heads x 128 x 2 x 2 B = 41,943,040 B: 901
// blocks, 461,312 tokens. A 3M-token override (3,145,728) is 6.8x that; the
// bundled example models Mooncake's store as the host tier instead and warns
// nothing of the kind.
TEST(SimulateCliTest, ACapacityOverrideBeyondMemoryIsWarned) {
  const std::string path = ::testing::TempDir() + "/pool_override.json";
  std::ofstream(path) << R"({"model": "llama-3.1-70b", "deployment": {"gpu": "h100-sxm",
      "gpus_per_replica": 4}, "prefix_cache": {"block_size": 512, "capacity_tokens": "3M"},
      "trace": {"generator": "chat", "tasks": 2}})";
  const auto r = RunKvbill("simulate --scenario " + path + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::string message;
  for (const auto& w : j["summary"]["warnings"]) {
    if (w["code"] == "pool_beyond_memory") message = w["message"];
  }
  EXPECT_NE(message.find("3,145,728 tokens, 6.8x what its memory holds after the weights and "
                         "the activation reserve (461,312 tokens)"),
            std::string::npos)
      << r.out;
  const auto example =
      RunKvbill("simulate --scenario scenarios/examples/mooncake-replay.json --format json");
  ASSERT_EQ(example.exit_status, 0) << example.err;
  EXPECT_EQ(example.out.find("pool_beyond_memory"), std::string::npos);
}

// Three Claude Code calls 10 s apart, each reading the previous prompt.
TEST(SimulateCliTest, PricingBillsATraceAtTheProvidersRules) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/api_log.jsonl")
      << R"({"type": "assistant", "sessionId": "s1", "timestamp": "2025-12-12T15:20:00.000Z", "message": {"id": "m1", "model": "claude-sonnet-4-5-20250929", "usage": {"input_tokens": 0, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0, "output_tokens": 100}}})"
         "\n"
      << R"({"type": "assistant", "sessionId": "s1", "timestamp": "2025-12-12T15:20:10.000Z", "message": {"id": "m2", "model": "claude-sonnet-4-5-20250929", "usage": {"input_tokens": 0, "cache_creation_input_tokens": 600, "cache_read_input_tokens": 2000, "output_tokens": 50}}})"
         "\n"
      << R"({"type": "assistant", "sessionId": "s1", "timestamp": "2025-12-12T15:20:20.000Z", "message": {"id": "m3", "model": "claude-sonnet-4-5-20250929", "usage": {"input_tokens": 0, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2600, "output_tokens": 20}}})"
         "\n";
  std::ofstream(dir + "/api.json")
      << R"({"trace": {"file": "api_log.jsonl", "format": "claude-code"},
             "pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5-20250929"}})";
  const auto r = RunKvbill("simulate --scenario " + dir + "/api.json --format json --requests");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // Sonnet 4.5 $/Mtok: 3.75 write, 0.3 read, 15 out.
  //   2,000 x 3.75 + 100 x 15 = 9,000 micro-dollars
  //   600 x 3.75 + 2,000 x 0.3 + 50 x 15 = 2,250 + 600 + 750 = 3,600
  //   100 x 3.75 + 2,600 x 0.3 + 20 x 15 = 375 + 780 + 300 = 1,455
  const auto& task = j["tasks"].at(0);
  EXPECT_EQ(task["requests"], 3);
  EXPECT_EQ(task["cache_read_tokens"], 4'600);
  EXPECT_EQ(task["cache_write_tokens"], 2'700);
  EXPECT_EQ(task["uncached_tokens"], 0);
  EXPECT_DOUBLE_EQ(task["cost_usd"].get<double>(), 0.014055);
  const auto& second = j["requests"].at(1);
  EXPECT_EQ(second["task"], "s1");
  EXPECT_EQ(second["index"], 1);
  EXPECT_EQ(second["cache_read_tokens"], 2'000);
  EXPECT_EQ(second["cache_write_tokens"], 600);
  EXPECT_EQ(second["recorded"]["cache_read_tokens"], 2'000);
  EXPECT_DOUBLE_EQ(second["recorded"]["cost_usd"].get<double>(), 0.0036);
  EXPECT_EQ(j["summary"]["recorded"]["calls"], 3);
  EXPECT_EQ(j["summary"]["recorded"]["cache_read_within_1pct"], 3);
  EXPECT_DOUBLE_EQ(j["summary"]["recorded"]["cost_usd"].get<double>(), 0.014055);
}

// Two Claude Code sessions of one model whose first calls read 15,000
// tokens from the provider's cache: that prefix is the system prompt and
// tools an earlier session cached, so a self-hosted prefix cache serves the
// second session's copy from the first's blocks. Worked by hand: the first
// request computes its whole prompt (10 + 100 + 15,000 = 15,110 tokens, a
// cold cache); the second hits the system span's whole 16-token blocks,
// floor(15,000 / 16) = 937 blocks = 14,992 tokens (block 938 holds the
// span's last 8 tokens and the session's own first 8: another hash).
TEST(SimulateCliTest, ClaudeCodeSessionsShareTheSystemPrefixTheirCacheReadsShow) {
  const std::string dir = ::testing::TempDir() + "/shared_system";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/cc.jsonl")
      << R"({"type": "assistant", "sessionId": "a", "timestamp": "2025-12-12T15:20:00.000Z", "message": {"id": "m1", "model": "claude-sonnet-4-5-20250929", "usage": {"input_tokens": 10, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 15000, "output_tokens": 50}}})"
         "\n"
      << R"({"type": "assistant", "sessionId": "b", "timestamp": "2025-12-12T15:30:00.000Z", "message": {"id": "m2", "model": "claude-sonnet-4-5-20250929", "usage": {"input_tokens": 10, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 15000, "output_tokens": 50}}})"
         "\n";
  std::ofstream(dir + "/s.json") << R"({"trace": {"file": "cc.jsonl", "format": "claude-code"}})";
  const auto r = RunKvbill("simulate --scenario " + dir + "/s.json --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["tasks"].size(), 2u);
  EXPECT_EQ(j["tasks"][0]["id"], "a");
  EXPECT_EQ(j["tasks"][0]["cached_tokens"], 0);
  EXPECT_EQ(j["tasks"][0]["prefill_tokens"], 15'110);
  EXPECT_EQ(j["tasks"][1]["id"], "b");
  EXPECT_EQ(j["tasks"][1]["cached_tokens"], 14'992);
  EXPECT_EQ(j["tasks"][1]["prefill_tokens"], 15'110 - 14'992);
}

TEST(SimulateCliTest, InvalidScenariosExitTwoNamingTheJsonPath) {
  const std::string dir = ::testing::TempDir();
  const std::pair<std::string, std::string> cases[] = {
      {R"({"deployment": {"gpu": "h900"}})", "#/deployment/gpu: unknown GPU \"h900\""},
      {R"({"prefix_cache": {"capacity_tokens": -5}})", "#/prefix_cache/capacity_tokens: "},
      {R"({"context_policy": {"kind": "sliding_window", "window_tokens": 0}})",
       "#/context_policy/window_tokens: must be a positive integer, got 0"},
      {R"({"engine": {"max_num_seqs": 4, "bogus": 1}})", "#/engine/bogus: unknown key"},
      {R"({"deployment": {"speculative": {"method": "eagle", "num_speculative_tokens": 0}}})",
       "#/deployment/speculative/num_speculative_tokens: must be a positive integer, got 0"},
      {R"({"deployment": {"speculative": {"method": "draft_model", "model": "nope"}}})",
       "#/deployment/speculative/model: unknown model \"nope\""},
      // No trace at all (valid with --trace): said at #/trace, not as a
      // generator preset named "".
      {"{}", "#/trace: needs \"file\" or \"generator\" (or simulate's --trace)"},
  };
  int i = 0;
  for (const auto& [json, expected] : cases) {
    SCOPED_TRACE(json);
    const std::string path = dir + "/bad_scenario_" + std::to_string(i++) + ".json";
    std::ofstream(path) << json;
    const auto r = RunKvbill("simulate --scenario " + path);
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_EQ(r.err.rfind("kvbill simulate: " + path + expected, 0), 0u) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// Weights that leave no room for KV are an error of the field that sizes
// them, named by its JSON pointer like every other scenario error: the
// model's on gpus_per_replica GPUs, or a draft model that alone leaves no
// room (qwen3-8b fits one H100 by itself).
TEST(SimulateCliTest, WeightsThatLeaveNoRoomNameTheFieldThatSizesThem) {
  const std::string dir = ::testing::TempDir();
  const std::pair<std::string, std::string> cases[] = {
      {R"({"model": "qwen3-next-80b-a3b", "deployment": {"gpus_per_replica": 2},
          "prefix_cache": {"enabled": false}, "trace": {"generator": "coding-agent", "tasks": 2}})",
       "#/deployment/gpus_per_replica: the model's weights (74.25 GiB per GPU) leave no room for "
       "KV in 69.66 GiB per GPU"},
      {R"({"model": "qwen3-8b", "deployment": {"speculative": {"method": "draft_model",
          "model": "qwen3-32b"}}, "trace": {"generator": "coding-agent", "tasks": 2}})",
       "#/deployment/speculative/model: the model's weights (76.28 GiB per GPU, the draft "
       "model's "},
      // A memory fraction the scenario set too low: 79.6 GiB x 0.05 = 3.98
      // GiB less the engine's 2.50 GiB reserve leaves 1.48; the weights and
      // the reserve take (15.26 + 2.50) / 79.6 = 0.223 of the GPU, so 0.24
      // (ceil of 22.3 + 1 hundredths) would leave room. It named
      // gpus_per_replica and offered 16 GPUs for an 8B model.
      {R"({"model": "qwen3-8b", "deployment": {"memory_fraction": 0.05},
          "trace": {"generator": "coding-agent", "tasks": 2}})",
       "#/deployment/memory_fraction: the model's weights (15.26 GiB per GPU) leave no room for "
       "KV in 1.48 GiB per GPU: deployment.memory_fraction 0.24, deployment.gpus_per_replica 16 "
       "or a smaller weight_format would leave room"},
      // A reserve the scenario set that takes 55 of the 71.64 - 15.26 =
      // 56.38 GiB the weights leave: the first request does not fit the
      // pool, and the reserve is named.
      {R"({"model": "qwen3-8b", "deployment": {"activation_reserve_gib": 55},
          "trace": {"generator": "coding-agent", "tasks": 2}})",
       "#/deployment/activation_reserve_gib: request 1 of task "},
  };
  int i = 0;
  for (const auto& [json, expected] : cases) {
    SCOPED_TRACE(json);
    const std::string path = dir + "/no_room_" + std::to_string(i++) + ".json";
    std::ofstream(path) << json;
    const auto r = RunKvbill("simulate --scenario " + path);
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_EQ(r.err.rfind("kvbill simulate: " + path + expected, 0), 0u) << r.err;
    EXPECT_EQ(r.out, "");
    if (expected.starts_with("#/deployment/activation_reserve_gib")) {
      EXPECT_NE(r.err.find("; the scenario's deployment.activation_reserve_gib takes 55.00 GiB "
                           "of the 56.38 GiB per GPU the weights leave"),
                std::string::npos)
          << r.err;
    }
  }
}

// A trace with no task is an error in simulate and check, as in bill and
// the trace commands: it used to bill $0 and pass every `max` budget.
TEST(SimulateCliTest, AnEmptyTraceIsAnErrorInSimulateAndCheck) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("empty_" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/zero.jsonl");
  std::ofstream(dir + "/blank.jsonl") << "\n  \n";
  for (const char* name : {"zero.jsonl", "blank.jsonl"}) {
    const std::string trace = dir + "/" + name;
    const std::string scenario = dir + "/s.json";
    std::ofstream(scenario) << R"({"model": "qwen3-8b", "trace": {"file": ")" << name
                            << R"("}, "budgets": {"cost_per_task_usd.mean": {"max": 1}}})";
    for (const std::string command : {"simulate", "check"}) {
      SCOPED_TRACE(command + " " + name);
      const auto r = RunKvbill(command + " --scenario " + scenario);
      EXPECT_EQ(r.exit_status, 2);
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(r.err, "kvbill " + command + ": " + trace + ": empty trace\n");
    }
  }
  std::filesystem::remove_all(dir);
}

// API mode: a prompt above the model's context window (the price sheet's
// max_input_tokens, LiteLLM's: 200,000 for Claude Haiku 4.5) is one the
// provider refuses; the bill prices it, with context_limit. Sonnet 4.5's
// listed 200,000 is the window its long-context tier (above 200k) extends:
// no warning there.
TEST(SimulateCliTest, ApiPromptsPastTheContextWindowAreWarned) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/big.jsonl") << R"({"kvbill_trace":1}
{"id":"a","arrival_s":0,"turns":[{"spans":[{"kind":"system","tokens":5000},{"kind":"user","tokens":150000}],"out":500,"tool_s":2},{"spans":[{"kind":"tool_result","tokens":100000}],"out":300}]}
)";
  for (const char* model : {"claude-haiku-4-5", "claude-sonnet-4-5"}) {
    SCOPED_TRACE(model);
    std::ofstream(dir + "/apibig.json")
        << R"({"trace": {"file": "big.jsonl"}, "pricing": {"provider": "anthropic", "model": ")"
        << model << R"("}})";
    const auto r = RunKvbill("simulate --format json --scenario " + dir + "/apibig.json");
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto warnings = nlohmann::json::parse(r.out)["summary"]["warnings"];
    std::string limit;
    for (const auto& w : warnings) {
      if (w["code"] == "context_limit") limit = w["message"];
    }
    if (std::string(model) == "claude-haiku-4-5") {
      // The second prompt: the first's 155,000 kept, its spans' 100,000 added
      // (a native trace's turn lists what is new: docs/trace-format.md).
      EXPECT_EQ(limit.rfind("1 request has a prompt above the model's context window (the "
                            "longest, 255,000 tokens, against claude-haiku-4-5's 200,000",
                            0),
                0u)
          << limit;
    } else {
      EXPECT_EQ(limit, "");
    }
    const auto csv = RunKvbill("simulate --format csv --scenario " + dir + "/apibig.json");
    ASSERT_EQ(csv.exit_status, 0) << csv.err;
    EXPECT_EQ(csv.err.find("kvbill simulate: warning [context_limit]: ") != std::string::npos,
              !limit.empty())
        << csv.err;
  }
  // That tier's window is Anthropic's 1M-token beta (Claude API support
  // article 8606395): 5,000 + 1,200,000 = 1,205,000 tokens are past it.
  std::ofstream(dir + "/huge.jsonl") << R"({"kvbill_trace":1}
{"id":"a","arrival_s":0,"turns":[{"spans":[{"kind":"system","tokens":5000},{"kind":"user","tokens":1200000}],"out":500}]}
)";
  std::ofstream(dir + "/apihuge.json")
      << R"({"trace": {"file": "huge.jsonl"}, "pricing": {"provider": "anthropic", )"
         R"("model": "claude-sonnet-4-5"}})";
  const auto huge = RunKvbill("simulate --format json --scenario " + dir + "/apihuge.json");
  ASSERT_EQ(huge.exit_status, 0) << huge.err;
  std::string limit;
  const auto huge_json = nlohmann::json::parse(huge.out);
  for (const auto& w : huge_json["summary"]["warnings"]) {
    if (w["code"] == "context_limit") limit = w["message"];
  }
  EXPECT_EQ(limit.rfind("1 request has a prompt above the model's context window (the longest, "
                        "1,205,000 tokens, against claude-sonnet-4-5's 1,000,000 input tokens, "
                        "the window of its long-context tier)",
                        0),
            0u)
      << limit;
}

// One-token outputs have no time per output token (it is measured between
// a request's first and second tokens): the JSON's statistics are null and
// the table says "none", where both once read 0.0 ms.
TEST(SimulateCliTest, AnEmptyTpotSampleIsNullNotZero) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/one_token.jsonl") << R"({"kvbill_trace":1}
{"id":"a","arrival_s":0,"turns":[{"spans":[{"kind":"user","tokens":1000}],"out":1}]}
)";
  std::ofstream(dir + "/one_token.json") << R"({"trace": {"file": "one_token.jsonl"}})";
  const auto r = RunKvbill("simulate --format json --scenario " + dir + "/one_token.json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out)["summary"];
  EXPECT_EQ(summary["tpot_requests"], 0);
  for (const char* stat : {"mean", "p50", "p90", "p99", "max"}) {
    EXPECT_TRUE(summary["tpot_s"][stat].is_null()) << stat;
  }
  EXPECT_GT(summary["ttft_s"]["p50"].get<double>(), 0);
  const auto table = RunKvbill("simulate --scenario " + dir + "/one_token.json");
  EXPECT_NE(table.out.find("  time per output token none, not measured\n"), std::string::npos)
      << table.out;
}

// Per-request records are JSON: asked for with a table or CSV alone they
// would vanish, so that is an error.
TEST(SimulateCliTest, RequestsWithoutJsonIsAnError) {
  for (const char* format : {"table", "csv"}) {
    const auto r = RunKvbill(std::string("simulate --requests --format ") + format);
    EXPECT_EQ(r.exit_status, 2) << format;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(
        r.err,
        "kvbill simulate: --requests: the records are JSON; give --format json or --out DIR\n");
  }
}

// summary.cost_model says what priced the iterations: the bundled default
// scenario runs vLLM's calibrated profile; efficiencies select the roofline.
TEST(SimulateCliTest, SummaryNamesTheCostModel) {
  const auto r = RunKvbill("simulate --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto calibrated = nlohmann::json::parse(r.out)["summary"]["cost_model"];
  EXPECT_EQ(calibrated["profile"], "vllm");
  EXPECT_EQ(calibrated["calibrated"], true);
  EXPECT_GT(calibrated["validation_median_error"].get<double>(), 0);
  EXPECT_TRUE(calibrated["notes"].is_array());
  // Qwen3-8B on one H100: the profile's regime of dense models on one H100,
  // where published runs were replayed.
  const auto regime = calibrated["validation_regime"];
  EXPECT_EQ(regime["regime"], "h100-sxm, dense models, one GPU a replica");
  EXPECT_EQ(regime["validated"], true);
  EXPECT_GT(regime["points"].get<int>(), 0);
  EXPECT_GT(regime["lomo_points"].get<int>(), 0);
  // H100 has kernel measurements and a fitted profile: nothing to warn
  // about but how far the regime's published runs were missed leaving their
  // model out of the fit, past 25% (weakly_validated).
  const auto warnings = nlohmann::json::parse(r.out)["summary"]["warnings"];
  const bool weak = regime["lomo_median_error"].get<double>() > 0.25;
  ASSERT_EQ(warnings.size(), weak ? 1u : 0u) << warnings.dump();
  if (weak) {
    EXPECT_EQ(warnings[0]["code"], "weakly_validated");
  }

  const std::string path =
      ::testing::TempDir() + "/roofline_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << R"({"deployment": {"bandwidth_efficiency": 0.5},
                             "trace": {"generator": "chat", "tasks": 2}})";
  const auto rr = RunKvbill("simulate --format json --scenario " + path);
  ASSERT_EQ(rr.exit_status, 0) << rr.err;
  const auto roofline = nlohmann::json::parse(rr.out)["summary"]["cost_model"];
  EXPECT_EQ(roofline["profile"], "roofline");
  EXPECT_EQ(roofline["calibrated"], false);
  EXPECT_TRUE(roofline["validation_regime"].is_null());
  // 50% of peak bandwidth as set, 60% of peak FLOP/s by default.
  ASSERT_EQ(roofline["notes"].size(), 1u);
  EXPECT_NE(roofline["notes"][0].get<std::string>().find("50% of peak HBM bandwidth and 60%"),
            std::string::npos)
      << roofline["notes"];
  const auto table = RunKvbill("simulate --scenario " + path);
  EXPECT_NE(table.out.find("iteration times: spec-sheet roofline (uncalibrated)"),
            std::string::npos)
      << table.out;
  const auto plain = RunKvbill("simulate");
  EXPECT_NE(plain.out.find("; in its regime (h100-sxm, dense models, one GPU a replica) "),
            std::string::npos)
      << plain.out;
}

TEST(SimulateCliTest, ContextThatNeverFitsIsAClearError) {
  // Qwen3-32B on one H100 with nothing set aside for activations keeps 43,472
  // tokens of bf16 KV; coding agents go past it (with max_model_len lifted
  // past the model's 40,960, which would refuse them first).
  const std::string path = ::testing::TempDir() + "/too_long.json";
  std::ofstream(path) << R"({"model": "qwen3-32b", "deployment": {"activation_reserve_gib": 0},
                             "engine": {"max_model_len": "128k"},
                             "trace": {"generator": "coding-agent", "tasks": 4}})";
  const auto r = RunKvbill("simulate --scenario " + path);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("more than a replica's KV pool holds (43,472 tokens of one sequence"),
            std::string::npos)
      << r.err;
  // The error names the field that bounds the pool and the request's task
  // and turn, not the file alone.
  EXPECT_NE(r.err.find(path + "#/deployment/gpus_per_replica: request "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(" (turn "), std::string::npos) << r.err;
}

// A pool that prefix_cache.capacity_tokens set is the field named. Task
// "a"'s second request keeps its first prompt (1,000; the output comes back
// only as an assistant span, which this trace has not) and adds 3,000: a
// prompt of 4,000 tokens, and KV for 4,000 + 10 - 1 = 4,009 (the last
// output token's is never written), past a pool of 2,000 tokens.
TEST(SimulateCliTest, ARequestBeyondThePoolNamesItsTurnAndTheFieldThatBoundsThePool) {
  const std::string dir = ::testing::TempDir() + "/beyond_pool_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/t.jsonl")
      << "{\"kvbill_trace\":1}\n"
      << R"({"id":"a","turns":[{"spans":[{"kind":"user","tokens":1000}],"out":10},)"
      << R"({"spans":[{"kind":"user","tokens":3000}],"out":10}]})"
      << "\n";
  std::ofstream(dir + "/s.json") << R"({"model": "qwen3-8b", "trace": {"file": "t.jsonl"},
      "prefix_cache": {"capacity_tokens": 2000}})";
  const auto r = RunKvbill("simulate --scenario " + dir + "/s.json");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(dir + "/s.json#/prefix_cache/capacity_tokens: request 2 of task \"a\" "
                             "(turn 2) needs KV for 4,009 tokens (prompt 4,000 + output), more "
                             "than a replica's KV pool holds"),
            std::string::npos)
      << r.err;
  std::filesystem::remove_all(dir);
}

TEST(SimulateCliTest, OutDirGetsJsonAndCsv) {
  const std::string dir = ::testing::TempDir() + "/sim_out";
  std::filesystem::remove_all(dir);
  const auto r = RunKvbill("simulate --out " + dir);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/simulate.json"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/tasks.csv"));
  std::filesystem::remove_all(dir);
}

// The engine run streams its rows into the outputs; what comes out is still
// the whole document as nlohmann writes it (dumping the parsed output again
// gives the same bytes), with one row per task and per request, and the
// files of --out say the same.
TEST(SimulateCliTest, StreamedOutputIsTheWholeDocument) {
  const std::string dir = ::testing::TempDir() + "/sim_stream_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  const auto r = RunKvbill("simulate --format json --requests --out " + dir);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(j.dump(2) + "\n", r.out);
  EXPECT_EQ(j["tasks"].size(), j["summary"]["tasks"].get<std::size_t>());
  EXPECT_EQ(j["requests"].size(), j["summary"]["requests"].get<std::size_t>());
  std::ifstream json_file(dir + "/simulate.json");
  const auto written = nlohmann::ordered_json::parse(json_file);
  EXPECT_EQ(WithoutWallClock(written), WithoutWallClock(j));
  std::ifstream csv(dir + "/tasks.csv");
  std::string line;
  std::size_t lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_EQ(lines, j["tasks"].size() + 1);  // and the header
  std::filesystem::remove_all(dir);
}

// A trace whose third line is bad: the first task is simulated before the
// reader reaches it, yet the command fails as reading the whole trace
// would, and writes nothing.
TEST(SimulateCliTest, ABadLineLateInTheTraceLeavesNoOutput) {
  const std::string base = ::testing::TempDir() + "/late_error_" + std::to_string(::getpid());
  const std::string trace = base + ".jsonl", dir = base + "_out";
  std::filesystem::remove_all(dir);
  std::ofstream(trace)
      << R"({"kvbill_trace":1})"
      << "\n"
      << R"({"id":"a","arrival_s":0,"turns":[{"spans":[{"kind":"user","tokens":900}],"out":20}]})"
      << "\n"
      << R"({"id":"b","arrival_s":9,"turns":[{"spans":[{"kind":"user","tokens":-5}],"out":20}]})"
      << "\n";
  const auto r = RunKvbill("simulate --trace " + trace + " --format json --out " + dir);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(trace + ":3:"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/simulate.json"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/tasks.csv"));
  std::filesystem::remove(trace);
  std::filesystem::remove_all(dir);
}

// Out of arrival order, the trace is read whole (docs/engine.md, "Memory"):
// the same simulation as the trace sorted by arrival, tasks listed in file
// order.
TEST(SimulateCliTest, ATraceOutOfArrivalOrderIsSimulatedAsSorted) {
  const std::string base = ::testing::TempDir() + "/order_" + std::to_string(::getpid());
  const std::string late =
      R"({"id":"late","arrival_s":5,"turns":[{"spans":[{"kind":"user","tokens":900}],"out":20,"tool_s":1},{"spans":[{"kind":"user","tokens":90}],"out":20}]})";
  const std::string early =
      R"({"id":"early","arrival_s":1,"turns":[{"spans":[{"kind":"user","tokens":700}],"out":30}]})";
  std::ofstream(base + "_out_of_order.jsonl") << R"({"kvbill_trace":1})"
                                              << "\n"
                                              << late << "\n"
                                              << early << "\n";
  std::ofstream(base + "_sorted.jsonl") << R"({"kvbill_trace":1})"
                                        << "\n"
                                        << early << "\n"
                                        << late << "\n";
  const auto a = RunKvbill("simulate --trace " + base + "_out_of_order.jsonl --format json");
  const auto b = RunKvbill("simulate --trace " + base + "_sorted.jsonl --format json");
  ASSERT_EQ(a.exit_status, 0) << a.err;
  ASSERT_EQ(b.exit_status, 0) << b.err;
  const auto x = WithoutWallClock(nlohmann::json::parse(a.out));
  const auto y = WithoutWallClock(nlohmann::json::parse(b.out));
  EXPECT_EQ(x["summary"], y["summary"]);
  ASSERT_EQ(x["tasks"].size(), 2u);
  EXPECT_EQ(x["tasks"][0]["id"], "late");
  EXPECT_EQ(x["tasks"][0], y["tasks"][1]);
  EXPECT_EQ(x["tasks"][1], y["tasks"][0]);
  std::filesystem::remove(base + "_out_of_order.jsonl");
  std::filesystem::remove(base + "_sorted.jsonl");
}

// Qwen3-8B as shipped serves 40,960 tokens; generated coding agents grow
// past it, so requests are refused, counted, and warned about, and the
// table says so. The bundled default runs it with YaRN (131,072): none.
TEST(SimulateCliTest, RequestsOverTheModelsLimitAreRefusedAndWarned) {
  const std::string path = ::testing::TempDir() + "/simulate_over_limit.json";
  std::ofstream(path) << R"({"model": "qwen3-8b", "trace": {"generator": "coding-agent",
                           "tasks": 4}, "slo": {"ttft_s.p90": 1000, "tpot_s.p90": 0.000001}})";
  const auto r = RunKvbill("simulate --format json --scenario " + path);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto s = nlohmann::json::parse(r.out)["summary"];
  EXPECT_EQ(s["max_model_len"], 40960);
  EXPECT_GT(s["rejected_requests"].get<int>(), 0);
  EXPECT_LE(s["rejected_requests"].get<int>(), 4);  // one per task at most
  std::vector<std::string> codes;
  for (const auto& w : s["warnings"]) codes.push_back(w["code"]);
  EXPECT_NE(std::find(codes.begin(), codes.end(), "context_limit"), codes.end());
  // One target held, one (a microsecond per token) violated; in key order.
  ASSERT_EQ(s["slo"].size(), 2u);
  EXPECT_EQ(s["slo"][0]["metric"], "tpot_s.p90");
  EXPECT_EQ(s["slo"][0]["held"], false);
  EXPECT_EQ(s["slo"][1]["metric"], "ttft_s.p90");
  EXPECT_EQ(s["slo"][1]["held"], true);
  EXPECT_NE(std::find(codes.begin(), codes.end(), "slo_violated"), codes.end());
  for (const char* key : {"tpot_s", "queue_s", "completion_s", "ttft_s"}) {
    EXPECT_TRUE(s[key].contains("p99")) << key;
  }
  const auto table = RunKvbill("simulate --scenario " + path);
  EXPECT_NE(table.out.find("requests refused over max_model_len 40,960"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("target tpot_s.p90 <= "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(": VIOLATED ("), std::string::npos) << table.out;
  // Warnings come above the totals.
  EXPECT_LT(table.out.find("warning [context_limit]"), table.out.find(" tasks, "));
  // CSV holds rows only: each warning goes to standard error, as JSON gives it.
  const auto csv = RunKvbill("simulate --format csv --scenario " + path);
  ASSERT_EQ(csv.exit_status, 0) << csv.err;
  EXPECT_EQ(csv.out.find("warning"), std::string::npos) << csv.out;
  for (const auto& w : s["warnings"]) {
    EXPECT_NE(csv.err.find("kvbill simulate: warning [" + w["code"].get<std::string>() +
                           "]: " + w["message"].get<std::string>() + "\n"),
              std::string::npos)
        << csv.err;
  }
  const auto bundled = nlohmann::json::parse(RunKvbill("simulate --format json").out)["summary"];
  EXPECT_EQ(bundled["max_model_len"], 131072);
  EXPECT_EQ(bundled["rejected_requests"], 0);
  std::filesystem::remove(path);
}

// The summary gives the request length limit the engine applied. At
// engine.max_model_len 4,000 (well inside one H100's pool for Qwen3-8B)
// vLLM serves prompt plus output up to 4,000; SGLang's max_req_len is
// min(4,000, pool) - 1 = 3,999, and it serves up to max_req_len - 1 =
// 3,998. The pool's longest sequence is above both and is not the limit.
TEST(SimulateCliTest, SummaryGivesTheRequestLengthLimitTheEngineApplied) {
  const std::string dir = ::testing::TempDir() + "/len_limit_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/t.jsonl")
      << "{\"kvbill_trace\":1}\n"
      << R"({"id":"a","turns":[{"spans":[{"kind":"user","tokens":1000}],"out":10}]})"
      << "\n";
  for (const std::string engine : {"vllm", "sglang"}) {
    SCOPED_TRACE(engine);
    const std::string path = dir + "/" + engine + ".json";
    std::ofstream(path) << R"({"model": "qwen3-8b", "deployment": {"engine": ")" << engine
                        << R"("}, "engine": {"max_model_len": 4000},
                              "trace": {"file": "t.jsonl"}})";
    const auto r = RunKvbill("simulate --format json --scenario " + path);
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto s = nlohmann::json::parse(r.out)["summary"];
    EXPECT_EQ(s["max_model_len"], 4000);
    EXPECT_EQ(s["request_len_limit"], engine == "vllm" ? 4000 : 3998);
    EXPECT_EQ(s["pool_context_len"], 0);
    EXPECT_GT(s["pool_sequence_tokens"].get<std::int64_t>(), 4000);
  }
  // An unlimited pool has no size: null, not the internal 2^60 blocks.
  const std::string unlimited = dir + "/unlimited.json";
  std::ofstream(unlimited) << R"({"model": "qwen3-8b", "trace": {"file": "t.jsonl"},
                                  "prefix_cache": {"capacity_tokens": "unlimited"}})";
  const auto r = RunKvbill("simulate --format json --scenario " + unlimited);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto s = nlohmann::json::parse(r.out)["summary"];
  EXPECT_TRUE(s["pool_sequence_tokens"].is_null()) << s.dump();
  EXPECT_TRUE(s["kv_pool_blocks_per_replica"].is_null()) << s.dump();
  std::filesystem::remove_all(dir);
}

// A task refused at its first request served nothing and has no row: the
// totals say how many tasks served nothing beside the ones counted, and a
// run that served nothing prints "none" for the cost per task and the
// latencies, not $0 and 0 ms. Qwen3-8B serves 40,960 tokens: a 50,000-token
// prompt is refused, a 1,000-token one served.
TEST(SimulateCliTest, TasksThatServedNothingAreCountedApart) {
  const std::string dir = ::testing::TempDir() + "/unserved_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  auto task = [](const char* id, int tokens) {
    return std::string(R"({"id":")") + id + R"(","turns":[{"spans":[{"kind":"user","tokens":)" +
           std::to_string(tokens) + R"(}],"out":100}]})" + "\n";
  };
  std::ofstream(dir + "/mix.jsonl") << "{\"kvbill_trace\":1}\n"
                                    << task("big", 50000) << task("small", 1000);
  std::ofstream(dir + "/all.jsonl") << "{\"kvbill_trace\":1}\n"
                                    << task("big", 50000) << task("bigger", 60000);
  for (const char* name : {"mix", "all"}) {
    std::ofstream(dir + "/" + name + ".json")
        << R"({"model": "qwen3-8b", "trace": {"file": ")" << name << R"(.jsonl"}})";
  }
  const auto mix = RunKvbill("simulate --scenario " + dir + "/mix.json");
  ASSERT_EQ(mix.exit_status, 0) << mix.err;
  EXPECT_NE(mix.out.find("1 task (1 more refused at its first request, served nothing), 1 "
                         "request; prompt 1,000 tokens"),
            std::string::npos)
      << mix.out;
  // No later request of the refused task: the warning does not count zero.
  EXPECT_EQ(mix.out.find("0 later request"), std::string::npos) << mix.out;
  // The warning names it; the summary lists every such task.
  EXPECT_NE(mix.out.find("(1 task was refused at its first request and served nothing: big)"),
            std::string::npos)
      << mix.out;
  const auto j = nlohmann::json::parse(
      RunKvbill("simulate --format json --scenario " + dir + "/mix.json").out)["summary"];
  EXPECT_EQ(j["tasks"], 1);
  EXPECT_EQ(j["unserved_tasks"], 1);
  EXPECT_EQ(j["unserved_task_ids"], nlohmann::json::array({"big"}));
  EXPECT_EQ(j["rejected_requests"], 1);
  const auto all = RunKvbill("simulate --scenario " + dir + "/all.json");
  ASSERT_EQ(all.exit_status, 0) << all.err;
  EXPECT_NE(all.out.find("0 tasks (2 more refused at their first request, served nothing)"),
            std::string::npos)
      << all.out;
  EXPECT_NE(all.out.find("served nothing: big, bigger)"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("cost per task: none, no task was served"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("latency: none, no request was served"), std::string::npos) << all.out;
  EXPECT_EQ(all.out.find("time to first token"), std::string::npos) << all.out;
  std::filesystem::remove_all(dir);
}

// Qwen3-8B serves 40,960 tokens. Task "long" sends 30,000 + 100 tokens,
// then a prompt of 30,100 + 20,000 = 50,100 tokens, refused, and a third
// request never sent: one request served of three, cut short. Task
// "silent" is served whole but asks for no output token: it has no first
// token, so no mean TTFT (null, not 0).
TEST(SimulateCliTest, TasksCutShortAreMarkedInEveryOutput) {
  const std::string dir = ::testing::TempDir() + "/cut_short_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/t.jsonl")
      << "{\"kvbill_trace\":1}\n"
      << R"({"id":"long","turns":[{"spans":[{"kind":"user","tokens":30000}],"out":100},)"
      << R"({"spans":[{"kind":"user","tokens":20000}],"out":100},)"
      << R"({"spans":[{"kind":"user","tokens":10}],"out":100}]})"
      << "\n"
      << R"({"id":"silent","turns":[{"spans":[{"kind":"user","tokens":1000}],"out":0}]})"
      << "\n";
  std::ofstream(dir + "/s.json") << R"({"model": "qwen3-8b", "trace": {"file": "t.jsonl"}})";
  const auto r = RunKvbill("simulate --format json --scenario " + dir + "/s.json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["tasks"].size(), 2u);
  const auto& cut = j["tasks"][0];
  EXPECT_EQ(cut["id"], "long");
  EXPECT_EQ(cut["requests"], 1);
  EXPECT_EQ(cut["cut_short"], true);
  EXPECT_EQ(cut["unserved_requests"], 2);
  EXPECT_GT(cut["ttft_mean_s"].get<double>(), 0);
  const auto& silent = j["tasks"][1];
  EXPECT_EQ(silent["cut_short"], false);
  EXPECT_EQ(silent["unserved_requests"], 0);
  EXPECT_TRUE(silent["ttft_mean_s"].is_null()) << silent.dump();
  EXPECT_EQ(j["summary"]["rejected_requests"], 1);
  EXPECT_EQ(j["summary"]["unsent_requests"], 1);
  const auto csv = RunKvbill("simulate --format csv --scenario " + dir + "/s.json");
  ASSERT_EQ(csv.exit_status, 0) << csv.err;
  std::istringstream lines(csv.out);
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header.substr(header.rfind(',')), ",unserved_requests");
  EXPECT_EQ(first.substr(first.rfind(',')), ",2") << first;
  EXPECT_EQ(second.substr(second.rfind(',')), ",0") << second;
  const auto table = RunKvbill("simulate --scenario " + dir + "/s.json");
  EXPECT_NE(table.out.find("long    1 of 3 "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("requests \"n of m\": the task was cut short"), std::string::npos)
      << table.out;
  std::filesystem::remove_all(dir);
}

// A Mooncake trace names 512-token blocks by hashes that stand for the
// whole prefix. Request b shares a's first three trace blocks (1,536
// tokens) and not the fourth. An engine block is named by the trace block
// its last token lies in: at 512 tokens b hits 3 blocks, 1,536 tokens; at
// 1,024 only the first block (trace blocks 0-1, named by hash 2; the second
// ends in a's 4 and b's 5), 1,024 tokens; at 384, blocks ending at tokens
// 383, 767, 1,151 and 1,535 lie in trace blocks 0-2, 1,536 tokens. (Block
// sizes that did not divide 512 once hit nothing.)
TEST(SimulateCliTest, TraceBlockHashesNameEngineBlocksOfAnySize) {
  const std::string dir = ::testing::TempDir() + "/mooncake_sizes_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/t.jsonl")
      << R"({"timestamp": 0, "input_length": 2048, "output_length": 10, "hash_ids": [1, 2, 3, 4]})"
      << "\n"
      << R"({"timestamp": 60000, "input_length": 2048, "output_length": 10, "hash_ids": [1, 2, 3, 5]})"
      << "\n";
  for (const auto& [block_size, cached] :
       std::vector<std::pair<int, int>>{{512, 1536}, {1024, 1024}, {384, 1536}}) {
    SCOPED_TRACE(block_size);
    const std::string scenario = dir + "/s" + std::to_string(block_size) + ".json";
    std::ofstream(scenario) << R"({"model": "llama-3.1-8b", "trace": {"file": "t.jsonl",
        "release": "recorded"}, "prefix_cache": {"block_size": )"
                            << block_size << "}}";
    const auto r = RunKvbill("simulate --format json --scenario " + scenario);
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["summary"]["cached_tokens"], cached) << r.out;
  }
  std::filesystem::remove_all(dir);
}

// Gemini explicit caching: the cache's creation and storage are charged
// outside the calls; each task's cost holds an even share of them, so the
// tasks add up to the bill and explicit mode does not look cheaper per task
// than it is. gemini-2.5-flash (scenarios/prices.json), $/Mtok: input 0.30,
// cache read 0.03, output 2.50, storage 1 a token-hour. Task a: turn 1
// prompt 3,500 (system 3,000 + user 500), 200 out; turn 2 prompt 4,700
// (+ the 200-token answer and a 1,000-token tool result), 100 out. The
// first request's 3,500-token prefix is cached (prefix_tokens
// first_request) for the default hour. In micro-dollars:
//   calls: 3,500 x 0.03 + 200 x 2.5 = 605; 3,500 x 0.03 + 1,200 x 0.3 +
//   100 x 2.5 = 715: 1,320.
//   creation 3,500 x 0.30 = 1,050; storage 3,500 x 1 x 1 h = 3,500.
//   bill 5,870. With task b, a copy of a one second later: each task
//   caches its own first request's prefix (docs/billing.md), so 2 x 1,320
//   + 2 x 4,550 = 11,740, each task 1,320 + an even share of 9,100.
TEST(SimulateCliTest, ExplicitCachesAreSharedOverTheTasks) {
  const std::string dir = ::testing::TempDir() + "/gemini_explicit_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/t.jsonl")
      << "{\"kvbill_trace\":1}\n"
      << R"({"id":"a","arrival_s":0,"turns":[{"spans":[{"kind":"system","tokens":3000,"id":"sys"},)"
      << R"({"kind":"user","tokens":500}],"out":200,"tool_s":10},{"spans":[{"kind":"assistant",)"
      << R"("tokens":200},{"kind":"tool_result","tokens":1000}],"out":100}]})"
      << "\n";
  std::ofstream(dir + "/s.json") << R"({"pricing": {"provider": "gemini", "model":
      "gemini-2.5-flash", "cache": {"mode": "explicit"}}, "trace": {"file": "t.jsonl"}})";
  const auto r = RunKvbill("simulate --format json --scenario " + dir + "/s.json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["summary"]["cost_usd"].get<double>(), 0.00587);
  EXPECT_DOUBLE_EQ(j["tasks"][0]["cost_usd"].get<double>(), 0.00587);
  EXPECT_DOUBLE_EQ(j["tasks"][0]["calls_cost_usd"].get<double>(), 0.00132);
  EXPECT_DOUBLE_EQ(j["summary"]["cost_per_task_usd"]["mean"].get<double>(), 0.00587);
  EXPECT_EQ(j["summary"]["explicit_caches"]["creations"], 1);
  EXPECT_DOUBLE_EQ(j["summary"]["explicit_caches"]["creation_usd"].get<double>(), 0.00105);
  EXPECT_DOUBLE_EQ(j["summary"]["explicit_caches"]["storage_usd"].get<double>(), 0.0035);
  const auto table = RunKvbill("simulate --scenario " + dir + "/s.json");
  EXPECT_NE(table.out.find("bill $0.0059 = calls $0.0013 + 1 explicit cache $0.0046 (creation "
                           "$0.0011, storage $0.0035 for 3,500 token-hours)"),
            std::string::npos)
      << table.out;
  std::ofstream(dir + "/t.jsonl", std::ios::app)
      << R"({"id":"b","arrival_s":1,"turns":[{"spans":[{"kind":"system","tokens":3000,"id":"sys"},)"
      << R"({"kind":"user","tokens":500}],"out":200,"tool_s":10},{"spans":[{"kind":"assistant",)"
      << R"("tokens":200},{"kind":"tool_result","tokens":1000}],"out":100}]})"
      << "\n";
  const auto two =
      nlohmann::json::parse(RunKvbill("simulate --format json --scenario " + dir + "/s.json").out);
  EXPECT_DOUBLE_EQ(two["summary"]["cost_usd"].get<double>(), 0.01174);
  EXPECT_EQ(two["summary"]["explicit_caches"]["creations"], 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_DOUBLE_EQ(two["tasks"][i]["cost_usd"].get<double>(), 0.00587) << i;
    EXPECT_DOUBLE_EQ(two["tasks"][i]["cache_share_usd"].get<double>(), 0.00455) << i;
  }
  std::filesystem::remove_all(dir);
}

// A block larger than the memory the weights leave: the block size is
// named, not the first request (which read as refused for a pool of 0).
// Llama-3.1-8B: 32 layers x 8 KV heads x 128 x 2 x 2 B = 131,072 B a token,
// so 1,048,576 tokens take 128 GiB, past one H100's.
TEST(SimulateCliTest, ABlockLargerThanTheKvMemoryNamesTheBlockSize) {
  const std::string path = ::testing::TempDir() + "/huge_block.json";
  std::ofstream(path) << R"({"model": "llama-3.1-8b", "trace": {"generator": "chat",
      "tasks": 1}, "prefix_cache": {"block_size": "1M"}})";
  const auto r = RunKvbill("simulate --scenario " + path);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find(": one KV block of 1,048,576 tokens (prefix_cache.block_size) takes "
                       "128.00 GiB per GPU, more than the "),
            std::string::npos)
      << r.err;
  std::filesystem::remove(path);
}

// A trace with a header and no task has nothing to bill: exit 2 naming the
// file, for the engine and the API replay alike, and no output file (it
// printed "0 tasks", "$0.0000" and exit 0).
// A run that speculates but verifies nothing (every prompt past a 64-token
// max_model_len, so its task ends unserved) states no speed-up: null, not 1.
TEST(SimulateCliTest, SpeculationWithoutAVerificationStepStatesNoSpeedup) {
  const std::string path = ::testing::TempDir() + "/speculation_unserved.json";
  std::ofstream(path) << R"({"model": "qwen3-8b", "deployment": {"speculative": "eagle3"},
      "engine": {"max_model_len": 64}, "trace": {"generator": "coding-agent", "tasks": 1}})";
  const auto r = RunKvbill("simulate --scenario " + path + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto spec = nlohmann::json::parse(r.out)["summary"]["speculation"];
  EXPECT_EQ(spec["verification_steps"], 0);
  EXPECT_TRUE(spec["decode_speedup"].is_null()) << spec.dump();
}

TEST(SimulateCliTest, ATraceWithNoTasksIsExitTwo) {
  const std::string dir = ::testing::TempDir() + "/no_tasks_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string trace = dir + "/t.jsonl";
  std::ofstream(trace) << "{\"kvbill_trace\":1}\n";
  std::ofstream(dir + "/api.json") << R"({"trace": {"file": "t.jsonl"},
      "pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5"}})";
  const std::string expected_tail = "t.jsonl: no tasks (the trace holds none to simulate)\n";
  for (const std::string& args : std::vector<std::string>{
           "simulate --trace " + trace + " -o " + dir + "/out.txt", "compare --trace " + trace,
           "simulate --scenario " + dir + "/api.json -o " + dir + "/out.txt"}) {
    const auto r = RunKvbill(args);
    EXPECT_EQ(r.exit_status, 2) << args;
    ASSERT_GE(r.err.size(), expected_tail.size()) << r.err;
    EXPECT_EQ(r.err.substr(r.err.size() - expected_tail.size()), expected_tail) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.txt"));
}

// One task of one 1,000-token request, 0 preemptions: the summary line
// counts in the singular where it is one.
TEST(SimulateCliTest, OneTaskOneRequestReadInTheSingular) {
  const std::string trace =
      ::testing::TempDir() + "/one_task_" + std::to_string(::getpid()) + ".jsonl";
  std::ofstream(trace) << "{\"kvbill_trace\":1}\n"
                          "{\"id\":\"a\",\"turns\":[{\"spans\":[{\"kind\":\"user\","
                          "\"tokens\":1000}],\"out\":10}]}\n";
  const auto r = RunKvbill("simulate --trace " + trace);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("1 task, 1 request; prompt 1,000 tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; 0 preemptions\n"), std::string::npos) << r.out;
}

// The bill line's printed parts add up to its printed total, digit for
// digit: at four decimals a short TraceLab run read "$0.0015 = tasks
// $0.0014 + idle $0.0000" (0.00149 = 0.00145 + 0.00004); the line takes the
// decimals the sum needs. Each printed figure is the JSON value rounded.
TEST(SimulateCliTest, TheBillsPrintedPartsAddUpToItsPrintedTotal) {
  for (const char* trace :
       {"tests/data/traces/tracelab_sim_small.csv", "tests/data/traces/native_small.jsonl",
        "tests/data/traces/mooncake_small.jsonl"}) {
    SCOPED_TRACE(trace);
    const auto r = RunKvbill(std::string("simulate --trace ") + trace);
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto at = r.out.find("bill $");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    std::string total, tasks, idle;
    {
      std::istringstream in(line);
      std::string word;
      in >> word >> total >> word >> word >> tasks >> word >> word >> idle;
    }
    ASSERT_EQ(total[0], '$') << line;
    // The three in units of their last printed digit.
    const std::size_t decimals = total.size() - total.find('.') - 1;
    auto units = [&](std::string v) {
      EXPECT_EQ(v.size() - v.find('.') - 1, decimals) << line;
      v.erase(0, 1);
      v.erase(v.find('.'), 1);
      return std::stoll(v);
    };
    EXPECT_EQ(units(total), units(tasks) + units(idle)) << line;
    const auto j = nlohmann::json::parse(
        RunKvbill(std::string("simulate --format json --trace ") + trace).out)["summary"];
    const double scale = std::pow(10.0, static_cast<double>(decimals));
    EXPECT_EQ(units(total), std::llround(j["cost_usd"].get<double>() * scale)) << line;
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
