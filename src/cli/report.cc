// kvbill report: one self-contained HTML page with the charts and tables of a
// scenario (kvbill/report/report_page.h builds it; docs/report.md).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cli_util.h"
#include "cli/plan_doc.h"
#include "cli/progress.h"
#include "kvbill/report/report_page.h"
#include "kvbill/scenario/sweep.h"
#include "kvbill/util/embedded.h"
#include "kvbill/util/file.h"
#include "util/json_input.h"

namespace kvbill::cli {
namespace {

constexpr char kUsage[] =
    "usage: kvbill report [--scenario S.json] [--trace T] [--plan PLAN.json] --out DIR\n"
    "                     [--jobs N] [--price OUT_USD_PER_MTOK] [--load 0.25,1,4]\n\n"
    "Writes DIR/report.html: one self-contained HTML page (inline SVG charts, no scripts)\n"
    "with the run's summary; KV memory against context with the GPU line; cumulative KV\n"
    "reads and dollars against turn for the longest task; cost per task by lever (as in\n"
    "`kvbill compare`); prefix-cache hit rate against cache capacity; cost per task against\n"
    "requests per task with the power-law fit; cost per token against context; with --load,\n"
    "each lever's saving per task against the load factor (as `kvbill compare --load`); and\n"
    "the numbers behind each chart in tables.\n"
    "--plan PLAN.json (the output of `kvbill plan --format json`, or of `kvbill merge`)\n"
    "adds the plan's Pareto chart: $/task against TTFT p90 of its feasible candidates.\n"
    "--scenario default (the default) is the bundled scenarios/default.json. See docs/report.md.\n";

}  // namespace

int RunReportCommand(const Args& args) {
  po::options_description options("options");
  std::string scenario_path, trace, out_dir, load_list, plan_path;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double price = 0;
  options.add_options()("scenario,s", FileValue(&scenario_path)->default_value("default"),
                        "scenario JSON file, or `default`")(
      "trace,t", FileValue(&trace), "trace file, replacing the scenario's trace")(
      "out,o", DirValue(&out_dir)->required(), "a directory: write report.html into it")(
      "plan", FileValue(&plan_path), "a plan's JSON output: adds its Pareto chart")(
      "jobs,j", po::value(&jobs)->default_value(jobs), "threads")(
      "price", po::value(&price),
      "what an output token sells for, $ per million: draws the break-even line")(
      "load", po::value(&load_list),
      "load factors, e.g. 0.25,1,4: each lever's saving at each (trace.load)");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "report", kUsage, options, vm)) return *stop;
  if (jobs < 1) return ReportError("report", Error("--jobs: must be at least 1"));
  auto read = ReadScenarioText(scenario_path, trace);
  if (!read) return ReportError("report", read.error());
  const std::string& text = read->text;
  const std::string& source = read->source;
  // As breakeven bounds it (at most what a price sheet may list): past it
  // the chart's axis is not finite.
  if (vm.count("price") && !(price > 0 && price <= 1e8)) {
    return ReportError("report", Error("--price: must be a positive number of dollars per million "
                                       "tokens, at most 100,000,000"));
  }
  // A directory, never standard output: "-" is no directory to make.
  if (out_dir == "-") {
    return ReportError("report", Error("--out: - is standard output; report writes "
                                       "DIR/report.html and its charts, so give a directory"));
  }
  std::vector<double> loads;
  if (vm.count("load")) {
    auto parsed = ParseLoads(load_list);
    if (!parsed) return ReportError("report", parsed.error());
    loads = std::move(*parsed);
  }
  std::optional<PlanChartData> plan;
  std::string plan_fingerprint;  // of the plan's inputs (plan.cc), when it has one
  if (vm.count("plan")) {
    auto plan_text = ReadFile(plan_path);
    if (!plan_text) return ReportError("report", plan_text.error().Within("--plan"));
    json_input::Problem problem;
    auto doc = json_input::ParseOrdered(*plan_text, &problem);
    if (!doc) {
      return ReportError("report", Error("--plan: " + plan_path +
                                         ": not the JSON output of kvbill plan (--format json)"));
    }
    auto data = PlanChartFromDocument(*doc, plan_path);
    if (!data) return ReportError("report", data.error().Within("--plan"));
    plan = std::move(*data);
    if (doc->contains("fingerprint") && (*doc)["fingerprint"].is_string()) {
      plan_fingerprint = (*doc)["fingerprint"].get<std::string>();
    }
  }
  const auto parsed = ParseScenario(text, source);
  if (parsed && parsed->pricing) {
    return ReportError("report",
                       Error(source + "#/pricing: the report draws the engine's charts; for a "
                                      "scenario priced at an API use `kvbill compare`"));
  }
  if (plan && parsed && plan->scenario != parsed->name) {
    // The chart still draws (its title names the plan's scenario), but the
    // page's other figures are of another workload.
    std::cerr << "kvbill report: warning: --plan " << plan_path << " was made for scenario \""
              << plan->scenario << "\", not \"" << parsed->name
              << "\": its chart is of another workload than the rest of the page\n";
  } else if (plan && parsed && !plan_fingerprint.empty()) {
    // The same name, other inputs: the plan's fingerprint (the scenario's
    // text and the files it reads, as plan and merge compute it) differs.
    std::set<std::string> files_read;
    AddFilesRead(*parsed, &files_read);
    auto mine = InputsFingerprint(read->as_read, files_read);
    if (mine && *mine != plan_fingerprint) {
      std::cerr << "kvbill report: warning: --plan " << plan_path
                << " was made from other inputs than " << source
                << " (its fingerprint differs: the scenario's text or a file it reads is not the "
                   "same, though both are named \""
                << parsed->name
                << "\"): its chart is of another workload than the rest of the page\n";
    }
  }
  auto runs = [&] {
    ProgressLine progress("report", "running the scenario and its variants");
    return kvbill::RunReport(text, source, jobs, loads);
  }();
  if (runs && vm.count("price")) runs->price_usd_per_mtok = price;
  if (runs) runs->plan = plan;
  if (!runs) return ReportError("report", runs.error());
  auto page = BuildReportPage(*runs);
  if (!page) return ReportError("report", page.error());
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec)
    return ReportError("report", Error("--out: " + out_dir + ": cannot create: " + ec.message()));
  const std::string path = (std::filesystem::path(out_dir) / "report.html").string();
  if (auto w = WriteFileAtomically(path, *page); !w) return ReportError("report", w.error());
  NoteWritten("report", path);
  return 0;
}

}  // namespace kvbill::cli
