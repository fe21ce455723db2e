// The engine refuses a request over max_model_len and ends its task there.
#include <gtest/gtest.h>

#include "engine/engine_test_util.h"
#include "kvbill/metrics/run_aggregator.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Task "a": prompts 1,000, 1,600, 2,200, 2,800 tokens (each turn adds the
// 100 output tokens and 500 tool tokens), so prompt + output is 1,100,
// 1,700, 2,300, 2,900. Task "b": prompts 3,000 and 3,600, prompt + output
// 3,100 and 3,700.
std::vector<Task> Tasks() {
  return {LoopTask("a", 4, 1000, 500, 100, 1.0), LoopTask("b", 2, 3000, 500, 100, 1.0, 0.5)};
}

TEST(ModelLimitTest, RequestOverTheLimitIsRefusedAndEndsItsTask) {
  SimulationConfig c = Config("llama-3.1-8b");
  c.max_model_len = 2300;  // 2,300 itself is allowed (prompt + max_tokens <= max_model_len)
  const SimulationResult r = RunSim(c, Tasks());
  // a: turns 0-2 served, turn 3 (2,900) refused, nothing after it. b: its
  // first request (3,100) refused, its second (3,700) never sent.
  ASSERT_EQ(r.requests.size(), 3u);
  for (const RequestRecord& rec : r.requests) EXPECT_EQ(rec.task_id, "a");
  EXPECT_EQ(r.rejected_requests, 2);
  EXPECT_EQ(r.unsent_requests, 1);
  EXPECT_EQ(r.longest_rejected_tokens, 3100);
  EXPECT_EQ(r.max_model_len, 2300);
  // Task b, refused at its first request, is the one task that served nothing.
  EXPECT_EQ(r.unserved_tasks, 1);
  // Task b served nothing: it is not a row; task a is one row of 3 requests.
  const std::vector<TaskMetrics> tasks = AggregateTasks(Tasks(), r);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].requests, 3);
  // Task a is cut short: its fourth request is not served.
  EXPECT_EQ(tasks[0].unserved_requests, 1);
  // Both cuts are said as the tasks arrive: a (1 of 4 unserved), b (2 of 2).
  ASSERT_EQ(r.cut_tasks.size(), 2u);
  EXPECT_EQ(r.cut_tasks[0].task_index, 0);
  EXPECT_EQ(r.cut_tasks[0].unserved_requests, 1);
  EXPECT_EQ(r.cut_tasks[1].task_index, 1);
  EXPECT_EQ(r.cut_tasks[1].unserved_requests, 2);
}

TEST(ModelLimitTest, NoLimitServesEveryRequest) {
  const SimulationResult r = RunSim(Config("llama-3.1-8b"), Tasks());
  EXPECT_EQ(r.requests.size(), 6u);
  EXPECT_EQ(r.rejected_requests, 0);
  EXPECT_EQ(r.unsent_requests, 0);
  EXPECT_EQ(r.unserved_tasks, 0);
}

TEST(ModelLimitTest, RefusedRequestsCostNothingAndStepModeAgrees) {
  SimulationConfig c = Config("llama-3.1-8b");
  c.max_model_len = 2300;
  const SimulationResult event = RunSim(c, Tasks());
  c.step_mode = true;
  const SimulationResult step = RunSim(c, Tasks());
  ExpectSameRuns(event, step);
  EXPECT_EQ(step.rejected_requests, 2);
  // Only task a's three requests are served; the bill is theirs plus idle.
  long double paid = 0;
  for (const RequestRecord& rec : event.requests) paid += rec.cost_usd;
  EXPECT_TRUE(NearlyEqual(paid + event.idle_usd, event.bill_usd));
}

// SGLang starts whatever its pool holds and refuses what the pool cannot:
// max_req_len = min(context length, pool tokens) - 1, outputs cut to end
// below it. A pool of 2,288 tokens (143 blocks of 16) holds sequences of
// up to 2,288 tokens, so max_req_len is 2,287 and SGLang serves at most
// 2,286: task a's 1,100 and 1,700 are served, its 2,300 refused (the fourth
// turn never sent); task b's 3,100 refused (its second never sent). vLLM
// would not start (its pool holds less than the model's 131,072), and
// kvbill's vLLM run stops at the first request that cannot fit.
TEST(ModelLimitTest, SglangRefusesRequestsItsPoolCannotHold) {
  SimulationConfig c = Config("llama-3.1-8b");
  c.capacity_tokens = 2288;
  c.scheduler = SchedulerKind::kSglang;
  const SimulationResult r = RunSim(c, Tasks());
  EXPECT_EQ(r.pool_context_len, 2286);
  EXPECT_EQ(r.request_len_limit, 2286);
  EXPECT_EQ(r.max_model_len, c.max_model_len);  // the configured limit stays as it was
  ASSERT_EQ(r.requests.size(), 2u);
  EXPECT_EQ(r.rejected_requests, 2);
  EXPECT_EQ(r.unsent_requests, 2);
  EXPECT_EQ(r.longest_rejected_tokens, 3100);
  c.step_mode = true;
  ExpectSameRuns(r, RunSim(c, Tasks()));
  // One more block holds 2,304 tokens: the cap is 2,302 and 2,300 is served.
  c.capacity_tokens = 2304;
  EXPECT_EQ(RunSim(c, Tasks()).pool_context_len, 2302);
  EXPECT_EQ(RunSim(c, Tasks()).requests.size(), 3u);
  // A pool that holds max_model_len + 1 tokens: max_model_len is the
  // context length, max_req_len 2,199, and SGLang serves at most 2,198.
  c.max_model_len = 2200;
  c.capacity_tokens = 2208;  // holds 2,208 > 2,200
  const SimulationResult within = RunSim(c, Tasks());
  EXPECT_EQ(within.pool_context_len, 0);
  EXPECT_EQ(within.request_len_limit, 2198);
  EXPECT_EQ(within.requests.size(), 2u);  // 1,100 and 1,700; 2,300 over 2,200
  c.scheduler = SchedulerKind::kVllm;
  c.max_model_len = 0;
  c.capacity_tokens = 2288;
  EXPECT_FALSE(Simulate(c, Tasks(), PlanAll(Tasks(), "keep_all")).ok());
}

// SGLang's rule with the context length as the limit (the pool holds far
// more): max_req_len = max_model_len - 1, outputs are cut to
// max_req_len - prompt - 1 tokens and prompts of max_req_len - 5 or more
// refused. max_model_len 2,302: max_req_len 2,301, so prompt plus output
// up to 2,300 is served (task a's third turn, 2,200 + 100, is) and a
// prompt up to 2,295. max_model_len 2,301: at most 2,299, and task a's
// 2,300 is refused (vLLM serves it: 2,300 <= 2,301). A one-token answer to
// a 2,296-token prompt (2,297 tokens) is refused at max_model_len 2,302 by
// the prompt rule alone (2,296 >= max_req_input_len 2,296); 2,295 is served.
TEST(ModelLimitTest, SglangServesBelowItsMaxReqLen) {
  SimulationConfig c = Config("llama-3.1-8b");
  c.scheduler = SchedulerKind::kSglang;
  c.max_model_len = 2302;
  const std::vector<Task> a = {LoopTask("a", 3, 1000, 500, 100, 1.0)};  // 1,100, 1,700, 2,300
  SimulationResult r = RunSim(c, a);
  EXPECT_EQ(r.request_len_limit, 2300);
  EXPECT_EQ(r.pool_context_len, 0);  // the pool is not the limit
  EXPECT_EQ(r.requests.size(), 3u);
  EXPECT_EQ(r.rejected_requests, 0);
  c.max_model_len = 2301;
  r = RunSim(c, a);
  EXPECT_EQ(r.request_len_limit, 2299);
  EXPECT_EQ(r.requests.size(), 2u);
  EXPECT_EQ(r.rejected_requests, 1);
  EXPECT_EQ(r.longest_rejected_tokens, 2300);
  c.max_model_len = 2302;
  const std::vector<Task> prompts = {LoopTask("p", 1, 2296, 0, 1, 0),
                                     LoopTask("q", 1, 2295, 0, 1, 0, 1.0)};
  r = RunSim(c, prompts);
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.requests[0].task_id, "q");
  EXPECT_EQ(r.rejected_requests, 1);
  EXPECT_EQ(r.longest_rejected_tokens, 2297);
  c.scheduler = SchedulerKind::kVllm;
  c.max_model_len = 2301;
  r = RunSim(c, a);
  EXPECT_EQ(r.request_len_limit, 2301);
  EXPECT_EQ(r.requests.size(), 3u);
}

// gpt-oss-20b: 12 full layers and 12 sliding layers of a 128-token window,
// two KV cache groups, no state pages. prefix_cache.capacity_tokens 2,304
// in 16-token blocks gives 144 blocks per group: 288 pages, which
// capacity_tokens reads as 288 / 2 x 16 = 2,304 tokens. With 256 tokens
// computed an iteration a sliding group holds at most ceil(128 / 16) +
// ceil(256 / 16) + 1 = 25 pages of a sequence, so the full group may take
// 288 - 25 = 263 pages: one sequence reaches 263 x 16 = 4,208 tokens. That
// is the figure the context_limit warning quotes, and the length vLLM's
// start-up check (max_model_len_fits_pool) judges by: 4,208 fits, 4,209
// does not.
TEST(ModelLimitTest, PoolSequenceTokensCountWhatWindowsFree) {
  SimulationConfig c = Config("gpt-oss-20b");
  c.capacity_tokens = 2304;
  c.max_num_batched_tokens = 256;
  c.max_model_len = 4208;
  const SimulationResult fits = RunSim(c, Tasks());
  EXPECT_EQ(fits.kv_cache_groups, 2);
  EXPECT_EQ(fits.kv_pool_blocks, 288);
  EXPECT_EQ(fits.pool_tokens, 2304);
  EXPECT_EQ(fits.pool_sequence_tokens, 4208);
  EXPECT_TRUE(fits.max_model_len_fits_pool);
  c.max_model_len = 4209;
  const SimulationResult over = RunSim(c, Tasks());
  EXPECT_EQ(over.pool_sequence_tokens, 4208);
  EXPECT_FALSE(over.max_model_len_fits_pool);
  auto size = SizeReplicaPool(c);
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(size->tokens, 2304);
  EXPECT_EQ(size->sequence_tokens, 4208);
  EXPECT_FALSE(size->holds_max_model_len);
}

// TPOT is (finish - first token) / (output - 1) per request; a request of
// one output token has no such interval and is left out. Queueing delay is
// admission minus release.
TEST(ModelLimitTest, LatencySummariesFollowTheirDefinitions) {
  auto record = [](Seconds release, Seconds admitted, Seconds first, Seconds finish, Tokens out) {
    RequestRecord r;
    r.release_s = release;
    r.arrived_s = release;  // no API server: at the scheduler when sent
    r.admitted_s = admitted;
    r.first_token_s = first;
    r.finish_s = finish;
    r.output_tokens = out;
    return r;
  };
  RequestLatencies l;
  l.Add(record(0, 0.5, 1.0, 2.0, 11));  // TPOT (2 - 1) / 10 = 0.1; queue 0.5; TTFT 1
  l.Add(record(1, 1.0, 1.5, 1.5, 1));   // one token: no TPOT; queue 0; TTFT 0.5
  l.Add(record(2, 4.0, 5.0, 5.75, 4));  // TPOT 0.75 / 3 = 0.25; queue 2; TTFT 3
  RunSummary s;
  l.Build(&s);
  EXPECT_EQ(s.tpot_s.count, 2);
  EXPECT_DOUBLE_EQ(s.tpot_s.p50, 0.1);  // nearest rank: ceil(0.5 x 2) = 1st of {0.1, 0.25}
  EXPECT_DOUBLE_EQ(s.tpot_s.max, 0.25);
  EXPECT_EQ(s.queue_s.count, 3);
  EXPECT_DOUBLE_EQ(s.queue_s.p50, 0.5);  // 2nd of {0, 0.5, 2}
  EXPECT_DOUBLE_EQ(s.queue_s.p99, 2.0);
  EXPECT_DOUBLE_EQ(s.ttft_s.p50, 1.0);  // 2nd of {0.5, 1, 3}
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
