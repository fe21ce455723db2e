#include "kvbill/metrics/billing.h"

#include <string>

namespace kvbill {

Result<BillingRule> ParseBillingRule(std::string_view name) {
  if (name == "dedicated") return BillingRule::kDedicated;
  if (name == "busy") return BillingRule::kBusy;
  if (name == "amortized") return BillingRule::kAmortized;
  return Error("unknown billing \"" + std::string(name) + "\" (dedicated, busy or amortized)");
}

std::string_view BillingName(BillingRule rule) {
  switch (rule) {
    case BillingRule::kBusy:
      return "busy";
    case BillingRule::kAmortized:
      return "amortized";
    case BillingRule::kDedicated:
      break;
  }
  return "dedicated";
}

void AmortizeIdle(long double idle_usd, std::vector<TaskMetrics>* tasks) {
  if (tasks->empty()) return;
  long double busy = 0;
  for (const TaskMetrics& t : *tasks) busy += t.gpu_seconds;
  for (TaskMetrics& t : *tasks) {
    const long double share = busy > 0 ? idle_usd * t.gpu_seconds / busy
                                       : idle_usd / static_cast<long double>(tasks->size());
    t.idle_share_usd = share;
    t.cost_usd += share;
  }
}

void ApplyBilling(BillingRule rule, std::vector<TaskMetrics>* tasks, RunSummary* s) {
  s->billing = rule;
  s->idle_gpu_usd = s->idle_usd;
  if (rule == BillingRule::kDedicated) return;
  const long double idle = s->idle_usd;
  s->idle_usd = 0;
  if (rule == BillingRule::kBusy) {
    s->cost_usd = s->task_cost_usd;
    return;
  }
  AmortizeIdle(idle, tasks);
  const RunSummary sums = SumTasks(*tasks);
  s->task_cost_usd = sums.task_cost_usd;
  s->cost_per_task_usd = sums.cost_per_task_usd;
}

}  // namespace kvbill
