#include "cli/simulate_api.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_util.h"
#include "cli/progress.h"
#include "kvbill/cost/api_replay.h"
#include "kvbill/report/table.h"
#include "kvbill/scenario/api_run.h"
#include "kvbill/scenario/run.h"
#include "kvbill/scenario/warnings.h"
#include "kvbill/util/file.h"

namespace kvbill::cli {
namespace {

using nlohmann::ordered_json;

ordered_json UsageJson(const CallUsage& u) {
  return {{"prompt_tokens", u.prompt()},
          {"cache_read_tokens", u.cache_read},
          {"cache_write_tokens", u.cache_write()},
          {"uncached_tokens", u.input},
          {"output_tokens", u.output}};
}

// Adds "cache_write_1h_tokens" after "cache_write_tokens" when the log
// records 1-hour writes (absent otherwise, so that logs without them give
// the same bytes as before the field existed).
void AddOneHourWrites(Tokens one_hour, ordered_json* usage) {
  if (one_hour == 0) return;
  ordered_json with = ordered_json::object();
  for (auto it = usage->begin(); it != usage->end(); ++it) {
    with[it.key()] = it.value();
    if (it.key() == "cache_write_tokens") with["cache_write_1h_tokens"] = one_hour;
  }
  *usage = std::move(with);
}

ordered_json RecordedJson(const RecordedUsage& r, Money cost) {
  ordered_json j = {{"prompt_tokens", r.prompt()},
                    {"cache_read_tokens", r.cache_read},
                    {"cache_write_tokens", r.cache_creation},
                    {"uncached_tokens", r.input},
                    {"output_tokens", r.output},
                    {"cost_usd", cost.usd()}};
  AddOneHourWrites(r.cache_creation_1h, &j);
  return j;
}

std::string Dollars(Money m) { return FormatUsd(m, 4); }

std::string Percent(double part, double whole) {
  return whole == 0 ? "-" : FormatFixed(100.0 * part / whole, 2) + "%";
}

}  // namespace

int RunSimulateApi(const Scenario& scenario, const std::string& format, bool with_requests,
                   const std::string& out_dir) {
  const ScenarioPricing& pricing = *scenario.pricing;
  auto run = [&] {
    ProgressLine progress("simulate", "simulating " + scenario.name);
    return RunScenario(scenario);
  }();
  if (!run) return ReportError("simulate", run.error());
  const ModelPrice* price = &run->api->price;
  const ApiReplayOutcome* out = &run->api->replay;

  ordered_json j;
  j["scenario"] = scenario.name;
  j["pricing"] = {{"provider", pricing.provider}, {"model", price->id}};
  j["tasks"] = ordered_json::array();
  Table tasks_csv({"id", "requests", "prompt_tokens", "cache_read_tokens", "cache_write_tokens",
                   "uncached_tokens", "output_tokens", "cost_usd"});
  // A task's cost: its calls and its even share of the explicit caches'
  // creation and storage (CacheCreationShares), so the tasks add up to the
  // bill.
  const std::vector<Money> shares = CacheCreationShares(*out);
  const bool caches = out->cache_creations.creations > 0;
  std::vector<Money> task_costs;
  for (std::size_t i = 0; i < out->tasks.size(); ++i) {
    const ApiTaskOutcome& t = out->tasks[i];
    const Money cost{t.cost.pico_usd + shares[i].pico_usd};
    task_costs.push_back(cost);
    ordered_json row = {{"id", t.id}, {"requests", t.requests}};
    row.update(UsageJson(t.predicted));
    row["cost_usd"] = cost.usd();
    if (caches) {
      row["calls_cost_usd"] = t.cost.usd();
      row["cache_share_usd"] = shares[i].usd();
    }
    tasks_csv.AddRow({t.id, std::to_string(t.requests), std::to_string(t.predicted.prompt()),
                      std::to_string(t.predicted.cache_read),
                      std::to_string(t.predicted.cache_write()), std::to_string(t.predicted.input),
                      std::to_string(t.predicted.output), FormatUsdExact(cost)});
    j["tasks"].push_back(std::move(row));
  }
  ordered_json s = {{"tasks", out->tasks.size()}, {"requests", out->requests.size()}};
  s.update(UsageJson(out->predicted));
  s["cost_usd"] = out->cost.usd();
  s["hit_rate"] = run->summary.hit_rate;
  s["cost_per_task_usd"] = {{"mean", run->summary.cost_per_task_usd.mean},
                            {"p50", run->summary.cost_per_task_usd.p50},
                            {"p90", run->summary.cost_per_task_usd.p90},
                            {"p99", run->summary.cost_per_task_usd.p99},
                            {"max", run->summary.cost_per_task_usd.max}};
  const CacheCreationCost& cc = out->cache_creations;
  if (caches) {
    s["explicit_caches"] = {{"creations", cc.creations},
                            {"created_tokens", cc.created_tokens},
                            {"storage_token_hours", cc.storage_token_hours},
                            {"creation_usd", cc.creation.usd()},
                            {"storage_usd", cc.storage.usd()},
                            {"total_usd", cc.total.usd()}};
  }
  if (out->recorded_calls > 0) {
    ordered_json r = {{"calls", out->recorded_calls}};
    r.update(UsageJson(out->recorded));
    Tokens one_hour = 0;
    for (const ApiRequestOutcome& o : out->requests) {
      if (o.recorded) one_hour += o.recorded->cache_creation_1h;
    }
    AddOneHourWrites(one_hour, &r);
    r["cost_usd"] = out->recorded_cost.usd();
    r["predicted"] = UsageJson(out->predicted_of_recorded);
    r["predicted"]["cost_usd"] = out->predicted_cost_of_recorded.usd();
    r["cache_read_within_1pct"] = out->cache_read_within_1pct;
    r["cache_read_within_1pct_share"] =
        static_cast<double>(out->cache_read_within_1pct) / out->recorded_calls;
    s["recorded"] = r;
  }
  const std::vector<RunWarning> warnings = ApiRunWarnings(scenario, *run->api);
  s["warnings"] = WarningsJson(warnings);
  j["summary"] = s;
  if (with_requests) {
    j["requests"] = ordered_json::array();
    for (const ApiRequestOutcome& o : out->requests) {
      ordered_json row = {
          {"task", o.task}, {"index", o.index}, {"time_s", o.time_s}, {"model", o.model}};
      row.update(UsageJson(o.predicted));
      row["cost_usd"] = o.cost.usd();
      if (o.recorded) row["recorded"] = RecordedJson(*o.recorded, o.recorded_cost);
      j["requests"].push_back(std::move(row));
    }
  }

  std::ostringstream text;
  if (format == "json") {
    text << j.dump(2) << "\n";
  } else if (format == "csv") {
    text << tasks_csv.ToCsv();
  } else {
    Table t({"task", "requests", "prompt tok", "cache read", "cache write", "uncached", "output",
             "cost"});
    const std::size_t shown = std::min<std::size_t>(out->tasks.size(), 20);
    for (std::size_t i = 0; i < shown; ++i) {
      const ApiTaskOutcome& m = out->tasks[i];
      t.AddRow({m.id, std::to_string(m.requests), FormatWithSeparators(m.predicted.prompt()),
                FormatWithSeparators(m.predicted.cache_read),
                FormatWithSeparators(m.predicted.cache_write()),
                FormatWithSeparators(m.predicted.input), FormatWithSeparators(m.predicted.output),
                Dollars(task_costs[i])});
    }
    text << "scenario " << scenario.name << " (" << scenario.source << "): " << pricing.provider
         << " cache rules, " << price->id << " list prices\n\n"
         << t.ToText();
    if (out->tasks.size() > shown) {
      text << "... " << out->tasks.size() - shown << " more tasks (--format csv for all)\n";
    }
    const CallUsage& p = out->predicted;
    text << "\n";
    for (const RunWarning& w : warnings) {
      text << "warning [" << w.code << "]: " << w.message << "\n";
    }
    text << out->tasks.size() << (out->tasks.size() == 1 ? " task, " : " tasks, ")
         << out->requests.size()
         << (out->requests.size() == 1 ? " request; prompt " : " requests; prompt ")
         << FormatWithSeparators(p.prompt()) << " tokens: "
         << Percent(static_cast<double>(p.cache_read), static_cast<double>(p.prompt()))
         << " read from the cache, "
         << Percent(static_cast<double>(p.cache_write()), static_cast<double>(p.prompt()))
         << " written\n"
         << "bill " << Dollars(out->cost);
    if (caches) {
      Money calls;
      for (const ApiTaskOutcome& task : out->tasks) calls.pico_usd += task.cost.pico_usd;
      text << " = calls " << Dollars(calls) << " + " << cc.creations << " explicit cache"
           << (cc.creations == 1 ? "" : "s") << " " << Dollars(cc.total) << " (creation "
           << Dollars(cc.creation) << ", storage " << Dollars(cc.storage) << " for "
           << FormatFixed(cc.storage_token_hours, 0)
           << " token-hours); each task's cost holds an even share of the caches'";
    }
    text << "\n";
    if (out->recorded_calls > 0) {
      const CallUsage& r = out->recorded;
      const CallUsage& q = out->predicted_of_recorded;
      text << "recorded usage on " << out->recorded_calls << " calls: cache read "
           << FormatWithSeparators(r.cache_read) << " (predicted "
           << FormatWithSeparators(q.cache_read) << "), bill " << Dollars(out->recorded_cost)
           << " (predicted " << Dollars(out->predicted_cost_of_recorded) << "); "
           << Percent(out->cache_read_within_1pct, out->recorded_calls)
           << " of calls' cache reads predicted within 1%\n";
    }
  }
  const int status = FinishSimulate(out_dir, j.dump(2) + "\n", tasks_csv.ToCsv(), text.str());
  if (status == 0 && format == "csv") WarnOnStandardError("simulate", warnings);
  return status;
}

int FinishSimulate(const std::string& out_dir, const std::string& json_text,
                   const std::string& tasks_csv, const std::string& text) {
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) return ReportError("simulate", Error(out_dir + ": cannot create: " + ec.message()));
    // tasks.csv first: simulate.json is renamed in only after it.
    if (auto w = WriteFileAtomically(out_dir + "/tasks.csv", tasks_csv); !w) {
      return ReportError("simulate", w.error());
    }
    if (auto w = WriteFileAtomically(out_dir + "/simulate.json", json_text); !w) {
      return ReportError("simulate", w.error());
    }
    NoteWritten("simulate", out_dir + "/simulate.json");
    NoteWritten("simulate", out_dir + "/tasks.csv");
  }
  if (auto w = EmitOutput("simulate", text, ""); !w) return ReportError("simulate", w.error());
  return 0;
}

}  // namespace kvbill::cli
