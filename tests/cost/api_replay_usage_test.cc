// What an API replay records about each call: recorded 1-hour cache writes
// priced at the 1-hour rate, and summary requests at the model of the turn
// they precede (docs/billing.md#api-mode).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kvbill/cost/api_replay.h"
#include "kvbill/scenario/api_run.h"
#include "kvbill/trace/importers.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

constexpr std::int64_t kPico = 1'000'000;  // pico-dollars per micro-dollar

const PriceSheet& Sheet() {
  static const PriceSheet sheet = *BundledPriceSheet();
  return sheet;
}

std::vector<std::vector<Request>> Plan(const std::vector<Task>& tasks,
                                       const ContextPolicyParams& params = {}) {
  auto policy = MakeContextPolicy(params);
  std::vector<std::vector<Request>> requests;
  for (const Task& t : tasks) requests.push_back((*policy)->Plan(t));
  return requests;
}

std::vector<Task> OneHourLog() {
  auto reader = OpenTrace(
      std::string(KVBILL_SOURCE_DIR) + "/tests/data/traces/claude_code_1h.jsonl", std::nullopt);
  std::vector<Task> tasks;
  Task task;
  while (reader.ok() && *(*reader)->Next(&task)) tasks.push_back(task);
  return tasks;
}

ScenarioPricing OpusPricing(Seconds ttl_s) {
  ScenarioPricing pricing;
  pricing.provider = "anthropic";
  pricing.model = "claude-opus-4-5";
  pricing.ttl_s = ttl_s;
  return pricing;
}

// tests/data/traces/claude_code_1h.jsonl, recorded usage per call:
//   h1 Opus 4.5    input 10, writes 30,000 (10,000 of them 1-hour), read 0, output 500
//   h2 Opus 4.5    input 8, writes 2,000 (5-minute), read 30,010, output 300
//   h3 Sonnet 4.5  input 6, writes 36,000 (all 1-hour), read 0, output 100
// $/Mtok (scenarios/prices.json): Opus 4.5 input 5, 5-min write 6.25, 1-h
// write 10, read 0.5, output 25; Sonnet 4.5 3, 3.75, 6, 0.3, 15.
// Micro-dollars (tokens x $/Mtok), as `kvbill bill` prices the log:
//   h1 10x5 + 20,000x6.25 + 10,000x10 + 500x25 = 50 + 125,000 + 100,000 + 12,500 = 237,550
//   h2 8x5 + 2,000x6.25 + 30,010x0.5 + 300x25  = 40 + 12,500 + 15,005 + 7,500     =  35,045
//   h3 6x3 + 36,000x6 + 100x15                 = 18 + 216,000 + 1,500             = 217,518
//   total 490,113 (all writes 5-minute, as before the split was kept: h1
//   200,050, h3 136,518, total 371,613).
TEST(ApiReplayUsageTest, RecordedOneHourWritesArePricedAtTheOneHourRate) {
  const std::vector<Task> tasks = OneHourLog();
  ASSERT_EQ(tasks.size(), 1u);
  auto run = RunApiPricing(OpusPricing(300), Sheet(), tasks, Plan(tasks));
  ASSERT_TRUE(run.ok()) << run.error().message();
  const auto& r = run->replay.requests;
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].recorded_cost.pico_usd, 237'550 * kPico);
  EXPECT_EQ(r[1].recorded_cost.pico_usd, 35'045 * kPico);
  EXPECT_EQ(r[2].recorded_cost.pico_usd, 217'518 * kPico);
  EXPECT_EQ(run->replay.recorded_cost.pico_usd, 490'113 * kPico);
  EXPECT_EQ(run->replay.recorded.cache_write_5m, 22'000);  // 20,000 + 2,000
  EXPECT_EQ(run->replay.recorded.cache_write_1h, 46'000);  // 10,000 + 36,000
}

TEST(ApiReplayUsageTest, OneHourReplayPricesEveryRecordedWriteAtTheOneHourRate) {
  // ttl_s 3600: the writes the log does not mark as 1-hour follow the
  // replay's lifetime, as before.
  //   h1 50 + 30,000x10 + 12,500        = 312,550
  //   h2 40 + 2,000x10 + 15,005 + 7,500 =  42,545
  //   h3 as above                       = 217,518     total 572,613
  const std::vector<Task> tasks = OneHourLog();
  auto run = RunApiPricing(OpusPricing(3600), Sheet(), tasks, Plan(tasks));
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_EQ(run->replay.requests.at(0).recorded_cost.pico_usd, 312'550 * kPico);
  EXPECT_EQ(run->replay.requests.at(1).recorded_cost.pico_usd, 42'545 * kPico);
  EXPECT_EQ(run->replay.recorded_cost.pico_usd, 572'613 * kPico);
  EXPECT_EQ(run->replay.recorded.cache_write_5m, 0);
  EXPECT_EQ(run->replay.recorded.cache_write_1h, 68'000);
}

Turn MakeTurn(SpanKind kind, Tokens tokens, const std::string& model) {
  Turn turn;
  turn.spans.push_back(Span{kind, tokens, std::nullopt});
  turn.output = 100;
  turn.tool_s = 10;
  turn.model = model;
  return turn;
}

// One session, no recorded times or usage (so a call every 10 s):
//   turn 0  Sonnet 4.5  system 2,000 + user 4,000            prompt 6,000
//   turn 1  Sonnet 4.5  + 1,000                              prompt 7,000
//   turn 2  Opus 4.5    + 2,000: 9,000 > threshold 8,000 -> compaction
// summarise (threshold 8,000, summary 500, keep_recent 1,000): before turn
// 2 a summary request of turn 1's prompt + its 100-token answer (7,100 in,
// 500 out), then turn 2 as system 2,000 + summary 500 + the last 1,000
// (turn 1's span) + 2,000 = 5,500.
// That session, its turns naming `first_models` (turns 0 and 1) and
// `last_model` (turn 2; "" names none).
Task SummarisedSession(const std::string& first_models, const std::string& last_model) {
  Task task;
  task.id = "s";
  task.turns.push_back(MakeTurn(SpanKind::kSystem, 2'000, first_models));
  task.turns[0].spans.push_back(Span{SpanKind::kUser, 4'000, std::nullopt});
  task.turns.push_back(MakeTurn(SpanKind::kUser, 1'000, first_models));
  task.turns.push_back(MakeTurn(SpanKind::kUser, 2'000, last_model));
  return task;
}

// summarise with threshold 8,000, summary 500, keep_recent 1,000.
ContextPolicyParams SummariseAt8k() {
  ContextPolicyParams params;
  params.kind = "summarise";
  params.threshold_tokens = 8'000;
  params.summary_tokens = 500;
  params.keep_recent_tokens = 1'000;
  return params;
}

TEST(ApiReplayUsageTest, SummaryRequestIsPricedAtTheModelOfTheTurnItPrecedes) {
  const std::vector<Task> tasks = {
      SummarisedSession("claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101")};
  const auto requests = Plan(tasks, SummariseAt8k());
  ASSERT_EQ(requests[0].size(), 4u);
  ASSERT_TRUE(requests[0][2].is_summary);
  EXPECT_EQ(requests[0][2].model, "claude-opus-4-5-20251101");
  EXPECT_EQ(requests[0][2].PromptTokens(), 7'100);
  EXPECT_EQ(requests[0][3].PromptTokens(), 5'500);

  ScenarioPricing pricing;
  pricing.provider = "anthropic";
  pricing.model = "claude-sonnet-4-5";  // the summary no longer falls back to it
  auto run = RunApiPricing(pricing, Sheet(), tasks, requests);
  ASSERT_TRUE(run.ok()) << run.error().message();
  const auto& r = run->replay.requests;
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[2].model, "claude-opus-4-5");
  // Anthropic, 5-minute lifetime, breakpoint at each prompt's end; one cache
  // per model (Opus 4.5 caches from 4,096 tokens). Micro-dollars:
  //   0 Sonnet: writes 6,000: 6,000x3.75 + 100x15                = 22,500 + 1,500 = 24,000
  //   1 Sonnet: reads 6,000, writes 1,000: 1,800 + 3,750 + 1,500 =  7,050
  //   2 summary, Opus: its cache is empty: writes 7,100:
  //     7,100x6.25 + 500x25 = 44,375 + 12,500                    = 56,875
  //   3 Opus: the summary's 7,100 is no prefix of its prompt (the summary
  //     piece follows the system prompt): writes 5,500:
  //     5,500x6.25 + 100x25 = 34,375 + 2,500                     = 36,875
  //   total 124,800
  // (The summary at the scenario's Sonnet, as before: it reads request 1's
  // 7,000 and writes 100: 2,100 + 375 + 500x15 = 9,975; total 77,900.)
  EXPECT_EQ(r[2].predicted.cache_write_5m, 7'100);
  EXPECT_EQ(r[2].predicted.cache_read, 0);
  EXPECT_EQ(r[2].cost.pico_usd, 56'875 * kPico);
  EXPECT_EQ(r[3].predicted.cache_write_5m, 5'500);
  EXPECT_EQ(run->replay.cost.pico_usd, 124'800 * kPico);
}

TEST(ApiReplayUsageTest, SummaryBeforeATurnNamingNoModelUsesTheScenarioModel) {
  // The same session with no models: everything at Sonnet 4.5, one cache.
  //   0 24,000; 1 7,050 (as above)
  //   2 summary: reads request 1's 7,000, writes 100: 2,100 + 375 + 7,500 = 9,975
  //   3 misses from the summary piece on; the 7,100 and 7,000 entries are no
  //     prefix of it: writes 5,500: 20,625 + 1,500 = 22,125
  //   total 63,150
  const std::vector<Task> tasks = {SummarisedSession("", "")};
  ScenarioPricing pricing;
  pricing.provider = "anthropic";
  pricing.model = "claude-sonnet-4-5";
  auto run = RunApiPricing(pricing, Sheet(), tasks, Plan(tasks, SummariseAt8k()));
  ASSERT_TRUE(run.ok()) << run.error().message();
  const auto& r = run->replay.requests;
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[2].model, "claude-sonnet-4-5");
  EXPECT_EQ(r[2].cost.pico_usd, 9'975 * kPico);
  EXPECT_EQ(run->replay.cost.pico_usd, 63'150 * kPico);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
