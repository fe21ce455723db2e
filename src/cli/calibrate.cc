// kvbill calibrate: fit the cost model to measurements.
//   kvbill calibrate kernels --kernels DIR -o CURVES.json   operator curves from kernel timings
#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/cli_util.h"
#include "kvbill/calibrate/kernel_fit.h"
#include "kvbill/calibrate/profile_fit.h"
#include "kvbill/calibrate/relative_effects.h"
#include "kvbill/calibrate/speculative_validation.h"
#include "kvbill/cost/speculative.h"
#include "kvbill/scenario/scenario.h"
#include "kvbill/util/units.h"

namespace kvbill::cli {
namespace {

constexpr char kKernelsUsage[] =
    "usage: kvbill calibrate kernels --kernels DIR [-o CURVES.json] [--table]\n\n"
    "Fits per-GPU operator curves (GEMM, decode and prefill attention, MLA, fused MoE,\n"
    "all-reduce) to a measured kernel database laid out as shared/data/kernels is (one\n"
    "directory per GPU: a100_sxm, h100_sxm, h200_sxm). Writes the curves as JSON (stdout\n"
    "or -o FILE, a file) and prints each curve's fit error to stderr; --table prints the\n"
    "fit errors as the Markdown table of docs/validation.md instead. Forms and errors:\n"
    "docs/validation.md#kernel-curves. kvbill ships the curves fitted this way in\n"
    "scenarios/kernels/curves.json.\n";

// A `vllm bench serve --save-result` record carries no server settings:
// the scenario's, where it gives them, become the record's vLLM flags; the
// keys that cannot apply to a recorded benchmark are named in a note, not
// dropped without a word.
void ApplyScenarioToBenchResults(const Scenario& s, const std::set<std::string>& given,
                                 const std::string& path, std::vector<Measurement>* records) {
  auto has = [&](const char* pointer) { return given.count(pointer) > 0; };
  std::string flags;
  auto flag = [&](const std::string& text) { flags += (flags.empty() ? "" : " ") + text; };
  if (has("/deployment/memory_fraction") && s.deployment.memory_fraction) {
    flag("--gpu-memory-utilization " + ShortestDecimal(*s.deployment.memory_fraction));
  }
  if (has("/engine/max_num_seqs") && s.engine.max_num_seqs) {
    flag("--max-num-seqs " + std::to_string(*s.engine.max_num_seqs));
  }
  if (has("/engine/max_num_batched_tokens") && s.engine.max_num_batched_tokens) {
    flag("--max-num-batched-tokens " + std::to_string(*s.engine.max_num_batched_tokens));
  }
  if (has("/prefix_cache/enabled") && !s.prefix_cache.enabled) flag("--no-enable-prefix-caching");
  if (has("/prefix_cache/block_size")) {
    flag("--block-size " + std::to_string(s.prefix_cache.block_size));
  }
  if (s.deployment.expert_parallel > 1) flag("--enable-expert-parallel");
  if (s.deployment.speculative) {
    nlohmann::ordered_json spec = {{"method", s.deployment.speculative->method}};
    if (s.deployment.speculative->num_speculative_tokens) {
      spec["num_speculative_tokens"] = *s.deployment.speculative->num_speculative_tokens;
    }
    flag("--speculative-config " + spec.dump());
  }
  // What a replay of a recorded benchmark takes from a scenario: the
  // server's settings above, the model, the GPU, the degree, the engine;
  // the sections it reads in part are checked key by key.
  static const std::set<std::string> kTop = {"name",      "notes",      "model",  "weight_format",
                                             "kv_format", "deployment", "engine", "prefix_cache"};
  static const std::set<std::string> kSecond = {"/deployment/gpu",
                                                "/deployment/gpus_per_replica",
                                                "/deployment/async_scheduling",
                                                "/deployment/engine",
                                                "/deployment/memory_fraction",
                                                "/deployment/expert_parallel",
                                                "/deployment/speculative",
                                                "/deployment/mxfp4_moe_kernel",
                                                "/engine/max_num_seqs",
                                                "/engine/max_num_batched_tokens",
                                                "/prefix_cache/enabled",
                                                "/prefix_cache/block_size"};
  std::string ignored;
  for (const std::string& key : given) {
    const auto depth = std::count(key.begin(), key.end(), '/');
    const std::string top = key.substr(
        1, key.find('/', 1) == std::string::npos ? std::string::npos : key.find('/', 1) - 1);
    const bool partly = top == "deployment" || top == "engine" || top == "prefix_cache";
    const bool skip = (depth == 1 && kTop.count(top) > 0) ||
                      (depth == 2 && (!partly || kSecond.count(key) > 0)) || depth > 2;
    // The draft's method and length are replayed; its acceptance is the
    // method's measured or default one (docs/engine.md).
    const bool draft_detail = depth == 3 && key.starts_with("/deployment/speculative/") &&
                              key != "/deployment/speculative/method" &&
                              key != "/deployment/speculative/num_speculative_tokens";
    if (!skip || draft_detail) ignored += (ignored.empty() ? "" : ", ") + key.substr(1);
  }
  bool any = false;
  for (Measurement& m : *records) {
    if (m.dataset != "bench") continue;
    any = true;
    if (!flags.empty()) m.engine_flags += (m.engine_flags.empty() ? "" : " ") + flags;
    if (has("/kv_format")) m.kv_cache_dtype = s.kv_format;
  }
  if (any && !ignored.empty()) {
    std::cerr << "kvbill calibrate: note: " << path << ": " << ignored
              << " not replayed (the benchmark result's own workload and client are, and a draft's "
                 "measured or default acceptance)\n";
  }
}

int RunKernels(const Args& args) {
  po::options_description options("options");
  std::string dir, out;
  bool table = false;
  options.add_options()("kernels", DirValue(&dir)->required(),
                        "kernel database directory (a directory)")(
      "output,o", FileValue(&out), "curves JSON file (a file; default stdout)")(
      "table", po::bool_switch(&table), "print the fit-error table (Markdown) instead");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "calibrate kernels", kKernelsUsage, options, vm)) return *stop;
  auto curves = FitKernelCurves(dir);
  if (!curves) return ReportError("calibrate kernels", curves.error());
  if (table) {
    std::cout << KernelFitTable(*curves);
    return 0;
  }
  std::cerr << KernelFitTable(*curves);
  if (auto s = EmitOutput("calibrate kernels", KernelCurvesToJson(*curves), out); !s) {
    return ReportError("calibrate kernels", s.error());
  }
  return 0;
}

constexpr char kUsage[] =
    "usage: kvbill calibrate --measurements FILE [--engine vllm|sglang] [--scenario S.json]\n"
    "                        [--profile START] [-o PROFILE.json] [--report]\n"
    "                        [--validation-doc FILE] [--no-fit] [--no-lomo] [--lomo-only]\n"
    "                        [-v] [--grid-rounds N] [--max-evaluations N]\n"
    "                        [--fit-exclusions FILE] [--fit-speculative]\n"
    "       kvbill calibrate --measurements FILE --detail ID [--detail ID ...] [--profile P]\n"
    "       kvbill calibrate kernels --kernels DIR [-o CURVES.json] [--table]\n\n"
    "Fits an engine profile (the engine's overheads around its kernels,\n"
    "docs/validation.md) to published serving measurements: each record is replayed as a\n"
    "kvbill workload and the profile's parameters are fitted on the log ratios of\n"
    "predicted to measured duration, mean TTFT, mean TPOT and the median inter-token\n"
    "latency. FILE is JSONL in the record shape of\n"
    "shared/data/calibration/measurements.jsonl, or the JSON `vllm bench serve\n"
    "--save-result` writes (which carries no server settings: --scenario supplies the\n"
    "model, GPU, tensor parallelism and deployment.async_scheduling, null meaning vLLM's\n"
    "default, on; without --scenario such a record runs synchronously). Writes the\n"
    "profile (-o, a file; default stdout unless --report); --report prints every record's\n"
    "metrics before and after the fit, the error statistics in sample and leaving each\n"
    "model out, and every record it cannot represent with the reason. --no-fit only\n"
    "evaluates --profile; --lomo-only keeps it and adds the leave-one-model-out figures\n"
    "(each model's records predicted by --profile refitted without them). --detail\n"
    "replays the records named with --profile in step mode and prints what each does\n"
    "inside: the KV pool, preemptions and recomputed tokens, iterations by kind and their\n"
    "times, ITL percentiles, beside the record's own detail metrics, and one decode step\n"
    "by cost-model part (docs/engine.md, \"Known misses\").\n\n"
    "  kernels   per-GPU operator curves from measured kernel latencies\n";

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void PrintPoints(std::ostream& out, const std::string& title, const std::vector<MetricPoint>& pts) {
  out << "\n### " << title
      << "\n\n| record | model | GPU | engine | workload | metric | measured | "
         "kvbill | ratio |\n|---|---|---|---|---|---|---:|---:|---:|\n";
  for (const MetricPoint& p : pts) {
    out << "| " << p.record << " | " << p.model << " | " << p.gpu << " | " << p.engine << " | "
        << p.workload << " | " << p.metric << " | " << Fixed(p.measured, 2) << " | "
        << Fixed(p.predicted, 2) << " | " << Fixed(p.Ratio(), 2) << " |\n";
  }
}

std::string StatsLine(const std::string& what, const std::vector<MetricPoint>& pts, bool fixed_only,
                      bool itl = false) {
  std::vector<MetricPoint> chosen;
  for (const MetricPoint& p : pts) {
    if (!fixed_only || p.fixed_lengths) chosen.push_back(p);
  }
  const ErrorStats s = Stats(chosen, itl);
  // No points: no figures (not a 0% miss).
  if (s.points == 0) return "| " + what + " | 0 | — | — |\n";
  return "| " + what + " | " + std::to_string(s.points) + " | " + Fixed(100 * s.median, 1) +
         "% | " + Fixed(100 * s.within_25, 0) + "% |\n";
}

// --detail: each record replayed in step mode, its inside printed.
// Each with --profile, or its own engine's profile.
int PrintDetails(const std::vector<Measurement>& records, const ReplayDefaults& defaults,
                 const std::vector<std::string>& ids, const std::string& profile_name) {
  std::ostringstream out;
  for (const std::string& id : ids) {
    const Measurement* m = nullptr;
    for (const Measurement& r : records) {
      if (r.id == id) m = &r;
    }
    if (m == nullptr) return ReportError("calibrate", Error("--detail " + id + ": no such record"));
    std::string why;
    auto plan = PlanReplay(*m, defaults, &why);
    if (!plan) return ReportError("calibrate", Error("--detail " + id + ": " + why));
    auto profile = LoadEngineProfile(profile_name.empty() ? plan->engine : profile_name);
    if (!profile) return ReportError("calibrate", profile.error());
    ReplayDetail detail;
    auto run = RunReplay(*plan, *profile, &detail);
    if (!run)
      return ReportError("calibrate", Error("--detail " + id + ": " + run.error().message()));
    out << ReplayDetailMarkdown(*plan, detail) << "\n";
  }
  std::cout << out.str();
  return 0;
}

int RunProfileFit(const Args& args) {
  po::options_description options("options");
  std::string measurements, engine, scenario_path, start_name, out;
  bool report = false, no_fit = false, no_lomo = false, verbose = false;
  bool fit_speculative = false;
  std::string validation_doc;
  std::vector<std::string> detail_ids;
  std::string exclusions_path;
  int evaluations = 200;
  int grid_rounds = 1;
  bool lomo_only = false;
  options.add_options()("measurements", FileValue(&measurements)->required(),
                        "measurements file (a file)")(
      "engine", po::value(&engine)->default_value("vllm"),
      "fit the records of this engine: vllm or sglang (the others are listed as not fitted)")(
      "scenario", FileValue(&scenario_path),
      "a scenario (a file) whose model, GPU and tensor parallelism replay records that lack them")(
      "profile", po::value(&start_name),
      "starting profile: bundled name or file (default: the engine's)")(
      "output,o", FileValue(&out), "profile JSON file to write (a file)")(
      "report", po::bool_switch(&report), "print the per-record report (Markdown)")(
      "no-fit", po::bool_switch(&no_fit), "evaluate --profile without fitting")(
      "no-lomo", po::bool_switch(&no_lomo), "skip the leave-one-model-out validation")(
      "fit-speculative", po::bool_switch(&fit_speculative),
      "fit the records that speculate with the others (by default they are replayed and "
      "reported only)")(
      "lomo-only", po::bool_switch(&lomo_only),
      "keep --profile unchanged; only refit it without each model in turn (leave one model "
      "out)")("verbose,v", po::bool_switch(&verbose), "print the fit's progress to stderr")(
      "validation-doc", FileValue(&validation_doc),
      "write the validation page (Markdown, a file): docs/validation.md")(
      "max-evaluations", po::value(&evaluations)->default_value(200),
      "residual evaluations of Levenberg-Marquardt (each replays every record)")(
      "grid-rounds", po::value(&grid_rounds)->default_value(1),
      "passes of the coordinate grid search before Levenberg-Marquardt (0 = none)")(
      "fit-exclusions", FileValue(&exclusions_path),
      "records to replay and report but keep out of the fit (a JSON file: a list of "
      "{\"records\": id prefix, \"reason\": text})")(
      "detail", po::value(&detail_ids),
      "replay record ID (repeatable) with --profile (default: its engine's) and print what it "
      "does inside (KV pool, "
      "preemptions, iterations, ITL) beside the record's own detail metrics; fits nothing");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "calibrate", kUsage, options, vm)) return *stop;
  if (grid_rounds < 0 || evaluations < 1) {
    return ReportError("calibrate",
                       Error(grid_rounds < 0 ? "--grid-rounds: must be 0 or more"
                                             : "--max-evaluations: must be 1 or more"));
  }
  if (lomo_only && (no_fit || no_lomo)) {
    return ReportError("calibrate",
                       Error("--lomo-only: cannot be combined with --no-fit or --no-lomo"));
  }
  if (auto s = CheckChoice("engine", engine, "vllm|sglang"); !s)
    return ReportError("calibrate", s.error());
  auto records = ReadMeasurements(measurements);
  if (!records) return ReportError("calibrate", records.error());
  ReplayDefaults defaults;
  if (!scenario_path.empty()) {
    auto scenario = LoadScenario(scenario_path);
    if (!scenario) return ReportError("calibrate", scenario.error());
    const std::set<std::string>& given = scenario->given;
    auto has = [&](const char* pointer) { return given.count(pointer) > 0; };
    // A record names its model (a bench result its model_id): the
    // scenario's only when it says one.
    if (has("/model")) defaults.model = scenario->model.name;
    if (has("/weight_format")) defaults.weight_format = scenario->weight_format;
    ApplyScenarioToBenchResults(*scenario, given, scenario_path, &*records);
    defaults.gpu = scenario->deployment.gpu;
    defaults.tensor_parallel = scenario->deployment.gpus_per_replica;
    // A record without a version (vllm bench --save-result) runs as the
    // scenario says; null is vLLM's own default since v0.14 for a run
    // without speculation (the record names none).
    defaults.async_scheduling =
        scenario->deployment.async_scheduling.value_or(AsyncSchedulingByDefault(false, ""));
    defaults.mxfp4_experts_marlin = scenario->deployment.mxfp4_moe_kernel == "marlin";
  }
  if (!detail_ids.empty()) return PrintDetails(*records, defaults, detail_ids, start_name);
  std::vector<FitExclusion> exclusions;
  if (!exclusions_path.empty()) {
    auto read = ReadFitExclusions(exclusions_path, *records);
    if (!read) return ReportError("calibrate", read.error());
    exclusions = std::move(*read);
  }
  std::vector<ReplayPlan> plans;
  std::vector<ReplayPlan> all_plans;  // with the speculative ones (fitted if --fit-speculative)
  std::vector<SkippedRecord> skipped;
  std::int64_t other_engine = 0;  // records of the other engine, left to its fit
  for (const Measurement& m : *records) {
    if (m.engine != engine) {
      ++other_engine;
      continue;
    }
    std::string why;
    auto plan = PlanReplay(m, defaults, &why);
    if (plan) {
      all_plans.push_back(*plan);
      if (!plan->speculative || fit_speculative) plans.push_back(std::move(*plan));
    } else {
      skipped.push_back(SkippedRecord{m.id, why});
    }
  }
  auto start = LoadEngineProfile(start_name.empty() ? engine : start_name);
  if (!start) return ReportError("calibrate", start.error());
  if (plans.empty()) {
    // Say why, record by record (the first few), and what the engine left.
    std::string why;
    for (std::size_t i = 0; i < skipped.size() && i < 5; ++i) {
      why += "; " + skipped[i].id + ": " + skipped[i].reason;
    }
    if (skipped.size() > 5) why += "; and " + std::to_string(skipped.size() - 5) + " more";
    if (other_engine > 0) {
      why += "; " + std::to_string(other_engine) +
             (other_engine == 1 ? " record is" : " records are") + " not --engine " + engine + "'s";
    }
    return ReportError("calibrate", Error(measurements + ": no record kvbill can replay" + why));
  }
  FitOutcome outcome;
  if (no_fit) {
    outcome.profile = *start;
    outcome.exclusions = exclusions;  // reported, though nothing is fitted
    outcome.before = Evaluate(plans, *start, &outcome.skipped);
    outcome.after = outcome.before;
  } else {
    FitOptions fit;
    fit.max_evaluations = evaluations;
    fit.grid_rounds = grid_rounds;
    fit.leave_one_model_out = !no_lomo;
    fit.keep_start = lomo_only;
    fit.exclusions = exclusions;
    if (verbose) {
      fit.progress = [](int done, double cost) {
        std::cerr << "kvbill calibrate: " << done << " evaluations, loss " << cost << "\n";
      };
    }
    outcome = FitProfile(plans, *start, fit);
  }
  for (const SkippedRecord& s : outcome.skipped) skipped.push_back(s);
  std::vector<SkippedRecord> not_fitted = skipped;  // and the other engines' records
  for (const Measurement& m : *records) {
    if (m.engine != engine) {
      not_fitted.push_back(
          SkippedRecord{m.id, m.engine + " record (this fit is " + engine + "'s)"});
    }
  }
  // The other engine's pairs are on its own page.
  std::vector<Measurement> own;
  for (const Measurement& m : *records) {
    if (m.engine == engine) own.push_back(m);
  }
  const std::string effects =
      RelativeEffectsMarkdown(FindRelativeEffects(own, outcome.after, not_fitted));
  if (!validation_doc.empty()) {
    std::string command = "kvbill calibrate";
    for (const std::string& a : args) command += " " + a;
    if (auto s =
            EmitOutput("calibrate",
                       ValidationMarkdown(outcome, skipped, KernelFitTable(BundledKernelCurves()),
                                          effects, command) +
                           SpeculativeValidationMarkdown(*records, all_plans, not_fitted,
                                                         outcome.profile, fit_speculative) +
                           InterTokenLatencyMarkdown(all_plans, outcome.profile, exclusions),
                       validation_doc);
        !s) {
      return ReportError("calibrate", s.error());
    }
  }
  if (!out.empty() || !report) {
    if (auto s = EmitOutput("calibrate", EngineProfileToJson(outcome.profile), out); !s) {
      return ReportError("calibrate", s.error());
    }
  }
  if (report) {
    std::ostringstream r;
    // --no-fit: the profile as given, one set of points.
    const char* const after = no_fit ? "the profile as given" : "in sample";
    r << "| points | n | median error | within ±25% |\n|---|---:|---:|---:|\n";
    if (!no_fit) r << StatsLine("fixed lengths, before", outcome.before, true);
    r << StatsLine(std::string("fixed lengths, ") + after, outcome.after, true);
    if (!no_fit) r << StatsLine("fixed lengths, leave one model out", outcome.lomo, true);
    if (!no_fit) r << StatsLine("all, before", outcome.before, false);
    r << StatsLine(std::string("all, ") + after, outcome.after, false);
    if (!no_fit) r << StatsLine("median ITL, before", outcome.before, false, true);
    r << StatsLine(std::string("median ITL, ") + after, outcome.after, false, true);
    r << "\n### Relative effects\n\n" << effects;
    PrintPoints(r, no_fit ? "The profile as given" : "After the fit", outcome.after);
    if (!outcome.lomo.empty()) PrintPoints(r, "Leave one model out", outcome.lomo);
    r << "\n### Records and metrics left out\n\n| record | reason |\n|---|---|\n";
    for (const SkippedRecord& s : skipped) r << "| " << s.id << " | " << s.reason << " |\n";
    std::cout << r.str();
  }
  return 0;
}

}  // namespace

int RunCalibrate(const Args& args) {
  if (args.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  // --help goes through the option parser, which lists every option.
  const Args rest(args.begin() + 1, args.end());
  if (args[0] == "kernels") return RunKernels(rest);
  return RunProfileFit(args);
}

}  // namespace kvbill::cli
