// End-to-end runs of `kvbill whatif`.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunKvbill;

// tests/data/traces/api_whatif.jsonl: Claude Code calls of Sonnet 4.5.
//   a1 15:00:00  write 5,000                output 100   (prompt 5,000)
//   b1 15:00:05  write 4,000                output 200   (prompt 4,000)
//   a2 15:00:10  write 1,000, read 5,000    output 100   (prompt 6,000)
//   a3 15:10:10  write 7,000 (a miss after a 600 s pause) output 100
// Sonnet 4.5, $/Mtok: input 3, 5-min write 3.75, 1-h write 6, read 0.3,
// output 15. Haiku 4.5 (its cheaper tier): 1, 1.25, 2, 0.1, 5, and a
// minimum cacheable prompt of 4,096 tokens. Amounts below in micro-dollars.
constexpr char kLog[] = "tests/data/traces/api_whatif.jsonl";

TEST(WhatifCliTest, PricesTheLogEveryWayByHand) {
  const auto r = RunKvbill(std::string("whatif ") + kLog + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "claude-sonnet-4-5");
  ASSERT_EQ(j["tasks"].size(), 2u);
  const auto& a = j["tasks"][0]["cost_usd"];
  const auto& b = j["tasks"][1]["cost_usd"];
  EXPECT_EQ(j["tasks"][0]["id"], "a");
  // Recorded, 5-min writes:
  //   a1 5,000 x 3.75 + 100 x 15 = 20,250
  //   a2 1,000 x 3.75 + 5,000 x 0.3 + 1,500 = 6,750
  //   a3 7,000 x 3.75 + 1,500 = 27,750            a = 54,750
  //   b1 4,000 x 3.75 + 200 x 15 = 18,000
  EXPECT_DOUBLE_EQ(a["recorded"].get<double>(), 0.05475);
  EXPECT_DOUBLE_EQ(b["recorded"].get<double>(), 0.018);
  // The replay predicts the same calls: a3 comes 600 s after a's last use,
  // past the 300 s lifetime, so it writes its whole prompt.
  EXPECT_DOUBLE_EQ(a["predicted"].get<double>(), 0.05475);
  EXPECT_DOUBLE_EQ(b["predicted"].get<double>(), 0.018);
  // 1-hour writes: a1 5,000 x 6 + 1,500 = 31,500; a2 1,000 x 6 + 1,500 +
  // 1,500 = 9,000; a3 reads a2's 6,000 (alive for an hour): 6,000 x 0.3 +
  // 1,000 x 6 + 1,500 = 9,300; a = 49,800. b1 4,000 x 6 + 3,000 = 27,000.
  EXPECT_DOUBLE_EQ(a["cache_1h"].get<double>(), 0.0498);
  EXPECT_DOUBLE_EQ(b["cache_1h"].get<double>(), 0.027);
  // Haiku 4.5: a1 5,000 x 1.25 + 500 = 6,750; a2 1,250 + 500 + 500 = 2,250;
  // a3 7,000 x 1.25 + 500 = 9,250; a = 18,250. b1's 4,000 tokens are below
  // 4,096, so uncached: 4,000 x 1 + 200 x 5 = 5,000.
  EXPECT_DOUBLE_EQ(a["model:claude-haiku-4-5"].get<double>(), 0.01825);
  EXPECT_DOUBLE_EQ(b["model:claude-haiku-4-5"].get<double>(), 0.005);
  // Caching off: (5,000 + 6,000 + 7,000) x 3 + 300 x 15 = 58,500; b 4,000 x 3 + 3,000.
  EXPECT_DOUBLE_EQ(a["no_cache"].get<double>(), 0.0585);
  EXPECT_DOUBLE_EQ(b["no_cache"].get<double>(), 0.015);
  const auto& total = j["total"]["cost_usd"];
  EXPECT_DOUBLE_EQ(total["recorded"].get<double>(), 0.07275);
  EXPECT_DOUBLE_EQ(total["cache_1h"].get<double>(), 0.0768);
  EXPECT_DOUBLE_EQ(total["model:claude-haiku-4-5"].get<double>(), 0.02325);
  EXPECT_DOUBLE_EQ(total["no_cache"].get<double>(), 0.0735);
  // `kvbill bill` on the same log agrees with the recorded column.
  EXPECT_DOUBLE_EQ(j["bill"]["cost_usd"].get<double>(), 0.07275);
  EXPECT_EQ(j["bill"]["unpriced_calls"], 0);
}

// tests/data/traces/claude_code_fast.jsonl: one Claude Opus 4.6 call in
// fast mode (usage.speed "fast"): 1,000 input, 2,000 written (5-minute),
// 5,000 read, 500 output. Standard: 1,000 x $5 + 2,000 x $6.25 + 5,000 x
// $0.50 + 500 x $25 per Mtok = $0.0325; fast mode 6 x every rate: $0.195,
// what `kvbill bill` charges. The replay predicts the same call (its cached
// 5,000 tokens seeded from the record, over Opus 4.6's 4,096-token minimum,
// the breakpoint before its 1,000 new ones); without caching
// 8,000 x $5 x 6 + 500 x $25 x 6 = $0.315.
TEST(WhatifCliTest, FastModeCallsAreAtTheFastRates) {
  const auto r = RunKvbill("whatif tests/data/traces/claude_code_fast.jsonl --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& total = j["total"]["cost_usd"];
  EXPECT_NEAR(total["recorded"].get<double>(), 0.195, 1e-12);
  EXPECT_NEAR(total["predicted"].get<double>(), 0.195, 1e-12);
  EXPECT_NEAR(total["no_cache"].get<double>(), 0.315, 1e-12);
  EXPECT_NEAR(j["bill"]["cost_usd"].get<double>(), 0.195, 1e-12);
}

// A US-only call (usage.inference_geo "us") of Claude Opus 4.6: 1,000 input,
// 2,000 written, 3,000 read, 500 output, $0.0315 at the standard rates
// (the fast-mode test's working), 1.1 x that = $0.03465 at Anthropic's
// US-only price, in the recorded column and in `kvbill bill`'s total; a
// conversion to kvbill's own trace keeps it as "inference_geo": "us".
TEST(WhatifCliTest, UsOnlyCallsAreAtElevenTenthsOfTheRates) {
  const std::string dir = ::testing::TempDir() + "/whatif_us";
  std::filesystem::create_directories(dir);
  const std::string log = dir + "/us.jsonl";
  std::ofstream(log)
      << R"({"type": "assistant", "sessionId": "s", "timestamp": "2026-03-01T10:00:00Z", )"
      << R"("message": {"id": "m1", "model": "claude-opus-4-6", "usage": {"input_tokens": 1000, )"
      << R"("cache_creation_input_tokens": 2000, "cache_read_input_tokens": 3000, )"
      << R"("output_tokens": 500, "inference_geo": "us"}}})"
      << "\n";
  const auto r = RunKvbill("whatif " + log + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["total"]["cost_usd"]["recorded"].get<double>(), 0.03465, 1e-12);
  EXPECT_NEAR(j["bill"]["cost_usd"].get<double>(), 0.03465, 1e-12);
  // `kvbill bill --by call` says which calls ran US-only.
  const auto calls = RunKvbill("bill " + log + " --by call --format json");
  ASSERT_EQ(calls.exit_status, 0) << calls.err;
  EXPECT_EQ(nlohmann::json::parse(calls.out)["per_call"][0]["inference_geo"], "us") << calls.out;
  const auto converted = RunKvbill("trace convert " + log + " --to native -o " + dir + "/n.jsonl");
  ASSERT_EQ(converted.exit_status, 0) << converted.err;
  std::ifstream in(dir + "/n.jsonl");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(R"("inference_geo":"us")"), std::string::npos) << text;
  // The converted trace prices the same: recorded, the bill line, and the
  // replay without caching, 6,000 x $5 + 500 x $25 per Mtok = $0.0425 at
  // standard rates, 1.1 x that = $0.04675.
  const auto native = RunKvbill("whatif " + dir + "/n.jsonl --format json");
  ASSERT_EQ(native.exit_status, 0) << native.err;
  const auto n = nlohmann::json::parse(native.out);
  EXPECT_NEAR(n["total"]["cost_usd"]["recorded"].get<double>(), 0.03465, 1e-12);
  EXPECT_NEAR(n["bill"]["cost_usd"].get<double>(), 0.03465, 1e-12);
  EXPECT_NEAR(n["total"]["cost_usd"]["no_cache"].get<double>(), 0.04675, 1e-12);
  EXPECT_NEAR(j["total"]["cost_usd"]["no_cache"].get<double>(), 0.04675, 1e-12);
  std::filesystem::remove_all(dir);
}

// A log of a Claude and a GPT-5 call (a native trace written here): the
// replay takes each call's own provider's rules, and the column notes say so
// rather than naming the first call's provider. The bill line: Sonnet 4.5
// 2,000 x $3 + 10 x $15 = $0.00615, GPT-5 2,000 x $1.25 + 10 x $10 =
// $0.0026 per Mtok, $0.00875 in all.
TEST(WhatifCliTest, AMixedLogSaysEachCallHasItsProvidersRules) {
  const std::string log = ::testing::TempDir() + "/whatif_mixed.jsonl";
  std::ofstream(log) << R"({"kvbill_trace":1}
{"id":"c","arrival_s":0,"turns":[{"model":"claude-sonnet-4-5","spans":[{"kind":"user","tokens":2000}],"out":10,"usage":{"input":2000,"cache_creation":0,"cache_read":0,"output":10}}]}
{"id":"o","arrival_s":1,"turns":[{"model":"gpt-5","spans":[{"kind":"user","tokens":2000}],"out":10,"usage":{"input":2000,"cache_creation":0,"cache_read":0,"output":10}}]}
)";
  const auto r = RunKvbill("whatif " + log);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("  predicted: each call at its model, under its provider's cache rules\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  cache_1h: 1-hour cache writes (2x input, refreshed on read) for the "
                       "Anthropic calls; the others as predicted\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("the calls as `kvbill bill` prices a log (each call at its own model): "),
            std::string::npos)
      << r.out;
  const auto json = RunKvbill("whatif " + log + " --format json");
  ASSERT_EQ(json.exit_status, 0) << json.err;
  EXPECT_NEAR(nlohmann::json::parse(json.out)["bill"]["cost_usd"].get<double>(), 0.00875, 1e-12);
  std::filesystem::remove(log);
}

// A model the sheet does not price, used by most calls, leaves its own
// task unpriced; the others are replayed at the priced model (it stopped
// every column, exit 2). Session s2: one Sonnet 4.5 call of 10 input, 1,000
// written to the 5-minute cache and 50 output tokens: 10 x 3 + 1,000 x 3.75
// + 50 x 15 = 4,530 micro-dollars, as recorded.
TEST(WhatifCliTest, AnUnpricedMainModelLeavesOnlyItsTasksUnpriced) {
  const std::string log = ::testing::TempDir() + "/whatif_unpriced_main.jsonl";
  {
    std::ofstream f(log);
    const auto line = [&](const char* session, const char* id, const char* model) {
      f << R"({"type": "assistant", "sessionId": ")" << session
        << R"(", "timestamp": "2026-01-01T10:00:00Z", "message": {"id": ")" << id
        << R"(", "model": ")" << model
        << R"(", "usage": {"input_tokens": 10, "cache_creation_input_tokens": 1000, )"
        << R"("cache_read_input_tokens": 0, "output_tokens": 50}}})"
        << "\n";
    };
    line("s1", "a1", "claude-foo-9");
    line("s1", "a2", "claude-foo-9");
    line("s2", "b1", "claude-sonnet-4-5");
  }
  const auto r = RunKvbill("whatif " + log + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["tasks"].size(), 2u);
  EXPECT_TRUE(j["tasks"][0]["cost_usd"]["recorded"].is_null()) << j["tasks"][0].dump();
  EXPECT_NEAR(j["tasks"][1]["cost_usd"]["recorded"].get<double>(), 0.00453, 1e-12);
  std::filesystem::remove(log);
}

TEST(WhatifCliTest, TableAndCsvHaveOneRowPerTaskAndATotal) {
  const auto csv = RunKvbill(std::string("whatif ") + kLog + " --format csv --model gpt-5");
  ASSERT_EQ(csv.exit_status, 0) << csv.err;
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\n')),
            "task,requests,recorded,predicted,cache_1h,model:gpt-5,no_cache");
  // GPT-5 ($/Mtok input 1.25, cached 0.125, output 10; automatic caching in
  // 128-token steps from 1,024, 300 s retention, no write fee):
  //   a1 5,000 x 1.25 + 100 x 10 = 7,250
  //   a2 reads 39 x 128 = 4,992: 4,992 x 0.125 + 1,008 x 1.25 + 1,000 = 2,884
  //   a3 600 s later, a miss: 7,000 x 1.25 + 1,000 = 9,750      a = 19,884
  //   b1 4,000 x 1.25 + 200 x 10 = 7,000
  EXPECT_NE(csv.out.find("\na,3,0.05475,0.05475,0.0498,0.019884,0.0585\n"), std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find("\ntotal,4,0.07275,0.07275,0.0768,0.026884,0.0735\n"), std::string::npos)
      << csv.out;
  const auto table = RunKvbill(std::string("whatif ") + kLog);
  ASSERT_EQ(table.exit_status, 0);
  EXPECT_NE(table.out.find("$0.0728"), std::string::npos) << table.out;
  EXPECT_EQ(RunKvbill(std::string("whatif ") + kLog + " --format json").out,
            RunKvbill(std::string("whatif ") + kLog + " --format json").out);
}

TEST(WhatifCliTest, SelfHostedColumnRunsTheEngine) {
  const auto r = RunKvbill(std::string("whatif ") + kLog +
                           " --gpu h100-sxm --self-hosted-model qwen3-8b --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& a = j["tasks"][0]["cost_usd"]["self_hosted"];
  const auto& b = j["tasks"][1]["cost_usd"]["self_hosted"];
  ASSERT_TRUE(a.is_number()) << r.out;
  EXPECT_GT(a.get<double>(), 0);
  EXPECT_NEAR(j["total"]["cost_usd"]["self_hosted"].get<double>(),
              a.get<double>() + b.get<double>(), 1e-12);
  // On a GPU without kernel tables the column says its run is uncalibrated,
  // as simulate would.
  const auto l40s = RunKvbill(std::string("whatif ") + kLog +
                              " --gpu l40s --self-hosted-model qwen3-8b --format json");
  ASSERT_EQ(l40s.exit_status, 0) << l40s.err;
  bool uncalibrated = false;
  const auto doc = nlohmann::json::parse(l40s.out);
  for (const auto& col : doc["columns"]) {
    if (col["id"] != "self_hosted" || !col.contains("warnings")) continue;
    for (const auto& w : col["warnings"])
      uncalibrated = uncalibrated || w["code"] == "uncalibrated";
  }
  EXPECT_TRUE(uncalibrated) << l40s.out;
}

// Llama-3.1-70B's 141 GB of BF16 weights do not fit one H200 (141 GB,
// less the reserve): the column is n/a; --gpus 2 splits them over two
// tensor-parallel GPUs and the column is priced, its label saying so.
TEST(WhatifCliTest, SelfHostedGpusSplitTheModel) {
  const std::string base =
      std::string("whatif ") + kLog + " --gpu h200 --self-hosted-model llama-3.1-70b --format json";
  auto column = [](const nlohmann::json& j) {
    for (const auto& c : j["columns"]) {
      if (c["id"] == "self_hosted") return c;
    }
    return nlohmann::json();
  };
  const auto one = RunKvbill(base);
  ASSERT_EQ(one.exit_status, 0) << one.err;
  EXPECT_TRUE(nlohmann::json::parse(one.out)["total"]["cost_usd"]["self_hosted"].is_null());
  const auto two = RunKvbill(base + " --gpus 2");
  ASSERT_EQ(two.exit_status, 0) << two.err;
  const auto j = nlohmann::json::parse(two.out);
  EXPECT_GT(j["total"]["cost_usd"]["self_hosted"].get<double>(), 0);
  EXPECT_NE(column(j)["meaning"].get<std::string>().find(" on 2 x h200 "), std::string::npos)
      << column(j).dump();
  const auto zero = RunKvbill(base + " --gpus 0");
  EXPECT_EQ(zero.exit_status, 2);
  EXPECT_NE(zero.err.find("--gpus: must be at least 1"), std::string::npos) << zero.err;
}

// Qwen3-8B's config serves 40,960 tokens (no rope scaling): a session
// whose second call sends 50,000 + 100 tokens is cut short there, so its
// self-hosted cost is unpriced, and the column says why; session "s" (one
// 1,000-token call) is priced. The label carries the model's limit.
TEST(WhatifCliTest, SelfHostedTasksPastTheModelsLimitAreUnpricedWithTheReason) {
  const std::string log = ::testing::TempDir() + "/whatif_long.jsonl";
  std::ofstream(log)
      << R"({"type": "assistant", "sessionId": "s", "timestamp": "2025-12-12T15:00:00.000Z", )"
         R"("message": {"id": "m1", "model": "claude-sonnet-4-5-20250929", "usage": )"
         R"({"input_tokens": 1000, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 50}}})"
         "\n"
         R"({"type": "assistant", "sessionId": "l", "timestamp": "2025-12-12T15:00:01.000Z", )"
         R"("message": {"id": "m2", "model": "claude-sonnet-4-5-20250929", "usage": )"
         R"({"input_tokens": 0, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 0, "output_tokens": 50}}})"
         "\n"
         R"({"type": "assistant", "sessionId": "l", "timestamp": "2025-12-12T15:00:10.000Z", )"
         R"("message": {"id": "m3", "model": "claude-sonnet-4-5-20250929", "usage": )"
         R"({"input_tokens": 0, "cache_creation_input_tokens": 50000, "cache_read_input_tokens": 100, "output_tokens": 50}}})"
         "\n";
  const auto r =
      RunKvbill("whatif " + log + " --gpu a100-80gb --self-hosted-model qwen3-8b --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const nlohmann::json* column = nullptr;
  for (const auto& c : j["columns"]) {
    if (c["id"] == "self_hosted") column = &c;
  }
  ASSERT_NE(column, nullptr);
  EXPECT_NE((*column)["meaning"].get<std::string>().find("qwen3-8b (max_model_len 40,960)"),
            std::string::npos);
  ASSERT_EQ((*column)["warnings"].size(), 1u) << column->dump();
  EXPECT_EQ((*column)["warnings"][0]["code"], "context_limit");
  EXPECT_EQ((*column)["warnings"][0]["message"].get<std::string>().rfind(
                "1 task is unpriced: a request of up to 50,150 tokens is past qwen3-8b's "
                "max_model_len 40,960",
                0),
            0u)
      << column->dump();
  for (const auto& t : j["tasks"]) {
    EXPECT_EQ(t["cost_usd"]["self_hosted"].is_null(), t["id"] == "l") << t.dump();
  }
  EXPECT_TRUE(j["total"]["cost_usd"]["self_hosted"].is_null());
  // CSV says "unpriced" in the cell; why, on standard error, naming the column.
  const auto csv =
      RunKvbill("whatif " + log + " --gpu h100-sxm --self-hosted-model qwen3-8b --format csv");
  ASSERT_EQ(csv.exit_status, 0) << csv.err;
  EXPECT_NE(csv.err.find("kvbill whatif: self_hosted: warning [context_limit]: " +
                         (*column)["warnings"][0]["message"].get<std::string>() + "\n"),
            std::string::npos)
      << csv.err;
}

// The same log served by SGLang: it serves prompt plus output up to its
// max_req_len - 1 = min(context length 40,960, pool) - 2 = 40,958 (the
// H100's pool holds far more of Qwen3-8B), and the column names SGLang's
// limit and its context length, not vLLM's max_model_len.
TEST(WhatifCliTest, SelfHostedOnSglangNamesSglangsLimit) {
  const std::string dir = ::testing::TempDir() + "/whatif_sglang_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/log.jsonl")
      << R"({"type": "assistant", "sessionId": "l", "timestamp": "2025-12-12T15:00:00.000Z", )"
         R"("message": {"id": "m2", "model": "claude-sonnet-4-5-20250929", "usage": )"
         R"({"input_tokens": 0, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 0, "output_tokens": 50}}})"
         "\n"
         R"({"type": "assistant", "sessionId": "l", "timestamp": "2025-12-12T15:00:10.000Z", )"
         R"("message": {"id": "m3", "model": "claude-sonnet-4-5-20250929", "usage": )"
         R"({"input_tokens": 0, "cache_creation_input_tokens": 50000, "cache_read_input_tokens": 100, "output_tokens": 50}}})"
         "\n";
  std::ofstream(dir + "/sglang.json") << R"({"deployment": {"engine": "sglang"}})";
  const auto r = RunKvbill("whatif " + dir +
                           "/log.jsonl --gpu h100-sxm --self-hosted-model "
                           "qwen3-8b --scenario " +
                           dir + "/sglang.json --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const nlohmann::json* column = nullptr;
  for (const auto& c : j["columns"]) {
    if (c["id"] == "self_hosted") column = &c;
  }
  ASSERT_NE(column, nullptr);
  EXPECT_NE((*column)["meaning"].get<std::string>().find("qwen3-8b (context length 40,960)"),
            std::string::npos)
      << column->dump();
  ASSERT_EQ((*column)["warnings"].size(), 1u) << column->dump();
  EXPECT_EQ((*column)["warnings"][0]["message"],
            "1 task is unpriced: a request of up to 50,150 tokens is past the 40,958 tokens "
            "SGLang serves at qwen3-8b's context length 40,960 (its max_req_len - 1), which it "
            "refuses; name a longer-context model (--self-hosted-model) or a scenario that "
            "extends it (model.set rope_scaling, --scenario)");
  EXPECT_EQ((*column)["warnings"][0]["message"].get<std::string>().find("vLLM"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Flags set on the bundled default that break it name the flags, not a
// --scenario nobody gave; --scenario default is the bundled default, as in
// simulate ("default: file not found").
TEST(WhatifCliTest, TheBundledDefaultIsNamedAsSuch) {
  const std::string log =
      std::string(KVBILL_SOURCE_DIR) + "/tests/data/traces/claude_code_small.jsonl";
  const auto three = RunKvbill("whatif " + log + " --gpu h100-sxm --gpus 3");
  EXPECT_EQ(three.exit_status, 2);
  EXPECT_EQ(
      three.err.rfind("kvbill whatif: --gpu / --gpus / --self-hosted-model on the bundled "
                      "default scenario: scenarios/default.json#/deployment/gpus_per_replica: ",
                      0),
      0u)
      << three.err;
  const auto named = RunKvbill("whatif " + log + " --scenario default --format json");
  EXPECT_EQ(named.exit_status, 0) << named.err;
  // The self-hosted column of the bundled default, as --gpu on it gives.
  EXPECT_NE(named.out.find("\"id\": \"self_hosted\""), std::string::npos) << named.out;
  EXPECT_EQ(named.out, RunKvbill("whatif " + log + " --gpu h100-sxm --format json").out);
}

// A model:M column prices prompts above M's window, which M's provider
// refuses: it says so, as simulate's API mode does. One call of 150,000
// prompt tokens (cache writes 149,000 + input 1,000): past gpt-4o's 128,000
// (the price sheet's max_input_tokens), inside Sonnet 4.5's 200,000, so
// only the gpt-4o column warns.
TEST(WhatifCliTest, AModelColumnWarnsOfPromptsAboveTheModelsWindow) {
  const std::string log = ::testing::TempDir() + "/whatif_window.jsonl";
  std::ofstream(log)
      << R"({"type": "assistant", "sessionId": "w", "timestamp": "2025-12-12T15:00:00.000Z", )"
         R"("message": {"id": "w1", "model": "claude-sonnet-4-5-20250929", "usage": )"
         R"({"input_tokens": 1000, "cache_creation_input_tokens": 149000, "cache_read_input_tokens": 0, "output_tokens": 50}}})"
         "\n";
  const auto r = RunKvbill("whatif " + log + " --model gpt-4o --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& c : j["columns"]) {
    SCOPED_TRACE(c["id"].get<std::string>());
    if (c["id"] != "model:gpt-4o") {
      EXPECT_FALSE(c.contains("warnings")) << c.dump();
      continue;
    }
    ASSERT_EQ(c["warnings"].size(), 1u) << c.dump();
    EXPECT_EQ(c["warnings"][0]["code"], "context_limit");
    EXPECT_EQ(c["warnings"][0]["message"].get<std::string>().rfind(
                  "1 request has a prompt above the model's context window (the longest, "
                  "150,000 tokens, against gpt-4o's 128,000 input tokens",
                  0),
              0u)
        << c.dump();
  }
}

TEST(WhatifCliTest, LogWithoutUsageOrUnknownModelIsExitTwo) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/no_usage.jsonl")
      << R"({"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}})"
      << "\n";
  const auto r = RunKvbill("whatif " + dir + "/no_usage.jsonl");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("no API calls with recorded usage"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  const auto model = RunKvbill(std::string("whatif ") + kLog + " --model nope-1");
  EXPECT_EQ(model.exit_status, 2);
  EXPECT_EQ(model.err, "kvbill whatif: --model: no price for model \"nope-1\"\n");
  EXPECT_EQ(model.out, "");
}

// tests/data/traces/openai_small.jsonl names each call's model: the resp_
// chain gpt-5 ($/Mtok input 1.25, cached 0.125, output 10), the chat
// completions gpt-4o (2.5, 1.25, 10); the bare usage of s-9 names none and
// is priced at the main model (3 calls each: the tie goes to gpt-4o, first
// in sorted order). Recorded, in micro-dollars (usage from
// docs/importers.md#openai, as TraceOpenAiImporterTest works it out):
//   resp_1: 5,000 x 1.25 + 400 x 10 = 10,250; resp_2: 608 x 1.25 + 4,992 x
//   0.125 + 200 x 10 = 3,384; resp_3: 952 x 1.25 + 2,048 x 0.125 + 1,000 =
//   2,446; task resp_1 = 16,080.
//   chatcmpl-A: 176 x 2.5 + 1,024 x 1.25 + 30 x 10 = 2,020.
//   s-7: 800 x 2.5 + 500 = 2,500; 232 x 2.5 + 768 x 1.25 + 400 = 1,940; 4,440.
//   s-9: 300 x 2.5 + 10 x 10 = 850.            total 23,390.
// Until 2026-12 the importer dropped "model" and whatif refused the log
// (model "unknown" has no price in the sheet).
TEST(WhatifCliTest, OpenAiLogIsPricedAtEachCallsModel) {
  const auto r = RunKvbill("whatif tests/data/traces/openai_small.jsonl --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "gpt-4o");
  ASSERT_EQ(j["tasks"].size(), 4u);
  const auto recorded = [&](std::size_t i) {
    return j["tasks"][i]["cost_usd"]["recorded"].get<double>();
  };
  EXPECT_EQ(j["tasks"][0]["id"], "resp_1");
  EXPECT_DOUBLE_EQ(recorded(0), 0.01608);
  EXPECT_EQ(j["tasks"][1]["id"], "chatcmpl-A");
  EXPECT_DOUBLE_EQ(recorded(1), 0.00202);
  EXPECT_EQ(j["tasks"][2]["id"], "s-7");
  EXPECT_DOUBLE_EQ(recorded(2), 0.00444);
  EXPECT_EQ(j["tasks"][3]["id"], "s-9");
  EXPECT_DOUBLE_EQ(recorded(3), 0.00085);
  EXPECT_DOUBLE_EQ(j["total"]["cost_usd"]["recorded"].get<double>(), 0.02339);
  // The bill the recorded column is checked against prices s-9 the same
  // way (it had been "unknown", unpriced: $0.02254 of 7 calls).
  EXPECT_DOUBLE_EQ(j["bill"]["cost_usd"].get<double>(), 0.02339);
  EXPECT_EQ(j["bill"]["unpriced_calls"], 0);
}

// The 300 SWEContextBench sessions name one model, so the recorded column
// is exactly what `kvbill bill` charges, and the replay predicts the bill
// within 1.5% (docs/billing.md#api-mode measured -1.2%).
TEST(WhatifCliTest, RecordedColumnIsTheBillOnASingleModelLog) {
  const std::string log = std::string(KVBILL_SHARED_DATA_DIR) +
                          "/traces/claude-code/usage/swecontextbench_sonnet45.jsonl";
  if (!std::ifstream(log)) GTEST_SKIP() << log << " not found";
  const auto r = RunKvbill("whatif " + log + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tasks"].size(), 300u);
  EXPECT_EQ(j["logged_models"].size(), 1u);
  const double recorded = j["total"]["cost_usd"]["recorded"].get<double>();
  EXPECT_EQ(recorded, j["bill"]["cost_usd"].get<double>());
  EXPECT_NEAR(j["total"]["cost_usd"]["predicted"].get<double>(), recorded, 0.015 * recorded);
  // Agent loops reread their prefix: caching off costs more than was paid.
  EXPECT_GT(j["total"]["cost_usd"]["no_cache"].get<double>(), recorded);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
