// From a Scenario to a simulation: the engine configuration, the tasks (read
// from the trace file or generated) and the requests the context policy
// plans for them.
#ifndef KVBILL_SCENARIO_RUN_H_
#define KVBILL_SCENARIO_RUN_H_

#include <vector>

#include "kvbill/engine/simulator.h"
#include "kvbill/metrics/task_metrics.h"
#include "kvbill/scenario/scenario.h"
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
  SimulationResult result;
  std::vector<TaskMetrics> tasks;
  RunSummary summary;
};

// Loads, plans, simulates and aggregates.
Result<ScenarioOutcome> RunScenario(const Scenario& scenario);

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_RUN_H_
