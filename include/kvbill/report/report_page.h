// The report page: one self-contained HTML document (inline CSS and SVG, no
// scripts, no external resources) that shows what a scenario's tasks cost and
// which lever makes them cheaper, with the numbers behind every chart in
// tables. docs/report.md describes each section.
//
// Sections, in order: the run's summary; KV memory against context with the
// GPU line (the scenario's KV format and the narrower fp8 / nvfp4); cumulative
// KV bytes read and dollars against request number for the task with the most
// requests (first in input order on ties), baseline and each lever; cost per
// task by lever (bar chart); prefix-cache hit rate against cache capacity;
// cost per task against requests per task with the power-law fit (growth.h);
// cost per token against context (breakeven.h); when loads were asked for,
// each lever's saving per task against the load (trace.load); and with a
// plan, its feasible candidates' $/task against TTFT p90 (plan_chart.h).
//
// Building the page is pure: the same runs give the same bytes (no clock, no
// dates, numbers printed without the locale). RunReport does the simulating.
#ifndef KVBILL_REPORT_REPORT_PAGE_H_
#define KVBILL_REPORT_REPORT_PAGE_H_

#include <optional>
#include <string>
#include <vector>

#include "kvbill/report/plan_chart.h"
#include "kvbill/scenario/levers.h"
#include "kvbill/scenario/run.h"
#include "kvbill/scenario/scenario.h"
#include "kvbill/util/result.h"

namespace kvbill {

// One run of the scenario with prefix caching on and its capacity set.
struct CapacityRun {
  Tokens capacity_tokens = 0;  // ScenarioPrefixCache::kUnlimited: never evict
  std::optional<ScenarioOutcome> run;
  std::string error;                 // why it did not run, otherwise empty
  std::vector<RunWarning> warnings;  // the run's (pool_beyond_memory, overloaded, ...)
};

// The baseline and every lever at one load factor (trace.load), as
// `kvbill compare --load` runs them: outcomes[0] is the baseline at that
// load, then Levers(scenario) in that order.
struct LoadRun {
  double load = 1;
  std::vector<LeverOutcome> outcomes;
};

struct ReportRuns {
  Scenario scenario;  // the baseline as parsed
  ScenarioOutcome baseline;
  std::vector<RunWarning> warnings;     // the baseline's (EngineRunWarnings)
  std::vector<LeverOutcome> levers;     // Levers(scenario), in that order
  std::vector<CapacityRun> capacities;  // ReportCapacities(), in that order
  // What an output token sells for, $ per million: draws the price line and
  // break-even markers on the cost-per-token chart; nullopt: curves only.
  std::optional<double> price_usd_per_mtok;
  // One per load asked for, in that order; empty: no load chart.
  std::vector<LoadRun> loads;
  // A `kvbill plan` run of the workload (`kvbill report --plan`): adds the
  // plan section, its Pareto chart and the feasible candidates' table.
  std::optional<PlanChartData> plan;
};

// The capacities of the hit-rate chart, in tokens: 64k, 128k, 256k, 512k, 1M, 4M, 16M
// (powers of two) and ScenarioPrefixCache::kUnlimited.
std::vector<Tokens> ReportCapacities();

// The variant for one capacity: prefix caching on, capacity_tokens set
// ("unlimited" for kUnlimited). Named like "256k" or "unlimited".
Lever CapacityLever(Tokens capacity_tokens);

// Runs the baseline, every lever and every capacity of the scenario text
// (read from `source`), on up to `jobs` threads; and, for each of `loads`
// (positive factors), the baseline and every lever with trace.load set to
// it. Error: the scenario does not parse or a baseline does not run;
// variants that fail are kept with their error. The result does not depend
// on `jobs`.
Result<ReportRuns> RunReport(const std::string& scenario_text, const std::string& source, int jobs,
                             const std::vector<double>& loads = {});

// The HTML page for `runs`. Error: the scenario's model, GPU or formats do not
// resolve, or a chart cannot be drawn.
Result<std::string> BuildReportPage(const ReportRuns& runs);

}  // namespace kvbill

#endif  // KVBILL_REPORT_REPORT_PAGE_H_
