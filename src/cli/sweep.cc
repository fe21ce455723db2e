// kvbill sweep / kvbill merge: run a scenario's sweep axes in parallel and in
// shards, and join shards into exactly what one run prints.
#include "kvbill/scenario/sweep.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <sstream>
#include <thread>
#include <utility>

#include "cli/cli_util.h"
#include "cli/plan_doc.h"
#include "cli/progress.h"
#include "cli/sweep_shard.h"
#include "kvbill/cache/block_hash.h"
#include "kvbill/report/table.h"
#include "kvbill/scenario/budget.h"
#include "kvbill/util/file.h"
#include "util/json_input.h"

namespace kvbill::cli {
namespace {

constexpr char kSweepUsage[] =
    "usage: kvbill sweep --scenario S.json [--jobs N] [--shard i/n|auto] [--format csv|json] "
    "[-o FILE]\n\n"
    "Runs every point of the scenario's \"sweep\" block (JSON pointer -> list of values; the\n"
    "cartesian product, axes in sorted order of their pointers, the first varying slowest) on\n"
    "N threads (default: all cores) and\n"
    "prints one row per point. --shard i/n runs the points whose number k has k mod n == i,\n"
    "for CI matrices and cluster job arrays; `kvbill merge` joins the shards. --shard auto\n"
    "takes i and n from a Slurm job array, --shard auto/N from a Slurm array of N tasks or a\n"
    "Kubernetes Indexed Job of N completions (docs/cluster.md).\n"
    "A scenario with \"pricing\" (API mode) prints the API columns instead of the\n"
    "engine's (docs/ci.md#sweeps).\n";

constexpr char kMergeUsage[] =
    "usage: kvbill merge SHARD... [--format csv|json|table] [-o FILE]\n\n"
    "Joins the JSON outputs of `kvbill sweep --shard i/n --format json` (or of `kvbill plan\n"
    "--shard i/n --format json`) into exactly what one unsharded run prints (in the format\n"
    "asked for; table for plans only). Every point (candidate) must be present once.\n";

// The metrics of one point, in output order. Deterministic: no wall clock.
const char* const kColumns[] = {"tasks",
                                "requests",
                                "hit_rate",
                                "cost_usd",
                                "cost_per_task_usd.mean",
                                "cost_per_task_usd.p50",
                                "cost_per_task_usd.p90",
                                "cost_per_task_usd.p99",
                                "kv_read_bytes_per_task.mean",
                                "ttft_s.p90",
                                "completion_s.p90",
                                "simulated_s",
                                "preemptions"};

// The metrics of one point of a scenario with "pricing" (API mode): what the
// API replay measures, no engine figures.
const char* const kApiColumns[] = {"tasks",
                                   "requests",
                                   "hit_rate",
                                   "cost_usd",
                                   "cost_per_task_usd.mean",
                                   "cost_per_task_usd.p50",
                                   "cost_per_task_usd.p90",
                                   "cost_per_task_usd.p99",
                                   "prompt_tokens",
                                   "cache_read_tokens",
                                   "cache_write_tokens",
                                   "output_tokens"};

// The columns of a sweep document: API mode when it says "mode": "api".
std::span<const char* const> ColumnsOf(const nlohmann::ordered_json& doc) {
  if (doc.is_object() && doc.contains("mode") && doc["mode"] == "api") return kApiColumns;
  return kColumns;
}

nlohmann::ordered_json PointJson(const SweepRow& row, const std::vector<SweepAxis>& axes,
                                 std::span<const char* const> columns) {
  nlohmann::ordered_json values = nlohmann::ordered_json::object();
  for (std::size_t a = 0; a < axes.size(); ++a) {
    values[axes[a].path] = nlohmann::ordered_json::parse(row.values[a]);
  }
  nlohmann::ordered_json summary;
  if (!row.not_runnable.empty()) {
    // No run: every column null, the reason beside them.
    for (const char* c : columns) summary[c] = nullptr;
    return {{"index", row.index},
            {"values", values},
            {"summary", summary},
            {"warnings", nlohmann::ordered_json::array()},
            {"not_runnable", row.not_runnable}};
  }
  const RunSummary& sum = row.metrics.summary;
  const CallUsage api_usage = row.metrics.api ? row.metrics.api_predicted : CallUsage{};
  for (const char* c : columns) {
    const std::string name = c;
    if (name == "prompt_tokens") {
      summary[c] = sum.prompt_tokens;
    } else if (name == "cache_read_tokens") {
      summary[c] = api_usage.cache_read;
    } else if (name == "cache_write_tokens") {
      summary[c] = api_usage.cache_write();
    } else if (name == "output_tokens") {
      summary[c] = sum.output_tokens;
    } else if (std::string(c) == "tasks") {
      summary[c] = sum.tasks;
    } else if (std::string(c) == "requests") {
      summary[c] = sum.requests;
    } else if (std::string(c) == "simulated_s") {
      summary[c] = sum.simulated_s;
    } else if (std::string(c) == "preemptions") {
      summary[c] = sum.preemptions;
    } else if (sum.requests == 0) {
      // No request served (context_limit): nothing measured, no 0 as a cost.
      summary[c] = nullptr;
    } else {
      summary[c] = MetricValue(row.metrics, c);
    }
  }
  // The run's warnings, as `simulate` gives them: a point whose tasks were
  // refused or whose replica was overloaded says so in its row.
  return {{"index", row.index},
          {"values", values},
          {"summary", summary},
          {"warnings", WarningsJson(row.metrics.warnings)}};
}

// CSV rows carry a not-runnable point's code only; its reason goes to
// standard error, as simulate's CSV gives its warnings (JSON has it in the
// row).
void SayNotRunnable(const std::string& command, const nlohmann::ordered_json& doc,
                    const std::string& format) {
  if (format != "csv") return;
  for (const auto& p : doc["points"]) {
    if (!p.contains("not_runnable")) continue;
    std::cerr << "kvbill " << command << ": point " << p["index"].dump()
              << " not runnable: " << p["not_runnable"].get<std::string>() << "\n";
  }
}

// Renders the sweep document {"axes", "total_points", "points"} as CSV or JSON.
std::string Render(const nlohmann::ordered_json& doc, const std::string& format) {
  if (format == "json") return doc.dump(2) + "\n";
  std::vector<std::string> header = {"index"};
  for (const auto& a : doc["axes"]) header.push_back(a.get<std::string>());
  const std::span<const char* const> columns = ColumnsOf(doc);
  for (const char* c : columns) header.push_back(c);
  header.push_back("warnings");
  Table t(header);
  for (const auto& p : doc["points"]) {
    std::vector<std::string> row = {p["index"].dump()};
    for (const auto& a : doc["axes"]) {
      const auto& v = p["values"][a.get<std::string>()];
      row.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    }
    for (const char* c : columns) {
      const auto& v = p["summary"][c];
      row.push_back(v.is_null() ? "" : v.dump());
    }
    // The codes, ';'-separated (docs/engine.md#warnings has their meaning);
    // a point no engine runs says not_runnable.
    std::string codes = p.contains("not_runnable") ? "not_runnable" : "";
    if (p.contains("warnings")) {
      for (const auto& w : p["warnings"])
        codes += (codes.empty() ? "" : ";") + w["code"].get<std::string>();
    }
    row.push_back(codes);
    t.AddRow(row);
  }
  return t.ToCsv();
}

// What a sweep's points were computed from (InputsFingerprint): the
// scenario file and every file any point reads (the base's trace, model, GPU
// and profile files and each axis value's).
Result<std::string> SweepFingerprint(const std::string& scenario_text, const Scenario& base,
                                     const SweepPlan& plan) {
  std::set<std::string> files;
  AddFilesRead(base, &files);
  for (const SweepAxis& a : plan.axes) {
    for (const std::string& v : a.values) {
      auto text = WithSetting(plan.base_text, a.path, v);
      if (!text) continue;  // PlanSweep made every point: this cannot fail
      auto point = ParseSweepPointScenario(*text, plan.source);
      if (point) AddFilesRead(*point, &files);
    }
  }
  return InputsFingerprint(scenario_text, files);
}

}  // namespace

int RunSweepCommand(const Args& args) {
  po::options_description options("options");
  std::string scenario_path, shard_text = "0/1", format, out;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.add_options()("scenario,s", FileValue(&scenario_path)->required(),
                        "scenario JSON file with a sweep block")(
      "jobs,j", po::value(&jobs)->default_value(jobs), "threads")(
      "shard", po::value(&shard_text)->default_value("0/1"),
      "run slice i of n, or auto (write shards with --format json for kvbill merge)")(
      "format", po::value(&format)->default_value("csv"), "csv or json")(
      "out,o", FileValue(&out), "write to FILE instead of stdout");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "sweep", kSweepUsage, options, vm)) return *stop;
  if (auto s = CheckChoice("format", format, "csv|json"); !s)
    return ReportError("sweep", s.error());
  if (jobs < 1) return ReportError("sweep", Error("--jobs: must be at least 1"));
  auto shard = ParseShard(shard_text);
  if (!shard) return ReportError("sweep", shard.error());
  if (auto path = CheckScenarioPath(scenario_path); !path) {
    return ReportError("sweep", path.error().Within("--scenario"));
  }
  auto text = ReadFile(scenario_path);
  if (!text) return ReportError("sweep", text.error());
  auto base = ParseScenario(*text, scenario_path);
  if (!base) return ReportError("sweep", base.error());
  auto plan = PlanSweep(*text, scenario_path, shard->index, shard->count);
  if (!plan) return ReportError("sweep", plan.error());
  const std::int64_t total = plan->total;

  const std::int64_t count = plan->count();
  auto rows = [&] {
    ProgressLine line("sweep", "", "points");
    line.Set(0, count);
    return RunSweep(*plan, jobs, [&](std::int64_t done) { line.Set(done, count); });
  }();
  if (!rows) return ReportError("sweep", rows.error());

  auto fingerprint = SweepFingerprint(*text, *base, *plan);
  if (!fingerprint) return ReportError("sweep", fingerprint.error());
  nlohmann::ordered_json doc;
  doc["scenario"] = base->name;
  doc["fingerprint"] = *fingerprint;
  if (base->pricing) doc["mode"] = "api";
  doc["axes"] = nlohmann::ordered_json::array();
  for (const SweepAxis& a : base->sweep) doc["axes"].push_back(a.path);
  doc["total_points"] = total;
  doc["points"] = nlohmann::ordered_json::array();
  for (const SweepRow& r : *rows) {
    doc["points"].push_back(PointJson(r, base->sweep, ColumnsOf(doc)));
  }
  if (auto s = EmitOutput("sweep", Render(doc, format), out); !s)
    return ReportError("sweep", s.error());
  SayNotRunnable("sweep", doc, format);
  return 0;
}

int RunMerge(const Args& args) {
  po::options_description options("options");
  std::vector<std::string> inputs;
  std::string format, out;
  options.add_options()("input", po::value(&inputs)->composing()->value_name("FILE"),
                        "shard output files (JSON)")(
      "format", po::value(&format)->default_value("csv"), "csv or json (plan shards: also table)")(
      "out,o", FileValue(&out), "write to FILE instead of stdout");
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "merge", kMergeUsage, options, vm, &positional)) return *stop;
  if (auto s = CheckChoice("format", format, "csv|json|table"); !s)
    return ReportError("merge", s.error());
  if (inputs.empty()) return ReportError("merge", Error("no shard files given"));
  // Every shard read and parsed once; plan shards (`kvbill plan --shard i/n
  // --format json`) merge as plans, the others as sweep shards.
  std::vector<nlohmann::ordered_json> docs;
  for (const std::string& path : inputs) {
    auto text = ReadFile(path);
    if (!text) return ReportError("merge", text.error());
    json_input::Problem problem;
    auto parsed = json_input::ParseOrdered(*text, &problem);
    if (!parsed) {
      // A shard written as CSV (sweep's default format) or as a table.
      const bool not_json = text->find_first_not_of(" \t\r\n") == std::string::npos ||
                            (*text)[text->find_first_not_of(" \t\r\n")] != '{';
      if (not_json) {
        return ReportError(
            "merge", Error(path + ": not a JSON document (a shard written as CSV or a table?): "
                                  "merge joins shards written with --format json, e.g. "
                                  "kvbill sweep --scenario S --shard 0/2 --format json -o "
                                  "shard0.json"));
      }
      return ReportError("merge", Error(json_input::Describe(path, *text, problem)));
    }
    docs.push_back(std::move(*parsed));
  }
  if (IsPlanDocument(docs.front())) {
    for (std::size_t d = 0; d < docs.size(); ++d) {
      if (!IsPlanDocument(docs[d])) {
        return ReportError("merge", Error(inputs[d] + ": not the JSON output of kvbill plan, as " +
                                          inputs[0] + " is"));
      }
    }
    auto merged = MergePlanShards(docs, inputs);
    if (!merged) return ReportError("merge", merged.error());
    if (auto s = EmitOutput("merge", RenderPlan(*merged, format), out); !s)
      return ReportError("merge", s.error());
    if (const std::string why = NoFeasibleCandidate(*merged); !why.empty()) {
      std::cerr << "kvbill merge: " << why << "\n";
      return 1;
    }
    return 0;
  }
  if (format == "table") {
    return ReportError("merge", Error("--format table: sweep shards merge as csv or json"));
  }
  nlohmann::ordered_json merged;
  std::map<std::int64_t, nlohmann::ordered_json> points;
  for (std::size_t d = 0; d < docs.size(); ++d) {
    const std::string& path = inputs[d];
    nlohmann::ordered_json& doc = docs[d];
    if (auto s = CheckSweepShard(doc, path, ColumnsOf(doc)); !s) {
      return ReportError("merge", s.error());
    }
    if (merged.is_null()) {
      merged = doc;
      merged["points"] = nlohmann::ordered_json::array();
    } else if (doc["axes"] != merged["axes"] || doc["total_points"] != merged["total_points"] ||
               doc["scenario"] != merged["scenario"] ||
               doc.value("fingerprint", nlohmann::ordered_json()) !=
                   merged.value("fingerprint", nlohmann::ordered_json()) ||
               doc.value("mode", nlohmann::ordered_json()) !=
                   merged.value("mode", nlohmann::ordered_json())) {
      return ReportError("merge", Error(path + ": from a different sweep than " + inputs[0] +
                                        " (its scenario, axes or inputs differ: the fingerprint "
                                        "covers the scenario file and every file it reads: "
                                        "trace, model configs, draft model, GPU and profile "
                                        "files)"));
    }
    for (auto& p : doc["points"]) {
      const std::int64_t k = p["index"].get<std::int64_t>();
      if (!points.emplace(k, std::move(p)).second) {
        return ReportError("merge", Error(path + ": point " + std::to_string(k) +
                                          " appears in more than one shard"));
      }
    }
  }
  const std::int64_t total = merged["total_points"].get<std::int64_t>();
  for (std::int64_t k = 0; k < total; ++k) {
    if (points.count(k) == 0) {
      return ReportError("merge", Error("point " + std::to_string(k) + " of " +
                                        std::to_string(total) + " is in no shard"));
    }
  }
  for (auto& [k, p] : points) merged["points"].push_back(p);
  if (auto s = EmitOutput("merge", Render(merged, format), out); !s)
    return ReportError("merge", s.error());
  SayNotRunnable("merge", merged, format);
  return 0;
}

}  // namespace kvbill::cli
