// kvbill check: exit 1 when a scenario breaks one of its budgets (for CI).
#include <iostream>
#include <sstream>

#include "cli/cli_util.h"
#include "kvbill/report/table.h"
#include "kvbill/scenario/budget.h"

namespace kvbill::cli {
namespace {

constexpr char kUsage[] =
    "usage: kvbill check --scenario S.json [--trace T]\n\n"
    "Simulates the scenario and compares the run with its \"budgets\" block, e.g.\n"
    "  \"budgets\": {\"cost_per_task_usd.p90\": {\"max\": 0.12}, \"hit_rate\": {\"min\": 0.9}}\n"
    "Exit status 0 when every budget holds, 1 with a table of what broke, 2 on bad input.\n"
    "A scenario with \"pricing\" is billed at an API provider's rules and list prices;\n"
    "its budgets may be cost_per_task_usd.*, hit_rate, cost_usd and the warnings\n"
    "warnings.pricing_model_unused and warnings.policy_no_effect.\n"
    "A run that serves no request breaks every budget but warnings.* (nothing was\n"
    "measured); the run's warnings follow the table.\n"
    "Metrics: docs/ci.md.\n";

std::string Show(double v) {
  if (v != 0 && (v < 1e-3 || v >= 1e9)) {
    std::ostringstream s;
    s.precision(4);
    s << v;
    return s.str();
  }
  return FormatFixed(v, 4);
}

}  // namespace

int RunCheck(const Args& args) {
  po::options_description options("options");
  std::string scenario_path, trace;
  options.add_options()("scenario,s", FileValue(&scenario_path)->required(),
                        "scenario JSON file with budgets")(
      "trace,t", FileValue(&trace), "trace file, replacing the scenario's trace");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "check", kUsage, options, vm)) return *stop;
  auto scenario = LoadScenario(scenario_path);
  if (!scenario) return ReportError("check", scenario.error());
  if (scenario->budgets.empty()) {
    return ReportError("check", Error(scenario_path + "#/budgets: missing (nothing to check)"));
  }
  if (auto s = CheckBudgetsApply(*scenario); !s) return ReportError("check", s.error());
  if (!trace.empty()) {
    scenario->trace.file = trace;
    scenario->trace.generator.clear();
    scenario->trace.format = "auto";
  }
  auto outcome = RunScenario(*scenario);
  if (!outcome) return ReportError("check", outcome.error());
  RunMetrics metrics = MetricsOf(*outcome);
  metrics.warnings = RunWarnings(*scenario, *outcome);
  const std::vector<BudgetCheck> checks = CheckBudgets(scenario->budgets, metrics);
  Table t({"metric", "limit", "actual", "verdict"});
  int broken = 0;
  for (const BudgetCheck& c : checks) {
    std::string limit;
    if (c.budget.max) limit += "<= " + Show(*c.budget.max);
    if (c.budget.min) limit += std::string(limit.empty() ? "" : ", ") + ">= " + Show(*c.budget.min);
    t.AddRow({c.budget.metric, limit, c.not_measured.empty() ? Show(c.actual) : "-",
              c.ok                     ? "ok"
              : c.not_measured.empty() ? "BROKEN"
                                       : "BROKEN (" + c.not_measured + ")"});
    broken += c.ok ? 0 : 1;
  }
  std::cout << "scenario " << scenario->name << ": "
            << checks.size() - static_cast<std::size_t>(broken) << " of " << checks.size()
            << " budgets hold\n\n"
            << t.ToText();
  // The run's warnings: a budget that holds on an overloaded or
  // uncalibrated run holds on numbers the run itself doubts.
  if (!metrics.warnings.empty()) std::cout << "\n";
  for (const RunWarning& w : metrics.warnings) {
    std::cout << "warning [" << w.code << "]: " << w.message << "\n";
  }
  return broken > 0 ? 1 : 0;
}

}  // namespace kvbill::cli
