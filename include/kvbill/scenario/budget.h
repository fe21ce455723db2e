// Budgets: limits on the metrics of a run, checked by `kvbill check`.
//
// Metrics (all per run of a scenario):
//   cost_per_task_usd.{mean,p50,p90,p99,max}   dollars each task paid
//   kv_read_bytes_per_task.{mean,p50,p90,p99,max}
//   completion_s.{mean,p50,p90,p99,max}         first release to last finish of a task
//   ttft_s.{mean,p50,p90,p99,max}               time to first token, per request
//   tpot_s.{mean,p50,p90,p99,max}               time per output token after the
//                                               first, per request of 2+ output tokens
//   queue_s.{mean,p50,p90,p99,max}              queueing delay (release to admission),
//                                               per request
//   hit_rate                                    cached / prompt tokens
//   cost_usd                                    the whole bill, idle included
//   preemptions                                 total
//   warnings.<code>                             how many warnings of that code
//                                               the run raised (warnings.h)
// A scenario with "pricing" (API mode, api_run.h) measures only
// cost_per_task_usd.*, hit_rate, cost_usd and the warnings an API run
// raises (ApiBudgetMetricChoices).
#ifndef KVBILL_SCENARIO_BUDGET_H_
#define KVBILL_SCENARIO_BUDGET_H_

#include <string>
#include <vector>

#include "kvbill/scenario/run.h"
#include "kvbill/scenario/scenario.h"
#include "kvbill/scenario/warnings.h"

namespace kvbill {

bool IsBudgetMetric(const std::string& name);
// "cost_per_task_usd.mean, ..., preemptions" for error messages.
std::string BudgetMetricChoices();

// Every metric name IsBudgetMetric accepts, in BudgetMetricChoices order.
std::vector<std::string> BudgetMetricNames();

// Whether the API mode measures `metric` (the list above).
bool IsApiBudgetMetric(const std::string& name);

// What IsApiBudgetMetric accepts, for messages and help:
// "cost_per_task_usd.{mean,p50,p90,p99,max}", "hit_rate", "cost_usd", then
// "warnings.<code>" for each of ApiWarningCodes().
std::vector<std::string> ApiBudgetMetricChoices();

// Error when a budget of an API-mode scenario names a metric only the engine
// measures: "s.json#/budgets/ttft_s.p90: not measured for a scenario with
// \"pricing\" (API mode measures cost_per_task_usd.{mean,p50,p90,p99,max},
// hit_rate, cost_usd, warnings.context_limit, ...)".
Status CheckBudgetsApply(const Scenario& scenario);

// What the metrics above need of a run, without its per-task lists: the
// summary, the two per-task distributions they name, the API usage.
struct RunMetrics {
  RunSummary summary;
  Summary kv_read_bytes_per_task;
  Summary completion_s;
  bool api = false;
  CallUsage api_predicted;           // API mode: the replay's predicted usage
  std::vector<RunWarning> warnings;  // the run's (engine mode; empty unless set)
};
RunMetrics MetricsOf(const ScenarioOutcome& outcome);

// Why `metric` has no value in this run, or "" when it has one: a run that
// served no request measured nothing (its costs, latencies and hit rate are
// 0 over nothing), and a latency summary without samples (TPOT when no
// served request had a second output token) is no figure.
// warnings.<code> always has one (the run's count).
std::string NotMeasured(const RunMetrics& metrics, const std::string& metric);

// The value of `metric`. Precondition: IsBudgetMetric(metric).
double MetricValue(const RunMetrics& metrics, const std::string& metric);
double MetricValue(const ScenarioOutcome& outcome, const std::string& metric);

struct BudgetCheck {
  Budget budget;
  double actual = 0;
  bool ok = true;
  // Why the metric has no value (a run that served no request: its costs,
  // latencies and hit rate are 0 over nothing); such a budget is broken.
  std::string not_measured;
};

// Every budget of the scenario against the outcome, in the scenario's order.
// The outcome's form counts no warnings; give RunMetrics with `warnings`
// set for budgets on warnings.<code>.
std::vector<BudgetCheck> CheckBudgets(const std::vector<Budget>& budgets,
                                      const ScenarioOutcome& outcome);
std::vector<BudgetCheck> CheckBudgets(const std::vector<Budget>& budgets,
                                      const RunMetrics& metrics);

// The metrics a scenario's "slo" may name: {ttft_s,tpot_s,queue_s,
// completion_s}.{mean,p50,p90,p99,max}, the budgets' names.
std::vector<std::string> SloMetricNames();

struct SloCheck {
  SloTarget target;
  double actual = 0;
  bool held = true;  // actual <= target.max, and measured
  // Why the latency has no value (no request served, or no request with a
  // second output token for TPOT): such a target is not held.
  std::string not_measured;
};
// Every target against the run's summary, in the scenario's order.
std::vector<SloCheck> CheckSlo(const std::vector<SloTarget>& slo, const RunSummary& summary);

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_BUDGET_H_
