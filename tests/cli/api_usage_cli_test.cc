// API-mode `simulate --requests` and `whatif` on a Claude Code log with
// 1-hour cache writes: each request names the model it was priced at, and
// recorded 1-hour writes are priced at the 1-hour rate, as `kvbill bill`
// prices them (docs/billing.md#api-mode).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

namespace kvbill {
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

std::string Scenario(const std::string& name, const std::string& log) {
  const std::string path = ::testing::TempDir() + "/" + name + ".json";
  std::ofstream out(path);
  out << R"({"name": ")" << name << R"(", "trace": {"file": ")" << KVBILL_SOURCE_DIR << "/" << log
      << R"(", "format": "claude-code"}, "pricing": {"provider": "anthropic", )"
      << R"("model": "claude-opus-4-5", "cache": {"ttl_s": 300}}})";
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
}  // namespace kvbill
