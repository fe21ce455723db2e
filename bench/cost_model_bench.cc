// The engine's time under the calibrated operator model against the
// spec-sheet roofline, on the same workloads (issue: the calibrated model may
// cost at most 1.2x the roofline's engine time). Results: docs/performance.md
// ("Cost models"); tools/bench --only costmodel prints the ratios.
#include <benchmark/benchmark.h>

#include "kvbill/scenario/run.h"

namespace kvbill {
namespace {

struct Prepared {
  SimulationConfig config;
  std::vector<Task> tasks;
  std::vector<std::vector<Request>> requests;
  std::int64_t request_count = 0;
  bool ok = false;
};

// `roofline` pins the roofline through its efficiency keys; without them the
// scenario runs the engine's calibrated profile.
Prepared Prepare(const std::string& body, bool roofline) {
  Prepared p;
  const std::string deployment = roofline
                                     ? R"("bandwidth_efficiency": 0.65, "compute_efficiency": 0.6)"
                                     : R"("engine": "vllm")";
  auto s = ParseScenario("{" + body + R"(, "deployment": {"replicas": 4, )" + deployment + "}}",
                         "bench.json");
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

const char* const kWorkloads[] = {
    // 0: 64 generated coding agents on a dense model
    R"("model": "qwen3-8b", "trace": {"generator": "coding-agent", "tasks": 64}, "seed": 3)",
    // 1: the same on a MoE model with sliding-window layers
    R"("model": "gpt-oss-20b", "trace": {"generator": "coding-agent", "tasks": 64}, "seed": 3)",
    // 2: chat sessions, many short requests
    R"("model": "llama-3.1-8b", "trace": {"generator": "chat", "tasks": 400}, "seed": 3)",
};

const Prepared& Workload(int which, bool roofline) {
  static const Prepared all[3][2] = {
      {Prepare(kWorkloads[0], false), Prepare(kWorkloads[0], true)},
      {Prepare(kWorkloads[1], false), Prepare(kWorkloads[1], true)},
      {Prepare(kWorkloads[2], false), Prepare(kWorkloads[2], true)},
  };
  return all[which][roofline ? 1 : 0];
}

// Args: workload (above), model (0 calibrated, 1 roofline).
void BM_SimulateCostModel(benchmark::State& state) {
  const Prepared& p = Workload(static_cast<int>(state.range(0)), state.range(1) == 1);
  if (!p.ok) {
    state.SkipWithError("workload did not build");
    return;
  }
  std::int64_t steps = 0;
  for (auto _ : state) {
    auto result = Simulate(p.config, p.tasks, p.requests);
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
}

BENCHMARK(BM_SimulateCostModel)
    ->ArgNames({"workload", "roofline"})
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kvbill
