// The engine with event skipping against the step-by-step reference, in
// simulated requests per wall-clock second. Trace reading and planning are
// done once, outside the timed loop. Results: docs/performance.md ("Engine").
#include <benchmark/benchmark.h>

#include <filesystem>

#include "kvbill/scenario/run.h"
#include "kvbill/scenario/sweep.h"
#include "kvbill/scenario/workload.h"

namespace kvbill {
namespace {

struct Prepared {
  SimulationConfig config;
  std::vector<Task> tasks;
  std::vector<std::vector<Request>> requests;
  std::int64_t request_count = 0;
  bool ok = false;
};

Prepared Prepare(const std::string& json) {
  Prepared p;
  auto s = ParseScenario(json, "bench.json");
  if (!s) return p;
  auto config = BuildSimulationConfig(*s);
  auto tasks = LoadScenarioTasks(*s);
  if (!config || !tasks) return p;
  auto requests = PlanRequests(*s, *tasks);
  if (!requests) return p;
  p.config = *config;
  p.tasks = std::move(*tasks);
  p.requests = std::move(*requests);
  for (const auto& r : p.requests) p.request_count += static_cast<std::int64_t>(r.size());
  p.ok = true;
  return p;
}

std::string Mooncake(int replicas, int block_size = 512) {
  return R"({"model": "llama-3.1-8b", "deployment": {"replicas": )" + std::to_string(replicas) +
         R"(}, "prefix_cache": {"block_size": )" + std::to_string(block_size) +
         R"(}, "trace": {"file": ")" + std::string(KVBILL_SHARED_DATA_DIR) +
         R"(/traces/mooncake/conversation_trace.jsonl", "release": "recorded"}})";
}

const Prepared& Workload(int which) {
  static const Prepared mooncake1 = Prepare(Mooncake(1));
  static const Prepared mooncake4 = Prepare(Mooncake(4));
  static const Prepared mooncake16 = Prepare(Mooncake(16));
  static const Prepared mooncake16_small_blocks = Prepare(Mooncake(16, 16));
  static const Prepared agents = Prepare(
      R"({"model": "qwen3-8b", "kv_format": "fp8",
          "trace": {"generator": "coding-agent", "tasks": 48}, "seed": 7})");
  static const Prepared one_agent = Prepare(
      R"({"model": "qwen3-8b", "kv_format": "fp8",
          "trace": {"generator": "coding-agent", "tasks": 1}, "seed": 7})");
  switch (which) {
    case 0:
      return mooncake1;
    case 1:
      return mooncake4;
    case 2:
      return agents;
    case 3:
      return one_agent;
    case 4:
      return mooncake16;
    default:
      return mooncake16_small_blocks;
  }
}

void BM_Simulate(benchmark::State& state) {
  const Prepared& p = Workload(static_cast<int>(state.range(0)));
  if (!p.ok) {
    state.SkipWithError("workload not available (shared data missing?)");
    return;
  }
  SimulationConfig config = p.config;
  config.step_mode = state.range(1) == 1;
  std::int64_t steps = 0;
  for (auto _ : state) {
    auto result = Simulate(config, p.tasks, p.requests);
    if (!result) {
      state.SkipWithError(result.error().message().c_str());
      return;
    }
    steps = result->steps_advanced;
    benchmark::DoNotOptimize(result->bill_usd);
  }
  state.counters["requests_per_s"] = benchmark::Counter(
      static_cast<double>(p.request_count), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["engine_steps"] = static_cast<double>(steps);
  // Wall time per engine step (one scheduler pass over the batch).
  state.counters["s_per_step"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

// Args: workload (0 Mooncake conversation on 1 replica, 1 on 4 replicas,
// 2 = 48 generated coding agents, 3 = one generated coding agent: a small
// Simulate whose s_per_step is the cost of one engine iteration), 4 = the
// Mooncake conversation on 16 replicas, which keep up with it: median time to
// first token 0.19 s against 3,100 s on one replica), 5 = the same with
// vLLM's default 16-token blocks instead of 512 (the cache's cost follows
// the runs a prompt has, not its blocks: docs/engine.md, "Block runs"), mode
// (0 event skipping, 1 step).
BENCHMARK(BM_Simulate)
    ->ArgNames({"workload", "step"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Args({2, 0})
    ->Args({2, 1})
    ->Args({3, 0})
    ->Args({3, 1})
    ->Args({4, 0})
    ->Args({4, 1})
    ->Args({5, 0})
    ->Args({5, 1})
    ->Unit(benchmark::kMillisecond);

// One sweep point of the Mooncake conversation trace on 16 replicas with
// 16-token blocks (BM_Simulate's workload 5) taken apart, to set beside
// BM_Simulate/workload:5/step:0 in one run: part 0 makes the point (edit the
// scenario text, parse and check it), 1 builds its engine configuration, 2
// runs it through the prepared workload with its aggregation (what `sweep`
// does per point after the first), 3 all of it as RunSweep's worker does.
void BM_SweepPoint(benchmark::State& state) {
  const std::string text = R"({"model": "llama-3.1-8b", "deployment": {"replicas": 16},
      "prefix_cache": {"block_size": 16}, "trace": {"file": ")" +
                           std::string(KVBILL_SHARED_DATA_DIR) +
                           R"(/traces/mooncake/conversation_trace.jsonl", "release": "recorded"},
      "sweep": {"/deployment/usd_per_gpu_hour": [1.5, 2.5]}})";
  auto plan = PlanSweep(text, "bench.json");
  if (!plan) {
    state.SkipWithError("workload not available (shared data missing?)");
    return;
  }
  auto first = MakeSweepPoint(*plan, 0);
  WorkloadCache workloads;
  RunObserver observer;
  if (!first || !RunScenario(first->scenario, workloads, observer)) {
    state.SkipWithError("sweep point failed");
    return;
  }
  const int part = static_cast<int>(state.range(0));
  for (auto _ : state) {
    if (part == 0 || part == 3) {
      auto point = MakeSweepPoint(*plan, 1);
      benchmark::DoNotOptimize(point);
      if (part == 3) {
        auto run = RunScenario(point->scenario, workloads, observer);
        benchmark::DoNotOptimize(run);
      }
    } else if (part == 1) {
      auto config = BuildSimulationConfig(first->scenario);
      benchmark::DoNotOptimize(config);
    } else {
      auto run = RunScenario(first->scenario, workloads, observer);
      benchmark::DoNotOptimize(run);
    }
  }
}
BENCHMARK(BM_SweepPoint)->ArgName("part")->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kvbill
