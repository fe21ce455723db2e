// From a Scenario to a simulation: the engine configuration, the tasks (read
// from the trace file or generated) and the requests the context policy
// plans for them. A scenario with "pricing" is billed through the API
// replay instead (api_run.h); RunScenario runs either mode.
#ifndef KVBILL_SCENARIO_RUN_H_
#define KVBILL_SCENARIO_RUN_H_

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

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_RUN_H_
