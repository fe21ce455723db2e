// kvbill simulate: replay a trace under a scenario; per-task and summary output.
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_util.h"
#include "cli/progress.h"
#include "cli/simulate_api.h"
#include "kvbill/report/table.h"
#include "kvbill/scenario/run.h"
#include "kvbill/scenario/warnings.h"
#include "kvbill/util/embedded.h"

namespace kvbill::cli {
namespace {

constexpr char kUsage[] =
    "usage: kvbill simulate [--scenario S.json] [--trace T] [--engine event|step]\n"
    "                       [--format table|json|csv] [--requests] [--out DIR]\n\n"
    "Replays a trace (or a generated workload) through the scenario's deployment: continuous\n"
    "batching, block prefix cache, roofline iteration times. Reports per task: requests,\n"
    "prompt / cached / prefilled / output tokens, KV bytes read, GPU-seconds, dollars and\n"
    "completion time, and a summary. --scenario default (the default) is the bundled\n"
    "scenarios/default.json. Scenario format: docs/scenario-format.md; engine: docs/engine.md.\n"
    "A scenario with \"pricing\" bills the trace at an API provider's cache rules and list\n"
    "prices instead (docs/billing.md#api-mode).\n";

// A number for JSON: integers stay integers, others keep full precision.
nlohmann::ordered_json Num(long double v) {
  const long double r = std::round(v);
  if (r == v && std::fabs(v) < 9.0e15L) return static_cast<std::int64_t>(r);
  return static_cast<double>(v);
}

nlohmann::ordered_json SummaryJson(const Summary& s) {
  return {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}};
}

std::string Money(long double usd) { return "$" + FormatFixed(static_cast<double>(usd), 4); }

// "vllm profile, calibrated (validation median error 21%)" or why not.
std::string CostModelLine(const CostModelInfo& m) {
  if (m.profile == "roofline") return "spec-sheet roofline (uncalibrated)";
  std::string line = m.profile + " profile, ";
  if (!m.calibrated) return line + "uncalibrated";
  line += "calibrated";
  if (m.validation_median_error > 0) {
    line += " (median error " + FormatFixed(m.validation_median_error * 100, 0) +
            "% on published runs, docs/validation.md)";
  }
  return line;
}

Result<Scenario> Load(const std::string& name) {
  if (name == "default") {
    auto text = EmbeddedFile("default.json");
    if (!text) return Error("the bundled default scenario is missing");
    return ParseScenario(std::string(*text), "scenarios/default.json");
  }
  return LoadScenario(name);
}

}  // namespace

int RunSimulate(const Args& args) {
  po::options_description options("options");
  std::string scenario_path, trace, engine, format, out_dir;
  bool with_requests = false;
  options.add_options()("scenario,s", FileValue(&scenario_path)->default_value("default"),
                        "scenario JSON file, or `default`")(
      "trace,t", FileValue(&trace), "trace file, replacing the scenario's trace")(
      "engine", po::value(&engine), "event (skips iterations in closed form) or step")(
      "format", po::value(&format)->default_value("table"), "table, json or csv")(
      "requests", po::bool_switch(&with_requests), "include per-request records (json)")(
      "out,o", DirValue(&out_dir), "a directory: also write simulate.json and tasks.csv into it");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "simulate", kUsage, options, vm)) return *stop;
  if (auto s = CheckChoice("format", format, "table|json|csv"); !s) {
    return ReportError("simulate", s.error());
  }
  auto scenario = Load(scenario_path);
  if (!scenario) return ReportError("simulate", scenario.error());
  if (!trace.empty()) {
    scenario->trace.file = trace;
    scenario->trace.generator.clear();
    scenario->trace.format = "auto";
  }
  if (!engine.empty()) {
    if (auto s = CheckChoice("engine", engine, "event|step"); !s) {
      return ReportError("simulate", s.error());
    }
    scenario->engine.mode = engine;
  }
  if (scenario->pricing) return RunSimulateApi(*scenario, format, with_requests, out_dir);
  const auto wall_start = std::chrono::steady_clock::now();
  auto outcome = [&] {
    ProgressLine progress("simulate", "simulating " + scenario->name);
    return RunScenario(*scenario);
  }();
  if (!outcome) return ReportError("simulate", outcome.error());
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const RunSummary& sum = outcome->summary;

  nlohmann::ordered_json j;
  j["scenario"] = scenario->name;
  j["tasks"] = nlohmann::ordered_json::array();
  for (const TaskMetrics& t : outcome->tasks) {
    j["tasks"].push_back({{"id", t.id},
                          {"requests", t.requests},
                          {"prompt_tokens", t.prompt_tokens},
                          {"cached_tokens", t.cached_tokens},
                          {"offload_hit_tokens", t.offload_hit_tokens},
                          {"prefill_tokens", t.prefill_tokens},
                          {"output_tokens", t.output_tokens},
                          {"kv_read_bytes", Num(std::round(t.kv_read_bytes))},
                          {"gpu_seconds", static_cast<double>(t.gpu_seconds)},
                          {"cost_usd", static_cast<double>(t.cost_usd)},
                          {"completion_s", t.completion_s},
                          {"ttft_mean_s", t.ttft_mean_s},
                          {"queue_mean_s", t.queue_mean_s},
                          {"preemptions", t.preemptions},
                          {"kv_written_bytes", Num(std::round(t.kv_written_bytes))},
                          {"peak_kv_bytes", t.peak_kv_bytes}});
  }
  nlohmann::ordered_json s;
  s["tasks"] = sum.tasks;
  s["requests"] = sum.requests;
  s["prompt_tokens"] = sum.prompt_tokens;
  s["cached_tokens"] = sum.cached_tokens;
  s["hit_rate"] = sum.hit_rate;
  s["kv_read_bytes"] = Num(std::round(sum.kv_read_bytes));
  s["cost_usd"] = static_cast<double>(sum.cost_usd);
  s["cost_per_task_usd"] = SummaryJson(sum.cost_per_task_usd);
  s["simulated_s"] = sum.simulated_s;
  s["wall_s"] = wall_s;
  s["prefill_tokens"] = sum.prefill_tokens;
  s["offload_hit_tokens"] = sum.offload_hit_tokens;
  s["output_tokens"] = sum.output_tokens;
  s["task_cost_usd"] = static_cast<double>(sum.task_cost_usd);
  s["idle_cost_usd"] = static_cast<double>(sum.idle_usd);
  s["ttft_s"] = SummaryJson(sum.ttft_s);
  s["preemptions"] = sum.preemptions;
  s["evicted_blocks"] = sum.evicted_blocks;
  s["kv_pool_blocks_per_replica"] = sum.kv_pool_blocks;
  if (outcome->result.kv_cache_groups > 1) {  // blocks are then pages of one group
    s["kv_cache_groups"] = outcome->result.kv_cache_groups;
  }
  s["iterations"] = outcome->result.iterations;
  s["engine_steps"] = outcome->result.steps_advanced;
  const CostModelInfo& model = outcome->result.cost_model;
  s["cost_model"] = {{"profile", model.profile},
                     {"calibrated", model.calibrated},
                     {"validation_median_error", model.validation_median_error},
                     {"notes", model.notes},
                     {"formats", nlohmann::ordered_json::array()}};
  for (const FormatUse& f : model.formats) {
    s["cost_model"]["formats"].push_back({{"part", f.part},
                                          {"stored", f.stored},
                                          {"computed", f.computed},
                                          {"kernel", f.kernel},
                                          {"timing", f.timing}});
  }
  const std::vector<RunWarning> warnings = EngineRunWarnings(*scenario, outcome->result);
  s["warnings"] = nlohmann::ordered_json::array();
  for (const RunWarning& w : warnings) {
    s["warnings"].push_back({{"code", w.code}, {"message", w.message}});
  }
  j["summary"] = s;
  if (with_requests) {
    j["requests"] = nlohmann::ordered_json::array();
    for (const RequestRecord& r : outcome->result.requests) {
      j["requests"].push_back({{"task", r.task_id},
                               {"index", r.index},
                               {"turn", r.turn},
                               {"summary", r.is_summary},
                               {"replica", r.replica},
                               {"release_s", r.release_s},
                               {"first_token_s", r.first_token_s},
                               {"finish_s", r.finish_s},
                               {"prompt_tokens", r.prompt_tokens},
                               {"cached_tokens", r.cached_tokens},
                               {"prefill_tokens", r.prefill_tokens},
                               {"output_tokens", r.output_tokens},
                               {"kv_read_bytes", Num(std::round(r.kv_read_bytes))},
                               {"cost_usd", static_cast<double>(r.cost_usd)}});
    }
  }

  Table tasks_csv({"id", "requests", "prompt_tokens", "cached_tokens", "prefill_tokens",
                   "output_tokens", "kv_read_bytes", "gpu_seconds", "cost_usd", "completion_s"});
  for (const auto& t : j["tasks"]) {
    tasks_csv.AddRow({t["id"].get<std::string>(), t["requests"].dump(), t["prompt_tokens"].dump(),
                      t["cached_tokens"].dump(), t["prefill_tokens"].dump(),
                      t["output_tokens"].dump(), t["kv_read_bytes"].dump(), t["gpu_seconds"].dump(),
                      t["cost_usd"].dump(), t["completion_s"].dump()});
  }

  std::ostringstream text;
  if (format == "json") {
    text << j.dump(2) << "\n";
  } else if (format == "csv") {
    text << tasks_csv.ToCsv();
  } else {
    Table t({"task", "requests", "prompt tok", "cached", "prefilled", "output", "KV read", "GPU-s",
             "cost", "done in"});
    const std::size_t shown = std::min<std::size_t>(outcome->tasks.size(), 20);
    for (std::size_t i = 0; i < shown; ++i) {
      const TaskMetrics& m = outcome->tasks[i];
      t.AddRow({m.id, std::to_string(m.requests), FormatWithSeparators(m.prompt_tokens),
                FormatWithSeparators(m.cached_tokens), FormatWithSeparators(m.prefill_tokens),
                FormatWithSeparators(m.output_tokens),
                FormatBinaryBytes(static_cast<double>(m.kv_read_bytes)),
                FormatFixed(static_cast<double>(m.gpu_seconds), 2), Money(m.cost_usd),
                FormatDuration(m.completion_s)});
    }
    text << "scenario " << scenario->name << " (" << scenario->source << ")\n\n" << t.ToText();
    if (outcome->tasks.size() > shown) {
      text << "... " << outcome->tasks.size() - shown << " more tasks (--format csv for all)\n";
    }
    text << "\n";
    for (const RunWarning& w : warnings)
      text << "warning [" << w.code << "]: " << w.message << "\n";
    text << sum.tasks << " tasks, " << sum.requests << " requests; prompt "
         << FormatWithSeparators(sum.prompt_tokens) << " tokens, "
         << FormatFixed(sum.hit_rate * 100, 1) << "% from the prefix cache\n"
         << "KV read " << FormatBinaryBytes(static_cast<double>(sum.kv_read_bytes))
         << "; simulated " << FormatDuration(sum.simulated_s) << "; " << sum.preemptions
         << " preemptions\n"
         << "cost per task: mean " << Money(sum.cost_per_task_usd.mean) << ", p50 "
         << Money(sum.cost_per_task_usd.p50) << ", p90 " << Money(sum.cost_per_task_usd.p90)
         << ", p99 " << Money(sum.cost_per_task_usd.p99) << "\n"
         << "bill " << Money(sum.cost_usd) << " = tasks " << Money(sum.task_cost_usd) << " + idle "
         << Money(sum.idle_usd) << "\n"
         << "iteration times: " << CostModelLine(model) << "\n";
    for (const std::string& note : model.notes) text << "  note: " << note << "\n";
  }
  return FinishSimulate(out_dir, j.dump(2) + "\n", tasks_csv.ToCsv(), text.str());
}

}  // namespace kvbill::cli
