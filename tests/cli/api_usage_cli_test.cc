// API-mode `simulate --requests` and `whatif` on a Claude Code log with
// 1-hour cache writes: each request names the model it was priced at, and
// recorded 1-hour writes are priced at the 1-hour rate, as `kvbill bill`
// prices them (docs/billing.md#api-mode).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunKvbillInSourceDir;

// tests/data/traces/claude_code_1h.jsonl, one session (docs in
// tests/cost/api_replay_usage_test.cc):
//   h1 Opus 4.5    input 10, writes 30,000 (10,000 1-hour), output 500
//   h2 Opus 4.5    input 8, writes 2,000 (5-minute), read 30,010, output 300
//   h3 Sonnet 4.5  input 6, writes 36,000 (1-hour, the direct key), output 100
// Recorded at list ($/Mtok: Opus 4.5 5 / 6.25 / 10 / 0.5 / 25, Sonnet 4.5
// 3 / 3.75 / 6 / 0.3 / 15 for input / 5-min write / 1-h write / read /
// output), in micro-dollars:
//   h1 50 + 20,000x6.25 + 10,000x10 + 12,500 = 237,550
//   h2 40 + 2,000x6.25 + 30,010x0.5 + 7,500  =  35,045
//   h3 18 + 36,000x6 + 1,500                 = 217,518     total 490,113
constexpr char kLog[] = "tests/data/traces/claude_code_1h.jsonl";

std::string Scenario(const std::string& name, const std::string& log,
                     const std::string& model = "claude-opus-4-5",
                     const std::string& more_pricing = "") {
  const std::string path = ::testing::TempDir() + "/" + name + ".json";
  std::ofstream out(path);
  out << R"({"name": ")" << name << R"(", "trace": {"file": ")" << KVBILL_SOURCE_DIR << "/" << log
      << R"(", "format": "claude-code"}, "pricing": {"provider": "anthropic", )"
      << R"("model": ")" << model << R"(", )" << more_pricing << R"("cache": {"ttl_s": 300}}})";
  return path;
}

std::vector<std::string> Keys(const nlohmann::ordered_json& object) {
  std::vector<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.push_back(it.key());
  return keys;
}

TEST(ApiUsageCliTest, WhatifRecordedEqualsBillWithOneHourWrites) {
  const auto r = RunKvbillInSourceDir(std::string("whatif ") + kLog + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["total"]["cost_usd"]["recorded"].get<double>(), 0.490113);
  EXPECT_DOUBLE_EQ(j["bill"]["cost_usd"].get<double>(), 0.490113);
  const auto bill = RunKvbillInSourceDir(std::string("bill ") + kLog + " --format json");
  ASSERT_EQ(bill.exit_status, 0) << bill.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(bill.out)["total_cost_usd"].get<double>(), 0.490113);
}

// The lines of the file at `path`.
std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The same session in two logs (a log given twice, a copy, a copy cut
// short, or a copy of a later call alone): whatif keeps each call once, so
// its recorded column is still the bill worked out above, 0.490113, as
// `kvbill bill` de-duplicates the calls by their message ids. Until 2026-12
// a copy that was not the other's first calls (h3's line alone) was refused
// as "other calls".
TEST(ApiUsageCliTest, WhatifCountsASessionInTwoLogsOnce) {
  const std::string dir = ::testing::TempDir() + "/whatif_overlap";
  std::filesystem::create_directories(dir);
  const std::string full = std::string(KVBILL_SOURCE_DIR) + "/" + kLog;
  const std::vector<std::string> lines = Lines(full);
  ASSERT_EQ(lines.size(), 4u);
  // h1's two lines (its streaming stub, then its whole usage): a copy
  // cut short after its first call.
  std::ofstream(dir + "/first.jsonl") << lines[0] << "\n" << lines[1] << "\n";
  std::ofstream(dir + "/last.jsonl") << lines[3] << "\n";
  for (const std::string& other : {full, dir + "/first.jsonl", dir + "/last.jsonl"}) {
    SCOPED_TRACE(other);
    for (const auto& [a, b] : {std::pair{full, other}, std::pair{other, full}}) {
      const auto r = RunKvbillInSourceDir("whatif " + a + " " + b + " --format json");
      ASSERT_EQ(r.exit_status, 0) << r.err;
      const auto j = nlohmann::json::parse(r.out);
      EXPECT_EQ(j["total"]["tasks"], 1);
      EXPECT_EQ(j["total"]["requests"], 3);
      EXPECT_DOUBLE_EQ(j["total"]["cost_usd"]["recorded"].get<double>(), 0.490113);
      EXPECT_DOUBLE_EQ(j["bill"]["cost_usd"].get<double>(), 0.490113);
    }
  }
  std::filesystem::remove_all(dir);
}

// Copies of a call that differ are joined as `kvbill bill` joins them: the
// copy with the most output is kept. Here h1 is copied with 11 input and
// 600 output tokens; in micro-dollars h1 is then 55 + 125,000 + 100,000 +
// 15,000 = 240,055 (the worked bill above: 237,550), total 492,618,
// whichever log comes first. A session resumed in another log (h4, Sonnet
// 4.5, a minute after h3: 4 input, 200 output = 12 + 3,000 = 3,012) adds
// its call to the same task, in time order: 490,113 + 3,012 = 493,125.
TEST(ApiUsageCliTest, WhatifJoinsASessionAcrossLogsAsBillDoes) {
  const std::string dir = ::testing::TempDir() + "/whatif_join";
  std::filesystem::create_directories(dir);
  const std::string full = std::string(KVBILL_SOURCE_DIR) + "/" + kLog;
  const std::vector<std::string> lines = Lines(full);
  ASSERT_EQ(lines.size(), 4u);
  {
    std::string line = lines[1];
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{"\"input_tokens\": 10,", "\"input_tokens\": 11,"},
          {"\"output_tokens\": 500,", "\"output_tokens\": 600,"}}) {
      const std::size_t at = line.find(from);
      ASSERT_NE(at, std::string::npos) << line;
      line.replace(at, from.size(), to);
    }
    std::ofstream(dir + "/changed.jsonl") << line << "\n";
  }
  std::ofstream(dir + "/resumed.jsonl")
      << R"({"type": "assistant", "sessionId": "h", "timestamp": "2026-11-02T10:02:00.000Z", )"
      << R"("message": {"id": "msg_h4", "model": "claude-sonnet-4-5-20250929", "role": )"
      << R"("assistant", "usage": {"input_tokens": 4, "cache_creation_input_tokens": 0, )"
      << R"("cache_read_input_tokens": 0, "output_tokens": 200}}})"
      << "\n";
  for (const auto& [other, requests, usd] : {std::tuple{dir + "/changed.jsonl", 3, 0.492618},
                                             std::tuple{dir + "/resumed.jsonl", 4, 0.493125}}) {
    SCOPED_TRACE(other);
    for (const auto& [a, b] : {std::pair{full, other}, std::pair{other, full}}) {
      const auto r = RunKvbillInSourceDir("whatif " + a + " " + b + " --format json");
      ASSERT_EQ(r.exit_status, 0) << r.err;
      const auto j = nlohmann::json::parse(r.out);
      EXPECT_EQ(j["total"]["tasks"], 1);
      EXPECT_EQ(j["total"]["requests"], requests);
      EXPECT_DOUBLE_EQ(j["total"]["cost_usd"]["recorded"].get<double>(), usd);
      EXPECT_DOUBLE_EQ(j["bill"]["cost_usd"].get<double>(), usd);
    }
  }
  std::filesystem::remove_all(dir);
}

// pricing.model priced nothing when every call names a model of its own
// (per_call_models, the default): the log's calls are Opus 4.5 (h1, h2) and
// Sonnet 4.5 (h3), so "claude-haiku-4-5" leaves the bill the log's, and the
// run says so; "claude-opus-4-5" prices h1 and h2 and is quiet, and so is
// Haiku with per_call_models false (every call at Haiku).
TEST(ApiUsageCliTest, PricingModelUnusedWhenEveryCallNamesItsOwn) {
  const auto unused = RunKvbillInSourceDir(
      "simulate -s " + Scenario("api_unused", kLog, "claude-haiku-4-5") + " --format json");
  ASSERT_EQ(unused.exit_status, 0) << unused.err;
  const auto j = nlohmann::json::parse(unused.out);
  ASSERT_EQ(j["summary"]["warnings"].size(), 1u) << j["summary"];
  EXPECT_EQ(j["summary"]["warnings"][0]["code"], "pricing_model_unused");
  EXPECT_NE(j["summary"]["warnings"][0]["message"].get<std::string>().find(
                "every call names its model (claude-opus-4-5, claude-sonnet-4-5)"),
            std::string::npos)
      << j["summary"]["warnings"][0]["message"];
  const auto table =
      RunKvbillInSourceDir("simulate -s " + Scenario("api_unused_t", kLog, "claude-haiku-4-5"));
  EXPECT_NE(table.out.find("warning [pricing_model_unused]: "), std::string::npos) << table.out;
  for (const auto& [name, model, more] :
       {std::tuple{"api_used", "claude-opus-4-5", ""},
        std::tuple{"api_haiku_all", "claude-haiku-4-5", R"("per_call_models": false, )"}}) {
    SCOPED_TRACE(name);
    const auto r =
        RunKvbillInSourceDir("simulate -s " + Scenario(name, kLog, model, more) + " --format json");
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(nlohmann::json::parse(r.out)["summary"]["warnings"].empty()) << r.out;
  }
}

// The bundled example's sweep over /pricing/model prices every call at the
// swept model (per_call_models false): its 48 calls are all Opus 4.5, and
// Sonnet 4.5's list prices are 0.6 of Opus 4.5's for every kind of token
// ($3 / $3.75 / $0.30 / $15 against $5 / $6.25 / $0.50 / $25 a million), so
// with the same cache hits the Sonnet rows cost 0.6 of the Opus rows. Every
// row warns of the log's 4 calls kept only as streaming stubs (`kvbill trace
// stats` counts 4 placeholder outputs) and of nothing else.
TEST(ApiUsageCliTest, BundledExampleSweepsTheModel) {
  const auto r = RunKvbillInSourceDir(
      "sweep --scenario scenarios/examples/api-claude-code.json --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["points"].size(), 6u);
  for (int ttl = 0; ttl < 2; ++ttl) {
    const auto& opus = j["points"][3 * ttl]["summary"];
    const auto& sonnet = j["points"][3 * ttl + 1]["summary"];
    ASSERT_EQ(j["points"][3 * ttl + 1]["values"]["/pricing/model"], "claude-sonnet-4-5");
    EXPECT_EQ(sonnet["cache_read_tokens"], opus["cache_read_tokens"]);
    EXPECT_NEAR(sonnet["cost_usd"].get<double>(), 0.6 * opus["cost_usd"].get<double>(), 1e-9);
  }
  for (const auto& p : j["points"]) {
    ASSERT_EQ(p["warnings"].size(), 1u) << p;
    EXPECT_EQ(p["warnings"][0]["code"], "placeholder_outputs");
    EXPECT_EQ(p["warnings"][0]["message"].get<std::string>().substr(0, 51),
              "4 turns of the trace have a placeholder output (a s");
  }
}

// whatif's columns price the same log: every one warns of its 4 placeholder
// outputs, the recorded column (the log's own usage, as `kvbill bill`
// prices and warns of it) too.
TEST(ApiUsageCliTest, WhatifRecordedColumnWarnsOfPlaceholderOutputs) {
  const auto r =
      RunKvbillInSourceDir("whatif scenarios/examples/claude-code-sessions.jsonl --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto columns = j["columns"];
  ASSERT_FALSE(columns.empty());
  EXPECT_EQ(columns[0]["id"], "recorded");
  for (const auto& c : columns) {
    ASSERT_TRUE(c.contains("warnings")) << c["id"];
    EXPECT_EQ(c["warnings"][0]["code"], "placeholder_outputs") << c["id"];
    EXPECT_EQ(c["warnings"][0]["message"].get<std::string>().substr(0, 51),
              "4 turns of the trace have a placeholder output (a s");
  }
}

// The same log converted to kvbill's native format keeps each turn's usage
// and model: whatif prices it as the log, recorded = bill = 0.490113 (the
// working above).
TEST(ApiUsageCliTest, WhatifPricesANativeTraceWithUsage) {
  const std::string native = ::testing::TempDir() + "/whatif_native.jsonl";
  const auto c =
      RunKvbillInSourceDir(std::string("trace convert ") + kLog + " --to native -o " + native);
  ASSERT_EQ(c.exit_status, 0) << c.err;
  const auto r = RunKvbillInSourceDir("whatif " + native + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["total"]["requests"], 3);
  EXPECT_DOUBLE_EQ(j["total"]["cost_usd"]["recorded"].get<double>(), 0.490113);
  EXPECT_DOUBLE_EQ(j["bill"]["cost_usd"].get<double>(), 0.490113);
  std::filesystem::remove(native);
}

TEST(ApiUsageCliTest, RequestsNameTheirModelAndRecordedOneHourWrites) {
  const auto r = RunKvbillInSourceDir("simulate -s " + Scenario("api_usage_1h", kLog) +
                                      " --format json --requests");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::ordered_json::parse(r.out);
  const auto& rows = j["requests"];
  ASSERT_EQ(rows.size(), 3u);
  // Every field the issue lists, in order, with "model" after "time_s".
  EXPECT_EQ(Keys(rows[0]),
            (std::vector<std::string>{"task", "index", "time_s", "model", "prompt_tokens",
                                      "cache_read_tokens", "cache_write_tokens", "uncached_tokens",
                                      "output_tokens", "cost_usd", "recorded"}));
  // The sheet id each call was priced at (h3 names Sonnet 4.5's dated id).
  EXPECT_EQ(rows[0]["model"], "claude-opus-4-5");
  EXPECT_EQ(rows[1]["model"], "claude-opus-4-5");
  EXPECT_EQ(rows[2]["model"], "claude-sonnet-4-5");
  EXPECT_EQ(Keys(rows[0]["recorded"]),
            (std::vector<std::string>{"prompt_tokens", "cache_read_tokens", "cache_write_tokens",
                                      "cache_write_1h_tokens", "uncached_tokens", "output_tokens",
                                      "cost_usd"}));
  EXPECT_EQ(rows[0]["recorded"]["cache_write_tokens"], 30'000);
  EXPECT_EQ(rows[0]["recorded"]["cache_write_1h_tokens"], 10'000);
  EXPECT_FALSE(rows[1]["recorded"].contains("cache_write_1h_tokens"));  // none recorded
  EXPECT_EQ(rows[2]["recorded"]["cache_write_1h_tokens"], 36'000);
  EXPECT_DOUBLE_EQ(rows[0]["recorded"]["cost_usd"].get<double>(), 0.23755);
  EXPECT_DOUBLE_EQ(rows[1]["recorded"]["cost_usd"].get<double>(), 0.035045);
  EXPECT_DOUBLE_EQ(rows[2]["recorded"]["cost_usd"].get<double>(), 0.217518);
  const auto& recorded = j["summary"]["recorded"];
  EXPECT_EQ(recorded["cache_write_tokens"], 68'000);
  EXPECT_EQ(recorded["cache_write_1h_tokens"], 46'000);
  EXPECT_DOUBLE_EQ(recorded["cost_usd"].get<double>(), 0.490113);
}

TEST(ApiUsageCliTest, RecordedJsonWithoutOneHourWritesKeepsItsFields) {
  // tests/data/traces/api_whatif_mixed.jsonl records no 1-hour writes: the
  // recorded objects keep exactly the fields they had before the split.
  const auto r = RunKvbillInSourceDir(
      "simulate -s " + Scenario("api_usage_5m", "tests/data/traces/api_whatif_mixed.jsonl") +
      " --format json --requests");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::ordered_json::parse(r.out);
  ASSERT_EQ(j["requests"].size(), 4u);
  for (const auto& row : j["requests"]) {
    EXPECT_EQ(Keys(row["recorded"]),
              (std::vector<std::string>{"prompt_tokens", "cache_read_tokens", "cache_write_tokens",
                                        "uncached_tokens", "output_tokens", "cost_usd"}));
  }
  // Sonnet 4.5, Haiku 4.5 (a side call), Sonnet 4.5, Sonnet 4.5.
  EXPECT_EQ(j["requests"][1]["model"], "claude-haiku-4-5");
  EXPECT_EQ(j["requests"][3]["model"], "claude-sonnet-4-5");
  EXPECT_FALSE(j["summary"]["recorded"].contains("cache_write_1h_tokens"));
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
