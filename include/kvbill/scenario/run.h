// From a Scenario to a simulation: the engine configuration, the tasks (read
// from the trace file or generated) and the requests the context policy
// plans for them. A scenario with "pricing" is billed through the API
// replay instead (api_run.h); RunScenario runs either mode.
#ifndef KVBILL_SCENARIO_RUN_H_
#define KVBILL_SCENARIO_RUN_H_

#include <functional>
#include <optional>
#include <vector>

#include "kvbill/engine/simulator.h"
#include "kvbill/metrics/task_metrics.h"
#include "kvbill/scenario/api_run.h"
#include "kvbill/scenario/scenario.h"
#include "kvbill/scenario/workload.h"
#include "kvbill/trace/trace.h"

namespace kvbill {

// Errors name the scenario file and JSON pointer of the field at fault.
Result<SimulationConfig> BuildSimulationConfig(const Scenario& scenario);

// The tokens an iteration computes: engine.max_num_batched_tokens, else the
// scenario's engine's default for the GPU and degree (DefaultEngineLimits).
Tokens ScenarioTokenBudget(const Scenario& scenario, const GpuSpec& gpu);

// The memory fraction SGLang derives when the scenario sets none
// (SglangMemoryFraction: the GPU, the degree, the token budget, its CUDA
// graphs and an EAGLE draft's reserve), as a run takes it.
double SglangScenarioMemoryFraction(const Scenario& scenario, const GpuSpec& gpu);

// All tasks of the scenario's trace, in file order (or generated).
Result<std::vector<Task>> LoadScenarioTasks(const Scenario& scenario);

// The requests of every task under the scenario's context policy.
Result<std::vector<std::vector<Request>>> PlanRequests(const Scenario& scenario,
                                                       const std::vector<Task>& tasks);

struct ScenarioOutcome {
  SimulationResult result;  // the engine's; empty in API mode
  std::vector<TaskMetrics> tasks;
  RunSummary summary;
  std::optional<ApiPricingRun> api;  // set in API mode (a scenario with "pricing")
};

// Loads, plans, simulates and aggregates. With "pricing": loads, plans and
// replays through the provider's cache at the bundled list prices
// (RunApiPricing), tasks and summary mapped as api_run.h says; errors name
// the scenario's "#/pricing".
Result<ScenarioOutcome> RunScenario(const Scenario& scenario);

// One of many runs in a process (sweep points, compare's levers): the
// workload comes from `workloads` (read and planned once per key, or
// streamed from the trace when above the ceiling; a trace out of arrival
// order is then read whole, as RunScenario does), and metrics are folded
// from the records as requests finish (RunAggregator), none kept:
// result.requests is empty. The same tasks, summary and errors as
// RunScenario; a streamed trace's reading errors come when the run reaches
// them. API mode: as RunScenario.
Result<ScenarioOutcome> RunScenario(const Scenario& scenario, WorkloadCache& workloads);

// Where a streamed run's results go as they come.
struct RunObserver {
  // Each task's metrics, in input order (a task with no request is skipped,
  // as AggregateTasks skips it).
  std::function<void(const TaskMetrics&)> on_task;
  // Each request's record, in finishing order; unset: not asked for.
  std::function<void(const RequestRecord&)> on_request;
  // The trace turned out not to be in arrival order after some results had
  // come: forget them, the whole run comes again (from the trace read whole).
  std::function<void()> on_restart;
};

struct StreamedRun {
  SimulationTotals totals;
  RunSummary summary;
  bool streamed = true;  // false: the trace was out of arrival order and was read whole
};

// `kvbill simulate`'s run: the engine over the scenario's trace read and
// planned as the simulation reaches each task (TraceFeed), each finished
// task's metrics and each record handed to `observer` and not kept, so
// memory follows the tasks in flight, not the trace. The tasks, summary and
// totals are RunScenario's, bit for bit. The trace must be in arrival order;
// when a task arrives before the one before it, on_restart is called and
// the run is made again from the trace read whole (memory as RunScenario's).
// Errors: RunScenario's; a trace's reading errors come when the run reaches
// them. Precondition: no "pricing" (API mode is not streamed).
Result<StreamedRun> StreamScenario(const Scenario& scenario, const RunObserver& observer);

// RunScenario(scenario, workloads) handing each task's metrics to
// `observer` instead of keeping them (a sweep's row needs only their
// distributions). Precondition: no "pricing".
Result<StreamedRun> RunScenario(const Scenario& scenario, WorkloadCache& workloads,
                                const RunObserver& observer);

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_RUN_H_
