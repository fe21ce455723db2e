// Numeric safety of API bills: a million tasks summed in pico-dollar Money
// come out exact, and an amount beyond Money's range is an error, never a
// wrapped number (docs/robustness.md#numeric-ranges).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kvbill/cost/api_replay.h"
#include "kvbill/cost/money.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Sonnet-like list prices without a long-context tier, in pico-dollars per
// token ($/Mtok x 10^6): input 3, output 15, 5-minute write 3.75, read 0.3.
ModelPrice FlatPrice() {
  ModelPrice p;
  p.id = "flat";
  p.base = TokenRates{.input = 3'000'000,
                      .output = 15'000'000,
                      .cache_read = 300'000,
                      .cache_write_5m = 3'750'000,
                      .cache_write_1h = 6'000'000};
  return p;
}

std::vector<std::vector<Request>> Plan(const std::vector<Task>& tasks) {
  auto policy = MakeContextPolicy(ContextPolicyParams{});
  std::vector<std::vector<Request>> requests;
  requests.reserve(tasks.size());
  for (const Task& t : tasks) requests.push_back((*policy)->Plan(t));
  return requests;
}

Task OneTurnTask(int i, Tokens prompt, Tokens output) {
  Task t;
  t.id = std::to_string(i);
  t.arrival_s = i;
  Turn turn;
  turn.spans.push_back(Span{SpanKind::kUser, prompt, std::nullopt});  // unique content
  turn.output = output;
  t.turns.push_back(std::move(turn));
  return t;
}

// 10^6 tasks, each one request of a 1M-token (2^20) prompt of its own content
// and 1,000 output tokens, under the Anthropic rules (a breakpoint at the end
// of each prompt). No prompt repeats another, so each reads nothing and
// writes its whole prompt at the 5-minute rate:
//   per task = 1,048,576 x 3,750,000 + 1,000 x 15,000,000
//            = 3,932,160,000,000 + 15,000,000,000 = 3,947,160,000,000 pico-$
//   total    = 10^6 x that = 3,947,160,000,000,000,000 pico-$ = $3,947,160
// which is 43% of Money's range (2^63 - 1 = 9,223,372,036,854,775,807) and far
// above 2^53, where a double sum of dollars would start to round.
TEST(MoneySafetyTest, MillionTasksAtAMillionTokensSumExactly) {
  constexpr int kTasks = 1000000;
  std::vector<Task> tasks;
  tasks.reserve(kTasks);
  for (int i = 0; i < kTasks; ++i) tasks.push_back(OneTurnTask(i, Tokens{1} << 20, 1000));
  auto cache = MakeProviderCache("anthropic", "claude-sonnet-4-5", {});
  ASSERT_TRUE(cache.ok());
  auto out = ReplayApi(tasks, Plan(tasks), FlatPrice(), **cache, {});
  ASSERT_TRUE(out.ok()) << out.error().message();
  ASSERT_EQ(out->tasks.size(), static_cast<std::size_t>(kTasks));
  EXPECT_EQ(out->tasks[0].cost.pico_usd, 3'947'160'000'000);
  EXPECT_EQ(out->tasks[kTasks - 1].cost.pico_usd, 3'947'160'000'000);
  EXPECT_EQ(out->cost.pico_usd, 3'947'160'000'000'000'000);
  EXPECT_EQ(FormatUsdExact(out->cost), "3947160");
  EXPECT_EQ(out->predicted.cache_write_5m, 1'048'576LL * kTasks);
  EXPECT_EQ(out->predicted.cache_read, 0);
  EXPECT_EQ(out->predicted.output, 1'000LL * kTasks);
}

// One request of 2^40 tokens (the largest count kvbill accepts) at $3.75 per
// Mtok written: 1,099,511,627,776 x 3,750,000 = 4.1 x 10^18 pico-$, inside the
// range; two such tasks sum to 8.2 x 10^18, still inside; three pass 2^63 and
// the sum must be an error naming the range, not a negative amount.
TEST(MoneySafetyTest, AnAmountBeyondTheRangeIsAnErrorNotAWrap) {
  const Tokens huge = Tokens{1} << 40;
  auto run = [&](int n) {
    std::vector<Task> tasks;
    for (int i = 0; i < n; ++i) tasks.push_back(OneTurnTask(i, huge, 0));
    auto cache = MakeProviderCache("anthropic", "claude-sonnet-4-5", {});
    return ReplayApi(tasks, Plan(tasks), FlatPrice(), **cache, {});
  };
  auto two = run(2);
  ASSERT_TRUE(two.ok()) << two.error().message();
  EXPECT_EQ(two->cost.pico_usd, 2 * 1'099'511'627'776LL * 3'750'000);
  auto three = run(3);
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.error().message().find("9,223,372"), std::string::npos)
      << three.error().message();
}

// Money's own checked arithmetic at the edge of its range.
TEST(MoneySafetyTest, AddMoneyRefusesToWrap) {
  Money sum{INT64_MAX - 5};
  EXPECT_TRUE(AddMoney(Money{5}, &sum));
  EXPECT_EQ(sum.pico_usd, INT64_MAX);
  EXPECT_FALSE(AddMoney(Money{1}, &sum));
  EXPECT_EQ(sum.pico_usd, INT64_MAX);                                // unchanged
  EXPECT_FALSE(TokensTimesPrice(Tokens{1} << 40, 10'000'000).ok());  // 1.1 x 10^19
  auto fits = TokensTimesPrice(Tokens{1} << 40, 8'000'000);          // 8.8 x 10^18
  ASSERT_TRUE(fits.ok());
  EXPECT_EQ(fits->pico_usd, 8'796'093'022'208'000'000);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
