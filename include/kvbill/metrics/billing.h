// Billing rules: who pays for the GPU time in which nothing ran (idle).
//
// The engine bills a run as dedicated GPUs are billed (simulator.h): the
// tasks pay for every iteration they were in, and the time with nothing
// running is idle, a line of its own; tasks plus idle equal the rental
// bill. The other rules re-bill the same run (docs/billing.md#idle-time):
//   dedicated  as the engine bills it (the default);
//   busy       a shared or serverless pool: only busy GPU time is billed,
//              the idle time costs the user nothing (bill = tasks);
//   amortized  the idle time is spread over the tasks in proportion to
//              their busy GPU-seconds: task i pays its own cost plus
//              idle x gpu_seconds_i / sum of gpu_seconds, so the tasks add
//              up to the dedicated bill (to rounding) and idle is 0.
// Pure: no I/O.
#ifndef KVBILL_METRICS_BILLING_H_
#define KVBILL_METRICS_BILLING_H_

#include <string_view>
#include <vector>

#include "kvbill/metrics/task_metrics.h"
#include "kvbill/util/result.h"

namespace kvbill {

// "dedicated", "busy" or "amortized"; error otherwise.
Result<BillingRule> ParseBillingRule(std::string_view name);
std::string_view BillingName(BillingRule rule);

// Adds to each task its share of `idle_usd` (TaskMetrics::idle_share_usd
// and cost_usd), in proportion to its gpu_seconds; when no task has any,
// in equal shares. No tasks: nothing.
void AmortizeIdle(long double idle_usd, std::vector<TaskMetrics>* tasks);

// Re-bills a run's tasks and summary, billed as dedicated, under `rule`:
// summary.billing, idle_gpu_usd (what the idle time costs at the rental
// price, whoever pays) and idle_usd (billed on a line of its own), cost_usd
// (the bill), task_cost_usd and cost_per_task_usd; the tasks' cost_usd
// (amortized). `tasks` are all the run's tasks.
void ApplyBilling(BillingRule rule, std::vector<TaskMetrics>* tasks, RunSummary* summary);

}  // namespace kvbill

#endif  // KVBILL_METRICS_BILLING_H_
