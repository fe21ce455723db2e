#include "kvbill/scenario/budget.h"

#include <array>

#include "kvbill/metrics/summary.h"

namespace kvbill {
namespace {

constexpr std::array<const char*, 4> kSummaries = {"cost_per_task_usd", "kv_read_bytes_per_task",
                                                   "completion_s", "ttft_s"};
constexpr std::array<const char*, 5> kStats = {"mean", "p50", "p90", "p99", "max"};
constexpr std::array<const char*, 3> kScalars = {"hit_rate", "cost_usd", "preemptions"};

double Pick(const Summary& s, const std::string& stat) {
  if (stat == "mean") return s.mean;
  if (stat == "p50") return s.p50;
  if (stat == "p90") return s.p90;
  if (stat == "p99") return s.p99;
  return s.max;
}

}  // namespace

bool IsBudgetMetric(const std::string& name) {
  for (const char* s : kScalars) {
    if (name == s) return true;
  }
  for (const char* base : kSummaries) {
    for (const char* stat : kStats) {
      if (name == std::string(base) + "." + stat) return true;
    }
  }
  return false;
}

std::string BudgetMetricChoices() {
  std::string out;
  for (const char* base : kSummaries)
    out += std::string(out.empty() ? "" : ", ") + base + ".{mean,p50,p90,p99,max}";
  for (const char* s : kScalars) out += std::string(", ") + s;
  return out;
}

std::vector<std::string> BudgetMetricNames() {
  std::vector<std::string> names;
  for (const char* base : kSummaries) {
    for (const char* stat : kStats) names.push_back(std::string(base) + "." + stat);
  }
  for (const char* s : kScalars) names.push_back(s);
  return names;
}

bool IsApiBudgetMetric(const std::string& name) {
  return IsBudgetMetric(name) &&
         (name == "hit_rate" || name == "cost_usd" || name.starts_with("cost_per_task_usd."));
}

Status CheckBudgetsApply(const Scenario& scenario) {
  if (!scenario.pricing) return OkStatus();
  for (const Budget& b : scenario.budgets) {
    if (!IsApiBudgetMetric(b.metric)) {
      return Error(scenario.source + "#/budgets/" + b.metric +
                   ": not measured for a scenario with \"pricing\" (API mode measures "
                   "cost_per_task_usd.*, hit_rate, cost_usd)");
    }
  }
  return OkStatus();
}

RunMetrics MetricsOf(const ScenarioOutcome& o) {
  RunMetrics m;
  m.summary = o.summary;
  SummaryBuilder kv, completion;
  for (const TaskMetrics& t : o.tasks) {
    kv.Add(static_cast<double>(t.kv_read_bytes));
    completion.Add(t.completion_s);
  }
  m.kv_read_bytes_per_task = kv.Build();
  m.completion_s = completion.Build();
  if (o.api) {
    m.api = true;
    m.api_predicted = o.api->replay.predicted;
  }
  return m;
}

double MetricValue(const RunMetrics& m, const std::string& metric) {
  if (metric == "hit_rate") return m.summary.hit_rate;
  if (metric == "cost_usd") return static_cast<double>(m.summary.cost_usd);
  if (metric == "preemptions") return static_cast<double>(m.summary.preemptions);
  const std::size_t dot = metric.find('.');
  const std::string base = metric.substr(0, dot), stat = metric.substr(dot + 1);
  if (base == "cost_per_task_usd") return Pick(m.summary.cost_per_task_usd, stat);
  if (base == "ttft_s") return Pick(m.summary.ttft_s, stat);
  return Pick(base == "completion_s" ? m.completion_s : m.kv_read_bytes_per_task, stat);
}

double MetricValue(const ScenarioOutcome& o, const std::string& metric) {
  return MetricValue(MetricsOf(o), metric);
}

std::vector<BudgetCheck> CheckBudgets(const std::vector<Budget>& budgets,
                                      const ScenarioOutcome& outcome) {
  std::vector<BudgetCheck> out;
  for (const Budget& b : budgets) {
    BudgetCheck c;
    c.budget = b;
    c.actual = MetricValue(outcome, b.metric);
    c.ok = (!b.max || c.actual <= *b.max) && (!b.min || c.actual >= *b.min);
    out.push_back(c);
  }
  return out;
}

}  // namespace kvbill
