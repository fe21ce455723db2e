// kvbill compare: the baseline and one variant per lever, ranked by saving.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/cli_util.h"
#include "cli/progress.h"
#include "kvbill/metrics/growth.h"
#include "kvbill/report/table.h"
#include "kvbill/scenario/budget.h"
#include "kvbill/scenario/levers.h"
#include "kvbill/scenario/sweep.h"
#include "kvbill/util/embedded.h"
#include "kvbill/util/file.h"

namespace kvbill::cli {
namespace {

constexpr char kUsage[] =
    "usage: kvbill compare [--scenario S.json] [--trace T] [--jobs N] [--format table|json]\n\n"
    "Runs the scenario and one variant per lever — KV quantization (fp8, nvfp4), prefix\n"
    "caching toggled, dropping old tool results, summarising long contexts, architecture\n"
    "(half the KV heads; a latent KV cache of 512 + 64 elements per layer as in MLA) — and\n"
    "ranks them by the saving in dollars per task, beside the baseline's absolute numbers.\n"
    "Also fits how the baseline's cost per task grows with its number of requests.\n"
    "A scenario with \"pricing\" (billed at an API provider's rules and list prices) gets\n"
    "the levers an API user has instead: 1-hour cache writes (anthropic), caching off,\n"
    "dropping old tool results, summarising, and the same provider's cheaper model.\n"
    "See docs/ci.md#api-priced-scenarios.\n";

double KvPerTask(const ScenarioOutcome& o) { return MetricValue(o, "kv_read_bytes_per_task.mean"); }

// API mode: tokens written to the provider cache per task, mean.
double WritesPerTask(const ScenarioOutcome& o) {
  if (!o.api) return 0;
  const ApiReplayOutcome& r = o.api->replay;
  return r.tasks.empty()
             ? 0
             : static_cast<double>(r.predicted.cache_write()) / static_cast<double>(r.tasks.size());
}

std::string Pct(double f) { return (f >= 0 ? "" : "-") + FormatFixed(std::fabs(f) * 100, 1) + "%"; }

}  // namespace

int RunCompare(const Args& args) {
  po::options_description options("options");
  std::string scenario_path, trace, format;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.add_options()("scenario,s", FileValue(&scenario_path)->default_value("default"),
                        "scenario JSON file, or `default`")(
      "trace,t", FileValue(&trace), "trace file, replacing the scenario's trace")(
      "jobs,j", po::value(&jobs)->default_value(jobs), "threads")(
      "format", po::value(&format)->default_value("table"), "table or json");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "compare", kUsage, options, vm)) return *stop;
  if (auto s = CheckChoice("format", format, "table|json"); !s) {
    return ReportError("compare", s.error());
  }
  std::string text, source = scenario_path;
  if (scenario_path == "default") {
    text = std::string(EmbeddedFile("default.json").value_or(""));
    source = "scenarios/default.json";
  } else {
    auto read = ReadFile(scenario_path);
    if (!read) return ReportError("compare", read.error());
    text = *read;
  }
  if (!trace.empty()) {
    // A path on the command line is the working directory's, not the
    // scenario's (the scenario's own paths are its directory's).
    const std::string file = trace == "-" ? trace : std::filesystem::absolute(trace).string();
    auto edited = WithSetting(text, "/trace", nlohmann::json({{"file", file}}).dump());
    if (!edited) return ReportError("compare", edited.error());
    text = *edited;
  }
  auto base = ParseScenario(text, source);
  if (!base) return ReportError("compare", base.error());

  std::vector<Lever> levers = Levers(*base);
  levers.insert(levers.begin(), Lever{"baseline", {}});
  WorkloadCache workloads;  // the levers that keep the trace and policy share it
  const std::vector<LeverOutcome> outcomes = [&] {
    ProgressLine progress("compare", "running " + std::to_string(levers.size()) + " variants");
    return RunLevers(text, source, levers, jobs, &workloads);
  }();
  if (!outcomes[0].run) return ReportError("compare", Error(outcomes[0].error));
  const ScenarioOutcome& b = *outcomes[0].run;
  const bool api = b.api.has_value();
  const double base_cost = b.summary.cost_per_task_usd.mean, base_kv = KvPerTask(b);

  // Rank the variants by dollars saved per task; failed ones last.
  std::vector<const LeverOutcome*> ranked;
  for (std::size_t i = 1; i < outcomes.size(); ++i) ranked.push_back(&outcomes[i]);
  std::stable_sort(ranked.begin(), ranked.end(), [&](const LeverOutcome* x, const LeverOutcome* y) {
    if (!x->run || !y->run) return x->run.has_value() && !y->run.has_value();
    return x->run->summary.cost_per_task_usd.mean < y->run->summary.cost_per_task_usd.mean;
  });

  std::vector<double> requests, costs;
  for (const TaskMetrics& t : b.tasks) {
    requests.push_back(t.requests);
    costs.push_back(static_cast<double>(t.cost_usd));
  }
  auto growth = FitGrowth(requests, costs);

  if (format == "json") {
    nlohmann::ordered_json j;
    auto row = [&](const LeverOutcome& o) {
      nlohmann::ordered_json r;
      r["lever"] = o.lever.name;
      r["settings"] = nlohmann::ordered_json::object();
      for (const auto& [p, v] : o.lever.settings) {
        r["settings"][p] = nlohmann::ordered_json::parse(v);
      }
      if (!o.run) {
        r["error"] = o.error;
        if (!o.lever.not_applicable.empty()) r["not_applicable"] = o.lever.not_applicable;
        return r;
      }
      const double cost = o.run->summary.cost_per_task_usd.mean, kv = KvPerTask(*o.run);
      r["cost_per_task_usd"] = cost;
      r["cost_per_task_usd_p90"] = o.run->summary.cost_per_task_usd.p90;
      if (api) {
        r["model"] = o.run->api->price.id;
        r["cache_write_tokens_per_task"] = WritesPerTask(*o.run);
      } else {
        r["kv_read_bytes_per_task"] = kv;
      }
      r["hit_rate"] = o.run->summary.hit_rate;
      r["saving_usd_per_task"] = base_cost - cost;
      r["saving_fraction"] = base_cost > 0 ? (base_cost - cost) / base_cost : 0;
      if (!api) r["kv_saving_fraction"] = base_kv > 0 ? (base_kv - kv) / base_kv : 0;
      return r;
    };
    j["scenario"] = base->name;
    if (api) j["pricing"] = {{"provider", base->pricing->provider}, {"model", b.api->price.id}};
    j["baseline"] = row(outcomes[0]);
    j["variants"] = nlohmann::ordered_json::array();
    for (const LeverOutcome* o : ranked) j["variants"].push_back(row(*o));
    if (growth) {
      j["growth"] = {{"x", "requests per task"},
                     {"y", "cost per task"},
                     {"exponent", growth->exponent},
                     {"r_squared", growth->r_squared},
                     {"tasks", growth->points}};
    } else {
      j["growth"] = {{"x", "requests per task"},
                     {"y", "cost per task"},
                     {"not_fitted", growth.error().message()}};
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  const std::vector<std::string> header =
      api ? std::vector<std::string>{"lever",
                                     "$/task",
                                     "saving",
                                     "hit rate",
                                     "cache write tok/task",
                                     "$/task p90"}
          : std::vector<std::string>{"lever",     "$/task",   "saving",    "KV read/task",
                                     "KV saving", "hit rate", "$/task p90"};
  Table t(header);
  auto add = [&](const LeverOutcome& o) {
    if (!o.run) {
      std::vector<std::string> row(header.size(), "");
      row[0] = o.lever.name;
      row[1] = o.lever.not_applicable.empty() ? "n/a" : "not applicable";
      t.AddRow(row);
      return;
    }
    const double cost = o.run->summary.cost_per_task_usd.mean;
    const bool is_base = &o == &outcomes[0];
    const std::string saving =
        is_base ? "" : Pct(base_cost > 0 ? (base_cost - cost) / base_cost : 0);
    const std::string hit = FormatFixed(o.run->summary.hit_rate * 100, 1) + "%";
    const std::string p90 = "$" + FormatFixed(o.run->summary.cost_per_task_usd.p90, 4);
    if (api) {
      t.AddRow(
          {o.lever.name, "$" + FormatFixed(cost, 4), saving, hit,
           FormatWithSeparators(static_cast<std::int64_t>(std::llround(WritesPerTask(*o.run)))),
           p90});
      return;
    }
    const double kv = KvPerTask(*o.run);
    t.AddRow({o.lever.name, "$" + FormatFixed(cost, 4), saving, FormatBinaryBytes(kv),
              is_base ? "" : Pct(base_kv > 0 ? (base_kv - kv) / base_kv : 0), hit, p90});
  };
  add(outcomes[0]);
  for (const LeverOutcome* o : ranked) add(*o);
  std::cout << "scenario " << base->name << " (" << b.summary.tasks << " tasks, "
            << b.summary.requests << " requests";
  if (api) {
    std::cout << "; " << base->pricing->provider << " cache rules, " << b.api->price.id
              << " list prices";
  }
  std::cout << "); savings against the baseline\n\n" << t.ToText();
  for (const LeverOutcome* o : ranked) {
    if (!o->run) std::cout << "n/a: " << o->lever.name << ": " << o->error << "\n";
  }
  if (growth) {
    std::cout << "\ncost per task grows as (requests per task)^" << FormatFixed(growth->exponent, 2)
              << " across the baseline's tasks (log-log fit, r^2 "
              << FormatFixed(growth->r_squared, 3) << ")\n";
  } else {
    std::cout << "\ngrowth exponent not fitted: " << growth.error().message() << "\n";
  }
  return 0;
}

}  // namespace kvbill::cli
