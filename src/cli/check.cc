// kvbill check: exit 1 when a scenario breaks one of its budgets (for CI).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "kvbill/report/table.h"
#include "kvbill/scenario/budget.h"
#include "kvbill/scenario/warnings.h"

namespace kvbill::cli {
namespace {

// The help. The metrics an API-mode scenario may budget come from the list
// CheckBudgetsApply holds them to, so the two cannot disagree.
std::string Usage() {
  std::string usage =
      "usage: kvbill check --scenario S.json [--trace T] [--format table|json]\n\n"
      "Simulates the scenario and compares the run with its \"budgets\" block, e.g.\n"
      "  \"budgets\": {\"cost_per_task_usd.p90\": {\"max\": 0.12}, \"hit_rate\": {\"min\": 0.9}}\n"
      "Exit status 0 when every budget holds, 1 with a table of what broke, 2 on bad input.\n"
      "A scenario with \"pricing\" is billed at an API provider's rules and list prices;\n"
      "its budgets may be only";
  std::size_t line = usage.size() - usage.rfind('\n') - 1;
  const std::vector<std::string> metrics = ApiBudgetMetricChoices();
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const std::string word = metrics[i] + (i + 1 < metrics.size() ? "," : ".");
    if (line + 1 + word.size() > 80) {
      usage += "\n ";
      line = 1;
    }
    usage += " " + word;
    line += 1 + word.size();
  }
  return usage +
         "\nA run that serves no request breaks every budget but warnings.* (nothing was\n"
         "measured); the run's warnings follow the table.\n"
         "Metrics: docs/ci.md.\n";
}

// A limit as written: a whole number with separators, else the shortest
// decimal that reads back as it.
std::string Limit(double v) {
  if (std::fabs(v) < 9e15 && std::floor(v) == v) {
    return FormatWithSeparators(static_cast<std::int64_t>(v));
  }
  return ShortestDecimal(v);
}

// A measured value: a whole number as one (counts, bytes), else six
// significant digits, more when that would print it as the bound it is
// judged by (0.074141 against a limit of 0.07414 read "0.0741" twice).
std::string Show(double v, const std::vector<double>& bounds) {
  if (std::isfinite(v) && std::fabs(v) < 9e15 && std::floor(v) == v) return Limit(v);
  char buf[64];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    bool clash = false;
    for (double b : bounds) {
      char other[64];
      std::snprintf(other, sizeof other, "%.*g", digits, b);
      clash = clash || (b != v && std::string(buf) == other);
    }
    if (!clash) break;
  }
  return buf;
}

// How far past its bound a broken budget went: "over by 0.0001 (0.14%)",
// "short by 6e-06 (0.0006%)".
std::string Excess(double actual, double bound, bool above) {
  const double by = above ? actual - bound : bound - actual;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", by);
  std::string out = std::string(above ? "over by " : "short by ") + buf;
  if (bound != 0) {
    std::snprintf(buf, sizeof buf, " (%.3g%%)", 100 * by / std::fabs(bound));
    out += buf;
  }
  return out;
}

// A budget's JSON row begins with its metric and limits as written (max,
// min); the verdict's fields follow (docs/ci.md).
nlohmann::ordered_json BudgetRow(const Budget& b) {
  nlohmann::ordered_json row = {{"metric", b.metric}};
  if (b.max) row["max"] = *b.max;
  if (b.min) row["min"] = *b.min;
  return row;
}

}  // namespace

int RunCheck(const Args& args) {
  po::options_description options("options");
  std::string scenario_path, trace, format;
  options.add_options()("scenario,s", FileValue(&scenario_path)->required(),
                        "scenario JSON file with budgets")(
      "trace,t", FileValue(&trace), "trace file, replacing the scenario's trace")(
      "format", po::value(&format)->default_value("table"),
      "table or json (each budget's limits, actual value, ok, and how far it broke)");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "check", Usage(), options, vm)) return *stop;
  if (auto s = CheckChoice("format", format, "table|json"); !s) {
    return ReportError("check", s.error());
  }
  if (auto s = CheckTraceFlag(trace); !s) return ReportError("check", s.error());
  auto scenario = LoadScenario(scenario_path);
  if (!scenario) return ReportError("check", scenario.error());
  if (scenario->budgets.empty()) {
    return ReportError("check",
                       Error(scenario_path + "#/budgets: missing or empty (nothing to check)"));
  }
  if (auto s = CheckBudgetsApply(*scenario); !s) return ReportError("check", s.error());
  if (!trace.empty()) {
    scenario->trace.file = trace;
    scenario->trace.generator.clear();
    scenario->trace.format = "auto";
  }
  // A sweep's points are not checked: the scenario as written is. Said, so
  // a passing check is not read as every point's.
  std::string sweep_note;
  if (!scenario->sweep.empty()) {
    sweep_note = "the scenario's sweep (" + std::to_string(SweepPointCount(scenario->sweep)) +
                 " points) is not checked: check runs the scenario as written, without its "
                 "sweep; check a point by giving it its own scenario";
  }
  auto outcome = RunScenario(*scenario);
  // A vLLM deployment whose pool cannot hold one max_model_len request
  // does not start (check_enough_kv_cache_memory): it serves nothing,
  // whatever the replay measured (SGLang starts and refuses the longer
  // requests instead: pool_context_len).
  const std::string refuses_to_start =
      outcome && !outcome->api ? VllmRefusesToStart(outcome->result) : std::string();
  if ((!outcome && outcome.error().cannot_serve()) || !refuses_to_start.empty()) {
    // The scenario is well formed but its deployment cannot serve the
    // trace (a request past the KV pool, weights that leave no room, a pool
    // vLLM will not start on): a check that fails (exit 1, as "does not
    // fit"), every budget broken, not bad input.
    const std::string why = outcome ? refuses_to_start : outcome.error().message();
    if (format == "json") {
      nlohmann::ordered_json j;
      j["scenario"] = scenario->name;
      j["cannot_serve"] = why;
      j["budgets"] = nlohmann::ordered_json::array();
      for (const Budget& b : scenario->budgets) {
        nlohmann::ordered_json row = BudgetRow(b);  // the shape of a run's rows
        row["actual"] = nullptr;
        row["ok"] = false;
        row["not_measured"] = "the deployment cannot serve the trace";
        j["budgets"].push_back(std::move(row));
      }
      j["held"] = 0;
      j["passed"] = false;  // the exit status: 1
      if (!sweep_note.empty()) j["sweep_not_checked"] = sweep_note;
      j["warnings"] = nlohmann::ordered_json::array();  // nothing ran to warn
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << "scenario " << scenario->name << ": 0 of " << scenario->budgets.size()
                << " budgets hold: the deployment cannot serve the trace\n"
                << why << "\n";
      if (!sweep_note.empty()) std::cout << "\nnote: " << sweep_note << "\n";
    }
    return 1;
  }
  if (!outcome) return ReportError("check", outcome.error());
  RunMetrics metrics = MetricsOf(*outcome);
  metrics.warnings = RunWarnings(*scenario, *outcome);
  const std::vector<BudgetCheck> checks = CheckBudgets(scenario->budgets, metrics);
  Table t({"metric", "limit", "actual", "verdict"});
  nlohmann::ordered_json j;
  j["scenario"] = scenario->name;
  j["budgets"] = nlohmann::ordered_json::array();
  int broken = 0;
  for (const BudgetCheck& c : checks) {
    // The limits as written in the scenario.
    std::string limit;
    std::vector<double> bounds;
    if (c.budget.max) {
      limit += "<= " + Limit(*c.budget.max);
      bounds.push_back(*c.budget.max);
    }
    if (c.budget.min) {
      limit += std::string(limit.empty() ? "" : ", ") + ">= " + Limit(*c.budget.min);
      bounds.push_back(*c.budget.min);
    }
    std::string verdict = "ok";
    nlohmann::ordered_json row = BudgetRow(c.budget);
    row["actual"] =
        c.not_measured.empty() ? nlohmann::ordered_json(c.actual) : nlohmann::ordered_json(nullptr);
    row["ok"] = c.ok;
    if (!c.ok && !c.not_measured.empty()) {
      verdict = "BROKEN (" + c.not_measured + ")";
      row["not_measured"] = c.not_measured;
    } else if (!c.ok) {
      const bool above = c.budget.max && c.actual > *c.budget.max;
      const double bound = above ? *c.budget.max : *c.budget.min;
      verdict = "BROKEN: " + Excess(c.actual, bound, above);
      // Positive: past the bound, in the metric's unit.
      row["broken_by"] = above ? c.actual - bound : bound - c.actual;
    }
    j["budgets"].push_back(std::move(row));
    t.AddRow(
        {c.budget.metric, limit, c.not_measured.empty() ? Show(c.actual, bounds) : "-", verdict});
    broken += c.ok ? 0 : 1;
  }
  if (format == "json") {
    j["held"] = checks.size() - static_cast<std::size_t>(broken);
    j["passed"] = broken == 0;  // the exit status: 0 when true, 1 when false
    if (!sweep_note.empty()) j["sweep_not_checked"] = sweep_note;
    j["warnings"] = nlohmann::ordered_json::array();
    for (const RunWarning& w : metrics.warnings) {
      j["warnings"].push_back({{"code", w.code}, {"message", w.message}});
    }
    std::cout << j.dump(2) << "\n";
    return broken > 0 ? 1 : 0;
  }
  std::cout << "scenario " << scenario->name << ": "
            << checks.size() - static_cast<std::size_t>(broken) << " of " << checks.size()
            << " budgets hold\n\n"
            << t.ToText();
  if (!sweep_note.empty()) std::cout << "\nnote: " << sweep_note << "\n";
  // The run's warnings: a budget that holds on an overloaded or
  // uncalibrated run holds on numbers the run itself doubts.
  if (!metrics.warnings.empty()) std::cout << "\n";
  for (const RunWarning& w : metrics.warnings) {
    std::cout << "warning [" << w.code << "]: " << w.message << "\n";
  }
  return broken > 0 ? 1 : 0;
}

}  // namespace kvbill::cli
