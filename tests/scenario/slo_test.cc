// The "slo" key: latency targets named as budgets name them, validated.
#include <gtest/gtest.h>

#include "kvbill/scenario/budget.h"
#include "kvbill/scenario/scenario.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

std::string ErrorOf(const std::string& text) {
  auto s = ParseScenario(text, "s.json");
  return s.ok() ? "(parsed)" : s.error().message();
}

TEST(SloTest, TargetsAreReadInKeyOrder) {
  auto s = ParseScenario(R"({"slo": {"ttft_s.p90": 2, "tpot_s.p99": 0.05, "completion_s.p50": 600,
                                     "queue_s.max": 10}})",
                         "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message();
  ASSERT_EQ(s->slo.size(), 4u);
  EXPECT_EQ(s->slo[0].metric, "completion_s.p50");
  EXPECT_EQ(s->slo[0].max, 600.0);
  EXPECT_EQ(s->slo[1].metric, "queue_s.max");
  EXPECT_EQ(s->slo[2].metric, "tpot_s.p99");
  EXPECT_EQ(s->slo[3].metric, "ttft_s.p90");
  EXPECT_EQ(s->slo[3].max, 2.0);
}

TEST(SloTest, UnknownMetricNamesTheFieldAndSuggests) {
  EXPECT_EQ(ErrorOf(R"({"slo": {"tfft_s.p90": 2}})"),
            "s.json#/slo/tfft_s.p90: unknown latency metric; did you mean ttft_s.p90, ttft_s.p50 "
            "or ttft_s.p99? (ttft_s, tpot_s, queue_s or completion_s, each "
            ".{mean,p50,p90,p99,max})");
  EXPECT_EQ(ErrorOf(R"({"slo": {"cost_usd": 2}})"),
            "s.json#/slo/cost_usd: unknown latency metric (ttft_s, tpot_s, queue_s or "
            "completion_s, each .{mean,p50,p90,p99,max})");
}

TEST(SloTest, TargetMustBeAPositiveNumber) {
  EXPECT_EQ(ErrorOf(R"({"slo": {"ttft_s.p90": 0}})"),
            "s.json#/slo/ttft_s.p90: must be a positive number of seconds, got 0");
  EXPECT_EQ(ErrorOf(R"({"slo": {"ttft_s.p90": "2s"}})"),
            "s.json#/slo/ttft_s.p90: must be a positive number of seconds, got \"2s\"");
}

TEST(SloTest, EachTargetHeldAtOrBelowItsMaximum) {
  RunSummary sum;
  sum.requests = 10;
  sum.ttft_s.count = 10;
  sum.tpot_s.count = 10;
  sum.ttft_s.p90 = 2.0;
  sum.tpot_s.p99 = 0.06;
  sum.completion_s.p50 = 100;
  const std::vector<SloCheck> checks =
      CheckSlo({{"ttft_s.p90", 2.0}, {"tpot_s.p99", 0.05}, {"completion_s.p50", 600}}, sum);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_TRUE(checks[0].held);
  EXPECT_FALSE(checks[1].held);
  EXPECT_DOUBLE_EQ(checks[1].actual, 0.06);
  EXPECT_TRUE(checks[2].held);
  for (const SloCheck& c : checks) EXPECT_EQ(c.not_measured, "") << c.target.metric;
}

// A latency over no sample is no figure: a run that served no request holds
// no target, and TPOT (the gaps between a request's output tokens) has no
// sample when no served request had a second output token; TTFT still has.
// Budgets on those metrics break the same way.
TEST(SloTest, ATargetWithoutSamplesIsNotMeasuredAndNotHeld) {
  RunSummary none;  // requests 0: every summary 0 over nothing
  const std::vector<SloCheck> unserved =
      CheckSlo({{"ttft_s.p90", 1.0}, {"tpot_s.p90", 0.01}}, none);
  ASSERT_EQ(unserved.size(), 2u);
  for (const SloCheck& c : unserved) {
    EXPECT_FALSE(c.held) << c.target.metric;
    EXPECT_EQ(c.not_measured, "no request was served") << c.target.metric;
  }
  RunSummary one_token;  // 3 requests served, each of one output token
  one_token.requests = 3;
  one_token.ttft_s.count = 3;
  one_token.ttft_s.p90 = 0.2;
  const std::vector<SloCheck> checks =
      CheckSlo({{"ttft_s.p90", 1.0}, {"tpot_s.p90", 0.01}}, one_token);
  EXPECT_TRUE(checks[0].held);
  EXPECT_EQ(checks[0].not_measured, "");
  EXPECT_FALSE(checks[1].held);
  EXPECT_EQ(checks[1].not_measured,
            "no served request had a second output token, the first TPOT measures");
  RunMetrics m;
  m.summary = one_token;
  const std::vector<BudgetCheck> budgets = CheckBudgets(
      {Budget{"tpot_s.p90", 1e-6, std::nullopt}, Budget{"ttft_s.p90", 1.0, std::nullopt}}, m);
  ASSERT_EQ(budgets.size(), 2u);
  EXPECT_FALSE(budgets[0].ok);
  EXPECT_EQ(budgets[0].not_measured, checks[1].not_measured);
  EXPECT_TRUE(budgets[1].ok);
  // Requests served but none with an output token (a trace's turns of
  // out 0): no first token arrived, so TTFT measured nothing and a TTFT
  // target or budget is broken, not met at 0 s.
  RunSummary no_output;
  no_output.requests = 2;
  no_output.ttft_s.count = 0;
  const std::vector<SloCheck> silent = CheckSlo({{"ttft_s.p90", 1e-6}}, no_output);
  ASSERT_EQ(silent.size(), 1u);
  EXPECT_FALSE(silent[0].held);
  EXPECT_EQ(silent[0].not_measured,
            "no served request had an output token, whose arrival TTFT measures");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
