// The "slo" key: latency targets named as budgets name them, validated.
#include <gtest/gtest.h>

#include "kvbill/scenario/budget.h"
#include "kvbill/scenario/scenario.h"

namespace kvbill {
namespace {

std::string ErrorOf(const std::string& text) {
  auto s = ParseScenario(text, "s.json");
  return s.ok() ? "(parsed)" : s.error().message();
}

TEST(SloTest, TargetsAreReadInFileOrder) {
  auto s = ParseScenario(R"({"slo": {"ttft_s.p90": 2, "tpot_s.p99": 0.05, "completion_s.p50": 600,
                                     "queue_s.max": 10}})",
                         "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message();
  ASSERT_EQ(s->slo.size(), 4u);
  EXPECT_EQ(s->slo[0].metric, "ttft_s.p90");
  EXPECT_EQ(s->slo[0].max, 2.0);
  EXPECT_EQ(s->slo[1].metric, "tpot_s.p99");
  EXPECT_EQ(s->slo[3].metric, "queue_s.max");
}

TEST(SloTest, UnknownMetricNamesTheFieldAndSuggests) {
  EXPECT_EQ(ErrorOf(R"({"slo": {"tfft_s.p90": 2}})"), "SLO_TYPO");
  EXPECT_EQ(ErrorOf(R"({"slo": {"cost_usd": 2}})"), "SLO_OTHER");
}

TEST(SloTest, TargetMustBeAPositiveNumber) {
  EXPECT_EQ(ErrorOf(R"({"slo": {"ttft_s.p90": 0}})"),
            "s.json#/slo/ttft_s.p90: must be a positive number of seconds, got 0");
  EXPECT_EQ(ErrorOf(R"({"slo": {"ttft_s.p90": "2s"}})"),
            "s.json#/slo/ttft_s.p90: must be a positive number of seconds, got \"2s\"");
}

TEST(SloTest, EachTargetHeldAtOrBelowItsMaximum) {
  RunSummary sum;
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
}

}  // namespace
}  // namespace kvbill
