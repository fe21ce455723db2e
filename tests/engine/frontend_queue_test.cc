// A request's queueing delay (QueueSeconds, RunSummary::queue_s) is the time
// it waits, not the time the API server spends on it: its own frontend work
// and request latency are service. Worked by hand on a cost model whose
// every iteration takes 1 s, an API server taking 0.25 s a request (one at a
// time) and 0.1 s of request latency.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "engine/engine_test_util.h"
#include "kvbill/metrics/run_aggregator.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// A and B both sent at 0.
//   A: API server [0, 0.25], at the scheduler at 0.35, admitted at once
//      (the GPU is idle): its 0.35 s before admission is all its own.
//   B: API server [0.25, 0.5] behind A, at the scheduler at 0.6, while A's
//      prefill runs [0.35, 1.35]: admitted at 1.35. Of its 1.35 s, 0.35 s
//      is its own service; 0.25 s behind A in the API server and 0.75 s
//      behind A's iteration are waiting: queue 1.0 s.
TEST(FrontendQueueTest, OwnApiServerTimeIsServiceNotWaiting) {
  SimulationConfig c = Config("llama-3.1-8b");
  c.cost_model = std::make_shared<ContextCost>(1.0, 0.0);
  c.frontend_per_request_s = 0.25;
  c.request_latency_s = 0.1;
  const std::vector<Task> tasks = {OneRequest("A", 0, 2), OneRequest("B", 0, 2)};
  const SimulationResult run = RunSim(c, tasks);
  std::map<std::string, RequestRecord> r;
  for (const RequestRecord& rec : run.requests) r[rec.task_id] = rec;
  ASSERT_EQ(r.size(), 2u);
  EXPECT_DOUBLE_EQ(r["A"].release_s, 0);
  EXPECT_DOUBLE_EQ(r["A"].admitted_s, 0.35);
  EXPECT_DOUBLE_EQ(r["A"].frontend_s, 0.35);
  EXPECT_DOUBLE_EQ(QueueSeconds(r["A"]), 0);
  EXPECT_DOUBLE_EQ(r["A"].frontend_wait_s, 0);
  EXPECT_DOUBLE_EQ(r["B"].admitted_s, 1.35);
  EXPECT_NEAR(QueueSeconds(r["B"]), 1.0, 1e-12);
  // Of B's 1.0 s, the 0.25 s behind A in the API server.
  EXPECT_NEAR(r["B"].frontend_wait_s, 0.25, 1e-12);
}

// A and B each find the API server and the GPU idle: both are admitted the
// moment they reach the scheduler, so both waited exactly 0 s. B is sent at
// 3.6 s (A is done at 2.5: at the scheduler at 0.2 + 0.3 = 0.5, prefill
// [0.5, 1.5], its second token [1.5, 2.5]) and reaches the scheduler at
// (3.6 + 0.2) + 0.3 = 4.1000000000000005 in doubles. Its wait taken as
// admission - release - own API server time was 4.1000000000000005 - 3.6 -
// 0.5 = 4.440892098500626e-16 s, residue that a run's median queueing
// delay printed (9.7e-17 s where every request had waited for nothing).
TEST(FrontendQueueTest, ARequestAdmittedOnArrivalWaitedExactlyNothing) {
  SimulationConfig c = Config("llama-3.1-8b");
  c.cost_model = std::make_shared<ContextCost>(1.0, 0.0);
  c.frontend_per_request_s = 0.2;
  c.request_latency_s = 0.3;
  const std::vector<Task> tasks = {OneRequest("A", 0, 2), OneRequest("B", 3.6, 2)};
  const SimulationResult run = RunSim(c, tasks);
  std::map<std::string, RequestRecord> r;
  for (const RequestRecord& rec : run.requests) r[rec.task_id] = rec;
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r["B"].release_s, 3.6);
  EXPECT_EQ(r["B"].admitted_s, 4.1000000000000005);
  EXPECT_EQ(QueueSeconds(r["A"]), 0.0);
  EXPECT_EQ(QueueSeconds(r["B"]), 0.0);
  RequestLatencies latencies;
  for (const RequestRecord& rec : run.requests) latencies.Add(rec);
  RunSummary summary;
  latencies.Build(&summary);
  EXPECT_EQ(summary.queue_s.p50, 0.0);
  EXPECT_EQ(summary.queue_s.max, 0.0);
  EXPECT_EQ(summary.queue_s.mean, 0.0);
}

// A request of no output tokens has no first token: it is left out of the
// run's TTFT and of its task's mean TTFT (vLLM refuses max_tokens 0; a trace
// may record such a turn). Records by hand: TTFTs 0.5 s and 1.5 s with one
// output token or more, and a 0-output request released at 0 whose
// "first token" time (9 s) would otherwise enter both.
TEST(FrontendQueueTest, ARequestWithoutOutputHasNoTimeToFirstToken) {
  const auto record = [](Seconds release, Seconds first, Tokens output) {
    RequestRecord r;
    r.release_s = release;
    r.arrived_s = release;
    r.admitted_s = release;
    r.first_token_s = first;
    r.finish_s = first + 1;
    r.prompt_tokens = 10;
    r.output_tokens = output;
    return r;
  };
  RequestLatencies latencies;
  TaskAccumulator task;
  for (const RequestRecord& r : {record(0, 0.5, 3), record(1, 2.5, 1), record(0, 9, 0)}) {
    latencies.Add(r);
    task.Add(r);
  }
  RunSummary summary;
  latencies.Build(&summary);
  EXPECT_EQ(summary.ttft_s.count, 2);
  EXPECT_DOUBLE_EQ(summary.ttft_s.mean, 1.0);  // (0.5 + 1.5) / 2
  EXPECT_DOUBLE_EQ(summary.ttft_s.max, 1.5);
  EXPECT_EQ(task.Metrics("t").requests, 3);
  ASSERT_TRUE(task.Metrics("t").ttft_mean_s.has_value());
  EXPECT_DOUBLE_EQ(*task.Metrics("t").ttft_mean_s, 1.0);
  // A task whose every request had no output token has no mean TTFT (not 0).
  TaskAccumulator silent;
  silent.Add(record(0, 9, 0));
  EXPECT_FALSE(silent.Metrics("s").ttft_mean_s.has_value());
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
