// End-to-end runs of `kvbill bill`.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace {

using testing::RunKvbill;
namespace fs = std::filesystem;

const std::string kExcerpt =
    std::string(KVBILL_SOURCE_DIR) + "/tests/data/bill/headless_two_runs.jsonl";

fs::path TempDir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("kvbill_bill_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(BillCliTest, JsonOfTheTwoRunExcerpt) {
  const auto r = RunKvbill("bill " + kExcerpt + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["sessions"].size(), 2u);
  const auto& run00 = j["sessions"][0];
  EXPECT_EQ(run00["id"], "run-00");
  EXPECT_EQ(run00["calls"], 4);
  // Opus 4.5 calls: 1 x 5 + 19,686 x 6.25 + 92,986 x 0.5 + 1,004 x 25 = 194,635.5 micro-dollars.
  EXPECT_DOUBLE_EQ(run00["cost_usd"].get<double>(), 0.1946355);
  EXPECT_DOUBLE_EQ(run00["reported_cost_usd"].get<double>(), 0.35941625);
  // modelUsage: Opus 339,799.25 + Haiku 19,617 (2 x 1 + 190 x 5 + 14,932 x 1.25) = 359,416.25.
  EXPECT_DOUBLE_EQ(run00["reported_usage_cost_usd"].get<double>(), 0.35941625);
  EXPECT_DOUBLE_EQ(
      run00["by_model"]["claude-haiku-4-5-20251001"]["reported_usage_cost_usd"].get<double>(),
      0.019617);
  EXPECT_EQ(run00["by_model"]["claude-haiku-4-5-20251001"]["calls"], 0);
  // Calls of both runs: 194,635.5 + 55,001.4 = 249,636.9 micro-dollars.
  EXPECT_DOUBLE_EQ(j["total_cost_usd"].get<double>(), 0.2496369);
  // Reported: 0.35941625 + 0.0718863.
  EXPECT_NEAR(j["reported_cost_usd"].get<double>(), 0.43130255, 1e-15);
  EXPECT_EQ(j["calls"], 6);
  EXPECT_EQ(j["unpriced_calls"], 0);
}

TEST(BillCliTest, TableShowsKvbillsCostBesideTheReportedOne) {
  const auto r = RunKvbill("bill " + kExcerpt);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(
      r.out.find("run-24                                     2           6        8,870        "
                 "42,853        591     $0.0550       $0.0719     $0.0719"),
      std::string::npos)
      << r.out;
}

TEST(BillCliTest, CsvByModelHasExactDecimals) {
  const auto r = RunKvbill("bill " + kExcerpt + " --by model --format csv");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("claude-sonnet-4-5-20250929,claude-sonnet-4-5-20250929,2,6,8870,0,42853,591,"
                       "0.0550014,0.0550014,0.0550014\n"),
            std::string::npos)
      << r.out;
}

TEST(BillCliTest, ReadsClaudeProjectsUnderHomeWithoutLogArguments) {
  const fs::path home = TempDir("home");
  fs::create_directories(home / ".claude/projects/-work-x");
  fs::copy_file(kExcerpt, home / ".claude/projects/-work-x/run.jsonl");
  // A transcript without calls (only a user line) is skipped, not an error.
  std::ofstream(home / ".claude/projects/-work-x/empty.jsonl") << "{\"type\":\"user\"}\n";
  // The child inherits the environment: point HOME at the fake one.
  const char* old_home = std::getenv("HOME");
  const std::string saved = old_home != nullptr ? old_home : "";
  ::setenv("HOME", home.c_str(), 1);
  ::unsetenv("CLAUDE_CONFIG_DIR");
  ::unsetenv("CODEX_HOME");
  const auto r = RunKvbill("bill --format json");
  ::setenv("HOME", saved.c_str(), 1);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(r.out)["total_cost_usd"].get<double>(), 0.2496369);
  fs::remove_all(home);
}

TEST(BillCliTest, LogWithoutUsageIsAnError) {
  const fs::path dir = TempDir("nousage");
  const fs::path file = dir / "chat.jsonl";
  std::ofstream(file) << "{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n";
  const auto r = RunKvbill("bill " + file.string());
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill bill: " + file.string() +
                       ": no usage found (no Claude Code assistant line with message.usage, no "
                       "result line with total_cost_usd, no Codex token_count event)\n");
  fs::remove_all(dir);
}

TEST(BillCliTest, MalformedLineNamesFileAndLine) {
  const fs::path dir = TempDir("bad");
  const fs::path file = dir / "bad.jsonl";
  std::ofstream(file) << "{\"type\":\"user\"}\n{\"type\":\"assistant\",\"message\":{\"id\":\"m\","
                         "\"usage\":{\"input_tokens\":\"x\",\"output_tokens\":1}}}\n";
  const auto r = RunKvbill("bill " + file.string());
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err,
            "kvbill bill: " + file.string() +
                ":2: message.usage: \"input_tokens\" must be a non-negative integer, got \"x\"\n");
  fs::remove_all(dir);
}

TEST(BillCliTest, UnpricedModelIsAnExplicitLineAndAWarning) {
  const fs::path dir = TempDir("unpriced");
  const fs::path file = dir / "s.jsonl";
  std::ofstream(file)
      << R"({"type":"assistant","sessionId":"s","message":{"id":"m","model":"mystery-9","usage":{"input_tokens":100,"output_tokens":1}}})"
      << "\n";
  const auto r = RunKvbill("bill " + file.string());
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_NE(r.out.find("unpriced"), std::string::npos) << r.out;
  EXPECT_EQ(r.err,
            "kvbill bill: 1 call of model \"mystery-9\" unpriced: no price in the sheet (add one "
            "with --price mystery-9:input=...,output=... or --prices FILE)\n");
  // With a price it is billed: 100 x $2 + 1 x $8 per Mtok = 208 micro-dollars.
  const auto priced =
      RunKvbill("bill " + file.string() + " --price mystery-9:input=2,output=8 --format json");
  ASSERT_EQ(priced.exit_status, 0) << priced.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(priced.out)["total_cost_usd"].get<double>(), 0.000208);
  fs::remove_all(dir);
}

TEST(BillCliTest, DaysInAnotherTimeZone) {
  const fs::path dir = TempDir("timezone");
  const fs::path file = dir / "s.jsonl";
  // 22:30Z on the 11th is 00:30 on the 12th at +02:00; 09:00Z stays on the 12th.
  std::ofstream(file)
      << R"({"type":"assistant","sessionId":"s","timestamp":"2026-01-11T22:30:00Z","message":{"id":"a","model":"claude-haiku-4-5","usage":{"input_tokens":1000,"output_tokens":0}}})"
      << "\n"
      << R"({"type":"assistant","sessionId":"s","timestamp":"2026-01-12T09:00:00Z","message":{"id":"b","model":"claude-haiku-4-5","usage":{"input_tokens":2000,"output_tokens":0}}})"
      << "\n";
  const auto utc = RunKvbill("bill " + file.string() + " --by day --format json");
  ASSERT_EQ(utc.exit_status, 0) << utc.err;
  const auto u = nlohmann::json::parse(utc.out);
  EXPECT_FALSE(u.contains("time_zone"));  // UTC output unchanged
  ASSERT_EQ(u["days"].size(), 2u);
  EXPECT_EQ(u["days"][0]["id"], "2026-01-11");
  const auto east =
      RunKvbill("bill " + file.string() + " --by day --format json --timezone +02:00");
  ASSERT_EQ(east.exit_status, 0) << east.err;
  const auto e = nlohmann::json::parse(east.out);
  EXPECT_EQ(e["time_zone"], "+02:00");
  ASSERT_EQ(e["days"].size(), 1u);
  EXPECT_EQ(e["days"][0]["id"], "2026-01-12");
  // Haiku 4.5 at $1 per Mtok: 3,000 tokens = $0.003.
  EXPECT_DOUBLE_EQ(e["days"][0]["cost_usd"].get<double>(), 0.003);
  const auto table = RunKvbill("bill " + file.string() + " --by day --timezone +02:00");
  EXPECT_NE(table.out.find("dates in +02:00\n"), std::string::npos) << table.out;
  const auto bad = RunKvbill("bill " + file.string() + " --timezone Mars/Olympus");
  EXPECT_EQ(bad.exit_status, 2);
  EXPECT_EQ(bad.err.rfind("kvbill bill: --timezone: time zone \"Mars/Olympus\": not UTC, an "
                          "offset like +02:00, or a zone of the time zone database (",
                          0),
            0u)
      << bad.err;
  fs::remove_all(dir);
}

TEST(BillCliTest, BadFlagsExitTwo) {
  auto r = RunKvbill("bill " + kExcerpt + " --by week");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill bill: --by: \"week\" is not one of session|day|model|call\n");
  r = RunKvbill("bill " + kExcerpt + " --since 2026-13-01");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill bill: --since: \"2026-13-01\" is not a date (YYYY-MM-DD or YYYYMMDD)\n");
}

#ifdef KVBILL_SHARED_DATA_DIR
TEST(BillCliTest, AcceptanceRunsWithTheBundledSheetAndWithLiteLlms) {
  const std::string data = KVBILL_SHARED_DATA_DIR;
  const std::string runs = data + "/acceptance/claude-code-headless/runs.jsonl";
  if (!fs::exists(runs)) GTEST_SKIP() << "shared data not present";
  for (const std::string& prices :
       {std::string(),
        " --prices " + data + "/prices/litellm_model_prices_and_context_window.json"}) {
    const auto r = RunKvbill("bill " + runs + " --format json" + prices);
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    int matched = 0;
    for (const auto& run : j["sessions"]) {
      bool ok = std::abs(run["reported_usage_cost_usd"].get<double>() -
                         run["reported_cost_usd"].get<double>()) < 1e-9;
      for (const auto& [model, m] : run["by_model"].items()) {
        ok = ok && std::abs(m["reported_usage_cost_usd"].get<double>() -
                            m["reported_cost_usd"].get<double>()) < 1e-9;
      }
      matched += ok ? 1 : 0;
    }
    EXPECT_EQ(j["sessions"].size(), 48u);
    EXPECT_EQ(matched, 48) << prices;
    EXPECT_NEAR(j["reported_usage_cost_usd"].get<double>(), j["reported_cost_usd"].get<double>(),
                1e-9);
  }
}
#endif

}  // namespace
}  // namespace kvbill
