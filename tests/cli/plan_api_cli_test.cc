// End-to-end runs of kvbill plan --api: API candidates priced through API
// mode beside the deployments, their SLO verdicts, their flags' errors, and
// shards merged into exactly the single run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunKvbill;

// Two tasks an hour apart, priced at gpt-5 (OpenAI rules: a prompt of at
// least 1,024 tokens cached in 128-token steps, no write fee, entries alive
// 300 s since last use; list prices $1.25 input, $0.125 cache read, $10
// output per million tokens, scenarios/prices.json):
//   a, call 1 at 0 s: prompt 2,000 + 100 = 2,100, nothing cached: 2,100
//     uncached ($0.002625) + 50 out ($0.0005) = $0.003125; writes steps up
//     to 2,048.
//   a, call 2 at 1 s (after its 1-s tool wait): prompt 2,100 + 50 + 250 =
//     2,400 starting with call 1's: reads 2,048 ($0.000256), 352 uncached
//     ($0.00044), 50 out ($0.0005) = $0.001196.
//   b at 3,600 s: the entries expired at 301 s: as a's call 1, $0.003125.
// Bill $0.007446 for 2 tasks: $0.003723 a task. The tasks arrive 3,600 s
// apart, one gap: (2 - 1) x 86,400 / 3,600 = 24 tasks a day, $0.089352 a day.
constexpr double kUsdPerTask = 0.003723;
constexpr double kUsdPerDay = 0.089352;

// The scenario and its trace in a directory of the running test's own
// (ctest runs the tests of this file in parallel processes); returns the
// scenario's path.
std::string WriteTinyScenario() {
  const std::string dir = ::testing::TempDir() + "/plan_api_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::create_directories(dir);
  {
    std::ofstream trace(dir + "/tiny.jsonl");
    trace << R"({"kvbill_trace":1}
{"id":"a","arrival_s":0,"turns":[{"spans":[{"kind":"system","tokens":2000,"id":"sys"},{"kind":"user","tokens":100}],"out":50,"tool_s":1},{"spans":[{"kind":"assistant","tokens":50},{"kind":"tool_result","tokens":250}],"out":50}]}
{"id":"b","arrival_s":3600,"turns":[{"spans":[{"kind":"system","tokens":2000,"id":"sys"},{"kind":"user","tokens":100}],"out":50}]}
)";
  }
  std::ofstream scenario(dir + "/tiny.json");
  scenario << R"({"name": "plan-api-tiny", "model": "qwen3-8b",
  "trace": {"file": ")"
           << dir << R"(/tiny.jsonl", "format": "native"},
  "slo": {"ttft_s.p90": 2.0}})";
  return dir + "/tiny.json";
}

std::string Base() {
  return "plan --scenario " + WriteTinyScenario() +
         " --gpus h100-sxm --max-gpus 1 --window all --jobs 1";
}

const nlohmann::json& ApiRow(const nlohmann::json& doc) {
  // The one self-hosted candidate first, then the API one.
  return doc["candidates"][1];
}

TEST(PlanApiCliTest, PricesAnApiCandidateThroughItsCachingRules) {
  const auto r = RunKvbill(Base() + " --api gpt-5 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["total_candidates"], 2);
  const auto& api = ApiRow(j);
  EXPECT_EQ(api["kind"], "api");
  EXPECT_EQ(api["provider"], "openai");
  EXPECT_EQ(api["model"], "gpt-5");
  EXPECT_EQ(j["candidates"][0]["kind"], "self_hosted");
  // --window all spans the trace: its arrivals at 0 and 3,600 s (end_s
  // read 0).
  EXPECT_EQ(j["window"]["start_s"], 0.0);
  EXPECT_EQ(j["window"]["end_s"], 3600.0);
  EXPECT_NEAR(api["usd_per_task"].get<double>(), kUsdPerTask, 1e-12);
  EXPECT_NEAR(api["usd_per_day"].get<double>(), kUsdPerDay, 1e-12);
  // No latency given: the target ttft_s.p90 is not evaluated, the row is
  // neither feasible nor ranked, and has no TTFT.
  EXPECT_EQ(api["status"], "slo_not_evaluated");
  EXPECT_EQ(api["reason"].get<std::string>().rfind("SLO not evaluated: ", 0), 0u) << api["reason"];
  EXPECT_FALSE(api.contains("ttft_s.p90"));
  EXPECT_EQ(j["not_evaluated"], nlohmann::json::array({1}));
  for (const auto& k : j["ranking"]) EXPECT_NE(k, 1);
  EXPECT_EQ(j["counts"]["api"], 1);
  EXPECT_EQ(j["counts"]["slo_not_evaluated"], 1);
  // The table lists it apart, saying so.
  const auto table = RunKvbill(Base() + " --api gpt-5");
  ASSERT_EQ(table.exit_status, 0) << table.err;
  EXPECT_NE(table.out.find("SLO not evaluated (API candidates without an --api-latency figure "
                           "for every latency target; not ranked with the feasible ones), "
                           "cheapest first:"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("api gpt-5 (openai)"), std::string::npos) << table.out;
  // The CSV carries it after the ranked rows, unranked.
  const auto csv = RunKvbill(Base() + " --api gpt-5 --format csv");
  ASSERT_EQ(csv.exit_status, 0) << csv.err;
  EXPECT_NE(csv.out.find(",1,api,,0,0,,,,openai,gpt-5,slo_not_evaluated,"), std::string::npos)
      << csv.out;
}

TEST(PlanApiCliTest, GivenLatenciesDecideTheApiCandidate) {
  // 0.8 s <= 2 s: feasible, ranked with the deployments, on the Pareto
  // front when faster than every cheaper one.
  auto r = RunKvbill(Base() + " --api gpt-5 --api-latency gpt-5:ttft_s=0.8 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& met = ApiRow(j);
  EXPECT_EQ(met["status"], "feasible") << met["reason"];
  EXPECT_EQ(met["ttft_s.p90"], 0.8);
  EXPECT_EQ(met["slo"]["ttft_s.p90"], 0.8);
  EXPECT_NE(std::find(j["ranking"].begin(), j["ranking"].end(), 1), j["ranking"].end());
  EXPECT_EQ(met["reason"],
            "SLO met by the given provider latencies: ttft_s.p90 0.800 s <= 2.000 s; priced at "
            "gpt-5's list prices with openai's caching rules");
  // A statistic's own figure wins over the bare latency's: 2.5 s > 2 s.
  r = RunKvbill(Base() +
                " --api gpt-5 --api-latency gpt-5:ttft_s=0.8,ttft_s.p90=2.5 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(ApiRow(j)["status"], "slo_not_met") << ApiRow(j)["reason"];
  EXPECT_EQ(ApiRow(j)["cause"], "slo");
  EXPECT_EQ(j["not_evaluated"], nlohmann::json::array());
  // A target with no figure (tpot_s.p90; only ttft given) is not evaluated.
  r = RunKvbill(Base() +
                " --api gpt-5 --api-latency gpt-5:ttft_s=0.8 --slo ttft_s.p90=2,tpot_s.p90=0.1"
                " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(ApiRow(j)["status"], "slo_not_evaluated");
  // It suggests the figure that is missing, tpot_s (once it said ttft_s=,
  // the figure already given).
  EXPECT_NE(ApiRow(j)["reason"].get<std::string>().find(
                "no figure was given for tpot_s.p90 (--api-latency gpt-5:tpot_s=...); "),
            std::string::npos)
      << ApiRow(j)["reason"];
  // Neither given: both named, each latency once (ttft_s.p90 and ttft_s.p99
  // are one ttft_s); a queue_s target is one the flag cannot give.
  r = RunKvbill(Base() +
                " --api gpt-5 --slo ttft_s.p90=2,ttft_s.p99=4,tpot_s.p90=0.1,queue_s.p90=1"
                " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_NE(ApiRow(j)["reason"].get<std::string>().find(
                "no figure was given for ttft_s.p90, ttft_s.p99, tpot_s.p90, queue_s.p90 "
                "(--api-latency gpt-5:ttft_s=...,tpot_s=...; --api-latency gives no queue_s, "
                "only ttft_s and tpot_s); "),
            std::string::npos)
      << ApiRow(j)["reason"];
}

TEST(PlanApiCliTest, BadApiFlagsNameTheFlagAndWriteNothing) {
  const std::string out = ::testing::TempDir() + "/plan_api_bad.txt";
  std::filesystem::remove(out);
  const std::pair<const char*, const char*> cases[] = {
      {" --api claude-sonet-4-5",
       "--api: no model \"claude-sonet-4-5\" in the bundled price sheet; did you mean "
       "claude-sonnet-4-5, "},
      {" --api gpt-5,gpt-5-2025-08-07", "--api: \"gpt-5-2025-08-07\" is gpt-5, given twice"},
      {" --api gpt-5 --api-latency gpt-5:ttft=1",
       "--api-latency: \"gpt-5:ttft=1\" in \"gpt-5:ttft=1\" has metric \"ttft\""},
      {" --api gpt-5 --api-latency gpt-5:ttft_s",
       "--api-latency: \"gpt-5:ttft_s\" in \"gpt-5:ttft_s\" is not [MODEL:]METRIC=SECONDS"},
      {" --api gpt-5 --api-latency ttft_s=1",
       "--api-latency: \"ttft_s=1\" in \"ttft_s=1\" names "
       "no model"},
      {" --api gpt-5 --api-latency gpt-5:ttft_s=-1", "has \"-1\", not a positive number"},
      {" --api gpt-5 --api-latency gpt-4o:ttft_s=1",
       "--api-latency: \"gpt-4o\" is not one of the --api models"}};
  for (const auto& [flags, message] : cases) {
    SCOPED_TRACE(flags);
    const auto r = RunKvbill(Base() + flags + " -o " + out);
    EXPECT_EQ(r.exit_status, 2) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

TEST(PlanApiCliTest, ApiCandidatesGoThroughShardsAndMerge) {
  const std::string dir = ::testing::TempDir();
  const std::string base = Base() + " --api gpt-5,claude-sonnet-4-5 --api-latency gpt-5:ttft_s=0.8";
  std::string shards;
  int api_rows = 0;
  for (int i = 0; i < 2; ++i) {
    const std::string out = dir + "/plan_api_shard" + std::to_string(i) + ".json";
    const auto r = RunKvbill(base + " --shard " + std::to_string(i) + "/2 --format json -o " + out);
    ASSERT_EQ(r.exit_status, 0) << r.err;
    std::ifstream in(out);
    const auto shard = nlohmann::json::parse(in);
    for (const auto& row : shard["candidates"]) api_rows += row["kind"] == "api";
    shards += " " + out;
  }
  // Candidates 1 and 2 are the API ones: each in exactly one shard.
  EXPECT_EQ(api_rows, 2);
  for (const char* format : {"json", "csv", "table"}) {
    SCOPED_TRACE(format);
    const auto single = RunKvbill(base + " --format " + format);
    ASSERT_EQ(single.exit_status, 0) << single.err;
    const auto merged = RunKvbill("merge" + shards + " --format " + format);
    ASSERT_EQ(merged.exit_status, 0) << merged.err;
    EXPECT_EQ(merged.out, single.out);
  }
  // A shard whose price is a string would rank at $0 if read as a number:
  // merge refuses it, naming the field, and writes nothing.
  const std::string shard0 = dir + "/plan_api_shard0.json";
  nlohmann::json doc;
  {
    std::ifstream in(shard0);
    doc = nlohmann::json::parse(in);
  }
  std::size_t k = 0;
  while (k < doc["candidates"].size() && !doc["candidates"][k].contains("usd_per_task")) ++k;
  ASSERT_LT(k, doc["candidates"].size());
  doc["candidates"][k]["usd_per_task"] = "0.001";
  const std::string bad = dir + "/plan_api_bad.json", out = dir + "/merged.json";
  std::ofstream(bad) << doc.dump();
  const auto r = RunKvbill("merge " + bad + " " + dir + "/plan_api_shard1.json -o " + out);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill merge: " + bad + "#/candidates/" + std::to_string(k) +
                       "/usd_per_task: must be a non-negative number, got \"0.001\"\n");
  EXPECT_FALSE(std::filesystem::exists(out));
  // speculative_method (2026-12): a number where a method's name belongs is
  // refused the same way; a shard written before the field (none) merges.
  // (Kept in the shard's key order: merge compares the shards' headers.)
  nlohmann::ordered_json ordered;
  {
    std::ifstream in(shard0);
    ordered = nlohmann::ordered_json::parse(in);
  }
  ordered["candidates"][0]["speculative_method"] = 5;
  std::ofstream(bad) << ordered.dump();
  const auto typed = RunKvbill("merge " + bad + " " + dir + "/plan_api_shard1.json -o " + out);
  EXPECT_EQ(typed.exit_status, 2);
  EXPECT_EQ(typed.err, "kvbill merge: " + bad +
                           "#/candidates/0/speculative_method: must be null or a string, got 5\n");
  EXPECT_FALSE(std::filesystem::exists(out));
  for (auto& row : ordered["candidates"]) row.erase("speculative_method");
  std::ofstream(bad) << ordered.dump();
  const auto older = RunKvbill("merge " + bad + " " + dir + "/plan_api_shard1.json -o " + out);
  EXPECT_EQ(older.exit_status, 0) << older.err;
  EXPECT_TRUE(std::filesystem::exists(out));
  std::filesystem::remove(out);  // the refusals above expect none
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
