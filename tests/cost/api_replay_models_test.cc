// API replays of traces whose calls name different models: each call at
// its own model's price, through its own model's provider cache.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kvbill/cost/api_replay.h"
#include "kvbill/scenario/api_run.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

const PriceSheet& Sheet() {
  static const PriceSheet sheet = *BundledPriceSheet();
  return sheet;
}

Turn MakeTurn(Tokens appended, const std::string& model) {
  Turn turn;
  turn.spans.push_back(Span{SpanKind::kOther, appended, std::nullopt});
  turn.output = 100;
  turn.tool_s = 10;
  turn.model = model;
  return turn;
}

std::vector<std::vector<Request>> Plan(const std::vector<Task>& tasks) {
  auto policy = MakeContextPolicy(ContextPolicyParams{});
  std::vector<std::vector<Request>> requests;
  for (const Task& t : tasks) requests.push_back((*policy)->Plan(t));
  return requests;
}

// One session, a call every 10 s, each prompt extending the previous one:
//   0 s  Sonnet 4.5  prompt 5,000
//  10 s  Haiku 4.5   prompt 6,000   (a side call; recorded: wrote 6,000)
//  20 s  Sonnet 4.5  prompt 7,000
//  30 s  Sonnet 4.5  prompt 8,000
// each with 100 output tokens. Models as Claude Code logs them (dated ids).
std::vector<Task> MixedSession() {
  Task task;
  task.id = "s";
  task.turns = {
      MakeTurn(5'000, "claude-sonnet-4-5-20250929"), MakeTurn(1'000, "claude-haiku-4-5-20251001"),
      MakeTurn(1'000, "claude-sonnet-4-5-20250929"), MakeTurn(1'000, "claude-sonnet-4-5-20250929")};
  task.turns[1].usage =
      RecordedUsage{.input = 0, .cache_creation = 6'000, .cache_read = 0, .output = 100};
  return {task};
}

ScenarioPricing SonnetPricing() {
  ScenarioPricing pricing;
  pricing.provider = "anthropic";
  pricing.model = "claude-sonnet-4-5";
  return pricing;
}

TEST(ApiReplayModelsTest, EachCallUsesItsOwnModelsCacheAndPrice) {
  const std::vector<Task> tasks = MixedSession();
  auto run = RunApiPricing(SonnetPricing(), Sheet(), tasks, Plan(tasks));
  ASSERT_TRUE(run.ok()) << run.error().message();
  const auto& r = run->replay.requests;
  ASSERT_EQ(r.size(), 4u);
  // Anthropic, breakpoint at the end of each prompt, 5-minute lifetime;
  // Sonnet 4.5 caches from 1,024 tokens, Haiku 4.5 from 4,096.
  //   0: the Sonnet cache is empty: writes 5,000.
  //   1: the Haiku cache is empty (Sonnet's 5,000 are not Haiku's): writes
  //      its whole 6,000 (>= 4,096), reads 0.
  //   2: the Sonnet cache still holds request 0's 5,000 (20 s old): reads
  //      5,000, writes 7,000 - 5,000 = 2,000.
  //   3: reads request 2's 7,000, writes 1,000.
  EXPECT_EQ(r[0].predicted.cache_write_5m, 5'000);
  EXPECT_EQ(r[0].predicted.cache_read, 0);
  EXPECT_EQ(r[1].predicted.cache_write_5m, 6'000);
  EXPECT_EQ(r[1].predicted.cache_read, 0);
  EXPECT_EQ(r[2].predicted.cache_write_5m, 2'000);
  EXPECT_EQ(r[2].predicted.cache_read, 5'000);
  EXPECT_EQ(r[3].predicted.cache_write_5m, 1'000);
  EXPECT_EQ(r[3].predicted.cache_read, 7'000);
  EXPECT_EQ(r[0].model, "claude-sonnet-4-5");
  EXPECT_EQ(r[1].model, "claude-haiku-4-5");
  // $/Mtok (scenarios/prices.json, LiteLLM 2026-07): Sonnet 4.5 write 3.75,
  // read 0.3, output 15; Haiku 4.5 write 1.25, read 0.1, output 5.
  // Tokens x $/Mtok = micro-dollars:
  //   0: 5,000 x 3.75 + 100 x 15                = 18,750 + 1,500         = 20,250
  //   1: 6,000 x 1.25 + 100 x 5                 =  7,500 +   500         =  8,000
  //   2: 5,000 x 0.3 + 2,000 x 3.75 + 100 x 15  =  1,500 + 7,500 + 1,500 = 10,500
  //   3: 7,000 x 0.3 + 1,000 x 3.75 + 100 x 15  =  2,100 + 3,750 + 1,500 =  7,350
  //   total 46,100
  constexpr std::int64_t kPico = 1'000'000;  // pico-dollars per micro-dollar
  EXPECT_EQ(r[0].cost.pico_usd, 20'250 * kPico);
  EXPECT_EQ(r[1].cost.pico_usd, 8'000 * kPico);
  EXPECT_EQ(r[2].cost.pico_usd, 10'500 * kPico);
  EXPECT_EQ(r[3].cost.pico_usd, 7'350 * kPico);
  EXPECT_EQ(run->replay.cost.pico_usd, 46'100 * kPico);
  // The recorded Haiku call is priced at Haiku too: 6,000 x 1.25 + 500 = 8,000
  // (at Sonnet it would be 6,000 x 3.75 + 1,500 = 24,000).
  EXPECT_EQ(run->replay.recorded_calls, 1);
  EXPECT_EQ(run->replay.recorded_cost.pico_usd, 8'000 * kPico);
  EXPECT_EQ(run->replay.cache_read_within_1pct, 1);  // 0 read, 0 recorded
}

TEST(ApiReplayModelsTest, OnePriceAndCachePricesEveryCallAtThatModel) {
  // The single-model overload (whatif's model:M column) ignores the calls'
  // models: all four go through one Sonnet cache.
  //   0: writes 5,000                          20,250 (as above)
  //   1: reads 5,000, writes 1,000: 1,500 + 3,750 + 1,500 = 6,750
  //   2: reads 6,000, writes 1,000: 1,800 + 3,750 + 1,500 = 7,050
  //   3: reads 7,000, writes 1,000: 2,100 + 3,750 + 1,500 = 7,350
  //   total 41,400 micro-dollars
  const std::vector<Task> tasks = MixedSession();
  auto cache = MakeProviderCache("anthropic", "claude-sonnet-4-5", {});
  ASSERT_TRUE(cache.ok());
  auto out = ReplayApi(tasks, Plan(tasks), *Sheet().Find("claude-sonnet-4-5"), **cache, {});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->requests[1].predicted.cache_read, 5'000);
  EXPECT_EQ(out->requests[2].predicted.cache_read, 6'000);
  EXPECT_EQ(out->cost.pico_usd, 41'400 * 1'000'000LL);
}

TEST(ApiReplayModelsTest, CallsNamingNoModelUseTheScenarioModel) {
  // All four calls with the model cleared: priced like the overload above.
  std::vector<Task> tasks = MixedSession();
  for (Turn& turn : tasks[0].turns) turn.model.clear();
  auto run = RunApiPricing(SonnetPricing(), Sheet(), tasks, Plan(tasks));
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_EQ(run->replay.cost.pico_usd, 41'400 * 1'000'000LL);
  EXPECT_EQ(run->replay.requests[1].model, "claude-sonnet-4-5");
}

TEST(ApiReplayModelsTest, WithoutPerCallModelsEveryCallIsAtTheScenarioModel) {
  // per_call_models false (compare's model lever): as the overload above.
  ScenarioPricing pricing = SonnetPricing();
  pricing.per_call_models = false;
  std::vector<Task> tasks = MixedSession();
  tasks[0].turns[2].model = "nope-model-1";  // not even looked up
  auto run = RunApiPricing(pricing, Sheet(), tasks, Plan(tasks));
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_EQ(run->replay.cost.pico_usd, 41'400 * 1'000'000LL);
}

TEST(ApiReplayModelsTest, ModelWithoutPriceIsAnErrorNamingIt) {
  std::vector<Task> tasks = MixedSession();
  tasks[0].turns[2].model = "nope-model-1";
  auto run = RunApiPricing(SonnetPricing(), Sheet(), tasks, Plan(tasks));
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().message(),
            "task \"s\": request 3: no price for model \"nope-model-1\" (the model the trace's "
            "call names)");
  EXPECT_EQ(run.error().exit_status(), 2);
}

TEST(ApiReplayModelsTest, CachingOffPricesEachCallAtItsModel) {
  // Every prompt token uncached input: Sonnet input 3, Haiku input 1.
  //   5,000 x 3 + 1,500 = 16,500; 6,000 x 1 + 500 = 6,500;
  //   7,000 x 3 + 1,500 = 22,500; 8,000 x 3 + 1,500 = 25,500; total 71,000.
  ScenarioPricing pricing = SonnetPricing();
  pricing.cache_enabled = false;
  const std::vector<Task> tasks = MixedSession();
  auto run = RunApiPricing(pricing, Sheet(), tasks, Plan(tasks));
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_EQ(run->replay.cost.pico_usd, 71'000 * 1'000'000LL);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
