// Many runs per process: prepared workloads shared by runs, streamed ones,
// the streaming metrics, and sweeps made point by point.
#include "kvbill/scenario/workload.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "kvbill/metrics/run_aggregator.h"
#include "kvbill/scenario/run.h"
#include "kvbill/scenario/sweep.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

Scenario Parse(const std::string& json) {
  auto s = ParseScenario(json, "inline.json");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
  return s.ok() ? *s : Scenario{};
}

// Every field of every task and of the summary, exactly.
void ExpectSameOutcome(const ScenarioOutcome& a, const ScenarioOutcome& b) {
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  for (std::size_t i = 0; i < a.tasks.size(); ++i) {
    const TaskMetrics& x = a.tasks[i];
    const TaskMetrics& y = b.tasks[i];
    SCOPED_TRACE("task " + x.id);
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.requests, y.requests);
    EXPECT_EQ(x.prompt_tokens, y.prompt_tokens);
    EXPECT_EQ(x.cached_tokens, y.cached_tokens);
    EXPECT_EQ(x.prefill_tokens, y.prefill_tokens);
    EXPECT_EQ(x.preemptions, y.preemptions);
    EXPECT_EQ(x.kv_read_bytes, y.kv_read_bytes);
    EXPECT_EQ(x.kv_written_bytes, y.kv_written_bytes);
    EXPECT_EQ(x.peak_kv_bytes, y.peak_kv_bytes);
    EXPECT_EQ(x.gpu_seconds, y.gpu_seconds);
    EXPECT_EQ(x.cost_usd, y.cost_usd);
    EXPECT_EQ(x.completion_s, y.completion_s);
    EXPECT_EQ(x.ttft_mean_s, y.ttft_mean_s);
    EXPECT_EQ(x.queue_mean_s, y.queue_mean_s);
    EXPECT_EQ(x.unserved_requests, y.unserved_requests);
  }
  const RunSummary& s = a.summary;
  const RunSummary& t = b.summary;
  EXPECT_EQ(s.tasks, t.tasks);
  EXPECT_EQ(s.requests, t.requests);
  EXPECT_EQ(s.cached_tokens, t.cached_tokens);
  EXPECT_EQ(s.hit_rate, t.hit_rate);
  EXPECT_EQ(s.kv_read_bytes, t.kv_read_bytes);
  EXPECT_EQ(s.cost_usd, t.cost_usd);
  EXPECT_EQ(s.task_cost_usd, t.task_cost_usd);
  EXPECT_EQ(s.idle_usd, t.idle_usd);
  EXPECT_EQ(s.cost_per_task_usd, t.cost_per_task_usd);
  EXPECT_EQ(s.ttft_s, t.ttft_s);
  EXPECT_EQ(s.simulated_s, t.simulated_s);
  EXPECT_EQ(s.preemptions, t.preemptions);
  EXPECT_EQ(s.evicted_blocks, t.evicted_blocks);
}

std::string Trace(const std::string& name) {
  return std::string(KVBILL_SOURCE_DIR) + "/tests/data/traces/" + name;
}

// Generated agents (two replicas, a tight pool: preemptions) and the
// bundled Mooncake trace, prepared once and shared, or streamed by each run
// (a cache whose ceiling is 0), give what reading and planning per run gives.
TEST(WorkloadTest, SharedAndStreamedRunsGiveWhatAPlainRunGives) {
  const std::vector<std::string> scenarios = {
      R"({"model": "qwen3-8b", "deployment": {"replicas": 2},
          "prefix_cache": {"capacity_tokens": 120000, "pin_during_tool_s": 3},
          "engine": {"router": "session_affinity"},
          "trace": {"generator": "coding-agent", "tasks": 12}, "seed": 3})",
      R"({"model": "llama-3.1-8b", "trace": {"file": ")" + Trace("mooncake_small.jsonl") +
          R"(", "release": "recorded"}})",
      // Coding-agent prompts start near 20k tokens and grow: at 28k, tasks
      // cut short and tasks refused at their first request.
      R"({"model": "llama-3.1-8b", "engine": {"max_model_len": 28000},
          "trace": {"generator": "coding-agent", "tasks": 12}, "seed": 3})",
  };
  for (const std::string& json : scenarios) {
    const Scenario s = Parse(json);
    auto plain = RunScenario(s);
    ASSERT_TRUE(plain.ok()) << plain.error().message();
    EXPECT_FALSE(plain->result.requests.empty());
    WorkloadCache shared;
    WorkloadCache streamed(0);
    for (WorkloadCache* cache : {&shared, &streamed}) {
      auto run = RunScenario(s, *cache);
      ASSERT_TRUE(run.ok()) << run.error().message();
      EXPECT_TRUE(run->result.requests.empty());  // folded, not kept
      ExpectSameOutcome(*run, *plain);
    }
    EXPECT_GT(shared.bytes(), 0);
    EXPECT_EQ(streamed.bytes(), 0);
    // Asked again, the cache gives the same prepared copy.
    auto first = shared.Get(s);
    auto second = shared.Get(s);
    ASSERT_TRUE(first.ok() && second.ok() && *first != nullptr);
    EXPECT_EQ(first->get(), second->get());
  }
}

// A task cut short at max_model_len says how many of its requests were not
// served: with the limit, each task's served plus unserved requests are the
// requests it makes without one, and the unserved ones are the requests the
// engine refused or never sent, less those of tasks refused at their first
// request (no row). Llama 3.1 8B's own limit, 131,072 tokens, cuts no
// coding-agent task; 28,000 cuts some and refuses others outright.
TEST(WorkloadTest, TasksCutShortCountTheirUnservedRequests) {
  const std::string base = R"({"model": "llama-3.1-8b",
      "trace": {"generator": "coding-agent", "tasks": 12}, "seed": 3)";
  auto whole = RunScenario(Parse(base + "}"));
  auto cut = RunScenario(Parse(base + R"(, "engine": {"max_model_len": 28000}})"));
  ASSERT_TRUE(whole.ok() && cut.ok());
  std::map<std::string, int> planned;
  for (const TaskMetrics& t : whole->tasks) {
    EXPECT_EQ(t.unserved_requests, 0);
    planned[t.id] = t.requests;
  }
  int cut_tasks = 0;
  std::int64_t unserved = 0;
  for (const TaskMetrics& t : cut->tasks) {
    EXPECT_EQ(t.requests + t.unserved_requests, planned[t.id]) << t.id;
    cut_tasks += t.unserved_requests > 0 ? 1 : 0;
    unserved += t.unserved_requests;
    planned.erase(t.id);
  }
  std::int64_t without_row = 0;  // tasks refused at their first request
  for (const auto& [id, n] : planned) without_row += n;
  EXPECT_EQ(static_cast<std::int64_t>(planned.size()), cut->result.unserved_tasks);
  EXPECT_GT(cut_tasks, 0);
  EXPECT_GT(cut->result.unserved_tasks, 0);
  EXPECT_EQ(unserved + without_row, cut->result.rejected_requests + cut->result.unsent_requests);
}

// Mooncake rows hashing full blocks only (9 hashes for 5,000 tokens: the
// last 392 tokens, a partial block, unhashed) that share their first 8
// hashes: the second prompt hits the engine blocks ending in those 8 trace
// blocks, 8 x 512 = 4,096 tokens, and neither the 9th block (another hash)
// nor the unhashed tail (each prompt's own), planned once or named per run.
// They once fell back to naming the prompt from its own tokens: no hit.
TEST(WorkloadTest, FullBlockHashesShareTheirPrefix) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) /
                            ("kvbill_full_block_hashes_" + std::to_string(::getpid()) + ".jsonl"))
                               .string();
  {
    std::ofstream out(path);
    out << R"({"timestamp":0,"input_length":5000,"output_length":10,"hash_ids":[1,2,3,4,5,6,7,8,9]})"
        << "\n"
        << R"({"timestamp":5000,"input_length":5000,"output_length":10,"hash_ids":[1,2,3,4,5,6,7,8,10]})"
        << "\n";
  }
  const Scenario s = Parse(R"({"model": "llama-3.1-8b", "trace": {"file": ")" + path +
                           R"(", "release": "recorded"}})");
  auto plain = RunScenario(s);
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  ASSERT_EQ(plain->result.requests.size(), 2u);
  EXPECT_EQ(plain->summary.cached_tokens, 4096);
  WorkloadCache shared;
  auto planned = RunScenario(s, shared);
  ASSERT_TRUE(planned.ok()) << planned.error().message();
  ExpectSameOutcome(*planned, *plain);
  std::filesystem::remove(path);
}

// A turn whose prompt is empty (its second turn keeps nothing and appends
// nothing) cannot be served: the error names the trace file, the line and
// the turn (counted from 1), prepared or streamed alike.
TEST(WorkloadTest, AnEmptyPromptIsTheTracesErrorAtItsTurn) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) /
                            ("empty_prompt_" + std::to_string(::getpid()) + ".jsonl"))
                               .lexically_normal()
                               .string();
  std::ofstream(path) << "{\"kvbill_trace\":1}\n"
                         "{\"id\":\"a\",\"turns\":[{\"spans\":[{\"kind\":\"user\","
                         "\"tokens\":100}],\"out\":5},{\"keep\":0,\"spans\":[],\"out\":5}]}\n";
  const Scenario s = Parse(R"({"trace": {"file": ")" + path + R"("}})");
  const std::string expected =
      path + ":2: task \"a\": turn 2: an empty prompt (0 tokens; a request sends at least one)";
  WorkloadCache shared;
  WorkloadCache streamed(0);
  for (WorkloadCache* cache : {&shared, &streamed}) {
    auto run = RunScenario(s, *cache);
    ASSERT_FALSE(run.ok());
    EXPECT_EQ(run.error().message(), expected);
  }
  std::filesystem::remove(path);
}

// The engine's own settings do not change the workload; the trace, its seed
// (generated) and the context policy do.
TEST(WorkloadTest, KeyIsTheTraceAndTheContextPolicy) {
  const std::string base = R"({"trace": {"generator": "coding-agent", "tasks": 3}, "seed": 2, )";
  const std::string key = WorkloadKey(Parse(base + R"("model": "qwen3-8b"})"));
  EXPECT_EQ(WorkloadKey(Parse(base + R"("model": "llama-3.1-8b", "kv_format": "fp8",
      "deployment": {"replicas": 3}, "engine": {"router": "least_loaded"},
      "prefix_cache": {"block_size": 32}})")),
            key);
  EXPECT_NE(WorkloadKey(Parse(R"({"trace": {"generator": "coding-agent", "tasks": 3},
                                  "seed": 3})")),
            key);
  EXPECT_NE(WorkloadKey(Parse(base + R"("context_policy": {"kind": "sliding_window",
                                                             "window_tokens": 8000}})")),
            key);
}

// A native trace whose second task arrives before its first (the native
// format allows it; Mooncake files must keep time order).
std::string OutOfOrderTrace() {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("kvbill_out_of_order_" + std::to_string(::getpid()) + ".jsonl"))
                               .string();
  std::ofstream out(path);
  out << R"({"kvbill_trace":1})"
      << "\n"
      << R"({"id":"late","arrival_s":5,"turns":[{"spans":[{"kind":"user","tokens":900}],"out":20}]})"
      << "\n"
      << R"({"id":"early","arrival_s":1,"turns":[{"spans":[{"kind":"user","tokens":700}],"out":30}]})"
      << "\n";
  return path;
}

TEST(WorkloadTest, AStreamedTraceOutOfArrivalOrderIsReadWhole) {
  const std::string path = OutOfOrderTrace();
  const Scenario s = Parse(R"({"model": "llama-3.1-8b", "trace": {"file": ")" + path + R"("}})");
  auto feed = TraceFeed::Open(s);
  ASSERT_TRUE(feed.ok());
  FedTask task;
  ASSERT_TRUE((*feed)->Next(&task).ok());
  auto second = (*feed)->Next(&task);
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE((*feed)->out_of_order());
  EXPECT_EQ(second.error().message(),
            "inline.json#/trace: task \"early\" arrives at 1 s, before the task before it (5 s): "
            "the trace is not in arrival order");
  // The run falls back to reading the whole trace: the same as a plain run.
  WorkloadCache streamed(0);
  auto run = RunScenario(s, streamed);
  auto plain = RunScenario(s);
  ASSERT_TRUE(run.ok() && plain.ok());
  ExpectSameOutcome(*run, *plain);
  EXPECT_EQ(run->tasks.size(), 2u);
  std::filesystem::remove(path);
}

// simulate's run: the trace read as the run reaches it, tasks and records
// handed on as they come. The same tasks, records (in finishing order) and
// summary as the run that reads the whole trace.
TEST(WorkloadTest, StreamedRunGivesWhatAPlainRunGives) {
  const std::vector<std::string> scenarios = {
      R"({"model": "qwen3-8b", "deployment": {"replicas": 2},
          "prefix_cache": {"capacity_tokens": 120000, "pin_during_tool_s": 3},
          "trace": {"generator": "coding-agent", "tasks": 12}, "seed": 3})",
      R"({"model": "llama-3.1-8b", "engine": {"mode": "step"}, "trace": {"file": ")" +
          Trace("mooncake_small.jsonl") + R"(", "release": "recorded"}})",
  };
  for (const std::string& json : scenarios) {
    const Scenario s = Parse(json);
    auto plain = RunScenario(s);
    ASSERT_TRUE(plain.ok()) << plain.error().message();
    ScenarioOutcome streamed;
    RunObserver observer;
    observer.on_task = [&](const TaskMetrics& t) { streamed.tasks.push_back(t); };
    observer.on_request = [&](const RequestRecord& r) { streamed.result.requests.push_back(r); };
    observer.on_restart = [] { ADD_FAILURE() << "the trace is in arrival order"; };
    auto run = StreamScenario(s, observer);
    ASSERT_TRUE(run.ok()) << run.error().message();
    EXPECT_TRUE(run->streamed);
    streamed.summary = run->summary;
    ExpectSameOutcome(streamed, *plain);
    ASSERT_EQ(streamed.result.requests.size(), plain->result.requests.size());
    for (std::size_t i = 0; i < streamed.result.requests.size(); ++i) {
      EXPECT_EQ(streamed.result.requests[i].task_id, plain->result.requests[i].task_id);
      EXPECT_EQ(streamed.result.requests[i].index, plain->result.requests[i].index);
      EXPECT_EQ(streamed.result.requests[i].finish_s, plain->result.requests[i].finish_s);
    }
    EXPECT_EQ(run->totals.iterations, plain->result.iterations);
    EXPECT_EQ(run->totals.bill_usd, plain->result.bill_usd);
  }
}

// Out of arrival order: what came is withdrawn (on_restart) and the run is
// made again from the trace read whole.
TEST(WorkloadTest, AStreamedRunOutOfArrivalOrderStartsAgainFromTheWholeTrace) {
  const std::string path = OutOfOrderTrace();
  const Scenario s = Parse(R"({"model": "llama-3.1-8b", "trace": {"file": ")" + path + R"("}})");
  std::vector<std::string> ids;
  int restarts = 0;
  RunObserver observer;
  observer.on_task = [&](const TaskMetrics& t) { ids.push_back(t.id); };
  observer.on_restart = [&] {
    ++restarts;
    ids.clear();
  };
  auto run = StreamScenario(s, observer);
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_FALSE(run->streamed);
  EXPECT_EQ(restarts, 1);
  EXPECT_EQ(ids, (std::vector<std::string>{"late", "early"}));  // input order
  auto plain = RunScenario(s);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(run->summary.cost_usd, plain->summary.cost_usd);
  std::filesystem::remove(path);
}

// The engine's checks of a prepared workload's tasks are made once, when it
// is prepared; a run gives the error a plain run gives, in the same words.
// The trace itself is within 10^9 s (the reader refuses one that is not);
// a load of 0.5 stretches "later"'s 6e8 s to 1.2e9 s.
TEST(WorkloadTest, APreparedWorkloadFailsTheEngineChecksAsAPlainRun) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("kvbill_far_apart_" + std::to_string(::getpid()) + ".jsonl"))
                               .string();
  std::ofstream(path)
      << R"({"kvbill_trace":1})"
      << "\n"
      << R"({"id":"now","arrival_s":0,"turns":[{"spans":[{"kind":"user","tokens":900}],"out":20}]})"
      << "\n"
      << R"({"id":"later","arrival_s":6e8,"turns":[{"spans":[{"kind":"user","tokens":9}],"out":2}]})"
      << "\n";
  const Scenario s =
      Parse(R"({"model": "llama-3.1-8b", "trace": {"file": ")" + path + R"(", "load": 0.5}})");
  auto plain = RunScenario(s);
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.error().message().find("task \"later\": arrival 1.2e+09 s, beyond the 1e9 s"),
            std::string::npos)
      << plain.error().message();
  WorkloadCache shared;
  auto run = RunScenario(s, shared);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().message(), plain.error().message());
  EXPECT_GT(shared.bytes(), 0);  // it was prepared, not streamed
  std::filesystem::remove(path);
}

// The aggregator gets records in finishing order and task ends in any
// order; it releases tasks in input order, with the sums of AggregateTasks.
TEST(WorkloadTest, AggregatorReleasesTasksInInputOrderWithTheSameSums) {
  const Scenario s = Parse(R"({"model": "qwen3-8b", "deployment": {"replicas": 2},
                               "trace": {"generator": "chat", "tasks": 20}, "seed": 4})");
  auto tasks = LoadScenarioTasks(s);
  auto requests = PlanRequests(s, *tasks);
  auto config = BuildSimulationConfig(s);
  ASSERT_TRUE(tasks.ok() && requests.ok() && config.ok());
  auto result = Simulate(*config, *tasks, *requests);
  ASSERT_TRUE(result.ok());
  std::vector<std::string> released;
  RunAggregator aggregator([&](const TaskMetrics& t) { released.push_back(t.id); });
  std::vector<int> order(tasks->size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::shuffle(order.begin(), order.end(), std::mt19937(5));
  for (RequestRecord r : result->requests) aggregator.OnRequest(std::move(r));
  for (int i : order) aggregator.OnTaskDone(i);
  const RunSummary summary = aggregator.Finish(*result);
  const std::vector<TaskMetrics> expected = AggregateTasks(*tasks, *result);
  ASSERT_EQ(released.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(released[i], expected[i].id);
  const RunSummary want = Summarise(expected, *result);
  EXPECT_EQ(summary.kv_read_bytes, want.kv_read_bytes);
  EXPECT_EQ(summary.task_cost_usd, want.task_cost_usd);
  EXPECT_EQ(summary.cost_per_task_usd, want.cost_per_task_usd);
  EXPECT_EQ(summary.ttft_s, want.ttft_s);
  EXPECT_EQ(summary.hit_rate, want.hit_rate);
}

// A sweep's rows are the metrics of each point's own run.
TEST(WorkloadTest, SweepRowsAreThePointsOwnRuns) {
  const std::string text = R"({"model": "qwen3-8b",
      "trace": {"generator": "coding-agent", "tasks": 3}, "seed": 6,
      "sweep": {"/kv_format": ["bf16", "fp8"], "/prefix_cache/capacity_tokens": [90000, 400000]}})";
  auto plan = PlanSweep(text, "s.json");
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  EXPECT_EQ(plan->count(), 4);
  EXPECT_EQ(plan->base_text.find("sweep"), std::string::npos);  // points do not carry the axes
  auto rows = RunSweep(*plan, 2);
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  ASSERT_EQ(rows->size(), 4u);
  for (const SweepRow& row : *rows) {
    auto point = MakeSweepPoint(*plan, row.index);
    ASSERT_TRUE(point.ok());
    auto own = RunScenario(point->scenario);
    ASSERT_TRUE(own.ok());
    const RunMetrics want = MetricsOf(*own);
    EXPECT_EQ(row.metrics.summary.cost_usd, want.summary.cost_usd);
    EXPECT_EQ(row.metrics.summary.hit_rate, want.summary.hit_rate);
    EXPECT_EQ(row.metrics.kv_read_bytes_per_task, want.kv_read_bytes_per_task);
    EXPECT_EQ(row.metrics.completion_s, want.completion_s);
  }
}

// What a prepared Mooncake-like workload counts per request: the request
// itself and its 512-token block hashes (one piece per prompt), under the
// ceiling.
TEST(WorkloadTest, PreparedMooncakeRequestsStayUnderTheCeiling) {
  const Scenario s = Parse(R"({"model": "llama-3.1-8b", "trace": {"file": ")" +
                           Trace("mooncake_small.jsonl") + R"("}})");
  auto w = PrepareWorkload(s, kMaxWorkloadCacheBytes);
  ASSERT_TRUE(w.ok() && w->has_value());
  const PreparedWorkload& p = **w;
  ASSERT_EQ(p.requests, 4);
  // 14 + 15 + 15 + 2 block hashes of 8 bytes, 4 one-piece prompts.
  const std::int64_t at_least = 4 * static_cast<std::int64_t>(sizeof(Request)) + 46 * 8 +
                                4 * static_cast<std::int64_t>(sizeof(PromptPiece));
  EXPECT_GE(p.bytes, at_least);
  EXPECT_LT(p.bytes, kMaxWorkloadBytesPerRequest * p.requests);
  std::cout << "[ measured ] " << p.bytes / p.requests << " bytes per Mooncake request\n";
  // A ceiling below it: nothing is kept.
  auto none = PrepareWorkload(s, at_least - 1);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

// A shared workload names its Mooncake prompts once: at 16-token blocks a
// 512-token trace block is a run of 32 engine blocks, and the last run holds
// what is left of the prompt's full blocks. Worked by hand from
// tests/data/traces/mooncake_small.jsonl: 6,758 tokens are 422 full blocks
// (13 runs of 32, then 6), 7,322 are 457 (14 of 32, then 9), 7,236 are 452
// (14 of 32, then 4), 1,000 are 62 (32, then 30): 46 runs in all.
TEST(WorkloadTest, PlannedBlockRunsAreThePromptsRunsMadeOnce) {
  const Scenario s = Parse(R"({"model": "llama-3.1-8b", "trace": {"file": ")" +
                           Trace("mooncake_small.jsonl") + R"("}})");
  auto w = PrepareWorkload(s, kMaxWorkloadCacheBytes);
  ASSERT_TRUE(w.ok() && w->has_value());
  PreparedWorkload& p = **w;
  const std::int64_t before = p.bytes;
  const std::int64_t added = PlanBlockRuns(&p, 16, kMaxWorkloadCacheBytes);
  EXPECT_EQ(added, 46 * static_cast<std::int64_t>(sizeof(BlockRun) + sizeof(std::int64_t)));
  EXPECT_EQ(p.bytes, before + added);
  const std::vector<std::int64_t> last_run = {6, 9, 4, 30};
  const std::vector<std::size_t> runs = {14, 15, 15, 2};
  std::size_t k = 0;
  for (const PreparedTask& t : p.tasks) {
    for (const Request& r : t.requests) {
      SCOPED_TRACE("request " + std::to_string(k));
      ASSERT_TRUE(r.explicit_blocks.has_value());
      EXPECT_EQ(r.planned_block_size, 16);
      ASSERT_EQ(r.planned_runs.size(), runs[k]);
      ASSERT_EQ(r.planned_ends.size(), runs[k]);
      for (std::size_t i = 0; i < runs[k]; ++i) {
        EXPECT_EQ(r.planned_runs[i].key, r.explicit_blocks->hashes[i]);
        EXPECT_EQ(r.planned_runs[i].first, 0);
        EXPECT_EQ(r.planned_runs[i].count, i + 1 < runs[k] ? 32 : last_run[k]);
        EXPECT_EQ(r.planned_ends[i],
                  static_cast<std::int64_t>(32 * i) + (i + 1 < runs[k] ? 32 : last_run[k]));
      }
      ++k;
    }
  }
  EXPECT_EQ(k, 4u);
}

// Planning that would pass the bound plans nothing. (A block size that
// does not divide the trace's 512, 48 say, is planned like any other:
// BlockHashTest.FromTraceNamesBlocksByTheTraceBlockTheyEndIn.)
TEST(WorkloadTest, BlockRunsAreNotPlannedPastTheBound) {
  const Scenario s = Parse(R"({"model": "llama-3.1-8b", "trace": {"file": ")" +
                           Trace("mooncake_small.jsonl") + R"("}})");
  for (const Tokens block_size : {16, 48}) {
    auto w = PrepareWorkload(s, kMaxWorkloadCacheBytes);
    ASSERT_TRUE(w.ok() && w->has_value());
    PreparedWorkload& p = **w;
    const std::int64_t before = p.bytes;
    EXPECT_EQ(PlanBlockRuns(&p, block_size, before), 0);
    EXPECT_EQ(p.bytes, before);
    for (const PreparedTask& t : p.tasks) {
      for (const Request& r : t.requests) {
        EXPECT_EQ(r.planned_block_size, 0);
        EXPECT_TRUE(r.planned_runs.empty());
      }
    }
  }
}

// Runs at another block size than the one a shared workload was planned at
// (a sweep over block sizes) name their prompts themselves, and give what a
// plain run gives.
TEST(WorkloadTest, ARunAtAnotherBlockSizeThanThePlannedOneGivesThePlainRun) {
  const std::string head = R"({"model": "llama-3.1-8b", "trace": {"file": ")" +
                           Trace("mooncake_small.jsonl") +
                           R"(", "release": "recorded"}, "prefix_cache": {"block_size": )";
  WorkloadCache shared;
  for (const char* block_size : {"16", "32", "16"}) {
    SCOPED_TRACE(std::string("block size ") + block_size);
    const Scenario s = Parse(head + block_size + "}}");
    auto plain = RunScenario(s);
    ASSERT_TRUE(plain.ok()) << plain.error().message();
    auto run = RunScenario(s, shared);
    ASSERT_TRUE(run.ok()) << run.error().message();
    ExpectSameOutcome(*run, *plain);
  }
  auto w = shared.Get(Parse(head + "32}}"));
  ASSERT_TRUE(w.ok() && *w != nullptr);
  EXPECT_EQ((*w)->tasks.front().requests.front().planned_block_size, 16);  // the first run's
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
