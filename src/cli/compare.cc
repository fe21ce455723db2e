// kvbill compare: the baseline and one variant per lever, ranked by saving.
#include <algorithm>
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
    "usage: kvbill compare [--scenario S.json] [--trace T] [--jobs N] [--format table|json]\n"
    "                      [--load 0.25,1,4]\n\n"
    "Runs the scenario and one variant per lever — KV quantization (fp8, nvfp4), prefix\n"
    "caching toggled, dropping old tool results, summarising long contexts, architecture\n"
    "(half the KV heads; a latent KV cache of 512 + 64 elements per layer as in MLA),\n"
    "speculative decoding toggled (on: the model's MTP layer, else an EAGLE-3 head, at\n"
    "their default draft length and acceptance) — and ranks them by each lever's value: the\n"
    "dollars per task it saves against the same scenario without it, largest first. A lever\n"
    "that cannot apply (a format the GPU cannot run, a context policy that changes no prompt\n"
    "of the trace) is\n"
    "listed as not applicable with the reason. --load runs the comparison at each load\n"
    "factor (trace.load: the gaps between task starts divided by it) and prints a lever x\n"
    "load table of the savings.\n"
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

// 0.25 -> "0.25", 4 -> "4".
std::string LoadText(double load) {
  std::ostringstream text;
  text << load;
  return text.str();
}

// "saves $0.2200 per task, 78.0%" or "costs $0.0100 more per task, 5.0%".
std::string ValueText(const LeverValue& v) {
  if (v.saves_usd_per_task >= 0) {
    return "saves " + FormatUsdAmount(v.saves_usd_per_task) + " per task, " + Pct(v.saves_fraction);
  }
  return "costs " + FormatUsdAmount(v.saves_usd_per_task) + " more per task, " +
         Pct(-v.saves_fraction);
}

// A lever that costs more on a GPU: what changed with it, so that a cost
// is not read without its cause (an fp8 KV cache halves the KV read, yet its
// prefill kernels may be slower than bf16's; a summary is another request):
// the requests, the mean time to first token and per output token.
std::string WhatChanged(const LeverValue& v, const LeverOutcome& o, const LeverOutcome& baseline) {
  if (v.saves_usd_per_task >= 0 || !o.run || !baseline.run) return "";
  const RunSummary& with = o.lever.removes.empty() ? o.run->summary : baseline.run->summary;
  const RunSummary& without = o.lever.removes.empty() ? baseline.run->summary : o.run->summary;
  // A latency no request measured is none, not 0.
  auto mean = [](const Summary& s, double scale, int decimals) {
    return s.count == 0 ? std::string("none") : FormatFixed(s.mean * scale, decimals);
  };
  return "; with it: requests " + FormatWithSeparators(without.requests) + " -> " +
         FormatWithSeparators(with.requests) + ", mean TTFT " + mean(without.ttft_s, 1, 3) +
         " -> " + mean(with.ttft_s, 1, 3) + " s, mean TPOT " + mean(without.tpot_s, 1e3, 2) +
         " -> " + mean(with.tpot_s, 1e3, 2) + " ms";
}

// The value fields of a lever that ran (compare's JSON).
void AddValueJson(const LeverValue& v, std::size_t rank, nlohmann::ordered_json* r) {
  (*r)["value_of"] = v.lever;
  (*r)["saves_usd_per_task"] = v.saves_usd_per_task;
  (*r)["saves_fraction"] = v.saves_fraction;
  (*r)["rank"] = rank;
}

// The baseline's warnings in full (every saving is measured against it),
// each variant's by the codes the baseline does not raise, so a lever that
// only "saves" by overloading the deployment or refusing requests is not
// read as a saving.
void PrintWarnings(const LeverOutcome& baseline, const std::vector<const LeverOutcome*>& variants,
                   const std::string& heading) {
  // The heading (the load, under --load) whenever anything follows it.
  bool headed = false;
  auto head = [&] {
    if (!headed) std::cout << "\n" << heading << ":\n";
    headed = true;
  };
  if (!baseline.warnings.empty()) head();
  for (const RunWarning& w : baseline.warnings) {
    std::cout << "  baseline: warning [" << w.code << "]: " << w.message << "\n";
  }
  for (const LeverOutcome* o : variants) {
    std::vector<std::string> fresh;  // codes the baseline does not raise
    for (const RunWarning& w : o->warnings) {
      const bool shared =
          std::any_of(baseline.warnings.begin(), baseline.warnings.end(),
                      [&](const RunWarning& base_warning) { return base_warning.code == w.code; });
      if (!shared) fresh.push_back(w.code);
    }
    if (fresh.empty()) continue;
    head();
    std::cout << "  " << o->lever.name << ": raises";
    for (std::size_t k = 0; k < fresh.size(); ++k) std::cout << (k ? ", " : " ") << fresh[k];
    std::cout << " (`--format json` has each message)\n";
  }
}

// compare --load: the levers at each load, a lever x load table of values.
int CompareLoads(const std::string& text, const std::string& source, const Scenario& base,
                 const std::vector<double>& loads, int jobs, const std::string& format) {
  std::vector<Lever> levers = Levers(base);
  levers.insert(levers.begin(), Lever{"baseline", {}});
  std::vector<std::vector<LeverOutcome>> runs;
  WorkloadCache workloads;  // one trace and policy: shared by every load
  for (double load : loads) {
    auto at_load = WithSetting(text, "/trace/load", nlohmann::json(load).dump());
    if (!at_load) return ReportError("compare", at_load.error());
    ProgressLine progress("compare", "load " + LoadText(load) + ": running " +
                                         std::to_string(levers.size()) + " variants");
    runs.push_back(RunLevers(*at_load, source, levers, jobs, &workloads));
    if (!runs.back()[0].run) return ReportError("compare", Error(runs.back()[0].error));
  }
  nlohmann::ordered_json j;
  j["scenario"] = base.name;
  j["loads"] = nlohmann::ordered_json::array();
  std::vector<std::string> header = {"lever"};
  for (double load : loads) header.push_back("load " + LoadText(load));
  Table t(header);
  std::vector<std::string> base_row = {"baseline $/task"};
  for (std::size_t k = 0; k < loads.size(); ++k) {
    const std::vector<LeverOutcome>& o = runs[k];
    const double b = o[0].run->summary.cost_per_task_usd.mean;
    // A baseline that served no request measured nothing (null, not $0).
    const bool measured = o[0].run->summary.requests > 0;
    base_row.push_back(measured ? FormatUsdAmount(b) : "not measured");
    const std::vector<std::size_t> ranked = RankByValue(o);
    nlohmann::ordered_json at = {{"load", loads[k]},
                                 {"baseline_cost_per_task_usd",
                                  measured ? nlohmann::ordered_json(b) : nlohmann::ordered_json()},
                                 {"baseline_warnings", WarningsJson(o[0].warnings)},
                                 {"levers", nlohmann::ordered_json::array()}};
    for (std::size_t r = 0; r < ranked.size(); ++r) {
      const LeverOutcome& x = o[ranked[r]];
      nlohmann::ordered_json row = {{"lever", x.lever.name}};
      if (x.run && !x.not_comparable.empty()) {
        row["cost_per_task_usd"] = x.run->summary.cost_per_task_usd.mean;
        row["requests"] = x.run->summary.requests;
        row["not_comparable"] = x.not_comparable;
        row["warnings"] = WarningsJson(x.warnings);
      } else if (x.run) {
        row["cost_per_task_usd"] = x.run->summary.cost_per_task_usd.mean;
        AddValueJson(ValueOf(x.lever, b, x.run->summary.cost_per_task_usd.mean), r + 1, &row);
        row["warnings"] = WarningsJson(x.warnings);
      } else if (!x.lever.not_applicable.empty()) {
        row["not_applicable"] = x.lever.not_applicable;
      } else {
        row["error"] = x.error;
      }
      at["levers"].push_back(row);
    }
    j["loads"].push_back(at);
  }
  t.AddRow(base_row);
  for (std::size_t i = 1; i < levers.size(); ++i) {
    std::vector<std::string> row = {levers[i].removes.empty() ? levers[i].name : levers[i].removes};
    for (std::size_t k = 0; k < loads.size(); ++k) {
      const std::vector<LeverOutcome>& o = runs[k];
      const LeverOutcome& x = o[i];
      if (!x.run) {
        row.push_back(x.lever.not_applicable.empty() ? "failed" : "not applicable");
        continue;
      }
      if (!x.not_comparable.empty()) {
        row.push_back("not comparable");
        continue;
      }
      const std::vector<std::size_t> ranked = RankByValue(o);
      const std::size_t rank =
          static_cast<std::size_t>(std::find(ranked.begin(), ranked.end(), i) - ranked.begin()) + 1;
      const LeverValue v = ValueOf(x.lever, o[0].run->summary.cost_per_task_usd.mean,
                                   x.run->summary.cost_per_task_usd.mean);
      row.push_back("#" + std::to_string(rank) + " " + (v.saves_usd_per_task < 0 ? "-" : "") +
                    FormatUsdAmount(v.saves_usd_per_task) + " " + Pct(v.saves_fraction));
    }
    t.AddRow(row);
  }
  if (format == "json") {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "scenario " << base.name
            << ": each lever's saving per task against the scenario without it, at each load\n"
            << "(trace.load: gaps between task starts divided by it); #rank by saving\n\n"
            << t.ToText();
  for (std::size_t i = 1; i < levers.size(); ++i) {
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const std::vector<LeverOutcome>& o = runs[k];
      if (o[i].run && !o[i].not_comparable.empty()) {
        std::cout << "not comparable: " << o[i].lever.name << " (load " << LoadText(loads[k])
                  << "): " << o[i].not_comparable << "\n";
        break;
      }
      if (!o[i].run) {
        // As the one-load listing says it: "not applicable: LEVER: why",
        // or "n/a: LEVER: the error" for a variant that failed.
        const bool not_applicable = !o[i].lever.not_applicable.empty();
        std::cout << (not_applicable ? "not applicable: " : "n/a: ") << o[i].lever.name << ": "
                  << (not_applicable ? o[i].lever.not_applicable : o[i].error) << "\n";
        break;
      }
    }
  }
  // Each load's warnings, as the one-load listing gives them.
  for (std::size_t k = 0; k < loads.size(); ++k) {
    std::vector<const LeverOutcome*> variants;
    for (std::size_t i = 1; i < runs[k].size(); ++i) {
      if (runs[k][i].run) variants.push_back(&runs[k][i]);
    }
    PrintWarnings(runs[k][0], variants, "load " + LoadText(loads[k]) + ", warnings");
  }
  return 0;
}

}  // namespace

int RunCompare(const Args& args) {
  po::options_description options("options");
  std::string scenario_path, trace, format, load_list;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.add_options()("scenario,s", FileValue(&scenario_path)->default_value("default"),
                        "scenario JSON file, or `default`")(
      "trace,t", FileValue(&trace), "trace file, replacing the scenario's trace")(
      "jobs,j", po::value(&jobs)->default_value(jobs), "threads")(
      "format", po::value(&format)->default_value("table"), "table or json")(
      "load", po::value(&load_list), "load factors, e.g. 0.25,1,4: the comparison at each");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "compare", kUsage, options, vm)) return *stop;
  if (auto s = CheckChoice("format", format, "table|json"); !s) {
    return ReportError("compare", s.error());
  }
  if (jobs < 1) return ReportError("compare", Error("--jobs: must be at least 1"));
  auto read = ReadScenarioText(scenario_path, trace);
  if (!read) return ReportError("compare", read.error());
  const std::string& text = read->text;
  const std::string& source = read->source;
  auto base = ParseScenario(text, source);
  if (!base) return ReportError("compare", base.error());
  if (vm.count("load")) {
    auto loads = ParseLoads(load_list);
    if (!loads) return ReportError("compare", loads.error());
    return CompareLoads(text, source, *base, *loads, jobs, format);
  }

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

  // Rank the variants by the value of their lever; those that did not run last.
  std::vector<const LeverOutcome*> ranked;
  for (std::size_t i : RankByValue(outcomes)) ranked.push_back(&outcomes[i]);
  auto value_of = [&](const LeverOutcome& o) {
    return ValueOf(o.lever, base_cost, o.run->summary.cost_per_task_usd.mean);
  };

  const TaskGrowth task_growth = FitTaskGrowth(b.tasks);
  const Result<PowerLawFit>& growth = task_growth.fit;
  const std::int64_t cut = task_growth.cut;
  const std::string cut_text = task_growth.CutText();

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
      r["requests"] = o.run->summary.requests;
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
      // A run that served no request measured nothing: null, not $0 (and
      // nothing is saved against a baseline that measured nothing).
      const bool measured = o.run->summary.requests > 0;
      if (!measured) {
        r["not_measured"] = "no request was served";
        for (const char* key :
             {"cost_per_task_usd", "cost_per_task_usd_p90", "kv_read_bytes_per_task",
              "cache_write_tokens_per_task", "hit_rate"}) {
          if (r.contains(key)) r[key] = nullptr;
        }
      }
      // A saving against a baseline of other work (not_comparable) is no
      // saving: null, as the table's "not comparable".
      if (!measured || b.summary.requests == 0 || !o.not_comparable.empty()) {
        for (const char* key : {"saving_usd_per_task", "saving_fraction", "kv_saving_fraction"}) {
          if (r.contains(key)) r[key] = nullptr;
        }
      }
      if (!o.not_comparable.empty()) {
        r["not_comparable"] = o.not_comparable;
      } else if (&o != &outcomes[0]) {
        const auto at = std::find(ranked.begin(), ranked.end(), &o);
        AddValueJson(value_of(o), static_cast<std::size_t>(at - ranked.begin()) + 1, &r);
      }
      r["warnings"] = WarningsJson(o.warnings);
      return r;
    };
    j["scenario"] = base->name;
    if (api) j["pricing"] = {{"provider", base->pricing->provider}, {"model", b.api->price.id}};
    j["baseline"] = row(outcomes[0]);
    j["variants"] = nlohmann::ordered_json::array();
    for (const LeverOutcome* o : ranked) j["variants"].push_back(row(*o));
    if (growth) {
      j["growth"] = {{"x", "requests per task"},     {"y", "cost per task"},
                     {"exponent", growth->exponent}, {"r_squared", growth->r_squared},
                     {"tasks", growth->points},      {"cut_tasks_left_out", cut}};
    } else {
      j["growth"] = {{"x", "requests per task"},
                     {"y", "cost per task"},
                     {"not_fitted", growth.error().message()},
                     {"cut_tasks_left_out", cut}};
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
  std::vector<std::string> values;  // "saves $0.22 per task, 78%": the lines under the table
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
    if (o.run->summary.requests == 0 || (!is_base && b.summary.requests == 0)) {
      // Nothing measured here, or nothing to measure a saving against.
      std::vector<std::string> row(header.size(), "");
      row[0] = o.lever.name;
      row[1] = o.run->summary.requests == 0 ? "not measured" : "$" + FormatFixed(cost, 4);
      t.AddRow(row);
      return;
    }
    const bool comparable = o.not_comparable.empty();
    const std::string saving = is_base ? ""
                               : !comparable
                                   ? "not comparable"
                                   : Pct(base_cost > 0 ? (base_cost - cost) / base_cost : 0);
    if (!is_base && comparable) {
      const LeverValue v = value_of(o);
      values.push_back(
          std::to_string(values.size() + 1) + ". " + v.lever + ": " + ValueText(v) +
          (o.lever.removes.empty() ? "" : " (in the baseline; measured by turning it off)") +
          (api ? "" : WhatChanged(v, o, outcomes[0])));
    }
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
              is_base || !comparable ? "" : Pct(base_kv > 0 ? (base_kv - kv) / base_kv : 0), hit,
              p90});
  };
  add(outcomes[0]);
  for (const LeverOutcome* o : ranked) add(*o);
  if (b.summary.requests == 0) {
    std::cout << "scenario " << base->name
              << ": the baseline served no request (context_limit, below): nothing was "
                 "measured, no lever is weighed\n";
  }
  std::cout << "scenario " << base->name << " (" << FormatWithSeparators(b.summary.tasks)
            << (b.summary.tasks == 1 ? " task, " : " tasks, ")
            << FormatWithSeparators(b.summary.requests)
            << (b.summary.requests == 1 ? " request" : " requests");
  if (api) {
    std::cout << "; " << base->pricing->provider << " cache rules, " << b.api->price.id
              << " list prices";
  }
  std::cout << "); savings against the baseline\n\n" << t.ToText();
  // Dedicated GPUs bill their idle time apart: a task's dollars are its own
  // GPU time, which a lever cuts whether or not fewer GPUs could then be
  // rented (plan sizes them, and its $/day can stay the same).
  if (!api && base->deployment.billing == "dedicated") {
    std::cout << "\n$/task: each task's own GPU time at the GPU's price (billing dedicated: idle "
                 "GPU time is billed apart); with GPUs rented all day a lever saves money where "
                 "fewer GPUs then carry the load, which `kvbill plan` sizes\n";
  }
  std::cout << "\nlevers by their value (against the same scenario without the lever):\n";
  for (const std::string& line : values) std::cout << "  " << line << "\n";
  for (const LeverOutcome* o : ranked) {
    if (o->run && !o->not_comparable.empty()) {
      std::cout << "  not comparable: " << o->lever.name << " ("
                << FormatWithSeparators(o->run->summary.requests)
                << " requests served): " << o->not_comparable << "\n";
    } else if (!o->run && !o->lever.not_applicable.empty()) {
      std::cout << "  not applicable: " << o->lever.name << ": " << o->lever.not_applicable << "\n";
    } else if (!o->run) {
      std::cout << "  failed: " << o->lever.name << ": " << o->error << "\n";
    }
  }
  PrintWarnings(outcomes[0], ranked, "warnings");
  if (growth) {
    std::cout << "\ncost per task grows as (requests per task)^" << FormatFixed(growth->exponent, 2)
              << " across the baseline's tasks (log-log fit, r^2 "
              << FormatFixed(growth->r_squared, 3) << cut_text << ")\n";
  } else {
    std::cout << "\ngrowth exponent not fitted: " << growth.error().message() << cut_text << "\n";
  }
  return 0;
}

}  // namespace kvbill::cli
