// Billing rules (metrics/billing.h), worked by hand, and conserved by a run.
#include "kvbill/metrics/billing.h"

#include <gtest/gtest.h>

#include "engine/engine_test_util.h"
#include "kvbill/metrics/run_aggregator.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Two tasks billed as dedicated GPUs bill them: A 1 GPU-second, $0.30;
// B 3 GPU-seconds, $0.90; idle $2.00. Bill 0.3 + 0.9 + 2 = $3.20.
std::vector<TaskMetrics> TwoTasks() {
  TaskMetrics a, b;
  a.id = "a";
  a.gpu_seconds = 1;
  a.cost_usd = 0.3L;
  b.id = "b";
  b.gpu_seconds = 3;
  b.cost_usd = 0.9L;
  return {a, b};
}

RunSummary SummaryOf(const std::vector<TaskMetrics>& tasks) {
  RunSummary s = SumTasks(tasks);
  s.idle_usd = 2.0L;
  s.cost_usd = s.task_cost_usd + s.idle_usd;
  return s;
}

TEST(BillingTest, NamesRoundTripAndUnknownIsAnError) {
  for (const char* name : {"dedicated", "busy", "amortized"}) {
    auto rule = ParseBillingRule(name);
    ASSERT_TRUE(rule.ok());
    EXPECT_EQ(BillingName(*rule), name);
  }
  auto bad = ParseBillingRule("shared");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "unknown billing \"shared\" (dedicated, busy or amortized)");
}

TEST(BillingTest, DedicatedLeavesTheBillAsTheEngineMadeIt) {
  std::vector<TaskMetrics> tasks = TwoTasks();
  RunSummary s = SummaryOf(tasks);
  ApplyBilling(BillingRule::kDedicated, &tasks, &s);
  EXPECT_DOUBLE_EQ(static_cast<double>(s.cost_usd), 3.2);
  EXPECT_DOUBLE_EQ(static_cast<double>(s.idle_usd), 2.0);
  EXPECT_DOUBLE_EQ(static_cast<double>(s.idle_gpu_usd), 2.0);
  EXPECT_DOUBLE_EQ(static_cast<double>(tasks[0].cost_usd), 0.3);
  EXPECT_EQ(s.billing, BillingRule::kDedicated);
}

TEST(BillingTest, BusyBillsOnlyTheTasks) {
  std::vector<TaskMetrics> tasks = TwoTasks();
  RunSummary s = SummaryOf(tasks);
  ApplyBilling(BillingRule::kBusy, &tasks, &s);
  EXPECT_DOUBLE_EQ(static_cast<double>(s.cost_usd), 1.2);  // 0.3 + 0.9
  EXPECT_DOUBLE_EQ(static_cast<double>(s.idle_usd), 0);
  EXPECT_DOUBLE_EQ(static_cast<double>(s.idle_gpu_usd), 2.0);  // what idle cost, unbilled
  EXPECT_DOUBLE_EQ(static_cast<double>(tasks[1].cost_usd), 0.9);
  EXPECT_DOUBLE_EQ(s.cost_per_task_usd.mean, 0.6);
}

TEST(BillingTest, AmortizedSpreadsIdleByBusyTime) {
  std::vector<TaskMetrics> tasks = TwoTasks();
  RunSummary s = SummaryOf(tasks);
  ApplyBilling(BillingRule::kAmortized, &tasks, &s);
  // Shares of $2 idle by GPU-seconds 1 : 3 -> $0.50 and $1.50.
  EXPECT_NEAR(static_cast<double>(tasks[0].idle_share_usd), 0.5, 1e-15);
  EXPECT_NEAR(static_cast<double>(tasks[1].idle_share_usd), 1.5, 1e-15);
  EXPECT_NEAR(static_cast<double>(tasks[0].cost_usd), 0.8, 1e-15);
  EXPECT_NEAR(static_cast<double>(tasks[1].cost_usd), 2.4, 1e-15);
  EXPECT_NEAR(static_cast<double>(s.task_cost_usd), 3.2, 1e-15);
  EXPECT_NEAR(static_cast<double>(s.cost_usd), 3.2, 1e-15);  // the dedicated bill
  EXPECT_DOUBLE_EQ(static_cast<double>(s.idle_usd), 0);
  EXPECT_NEAR(s.cost_per_task_usd.mean, 1.6, 1e-15);  // (0.8 + 2.4) / 2
  EXPECT_NEAR(s.cost_per_task_usd.max, 2.4, 1e-15);
}

// A real run with idle time (two replicas, tool waits): amortized tasks add
// up to the dedicated bill, task for task no cheaper than dedicated, and the
// streaming aggregator (which holds tasks until the end) agrees with the
// whole-run path.
TEST(BillingTest, AmortizedRunConservesTheDedicatedBill) {
  SimulationConfig c = Config("qwen3-8b");
  c.replicas = 2;
  std::vector<Task> tasks;
  for (int i = 0; i < 6; ++i) {
    tasks.push_back(LoopTask("t" + std::to_string(i), 4, 3000, 400, 60, 2.0, i * 1.5));
  }
  const SimulationResult r = RunSim(c, tasks);
  ASSERT_GT(r.idle_usd, 0);
  std::vector<TaskMetrics> dedicated = AggregateTasks(tasks, r);
  const RunSummary d = Summarise(dedicated, r);
  std::vector<TaskMetrics> amortized = dedicated;
  RunSummary a = d;
  ApplyBilling(BillingRule::kAmortized, &amortized, &a);
  EXPECT_NEAR(static_cast<double>(a.task_cost_usd), static_cast<double>(d.cost_usd),
              static_cast<double>(d.cost_usd) * 1e-12);
  EXPECT_NEAR(static_cast<double>(a.cost_usd), static_cast<double>(d.cost_usd), 0);
  for (std::size_t i = 0; i < amortized.size(); ++i) {
    EXPECT_GT(amortized[i].cost_usd, dedicated[i].cost_usd);
  }
  std::vector<TaskMetrics> streamed;
  RunAggregator aggregator([&](const TaskMetrics& t) { streamed.push_back(t); },
                           BillingRule::kAmortized);
  for (RequestRecord rec : r.requests) aggregator.OnRequest(std::move(rec));
  for (int i = 0; i < static_cast<int>(tasks.size()); ++i) aggregator.OnTaskDone(i);
  const RunSummary sa = aggregator.Finish(r);
  ASSERT_EQ(streamed.size(), amortized.size());
  for (std::size_t i = 0; i < streamed.size(); ++i) {
    EXPECT_EQ(streamed[i].cost_usd, amortized[i].cost_usd) << i;
  }
  EXPECT_EQ(sa.task_cost_usd, a.task_cost_usd);
  EXPECT_EQ(sa.cost_per_task_usd, a.cost_per_task_usd);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
