// kvbill plan: the cheapest deployment meeting the latency targets for a
// scenario's workload (scenario/plan.h), and the plan half of `kvbill merge`.
#include "kvbill/scenario/plan.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "cli/cli_util.h"
#include "cli/plan_doc.h"
#include "cli/progress.h"
#include "cli/remove_on_signal.h"
#include "cli/sweep_shard.h"
#include "kvbill/hardware/catalog_names.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/report/table.h"
#include "kvbill/scenario/budget.h"
#include "kvbill/scenario/run.h"
#include "kvbill/scenario/sweep.h"
#include "kvbill/util/embedded.h"
#include "kvbill/util/file.h"
#include "util/json_input.h"

namespace kvbill::cli {
namespace {

constexpr char kUsage[] =
    "usage: kvbill plan --scenario S.json [--trace T] [--gpus ID,...] [--max-gpus N]\n"
    "                   [--kv-formats F,...] [--weight-formats F,...] [--speculative off,on]\n"
    "                   [--api MODEL,...] [--api-latency MODEL:ttft_s=X[,tpot_s=Y]]\n"
    "                   [--slo ttft_s.p90=X,tpot_s.p90=Y] [--window busiest-hour|all]\n"
    "                   [--allow-uncalibrated] [--gpu-price ID=USD,...] [--tasks-per-day N]\n"
    "                   [--jobs N] [--shard i/n|auto] [--format table|json|csv] [-o FILE]\n\n"
    "Searches deployments for the scenario's workload (its trace or generator, context\n"
    "policy and trace.load): GPU type x tensor-parallel degree that splits the model's\n"
    "heads (x expert-parallel degree for MoE) x weight format x KV format (only what the\n"
    "GPU runs) x speculative decoding, and for each the fewest replicas (up to --max-gpus\n"
    "GPUs in all) that meet the latency targets (--slo, else the scenario's \"slo\"; names\n"
    "are the budget metrics', e.g. ttft_s.p90). Candidates that cannot run, fit or carry\n"
    "the workload's token rate are decided without simulating. Prints the feasible ones\n"
    "cheapest first (and, when the cheapest rests on assumed figures, the cheapest that\n"
    "does not), the Pareto front of $/task against TTFT p90, and why every other\n"
    "candidate is not feasible (docs/plan.md). --api adds API models (as the bundled price\n"
    "sheet names them), billed through their provider's caching rules; without latencies\n"
    "given by --api-latency (repeatable) their SLO is not evaluated and they are listed\n"
    "apart from the feasible ones. By default it simulates the busiest hour of\n"
    "the trace at the target daily rate (--tasks-per-day, else the trace's at trace.load)\n"
    "after a 10-minute warm-up, and scales dollars to the day. --shard i/n decides the\n"
    "candidates k with k mod n == i (auto / auto/N: from a Slurm job array or a Kubernetes\n"
    "Indexed Job, docs/cluster.md); `kvbill merge` joins the --format json shards.\n"
    "Exit status 1 when no candidate is feasible (the output is written; a shard exits 0,\n"
    "merge decides).\n";

// "a,b,c" -> {"a", "b", "c"}; an empty item is an error naming the flag.
Result<std::vector<std::string>> SplitList(const std::string& flag, const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    std::string item = list.substr(start, comma - start);
    if (item.empty()) return Error("--" + flag + ": empty item in \"" + list + "\"");
    out.push_back(std::move(item));
    start = comma + 1;
  }
  return out;
}

// "ttft_s.p90=5,tpot_s.p90=0.1" -> targets; each name one of SloMetricNames.
Result<std::vector<SloTarget>> ParseSlo(const std::string& text) {
  auto items = SplitList("slo", text);
  if (!items) return items.error();
  std::vector<SloTarget> out;
  const std::vector<std::string> names = SloMetricNames();
  for (const std::string& item : *items) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return Error("--slo: \"" + item + "\" is not METRIC=SECONDS (e.g. ttft_s.p90=2)");
    }
    const std::string metric = item.substr(0, eq);
    if (std::find(names.begin(), names.end(), metric) == names.end()) {
      std::string all;
      for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
      return Error("--slo: unknown metric \"" + metric + "\" (one of " + all + ")");
    }
    auto v = ParsePositiveNumber(item.substr(eq + 1));
    if (!v) {
      return Error("--slo: " + metric + ": \"" + item.substr(eq + 1) +
                   "\" is not a positive number of seconds");
    }
    if (std::any_of(out.begin(), out.end(),
                    [&](const SloTarget& t) { return t.metric == metric; })) {
      return Error("--slo: " + metric + " is given twice (one target a metric)");
    }
    out.push_back({metric, *v});
  }
  return out;
}

// A GPU of --gpus or --gpu-price as its catalog id: an alias or another
// spelling resolves ("H100" -> h100-sxm), a typo gets "did you mean", and a
// GPU JSON file is refused (plan enumerates catalog GPUs).
Result<std::string> CatalogGpu(const std::string& typed, std::string_view flag) {
  auto id = ResolveGpuName(typed, flag);
  if (!id) return id.error();
  if (!LookupGpu(*id)) {
    return Error(std::string(flag) + " \"" + typed +
                 "\": plan considers the catalog's GPUs only (`kvbill gpus` lists them)");
  }
  return *id;
}

// A format list naming one format twice, in two spellings or one ("fp8" and
// "fp8-e4m3"): an error rather than duplicate candidates. Names that do not
// parse are left to the plan, which says why.
Status FormatGivenTwice(std::string_view flag, const std::vector<std::string>& names) {
  std::vector<std::string> seen;
  for (const std::string& name : names) {
    auto f = ParseElementFormat(name);
    const std::string canonical = f ? f->name : name;
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end()) {
      return Error(std::string(flag) + ": \"" + name + "\" is " + canonical +
                   ", already in the list (each format once)");
    }
    seen.push_back(canonical);
  }
  return OkStatus();
}

// "h100-sxm=2.10,a100-80gb=1.2" -> prices.
Result<std::map<std::string, double>> ParsePrices(const std::string& text) {
  auto items = SplitList("gpu-price", text);
  if (!items) return items.error();
  std::map<std::string, double> out;
  for (const std::string& item : *items) {
    const std::size_t eq = item.find('=');
    auto v = eq == std::string::npos ? std::nullopt : ParsePositiveNumber(item.substr(eq + 1));
    // At most what a scenario's deployment.usd_per_gpu_hour may say.
    if (!v || *v > 1e6) {
      return Error("--gpu-price: \"" + item +
                   "\" is not GPU=USD_PER_HOUR with 0 < USD_PER_HOUR <= 1e6 (e.g. h100-sxm=2.10)");
    }
    auto gpu = CatalogGpu(item.substr(0, eq), "--gpu-price");
    if (!gpu) return gpu.error();
    if (!out.emplace(*gpu, *v).second) {
      return Error("--gpu-price: " + *gpu + " is priced twice");
    }
  }
  return out;
}

// The window's temporary directory (the busiest hour's trace) while plan
// runs: removed when plan returns, and when SIGINT or SIGTERM ends it
// (remove_on_signal.h).
class WindowDir {
 public:
  WindowDir() = default;
  WindowDir(const WindowDir&) = delete;
  WindowDir& operator=(const WindowDir&) = delete;
  ~WindowDir() {
    if (path_.empty()) return;
    RemoveOnSignal::Drop(file_on_signal_);
    RemoveOnSignal::Drop(dir_on_signal_);
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  // Makes the directory kvbill-plan-XXXXXX in the temporary directory and
  // registers it and `file` in it for removal on a signal.
  Result<std::string> Create(const std::string& file) {
    std::string pattern = (std::filesystem::temp_directory_path() / "kvbill-plan-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      return Error(pattern + ": cannot create a temporary directory");
    }
    path_ = pattern;
    const std::string file_path = path_ + "/" + file;
    dir_on_signal_ = RemoveOnSignal::Add(path_, true);
    file_on_signal_ = RemoveOnSignal::Add(file_path, false);
    return file_path;
  }

 private:
  std::string path_;
  int dir_on_signal_ = -1;
  int file_on_signal_ = -1;
};

// What makes a trace's tasks arrive over time, by the keys that set it: a
// generated trace's tasks arrive at its preset's Poisson rate
// (docs/generator.md), which trace.load scales, so more than one of them
// does; a trace file's arrivals are its own (`kvbill trace gen
// --arrivals-per-s` writes one at a chosen rate).
std::string ArrivalsAdvice(const ScenarioTrace& trace) {
  if (!trace.generator.empty()) {
    return "trace.tasks 2 or more (generated tasks arrive at the preset's rate, "
           "docs/generator.md, which trace.load scales)";
  }
  return "a trace file of several tasks arriving at different times (`kvbill trace gen "
         "--arrivals-per-s R` writes one at R tasks a second), or a generated trace "
         "(trace.generator with trace.tasks 2 or more)";
}

}  // namespace

int RunPlan(const Args& args) {
  po::options_description options("options");
  std::string scenario_path, trace, gpus, kv_formats, weight_formats,
      speculative = "off", slo, window = "busiest-hour", shard_text, format, out, prices, api;
  int max_gpus = 8;
  double tasks_per_day = 0;
  bool allow_uncalibrated = false;
  std::vector<std::string> api_latency;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.add_options()("scenario,s", FileValue(&scenario_path)->default_value("default"),
                        "scenario JSON file, or `default`")(
      "trace,t", FileValue(&trace), "trace file, replacing the scenario's trace")(
      "gpus", po::value(&gpus), "GPU ids to consider (default: the whole catalog)")(
      "max-gpus", po::value(&max_gpus)->default_value(8), "GPUs of all replicas together, at most")(
      "kv-formats", po::value(&kv_formats), "KV formats (default: the scenario's)")(
      "weight-formats", po::value(&weight_formats), "weight formats (default: the scenario's)")(
      "speculative", po::value(&speculative),
      "off, on or off,on (default: the scenario's own: on when it speculates, else off)")(
      "slo", po::value(&slo), "latency targets, e.g. ttft_s.p90=2,tpot_s.p90=0.05")(
      "window", po::value(&window)->default_value("busiest-hour"),
      "what is simulated: busiest-hour (with a 10-minute warm-up) or all")(
      "allow-uncalibrated", po::bool_switch(&allow_uncalibrated),
      "include GPUs the cost model is not calibrated for (marked)")(
      "api", po::value(&api),
      "API models to price beside the deployments, e.g. gpt-5,claude-sonnet-4-5")(
      "api-latency", po::value(&api_latency)->composing(),
      "an API's latencies, MODEL:METRIC=SECONDS[,METRIC=SECONDS] (METRIC ttft_s, tpot_s or "
      "ttft_s.p90, ...); repeatable")("gpu-price", po::value(&prices),
                                      "$/GPU-hour overrides, e.g. h100-sxm=2.10,h200=3.5")(
      "tasks-per-day", po::value(&tasks_per_day)->default_value(0),
      "tasks a day for $/day (default: the trace's rate at its load)")(
      "jobs,j", po::value(&jobs)->default_value(jobs), "threads")(
      "shard", po::value(&shard_text)->default_value("0/1"), "decide slice i of n")(
      "format", po::value(&format)->default_value("table"), "table, json or csv")(
      "out,o", FileValue(&out), "write to FILE instead of stdout");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "plan", kUsage, options, vm)) return *stop;
  if (auto s = CheckChoice("format", format, "table|json|csv"); !s)
    return ReportError("plan", s.error());
  if (auto s = CheckChoice("window", window, "busiest-hour|all"); !s)
    return ReportError("plan", s.error());
  if (jobs < 1) return ReportError("plan", Error("--jobs: must be at least 1"));
  if (max_gpus < 1) return ReportError("plan", Error("--max-gpus: must be at least 1"));
  // 0 is the default's "the trace's own rate"; asked for, it is no rate.
  if (!(tasks_per_day >= 0) || !std::isfinite(tasks_per_day) ||
      (!vm["tasks-per-day"].defaulted() && !(tasks_per_day > 0))) {
    return ReportError("plan", Error("--tasks-per-day: must be a positive number"));
  }
  auto shard = ParseShard(shard_text);
  if (!shard) return ReportError("plan", shard.error());

  PlanSpace space;
  space.max_gpus = max_gpus;
  space.allow_uncalibrated = allow_uncalibrated;
  space.tasks_per_day = tasks_per_day;
  if (vm.count("gpus")) {
    auto list = SplitList("gpus", gpus);
    if (!list) return ReportError("plan", list.error());
    for (const std::string& typed : *list) {
      auto gpu = CatalogGpu(typed, "--gpus");
      if (!gpu) return ReportError("plan", gpu.error());
      if (std::find(space.gpus.begin(), space.gpus.end(), *gpu) != space.gpus.end()) {
        return ReportError("plan", Error("--gpus: \"" + typed + "\" is " + *gpu +
                                         ", already in the list (each GPU once)"));
      }
      space.gpus.push_back(*gpu);
    }
  }
  if (vm.count("kv-formats")) {
    auto list = SplitList("kv-formats", kv_formats);
    if (!list) return ReportError("plan", list.error());
    if (auto twice = FormatGivenTwice("--kv-formats", *list); !twice) {
      return ReportError("plan", twice.error());
    }
    space.kv_formats = *list;
  }
  if (vm.count("weight-formats")) {
    auto list = SplitList("weight-formats", weight_formats);
    if (!list) return ReportError("plan", list.error());
    if (auto twice = FormatGivenTwice("--weight-formats", *list); !twice) {
      return ReportError("plan", twice.error());
    }
    space.weight_formats = *list;
  }
  {
    auto list = SplitList("speculative", speculative);
    if (!list) return ReportError("plan", list.error());
    space.speculative = *list;
  }
  if (vm.count("slo")) {
    auto targets = ParseSlo(slo);
    if (!targets) return ReportError("plan", targets.error());
    space.slo = *targets;
  }
  if (vm.count("api")) {
    auto list = SplitList("api", api);
    if (!list) return ReportError("plan", list.error());
    space.api_models = *list;
  }
  if (vm.count("api-latency")) {
    auto given = ParseApiLatency(api_latency);
    if (!given) return ReportError("plan", given.error());
    space.api_latency = *given;
  }
  if (vm.count("gpu-price")) {
    auto p = ParsePrices(prices);
    if (!p) return ReportError("plan", p.error());
    space.gpu_prices = *p;
  }

  auto read = ReadScenarioText(scenario_path, trace);
  if (!read) return ReportError("plan", read.error());
  std::string text = read->text;
  const std::string& source = read->source;
  auto base = ParseScenario(text, source);
  if (!base) return ReportError("plan", base.error());
  if (base->pricing) {
    return ReportError("plan", Error(source + "#/pricing: plan searches self-hosted deployments; "
                                              "remove \"pricing\" (--api MODEL adds API "
                                              "models beside them)"));
  }
  // The scenario's text and the files it reads: shards of an edited
  // scenario, config or trace are another plan (merge refuses them). The
  // text as read, not with --trace's absolute path written in: the trace
  // counts by its contents (AddFilesRead), so `--trace t.jsonl` and
  // `--trace ./t.jsonl`, or two checkouts, give one fingerprint.
  std::set<std::string> files_read;
  AddFilesRead(*base, &files_read);
  auto fingerprint = InputsFingerprint(read->as_read, files_read);
  if (!fingerprint) return ReportError("plan", fingerprint.error());

  // Without --speculative the scenario's own deployment is planned, as its
  // formats are: with its draft when it has one (plan once dropped it, and
  // its rows were not the scenario's deployment).
  if (!vm.count("speculative")) {
    space.speculative = {base->deployment.speculative ? "on" : "off"};
  }

  auto candidates = EnumerateCandidates(*base, space);
  if (!candidates) return ReportError("plan", candidates.error());
  // The model's limit as the scenario serves it, to find the trace's
  // requests past it (0 when the config cannot be built: each candidate
  // then says why).
  Tokens model_limit = 0;
  if (auto config = BuildSimulationConfig(*base)) model_limit = config->max_model_len;
  auto whole = MeasureWorkload(*base, model_limit);
  if (!whole) return ReportError("plan", whole.error());
  // The target daily rate: --tasks-per-day sets trace.load so the trace
  // arrives at that rate; otherwise the trace's own rate at its load.
  double load = base->trace.load;
  // A trace of one task, or of tasks that all arrive at once, has no daily
  // rate: a day's dollars (and dollars a task of it) would be 0 / 0.
  if (!(whole->tasks_per_day() > 0)) {
    return ReportError(
        "plan", Error(std::string(space.tasks_per_day > 0 ? "--tasks-per-day: " : "") +
                      "the trace's tasks all arrive at once (" + std::to_string(whole->tasks) +
                      (whole->tasks == 1 ? " task" : " tasks, every one at the same time") +
                      "), so it has no rate of tasks a day to price a day's deployment by "
                      "(docs/plan.md#dollars): plan a trace whose tasks arrive over time, " +
                      ArrivalsAdvice(base->trace) + "; simulate prices this one"));
  }
  if (space.tasks_per_day > 0) {
    load *= space.tasks_per_day / whole->tasks_per_day();
    // trace.load's own range: the flag is refused itself, not blamed on the
    // key it sets.
    if (!(load >= 1e-6 && load <= 1e6)) {
      std::ostringstream why;
      why << "--tasks-per-day: " << space.tasks_per_day << " is " << load
          << " times the trace's own rate at its load (" << whole->tasks_per_day()
          << " tasks a day), outside trace.load's range [1e-06, 1e+06]";
      return ReportError("plan", Error(why.str()));
    }
  } else {
    space.tasks_per_day = whole->tasks_per_day();
  }
  // The window's trace lives in a directory of its own while the plan runs.
  WindowDir window_dir;
  std::string window_trace;
  if (window == "busiest-hour") {
    auto path = window_dir.Create("window.jsonl");
    if (!path) return ReportError("plan", path.error());
    window_trace = *path;
  }
  PlanWindow window_info;
  auto windowed = WindowScenarioText(text, *base, window, load, window_trace, &window_info);
  if (!windowed) return ReportError("plan", windowed.error());
  text = *windowed;
  auto in_window = ParseScenario(text, source);
  if (!in_window) return ReportError("plan", in_window.error());
  auto rate = MeasureWorkload(*in_window, model_limit);
  if (!rate) return ReportError("plan", rate.error());
  rate->warmup = window_info.warmup;  // simulated, not measured (docs/plan.md#window)

  const std::int64_t mine =
      (std::ssize(*candidates) - shard->index + shard->count - 1) / shard->count;
  const std::vector<CandidateOutcome> outcomes = [&] {
    ProgressLine line("plan", "", "candidates");
    line.Set(0, mine);
    return DecideCandidates(text, *in_window, space, *rate, *candidates, jobs, shard->index,
                            shard->count, [&](std::int64_t done) { line.Set(done, mine); });
  }();

  nlohmann::ordered_json doc;
  doc["scenario"] = base->name;
  doc["fingerprint"] = *fingerprint;
  doc["window"] = {{"kind", window},
                   {"start_s", window_info.start_s},
                   {"end_s", window_info.end_s},
                   {"warmup_s", window == "all" ? 0.0 : kPlanWarmupS},
                   {"tasks", window_info.tasks},
                   {"warmup_tasks", window_info.warmup_tasks},
                   {"trace_tasks", window_info.all_tasks},
                   {"load", window_info.load}};
  doc["slo"] = nlohmann::ordered_json::object();
  for (const SloTarget& t : space.slo.empty() ? base->slo : space.slo) doc["slo"][t.metric] = t.max;
  nlohmann::ordered_json sp;
  sp["gpus"] = space.gpus;
  sp["max_gpus"] = space.max_gpus;
  sp["kv_formats"] =
      space.kv_formats.empty() ? std::vector<std::string>{base->kv_format} : space.kv_formats;
  sp["weight_formats"] = space.weight_formats.empty()
                             ? std::vector<std::string>{base->weight_format}
                             : space.weight_formats;
  sp["speculative"] = space.speculative;
  sp["allow_uncalibrated"] = space.allow_uncalibrated;
  // --gpu-price: a shard priced otherwise is another plan (merge refuses it).
  sp["gpu_prices"] = nlohmann::ordered_json::object();
  for (const auto& [gpu, usd] : space.gpu_prices) sp["gpu_prices"][gpu] = usd;
  sp["api"] = space.api_models;
  sp["api_latency"] = space.api_latency;
  doc["space"] = sp;
  doc["workload"] = {{"tasks", rate->tasks},
                     {"output_tokens", rate->output_tokens},
                     {"fresh_prompt_tokens", rate->fresh_prompt_tokens},
                     {"ideal_s", rate->ideal_s},
                     {"arrival_span_s", rate->arrival_s},
                     {"mean_task_s", rate->mean_task_s},
                     {"tasks_per_day", space.tasks_per_day},
                     {"billing", base->deployment.billing},
                     // How a candidate's replicas share the requests (the
                     // scenario's engine.router): it moves prefix-cache hits
                     // and so the replica counts.
                     {"router", base->engine.router},
                     {"warnings", nlohmann::ordered_json::array()}};
  // A window whose arrivals are over before a task is: the run ramps up and
  // drains, and never holds the tasks at once that the daily rate does
  // (Little's law: rate x a task's length).
  if (rate->tasks > 0 && rate->arrival_s < rate->mean_task_s) {
    const double at_once = space.tasks_per_day / 86400.0 * rate->mean_task_s;
    doc["workload"]["warnings"].push_back(
        {{"code", "window_short"},
         {"message",
          "the simulated tasks arrive over " + FormatDuration(rate->arrival_s) +
              ", less than a task lasts (" + FormatDuration(rate->mean_task_s) +
              " of tool waits on average): at " + FormatRate(space.tasks_per_day) +
              " tasks a day about " + FormatFixed(at_once, 1) +
              " run at once, and this run never settles there (it holds at most " +
              std::to_string(rate->tasks) +
              ", ramping up and draining), so its latencies and replica counts describe a "
              "burst, not a day; give the trace more tasks (trace.tasks, or a longer recorded "
              "trace) so their arrivals outlast a task"}});
  }
  // Requests past max_model_len outside the window: its runs never meet
  // them, so no candidate's figures say that the engine refuses them (each
  // ending its task). The window's own are its candidates' context_limit.
  if (whole->tasks_over_limit > rate->tasks_over_limit) {
    doc["workload"]["warnings"].push_back(
        {{"code", "context_limit"},
         {"message", FormatWithSeparators(whole->tasks_over_limit - rate->tasks_over_limit) +
                         " task(s) of the trace outside the simulated window hold a request past "
                         "max_model_len " +
                         FormatWithSeparators(model_limit) + " (the longest " +
                         FormatWithSeparators(whole->longest_request) +
                         " tokens, prompt and output): the engine refuses such a request and "
                         "ends its task, which no candidate's figures here show; --window all "
                         "runs every task, or bound the prompts (context_policy)"}});
  }
  doc["total_candidates"] = std::ssize(*candidates);
  doc["candidates"] = nlohmann::ordered_json::array();
  for (const CandidateOutcome& o : outcomes) doc["candidates"].push_back(OutcomeJson(o));
  if (auto s = EmitOutput("plan", RenderPlan(doc, format), out); !s)
    return ReportError("plan", s.error());
  // CSV has rows of candidates only: the workload's warnings go to stderr
  // (the table prints them under its workload line, JSON in workload.warnings).
  if (format == "csv") {
    for (const auto& w : doc["workload"]["warnings"]) {
      std::cerr << "kvbill plan: warning [" << w["code"].get<std::string>()
                << "]: " << w["message"].get<std::string>() << "\n";
    }
  }
  // A shard sees its slice only: whether the plan has an answer is merge's
  // to say.
  if (shard->count == 1) {
    if (const std::string why = NoFeasibleCandidate(doc); !why.empty()) {
      std::cerr << "kvbill plan: " << why << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace kvbill::cli
