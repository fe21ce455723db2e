// `kvbill whatif` and API-mode `simulate` on logs whose calls name several
// models: each call priced at its own model, through its own model's cache.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunKvbill;

// tests/data/traces/api_whatif_mixed.jsonl: one Claude Code session, a call
// every 10 s, each prompt extending the previous one, 100 output tokens each:
//   m1 15:00:00  Sonnet 4.5  write 5,000              (prompt 5,000)
//   m2 15:00:10  Haiku 4.5   write 6,000              (prompt 6,000, a side call)
//   m3 15:00:20  Sonnet 4.5  write 2,000, read 5,000  (prompt 7,000)
//   m4 15:00:30  Sonnet 4.5  write 1,000, read 7,000  (prompt 8,000)
// $/Mtok (scenarios/prices.json): Sonnet 4.5 input 3, 5-min write 3.75, 1-h
// write 6, read 0.3, output 15; Haiku 4.5 1, 1.25, 2, 0.1, 5, caching from
// 4,096 tokens. Amounts below in micro-dollars (tokens x $/Mtok).
constexpr char kMixedLog[] = "tests/data/traces/api_whatif_mixed.jsonl";

TEST(WhatifModelsCliTest, PricesEachCallAtItsOwnModelByHand) {
  const auto r = RunKvbill(std::string("whatif ") + kMixedLog + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "claude-sonnet-4-5");  // 3 of the 4 calls
  const auto& total = j["total"]["cost_usd"];
  // Recorded, each call at its model:
  //   m1 5,000 x 3.75 + 1,500 = 20,250       m2 6,000 x 1.25 + 500 = 8,000
  //   m3 2,000 x 3.75 + 5,000 x 0.3 + 1,500 = 10,500
  //   m4 1,000 x 3.75 + 7,000 x 0.3 + 1,500 = 7,350          total 46,100
  // (every call at Sonnet, the old behaviour: m2 = 24,000, total 62,100).
  EXPECT_DOUBLE_EQ(total["recorded"].get<double>(), 0.0461);
  EXPECT_DOUBLE_EQ(j["bill"]["cost_usd"].get<double>(), 0.0461);
  // The replay keeps one cache per model, so it predicts the log exactly:
  // m2 finds no Haiku prefix and writes 6,000; m3 reads m1's 5,000 from the
  // Sonnet cache (20 s old); m4 reads m3's 7,000.
  EXPECT_DOUBLE_EQ(total["predicted"].get<double>(), 0.0461);
  // 1-hour writes: m1 5,000 x 6 + 1,500 = 31,500; m2 6,000 x 2 + 500 =
  // 12,500; m3 1,500 + 2,000 x 6 + 1,500 = 15,000; m4 2,100 + 6,000 + 1,500
  // = 9,600; total 68,600.
  EXPECT_DOUBLE_EQ(total["cache_1h"].get<double>(), 0.0686);
  // model:claude-haiku-4-5 (Sonnet's cheaper tier) prices every call at
  // Haiku through one cache: m1 writes 5,000: 6,250 + 500 = 6,750; m2 reads
  // 5,000, writes 1,000: 500 + 1,250 + 500 = 2,250; m3 reads 6,000: 600 +
  // 1,250 + 500 = 2,350; m4 reads 7,000: 700 + 1,250 + 500 = 2,450; 13,800.
  EXPECT_DOUBLE_EQ(total["model:claude-haiku-4-5"].get<double>(), 0.0138);
  // Caching off, each at its input price: 15,000 + 1,500; 6,000 + 500;
  // 21,000 + 1,500; 24,000 + 1,500; total 71,000.
  EXPECT_DOUBLE_EQ(total["no_cache"].get<double>(), 0.071);
}

// tests/data/traces/codex_small.jsonl: session 019a-s2 names no model,
// which `kvbill bill` prices as Codex's legacy gpt-5 (assumed). whatif
// prices it so too, not at the log's main model gpt-5-codex (nor at the
// previous session's). With gpt-5 at $1 / $10 per Mtok: 9,000 input x 1 +
// 40 output x 10 = 9,400 micro-dollars, where gpt-5-codex ($1.25 / $10)
// would give 11,650.
TEST(WhatifModelsCliTest, ACodexCallNamingNoModelIsPricedAsBillPricesIt) {
  const std::string args =
      "whatif tests/data/traces/codex_small.jsonl --price gpt-5:input=1,output=10";
  const auto r = RunKvbill(args + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["tasks"].size(), 2u);
  EXPECT_EQ(j["tasks"][1]["id"], "019a-s2");
  EXPECT_DOUBLE_EQ(j["tasks"][1]["cost_usd"]["recorded"].get<double>(), 0.0094);
  EXPECT_DOUBLE_EQ(j["tasks"][1]["cost_usd"]["predicted"].get<double>(), 0.0094);
  EXPECT_DOUBLE_EQ(j["total"]["cost_usd"]["recorded"].get<double>(),
                   j["bill"]["cost_usd"].get<double>());
  const auto table = RunKvbill(args);
  EXPECT_NE(table.out.find("gpt-5 1 call (all assumed: Codex calls naming no model, as bill "
                           "prices them)"),
            std::string::npos)
      << table.out;
  EXPECT_EQ(table.out.find("a call naming none"), std::string::npos) << table.out;
}

TEST(WhatifModelsCliTest, ModelWithoutPriceMakesItsTaskUnpriced) {
  const std::string path = ::testing::TempDir() + "/whatif_unpriced_model.jsonl";
  {
    std::ifstream in(kMixedLog);
    std::ofstream out(path);
    out << in.rdbuf();
    // A second session whose one call names a model the sheet lacks.
    out << R"({"type": "assistant", "sessionId": "n", "timestamp": "2025-12-12T15:00:40.000Z", )"
           R"("message": {"id": "msg_n1", "model": "nope-model-1", "usage": {"input_tokens": 10, )"
           R"("output_tokens": 10}}})"
        << "\n";
  }
  const auto r = RunKvbill("whatif " + path + " --format csv");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("\nm,4,0.0461,0.0461,0.0686,0.0138,0.071\n"), std::string::npos) << r.out;
  // model:M reprices n's call at Haiku: 10 x 1 + 10 x 5 = 60 micro-dollars.
  EXPECT_NE(r.out.find("\nn,1,unpriced,unpriced,unpriced,0.00006,unpriced\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\ntotal,5,unpriced,unpriced,unpriced,0.01386,unpriced\n"),
            std::string::npos)
      << r.out;
}

TEST(WhatifModelsCliTest, SimulateWithAModelWithoutPriceIsExitTwoNamingIt) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/unpriced_model.jsonl")
      << R"({"type": "assistant", "sessionId": "n", "timestamp": "2025-12-12T15:00:40.000Z", )"
         R"("message": {"id": "msg_n1", "model": "nope-model-1", "usage": {"input_tokens": 10, )"
         R"("output_tokens": 10}}})"
      << "\n";
  std::ofstream(dir + "/unpriced_model.json")
      << R"({"trace": {"file": "unpriced_model.jsonl", "format": "claude-code"},)"
         R"( "pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5"}})";
  const auto r = RunKvbill("simulate --scenario " + dir + "/unpriced_model.json");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("task \"n\": request 1: no price for model \"nope-model-1\""),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
}

// The 18 interactive sessions name five Claude models (claude-opus-4-1 on
// most calls): the recorded column, each call at its own model, is exactly
// what `kvbill bill` charges for the same file.
TEST(WhatifModelsCliTest, RecordedColumnIsTheBillOnTheMixedModelInteractiveLog) {
  const std::string log =
      std::string(KVBILL_SHARED_DATA_DIR) + "/traces/claude-code/usage/interactive_sessions.jsonl";
  if (!std::ifstream(log)) GTEST_SKIP() << log << " not found";
  const auto w = RunKvbill("whatif " + log + " --format json");
  ASSERT_EQ(w.exit_status, 0) << w.err;
  const auto b = RunKvbill("bill " + log + " --format json");
  ASSERT_EQ(b.exit_status, 0) << b.err;
  const auto whatif = nlohmann::json::parse(w.out);
  const auto bill = nlohmann::json::parse(b.out);
  EXPECT_GT(whatif["logged_models"].size(), 1u);
  EXPECT_EQ(whatif["total"]["cost_usd"]["recorded"].get<double>(),
            bill["total_cost_usd"].get<double>());
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
