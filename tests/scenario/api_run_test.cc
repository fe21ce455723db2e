// RunScenario in API mode, the API levers, budgets and cheaper tiers.
#include "kvbill/scenario/api_run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "kvbill/scenario/budget.h"
#include "kvbill/scenario/levers.h"
#include "kvbill/scenario/run.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// tests/data/scenarios/api_small.json replays tests/data/traces/api_whatif.jsonl
// (four Sonnet 4.5 calls; the working is in tests/cli/whatif_cli_test.cc) at
// Anthropic's rules: task a 3 calls, prompts 5,000, 6,000, 7,000; task b one
// call of 4,000. Predicted: a reads 5,000 (its second call) and writes
// 5,000 + 1,000 + 7,000; b writes 4,000. Costs $0.05475 and $0.018.
std::string SmallApiScenario() {
  return std::string(KVBILL_SOURCE_DIR) + "/tests/data/scenarios/api_small.json";
}

TEST(ApiRunTest, RunScenarioFillsTheTaskMetricsFromTheReplay) {
  auto s = LoadScenario(SmallApiScenario());
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto out = RunScenario(*s);
  ASSERT_TRUE(out.ok()) << out.error().message();
  ASSERT_TRUE(out->api.has_value());
  EXPECT_EQ(out->api->price.id, "claude-sonnet-4-5");
  ASSERT_EQ(out->tasks.size(), 2u);
  const TaskMetrics& a = out->tasks[0];
  EXPECT_EQ(a.id, "a");
  EXPECT_EQ(a.requests, 3);
  EXPECT_EQ(a.prompt_tokens, 18'000);
  EXPECT_EQ(a.cached_tokens, 5'000);
  EXPECT_EQ(a.prefill_tokens, 13'000);  // writes, no uncached input
  EXPECT_EQ(a.output_tokens, 300);
  EXPECT_DOUBLE_EQ(static_cast<double>(a.cost_usd), 0.05475);
  EXPECT_EQ(a.kv_read_bytes, 0);  // engine-only
  const RunSummary& sum = out->summary;
  EXPECT_EQ(sum.tasks, 2);
  EXPECT_EQ(sum.requests, 4);
  EXPECT_DOUBLE_EQ(sum.hit_rate, 5'000.0 / 22'000.0);
  EXPECT_DOUBLE_EQ(static_cast<double>(sum.cost_usd), 0.07275);
  EXPECT_DOUBLE_EQ(sum.cost_per_task_usd.mean, (0.05475 + 0.018) / 2);
  EXPECT_DOUBLE_EQ(sum.cost_per_task_usd.p90, 0.05475);  // nearest rank of two
}

TEST(ApiRunTest, CachingOffBillsEveryPromptTokenAsInput) {
  auto s = LoadScenario(SmallApiScenario());
  ASSERT_TRUE(s.ok());
  s->pricing->cache_enabled = false;
  auto out = RunScenario(*s);
  ASSERT_TRUE(out.ok()) << out.error().message();
  // 22,000 x $3 + 500 x $15 per Mtok = 66,000 + 7,500 micro-dollars.
  EXPECT_DOUBLE_EQ(static_cast<double>(out->summary.cost_usd), 0.0735);
  EXPECT_EQ(out->summary.cached_tokens, 0);
}

TEST(ApiRunTest, LeversOfAnApiScenarioAreTheApiUsers) {
  auto s = LoadScenario(SmallApiScenario());
  ASSERT_TRUE(s.ok());
  std::vector<std::string> names;
  for (const Lever& l : Levers(*s)) names.push_back(l.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"1-hour cache writes", "caching off",
                                      "drop tool results older than 3 turns (50-token stub)",
                                      "summarise past 64k tokens (2k summary, keep 16k)",
                                      "model claude-haiku-4-5 (list prices and cache rules)"}));
  // Over a policy of the scenario's own, a context lever replaces it (it sets
  // the whole /context_policy), and its name says so; the policy the
  // scenario has is weighed by turning it off, not offered again.
  s->context_policy.kind = "summarise";
  names.clear();
  for (const Lever& l : Levers(*s)) names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "1-hour cache writes", "caching off", "summarise off (keep every context)",
                       "drop tool results older than 3 turns (50-token stub) instead of summarise",
                       "model claude-haiku-4-5 (list prices and cache rules)"}));
  EXPECT_EQ(Levers(*s)[2].removes, "summarise (the baseline's context policy)");
}

TEST(ApiRunTest, EngineOnlyBudgetsAreErrorsInApiMode) {
  auto s = LoadScenario(SmallApiScenario());
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(CheckBudgetsApply(*s).ok());
  s->budgets.push_back(Budget{"ttft_s.p90", 5.0, std::nullopt});
  auto status = CheckBudgetsApply(*s);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            SmallApiScenario() +
                "#/budgets/ttft_s.p90: not measured for a scenario with \"pricing\" (API mode "
                "measures cost_per_task_usd.{mean,p50,p90,p99,max}, hit_rate, cost_usd, "
                "warnings.context_limit, warnings.pricing_model_unused, "
                "warnings.policy_no_effect, warnings.placeholder_outputs)");
  EXPECT_TRUE(IsApiBudgetMetric("cost_per_task_usd.p90"));
  EXPECT_FALSE(IsApiBudgetMetric("kv_read_bytes_per_task.mean"));
  // The warnings an API run raises can be bounded; an engine run's cannot.
  EXPECT_TRUE(IsApiBudgetMetric("warnings.pricing_model_unused"));
  EXPECT_TRUE(IsApiBudgetMetric("warnings.policy_no_effect"));
  EXPECT_TRUE(IsApiBudgetMetric("warnings.placeholder_outputs"));
  EXPECT_TRUE(IsApiBudgetMetric("warnings.context_limit"));
  EXPECT_FALSE(IsApiBudgetMetric("warnings.overloaded"));
}

// The "prefix caching off" lever of an engine scenario whose prefix_cache
// section is `section`, with a sliding-window context policy.
Lever CachingOffLever(const std::string& section, std::vector<Lever>* levers) {
  auto s = ParseScenario(R"({"model": "qwen3-8b", "trace": {"generator": "chat", "tasks": 1},
      "prefix_cache": )" + section +
                             R"(,
      "context_policy": {"kind": "sliding_window", "window_tokens": 8192}})",
                         "s.json");
  EXPECT_TRUE(s.ok()) << s.error().message();
  if (!s.ok()) return {};
  *levers = Levers(*s);
  const auto caching = std::find_if(levers->begin(), levers->end(), [](const Lever& l) {
    return l.name.starts_with("prefix caching off");
  });
  EXPECT_NE(caching, levers->end());
  return caching != levers->end() ? *caching : Lever{};
}

// An engine scenario with a host offload tier: turning the prefix cache off
// takes the tier with it (a tier with caching off is refused), and its pins
// (refused too), so the lever runs; over a scenario with a context policy,
// that policy is weighed by turning it off.
TEST(ApiRunTest, EngineCachingLeverTakesTheOffloadTierAndPinsWithIt) {
  using Setting = std::pair<std::string, std::string>;
  std::vector<Lever> levers;
  Lever caching = CachingOffLever(R"({"offload": {"capacity_gib": 20}})", &levers);
  EXPECT_EQ(caching.name, "prefix caching off (and its host offload tier)");
  EXPECT_EQ(caching.settings.back(), (Setting{"/prefix_cache/offload/capacity_gib", "0"}));
  const auto policy = std::find_if(levers.begin(), levers.end(), [](const Lever& l) {
    return l.name == "sliding_window off (keep every context)";
  });
  ASSERT_NE(policy, levers.end());
  EXPECT_EQ(policy->removes, "sliding_window (the baseline's context policy)");
  caching = CachingOffLever(R"({"pin_during_tool_s": 30})", &levers);
  EXPECT_EQ(caching.name, "prefix caching off (and its pins)");
  EXPECT_EQ(caching.settings.back(), (Setting{"/prefix_cache/pin_during_tool_s", "0"}));
  caching =
      CachingOffLever(R"({"offload": {"capacity_gib": 20}, "pin_during_tool_s": 30})", &levers);
  EXPECT_EQ(caching.name, "prefix caching off (and its host offload tier and its pins)");
  EXPECT_EQ(caching.settings.size(), 3u);
}

TEST(ApiRunTest, CheaperTierIsTheSameProvidersSmallerModel) {
  auto sheet = BundledPriceSheet();
  ASSERT_TRUE(sheet.ok());
  auto tier = [&](const std::string& id) { return CheaperTier(*sheet, id).value_or("-"); };
  EXPECT_EQ(tier("claude-opus-4-5-20251101"), "claude-sonnet-4-5");
  EXPECT_EQ(tier("claude-sonnet-4-5"), "claude-haiku-4-5");
  EXPECT_EQ(tier("claude-sonnet-4"), "claude-haiku-4-5");
  EXPECT_EQ(tier("gpt-5"), "gpt-5-mini");
  EXPECT_EQ(tier("gpt-5-mini"), "gpt-5-nano");
  EXPECT_EQ(tier("gpt-5-codex"), "gpt-5-mini");
  EXPECT_EQ(tier("gemini-2.5-pro"), "gemini-2.5-flash");
  EXPECT_EQ(tier("claude-3-haiku"), "-");
  EXPECT_EQ(tier("deepseek-chat"), "-");
  EXPECT_EQ(tier("no-such-model"), "-");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
