#include "kvbill/scenario/budget.h"

#include <algorithm>
#include <array>

#include "kvbill/metrics/summary.h"
#include "kvbill/scenario/warnings.h"

namespace kvbill {
namespace {

constexpr std::array<const char*, 6> kSummaries = {
    "cost_per_task_usd", "kv_read_bytes_per_task", "completion_s", "ttft_s", "tpot_s", "queue_s"};
// The latency metrics a scenario's "slo" may name.
constexpr std::array<const char*, 4> kLatencies = {"ttft_s", "tpot_s", "queue_s", "completion_s"};
constexpr std::array<const char*, 5> kStats = {"mean", "p50", "p90", "p99", "max"};
constexpr std::array<const char*, 3> kScalars = {"hit_rate", "cost_usd", "preemptions"};
// What API mode measures (api_run.h) besides its warnings (ApiWarningCodes).
constexpr const char* kApiSummary = "cost_per_task_usd";
constexpr std::array<const char*, 2> kApiScalars = {"hit_rate", "cost_usd"};

double Pick(const Summary& s, const std::string& stat) {
  if (stat == "mean") return s.mean;
  if (stat == "p50") return s.p50;
  if (stat == "p90") return s.p90;
  if (stat == "p99") return s.p99;
  return s.max;
}

}  // namespace

bool IsBudgetMetric(const std::string& name) {
  if (name.starts_with("warnings.")) {
    const std::vector<std::string>& codes = WarningCodes();
    return std::find(codes.begin(), codes.end(), name.substr(9)) != codes.end();
  }
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
  return out + ", warnings.<code>";
}

std::vector<std::string> BudgetMetricNames() {
  std::vector<std::string> names;
  for (const char* base : kSummaries) {
    for (const char* stat : kStats) names.push_back(std::string(base) + "." + stat);
  }
  for (const char* s : kScalars) names.push_back(s);
  for (const std::string& code : WarningCodes()) names.push_back("warnings." + code);
  return names;
}

std::vector<std::string> SloMetricNames() {
  std::vector<std::string> names;
  for (const char* base : kLatencies) {
    for (const char* stat : kStats) names.push_back(std::string(base) + "." + stat);
  }
  return names;
}

std::vector<SloCheck> CheckSlo(const std::vector<SloTarget>& slo, const RunSummary& summary) {
  RunMetrics m;
  m.summary = summary;
  m.completion_s = summary.completion_s;
  std::vector<SloCheck> out;
  for (const SloTarget& t : slo) {
    SloCheck c{t, MetricValue(m, t.metric), true, NotMeasured(m, t.metric)};
    c.held = c.not_measured.empty() && c.actual <= t.max;
    out.push_back(std::move(c));
  }
  return out;
}

bool IsApiBudgetMetric(const std::string& name) {
  if (!IsBudgetMetric(name)) return false;
  if (name.starts_with(std::string(kApiSummary) + ".")) return true;
  for (const char* s : kApiScalars) {
    if (name == s) return true;
  }
  for (const std::string& code : ApiWarningCodes()) {
    if (name == "warnings." + code) return true;
  }
  return false;
}

std::vector<std::string> ApiBudgetMetricChoices() {
  std::string stats;
  for (const char* stat : kStats) stats += (stats.empty() ? "" : ",") + std::string(stat);
  std::vector<std::string> out = {std::string(kApiSummary) + ".{" + stats + "}"};
  for (const char* s : kApiScalars) out.emplace_back(s);
  for (const std::string& code : ApiWarningCodes()) out.push_back("warnings." + code);
  return out;
}

Status CheckBudgetsApply(const Scenario& scenario) {
  if (!scenario.pricing) return OkStatus();
  for (const Budget& b : scenario.budgets) {
    if (!IsApiBudgetMetric(b.metric)) {
      std::string measured;
      for (const std::string& m : ApiBudgetMetricChoices()) {
        measured += (measured.empty() ? "" : ", ") + m;
      }
      return Error(scenario.source + "#/budgets/" + b.metric +
                   ": not measured for a scenario with \"pricing\" (API mode measures " + measured +
                   ")");
    }
  }
  return OkStatus();
}

RunMetrics MetricsOf(const ScenarioOutcome& o) {
  RunMetrics m;
  m.summary = o.summary;
  SummaryBuilder kv;
  for (const TaskMetrics& t : o.tasks) kv.Add(static_cast<double>(t.kv_read_bytes));
  m.kv_read_bytes_per_task = kv.Build();
  m.completion_s = o.summary.completion_s;
  if (o.api) {
    m.api = true;
    m.api_predicted = o.api->replay.predicted;
  }
  return m;
}

std::string NotMeasured(const RunMetrics& m, const std::string& metric) {
  if (metric.starts_with("warnings.")) return "";
  if (m.summary.requests == 0) return "no request was served";
  const std::string base = metric.substr(0, metric.find('.'));
  if (base == "tpot_s" && m.summary.tpot_s.count == 0) {
    return "no served request had a second output token, the first TPOT measures";
  }
  // A request of no output tokens has no first token (RequestLatencies).
  if (base == "ttft_s" && m.summary.ttft_s.count == 0) {
    return "no served request had an output token, whose arrival TTFT measures";
  }
  return "";
}

double MetricValue(const RunMetrics& m, const std::string& metric) {
  if (metric.starts_with("warnings.")) {
    const std::string code = metric.substr(9);
    return static_cast<double>(std::count_if(m.warnings.begin(), m.warnings.end(),
                                             [&](const RunWarning& w) { return w.code == code; }));
  }
  if (metric == "hit_rate") return m.summary.hit_rate;
  if (metric == "cost_usd") return static_cast<double>(m.summary.cost_usd);
  if (metric == "preemptions") return static_cast<double>(m.summary.preemptions);
  const std::size_t dot = metric.find('.');
  const std::string base = metric.substr(0, dot), stat = metric.substr(dot + 1);
  if (base == "cost_per_task_usd") return Pick(m.summary.cost_per_task_usd, stat);
  if (base == "ttft_s") return Pick(m.summary.ttft_s, stat);
  if (base == "tpot_s") return Pick(m.summary.tpot_s, stat);
  if (base == "queue_s") return Pick(m.summary.queue_s, stat);
  return Pick(base == "completion_s" ? m.completion_s : m.kv_read_bytes_per_task, stat);
}

double MetricValue(const ScenarioOutcome& o, const std::string& metric) {
  return MetricValue(MetricsOf(o), metric);
}

std::vector<BudgetCheck> CheckBudgets(const std::vector<Budget>& budgets,
                                      const ScenarioOutcome& outcome) {
  return CheckBudgets(budgets, MetricsOf(outcome));
}

std::vector<BudgetCheck> CheckBudgets(const std::vector<Budget>& budgets,
                                      const RunMetrics& metrics) {
  std::vector<BudgetCheck> out;
  for (const Budget& b : budgets) {
    BudgetCheck c;
    c.budget = b;
    c.actual = MetricValue(metrics, b.metric);
    c.ok = (!b.max || c.actual <= *b.max) && (!b.min || c.actual >= *b.min);
    // A figure over nothing is no pass (warnings.<code> budgets still count
    // the run's).
    c.not_measured = NotMeasured(metrics, b.metric);
    if (!c.not_measured.empty()) c.ok = false;
    out.push_back(c);
  }
  return out;
}

}  // namespace kvbill
