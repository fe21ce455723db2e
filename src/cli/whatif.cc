// kvbill whatif: one recorded agent log priced several ways — as recorded,
// as the replay predicts it, with 1-hour cache writes, at other models'
// prices, with caching off, and self-hosted through the engine — in one
// table of dollars per task (docs/billing.md#kvbill-whatif).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "cli/cli_util.h"
#include "kvbill/bill/bill.h"
#include "kvbill/bill/usage_log.h"
#include "kvbill/cost/price_sheet.h"
#include "kvbill/hardware/catalog_names.h"
#include "kvbill/report/table.h"
#include "kvbill/scenario/api_run.h"
#include "kvbill/scenario/run.h"
#include "kvbill/scenario/sweep.h"
#include "kvbill/scenario/warnings.h"
#include "kvbill/trace/importers.h"
#include "kvbill/util/embedded.h"
#include "kvbill/util/file.h"
#include "trace/open_trace.h"

namespace kvbill::cli {
namespace {

using OJson = nlohmann::ordered_json;

constexpr char kUsage[] =
    "usage: kvbill whatif LOG... [--format table|json|csv] [--model M]... [--price SPEC]...\n"
    "                     [--gpu G] [--gpus N] [--self-hosted-model M] [--scenario S.json]\n"
    "                     [--from F] [-o FILE]\n\n"
    "Prices a recorded agent log (Claude Code transcripts, Codex rollouts: anything the\n"
    "trace importers read, and native traces whose turns carry usage) several ways, in\n"
    "dollars per task (a session; a subagent is its own task) and in total:\n"
    "  recorded     the provider's recorded usage at list price (as `kvbill bill`)\n"
    "  predicted    the replay of the prompts through the provider's cache rules\n"
    "  cache_1h     the same with 1-hour cache writes (anthropic only)\n"
    "  model:M      the replay at model M's prices and cache rules (--model, repeatable;\n"
    "               default: the same provider's cheaper tier, e.g. opus -> sonnet)\n"
    "  no_cache     every prompt token uncached\n"
    "  self_hosted  served on a deployment through the engine (--gpu, --gpus,\n"
    "               --self-hosted-model, or a --scenario whose model, deployment and engine\n"
    "               are used)\n"
    "Each call is priced at the model it names (recorded, predicted, cache_1h, no_cache:\n"
    "one provider cache per model), so the recorded total equals `kvbill bill`'s; a call\n"
    "naming no model is priced at the model most calls name. model:M prices every call at\n"
    "M. A log without usage is an error (exit 2); a task with a call that carries no usage\n"
    "(recorded) or names a model with no price (all but model:M) is \"unpriced\".\n"
    "See docs/billing.md#kvbill-whatif.\n";

struct Column {
  std::string id;
  std::string meaning;
  std::map<std::string, Money> per_task;  // by task id; a missing task is unpriced
  std::optional<Money> total;             // nullopt when some task is unpriced
  std::string error;                      // the column could not be computed
  // Why some of its tasks are unpriced (code, message), as a run warns.
  std::vector<RunWarning> warnings;
};

// Each log read once (a pipe or FIFO cannot be read twice): its bytes, then
// parsed as usage and as tasks.
Result<std::vector<std::string>> ReadLogs(const std::vector<std::string>& logs) {
  std::vector<std::string> texts;
  for (const std::string& path : logs) {
    if (path == "-") {
      std::ostringstream in;
      in << std::cin.rdbuf();
      texts.push_back(in.str());
      continue;
    }
    auto text = ReadFile(path);
    if (!text) return text.error();
    texts.push_back(std::move(*text));
  }
  return texts;
}

// True when `a`'s turns are the first turns of `b`: equal, but for the
// wait after `a`'s last turn, which a log cut there does not know (its
// next call is missing).
bool TurnsBegin(const Task& a, const Task& b) {
  if (a.turns.size() > b.turns.size() || a.turns.empty()) return false;
  const std::size_t last = a.turns.size() - 1;
  if (!std::equal(a.turns.begin(), a.turns.begin() + static_cast<std::ptrdiff_t>(last),
                  b.turns.begin())) {
    return false;
  }
  Turn cut = b.turns[last];
  cut.tool_s = a.turns[last].tool_s;
  return cut == a.turns[last];
}

// The format `--from` names, else the one the first line that is not
// blank shows.
Result<TraceFormat> LogFormat(const std::string& log, const std::string& text,
                              const std::optional<TraceFormat>& format) {
  if (format) return *format;
  std::istringstream in(text);
  return DetectStreamFormat(in, log);
}

// The tasks of every log. Claude Code transcripts are read together, as
// `kvbill bill` joins them: one message id is one call whichever logs hold
// it (the copy bill keeps), and a session's calls from several logs are
// merged in time order. A task that logs of other formats both hold is kept
// once when one copy is the other's first calls (a log given twice, or cut
// short: the longer kept); otherwise which calls it made is not known.
Result<std::vector<Task>> ReadTasks(const std::vector<std::string>& logs,
                                    const std::vector<std::string>& texts,
                                    const std::optional<TraceFormat>& format) {
  std::vector<std::vector<Task>> per_read;  // the Claude Code logs as one read
  std::vector<std::string> read_names;
  std::optional<std::size_t> claude_read;
  std::vector<NamedStream> claude_logs;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    auto f = LogFormat(logs[i], texts[i], format);
    if (!f) return f.error();
    if (*f == TraceFormat::kClaudeCode) {
      if (!claude_read) {
        claude_read = per_read.size();
        per_read.emplace_back();
        read_names.push_back(logs[i]);
      }
      claude_logs.push_back(NamedStream{std::make_unique<std::istringstream>(texts[i]), logs[i]});
      continue;
    }
    auto read = ReadTraceTasksFrom(std::make_unique<std::istringstream>(texts[i]), logs[i], *f);
    if (!read) return read.error();
    per_read.push_back(std::move(*read));
    read_names.push_back(logs[i]);
  }
  if (claude_read) {
    auto reader = NewClaudeCodeReader(std::move(claude_logs));
    Task task;
    while (true) {
      auto more = reader->Next(&task);
      if (!more) return more.error();
      if (!*more) break;
      per_read[*claude_read].push_back(std::move(task));
    }
  }
  std::vector<Task> tasks;
  std::map<std::string, std::pair<std::size_t, std::size_t>> seen;  // id -> (task, read)
  for (std::size_t i = 0; i < per_read.size(); ++i) {
    for (Task& t : per_read[i]) {
      const auto [it, inserted] = seen.try_emplace(t.id, tasks.size(), i);
      if (inserted) {
        tasks.push_back(std::move(t));
        continue;
      }
      Task& kept = tasks[it->second.first];
      if (TurnsBegin(t, kept)) continue;
      if (TurnsBegin(kept, t)) {
        kept = std::move(t);
        continue;
      }
      return Error(read_names[i] + ": task \"" + t.id + "\" is also in " +
                   read_names[it->second.second] +
                   " with other calls (whatif joins a session that several logs hold call by "
                   "call only in Claude Code transcripts, by message id; in other formats one "
                   "copy must hold the other's calls first)");
    }
  }
  return tasks;
}

Result<UsageLog> ReadUsage(const std::vector<std::string>& logs,
                           const std::vector<std::string>& texts) {
  UsageLog log;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    std::istringstream in(texts[i]);
    if (auto s = ReadUsageLog(in, logs[i], &log); !s) return s.error();
  }
  return log;
}

// The model most calls name; ties go to the first in sorted order.
std::string MainModel(const std::map<std::string, std::int64_t>& calls) {
  std::string best;
  std::int64_t most = 0;
  for (const auto& [model, n] : calls) {
    if (n > most) best = model, most = n;
  }
  return best;
}

// A trace whose turns carry recorded usage but that holds no provider log
// lines (kvbill's native format converted from a log): its calls are its
// turns, each once, in the bill the recorded column is checked against. A
// turn naming no model is priced at the model most turns name, as the
// recorded column prices it ("unknown" when no turn names one).
void CallsFromTurns(const std::vector<Task>& tasks, const std::string& source, UsageLog* log) {
  std::map<std::string, std::int64_t> named;
  for (const Task& t : tasks) {
    for (const Turn& turn : t.turns) {
      if (turn.usage && !turn.model.empty()) ++named[turn.model];
    }
  }
  const std::string most_named = named.empty() ? "unknown" : MainModel(named);
  for (const Task& t : tasks) {
    for (std::size_t i = 0; i < t.turns.size(); ++i) {
      const Turn& turn = t.turns[i];
      if (!turn.usage) continue;
      LoggedCall c;
      c.session = t.id;
      c.model = turn.model.empty() ? most_named : turn.model;
      c.key = "turn:" + t.id + ":" + std::to_string(i);
      c.usage = RecordedCallUsage(*turn.usage);
      c.fast = turn.usage->fast;
      c.us_only = turn.usage->us_only;
      c.where = source + ": task " + t.id + ", turn " + std::to_string(i + 1);
      log->calls.push_back(std::move(c));
    }
  }
}

// Distinct calls per model as logged.
std::map<std::string, std::int64_t> CallsByModel(const Bill& bill) {
  std::map<std::string, std::int64_t> calls;
  for (const CallBill& c : bill.calls) ++calls[c.call->model];
  return calls;
}

Status AddMoneyTo(Money amount, Money* sum) {
  if (!AddMoney(amount, sum)) return Error("a dollar amount overflows");
  return OkStatus();
}

// True when every request names no model or one the sheet prices.
bool ModelsPriced(const std::vector<Request>& requests, const PriceSheet& sheet) {
  return std::all_of(requests.begin(), requests.end(), [&](const Request& r) {
    return r.model.empty() || sheet.Find(r.model) != nullptr;
  });
}

// A column from an API replay: each task's predicted cost. With per-call
// models, tasks with a request whose model has no price are left out of the
// replay (unpriced).
Result<Column> ReplayColumn(const std::string& id, const std::string& meaning,
                            const ScenarioPricing& pricing, const PriceSheet& sheet,
                            const std::vector<Task>& tasks,
                            const std::vector<std::vector<Request>>& requests) {
  std::vector<Task> priced_tasks;
  std::vector<std::vector<Request>> priced_requests;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (pricing.per_call_models && !ModelsPriced(requests[i], sheet)) continue;
    priced_tasks.push_back(tasks[i]);
    priced_requests.push_back(requests[i]);
  }
  auto run = RunApiPricing(pricing, sheet, priced_tasks, priced_requests);
  if (!run) return run.error().Within(id);
  // Prompts above the model's window (which its provider refuses) and
  // outputs the log kept only as streaming stubs, as simulate warns them.
  Column c{id, meaning, {}, run->replay.cost, "", ApiReplayWarnings(*run)};
  if (priced_tasks.size() != tasks.size()) c.total.reset();
  for (const ApiTaskOutcome& t : run->replay.tasks) c.per_task[t.id] = t.cost;
  return c;
}

// The recorded column: each call's recorded usage at its model's list
// price (`main` for a call naming none), the cache writes the log records
// as 1-hour writes at the 1-hour rate and the others at the 5-minute rate,
// as `kvbill bill` prices them; a task with a call without usage or with
// an unpriced model is unpriced.
Result<Column> RecordedColumn(const ModelPrice& main, const PriceSheet& sheet,
                              const std::vector<Task>& tasks) {
  Column c{"recorded", "the log's usage, each call at its model's list prices", {}, Money{}, "",
           {}};
  for (const Task& t : tasks) {
    Money cost;
    bool priced = true;
    for (const Turn& turn : t.turns) {
      const ModelPrice* price = turn.model.empty() ? &main : sheet.Find(turn.model);
      if (!turn.usage || price == nullptr) {
        priced = false;
        break;
      }
      // Fast-mode calls at the fast rates, as `kvbill bill` prices them.
      std::optional<ModelPrice> fast;
      if (turn.usage->fast) {
        auto f = FastModePrice(*price);
        if (!f) return f.error();
        fast = std::move(*f);
      }
      // US-only calls at the sheet's us_multiplier, as `kvbill bill` prices them.
      std::optional<ModelPrice> us_only;
      if (turn.usage->us_only) {
        auto us = UsOnlyPrice(fast ? *fast : *price);
        if (!us) return us.error();
        us_only = std::move(*us);
      }
      auto call = PriceCall(us_only ? *us_only
                            : fast  ? *fast
                                    : *price,
                            RecordedCallUsage(*turn.usage));
      if (!call) return call.error();
      if (auto s = AddMoneyTo(call->cost, &cost); !s) return s.error();
    }
    if (!priced) {
      c.total.reset();
      continue;
    }
    c.per_task[t.id] = cost;
    if (c.total) {
      if (auto s = AddMoneyTo(cost, &*c.total); !s) return s.error();
    }
  }
  // Placeholder outputs understate the recorded usage too, as `kvbill bill`
  // warns (the other columns say it through their replay's warnings).
  std::int64_t placeholders = 0;
  for (const Task& t : tasks) {
    for (const Turn& turn : t.turns) placeholders += turn.output_is_placeholder ? 1 : 0;
  }
  c.warnings = PlaceholderOutputsWarning(placeholders);
  return c;
}

// The self-hosted column: the engine serves the log's prompts.
Column SelfHostedColumn(const Scenario& s, const std::vector<Task>& tasks,
                        const std::vector<std::vector<Request>>& requests) {
  Column c{"self_hosted", "", {}, Money{}, "", {}};
  auto config = BuildSimulationConfig(s);
  if (!config) {
    c.error = config.error().message();
    c.total.reset();
    return c;
  }
  const bool sglang = config->scheduler == SchedulerKind::kSglang;
  c.meaning = "served by " + config->model.name +
              (config->max_model_len > 0 ? (sglang ? " (context length " : " (max_model_len ") +
                                               FormatWithSeparators(config->max_model_len) + ")"
                                         : std::string()) +
              " on " + std::to_string(s.deployment.replicas * s.deployment.gpus_per_replica) +
              " x " + config->gpu.id + " at $" + FormatFixed(config->usd_per_gpu_hour, 2) +
              " per GPU-hour (engine; idle time not charged; the log's token counts, as the "
              "provider's tokenizer counted them)";
  auto result = Simulate(*config, tasks, requests);
  if (!result) {
    c.error = result.error().message();
    c.total.reset();
    return c;
  }
  // A task cut short at the model's limit served only part of its calls:
  // its cost is not the task's, so it is unpriced (and said why, below).
  std::map<std::string, std::size_t> planned;
  for (std::size_t i = 0; i < tasks.size(); ++i) planned[tasks[i].id] = requests[i].size();
  for (const TaskMetrics& m : AggregateTasks(tasks, *result)) {
    if (static_cast<std::size_t>(m.requests) < planned[m.id]) continue;
    // Pico-dollars, rounded, so the column adds up like the API ones.
    Money cost{static_cast<std::int64_t>(std::llround(m.cost_usd * kPicoUsdPerUsd))};
    c.per_task[m.id] = cost;
    if (!AddMoney(cost, &*c.total)) {
      c.error = "a dollar amount overflows";
      return c;
    }
  }
  if (c.per_task.size() != tasks.size()) c.total.reset();
  // The run's other warnings, as simulate gives them (context_limit is said
  // below in this column's terms; idle time is not charged here).
  const std::vector<TaskMetrics> metrics = AggregateTasks(tasks, *result);
  for (const RunWarning& w : EngineRunWarnings(s, *result, Summarise(metrics, *result))) {
    if (w.code == "context_limit" || w.code == "idle_dominant") continue;
    c.warnings.push_back(w);
  }
  if (result->rejected_requests > 0) {
    const std::string longer_context =
        "name a longer-context model (--self-hosted-model) or a scenario that extends it "
        "(model.set rope_scaling, --scenario)";
    // One refused request per task cut short: those tasks are unpriced.
    const std::int64_t n = result->rejected_requests;
    c.warnings.push_back(RunWarning{
        "context_limit",
        std::to_string(n) + (n == 1 ? " task is" : " tasks are") +
            " unpriced: a request of up to " +
            FormatWithSeparators(result->longest_rejected_tokens) + " tokens is past " +
            (result->pool_context_len > 0
                 ? "the " + FormatWithSeparators(result->pool_context_len) +
                       " tokens SGLang's KV pool serves, which it refuses; give the deployment "
                       "more memory (--scenario)"
             : sglang ? "the " + FormatWithSeparators(result->request_len_limit) +
                            " tokens SGLang serves at " + config->model.name +
                            "'s context length " + FormatWithSeparators(config->max_model_len) +
                            " (its max_req_len - 1), which it refuses; " + longer_context
                      : config->model.name + "'s max_model_len " +
                            FormatWithSeparators(config->max_model_len) + ", which vLLM refuses; " +
                            longer_context)});
  }
  return c;
}

// The self-hosted what-if's scenario: the bundled default or --scenario,
// with --gpu, --gpus and --self-hosted-model set in its text, so the rules
// that follow from them (the engine's KV block for the model on the GPU,
// the degree's head split) apply as they would to a scenario written so.
Result<Scenario> SelfHostedScenario(const std::string& scenario_path, const std::string& gpu,
                                    std::optional<int> gpus, const std::string& model) {
  std::string text, source;
  // "default" names the bundled scenario, as in simulate.
  if (scenario_path.empty() || scenario_path == "default") {
    auto bundled = EmbeddedFile("default.json");
    if (!bundled) return Error("the bundled default scenario is missing");
    text = std::string(*bundled);
    source = "scenarios/default.json";
  } else {
    if (auto path = CheckScenarioPath(scenario_path); !path) {
      return path.error().Within("--scenario");
    }
    auto read = ReadFile(scenario_path);
    if (!read) return read.error().Within("--scenario");
    text = *read;
    source = scenario_path;
  }
  auto set = [&](const std::string& pointer, const OJson& value) -> Status {
    auto edited = WithSetting(text, pointer, value.dump());
    if (!edited) return edited.error().Within("--scenario");
    text = *edited;
    return OkStatus();
  };
  if (!gpu.empty()) {
    auto id = ResolveGpuName(gpu);
    if (!id) return id.error();
    if (auto st = set("/deployment/gpu", *id); !st) return st.error();
  }
  if (gpus) {
    if (*gpus < 1) return Error("--gpus: must be at least 1");
    if (auto st = set("/deployment/gpus_per_replica", *gpus); !st) return st.error();
  }
  if (!model.empty()) {
    auto name = ResolveModelName(model, "--self-hosted-model");
    if (!name) return name.error();
    // The bundled default's config edit (Qwen3-8B's YaRN scaling) belongs
    // to its model, not to the one named here; a --scenario's stays.
    auto doc = OJson::parse(text, nullptr, false);
    const bool object =
        !doc.is_discarded() && doc.is_object() && doc.contains("model") && doc["model"].is_object();
    const Status st =
        object && !scenario_path.empty() ? set("/model/name", *name) : set("/model", *name);
    if (!st) return st.error();
  }
  auto s = ParseScenario(text, source);
  // An error of the bundled default, with --gpu, --gpus or
  // --self-hosted-model set on it: those flags, not a --scenario nobody gave.
  if (!s) {
    return scenario_path.empty() ? s.error().Within(
                                       "--gpu / --gpus / --self-hosted-model on the "
                                       "bundled default scenario")
                                 : s.error().Within("--scenario");
  }
  if (s->pricing) {
    return Error("--scenario: " + scenario_path +
                 "#/pricing: a self-hosted what-if needs a scenario without \"pricing\"");
  }
  return s;
}

std::string Cell(const Column& c, const std::string& task) {
  if (!c.error.empty()) return "n/a";
  auto it = c.per_task.find(task);
  return it == c.per_task.end() ? "unpriced" : FormatUsd(it->second, 4);
}

}  // namespace

int RunWhatif(const Args& args) {
  po::options_description options("options");
  std::vector<std::string> logs, models, price_specs;
  std::string format, gpu, self_model, scenario_path, from, out;
  std::optional<int> self_gpus;
  options.add_options()("log", po::value(&logs)->composing()->value_name("FILE"),
                        "agent log files")("format", po::value(&format)->default_value("table"),
                                           "table, json or csv")(
      "model,m", po::value(&models)->composing(),
      "price the replay at this model too (repeatable; default: the cheaper tier)")(
      "price", po::value(&price_specs)->composing(),
      "MODEL:field=value override of the bundled price sheet (as in `kvbill bill`)")(
      "gpu", po::value(&gpu),
      "self-hosted what-if on this GPU (catalog id, alias or nvidia-smi name)")(
      "self-hosted-model", po::value(&self_model), "self-hosted what-if with this model")(
      "gpus", po::value<int>()->notifier([&](int v) { self_gpus = v; }),
      "self-hosted what-if on this many tensor-parallel GPUs a replica")(
      "scenario,s", FileValue(&scenario_path),
      "self-hosted what-if on this scenario's model, deployment and engine")(
      "from", po::value(&from), "log format (default: detected)")(
      "out,o", FileValue(&out), "write to FILE instead of stdout");
  po::positional_options_description positional;
  positional.add("log", -1);
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "whatif", kUsage, options, vm, &positional)) return *stop;
  if (auto s = CheckChoice("format", format, "table|json|csv"); !s) {
    return ReportError("whatif", s.error());
  }
  if (logs.empty()) return ReportError("whatif", Error("no LOG given"));
  std::optional<TraceFormat> trace_format;
  if (!from.empty()) {
    auto f = ParseTraceFormat(from);
    if (!f) return ReportError("whatif", f.error().Within("--from"));
    trace_format = *f;
  }
  auto sheet = BundledPriceSheet();
  if (!sheet) return ReportError("whatif", sheet.error());
  if (auto s = ApplyPriceOverrides(price_specs, &*sheet); !s) {
    return ReportError("whatif", s.error());
  }

  auto texts = ReadLogs(logs);
  if (!texts) return ReportError("whatif", texts.error());
  auto usage = ReadUsage(logs, *texts);
  if (!usage) return ReportError("whatif", usage.error());
  auto tasks = ReadTasks(logs, *texts, trace_format);
  if (!tasks) return ReportError("whatif", tasks.error());
  bool any_usage = false;
  for (const Task& t : *tasks) {
    for (const Turn& turn : t.turns) any_usage = any_usage || turn.usage.has_value();
  }
  if (usage->calls.empty() && any_usage) CallsFromTurns(*tasks, logs[0], &*usage);
  if (usage->calls.empty() || tasks->empty() || !any_usage) {
    return ReportError("whatif", Error(logs[0] + ": no API calls with recorded usage (nothing to "
                                                 "price; logs: Claude Code, Codex)"));
  }
  auto bill = MakeBill(*usage, *sheet, BillOptions{});
  if (!bill) return ReportError("whatif", bill.error());
  const std::map<std::string, std::int64_t> calls_by_model = CallsByModel(*bill);
  // The main model is the most used of those the sheet prices: a model
  // without a price leaves its own tasks unpriced, not the others (an
  // unpriced model that most calls used stopped every column). With none
  // priced, the error below names the most used.
  std::map<std::string, std::int64_t> priced_calls;
  for (const auto& [model, n] : calls_by_model) {
    if (sheet->Find(model) != nullptr) priced_calls[model] = n;
  }
  const std::string logged_model = MainModel(priced_calls.empty() ? calls_by_model : priced_calls);
  // Codex logs that name no model: bill prices their calls as its legacy
  // fallback (kLegacyCodexModel, marked assumed); the replays take the same
  // model for those turns, not the main one.
  std::map<std::string, std::int64_t> assumed_by_model;
  for (const CallBill& c : bill->calls) {
    if (c.call->assumed_model) ++assumed_by_model[c.call->model];
  }
  if (!assumed_by_model.empty()) {
    for (Task& t : *tasks) {
      for (Turn& turn : t.turns) {
        if (turn.model.empty()) turn.model = kLegacyCodexModel;
      }
    }
  }
  bool any_unnamed = false;  // a turn priced at the main model for want of its own
  for (const Task& t : *tasks) {
    for (const Turn& turn : t.turns) any_unnamed = any_unnamed || turn.model.empty();
  }
  const ModelPrice* price = sheet->Find(logged_model);
  if (price == nullptr) {
    return ReportError("whatif", Error(logs[0] + ": model \"" + logged_model +
                                       "\" has no price in the sheet (add one with --price " +
                                       logged_model + ":input=...,output=...)"));
  }
  const std::vector<std::string> providers = ProviderCacheNames();
  auto known_provider = [&](const ModelPrice& p) {
    return std::find(providers.begin(), providers.end(), p.provider) != providers.end();
  };
  if (!known_provider(*price)) {
    return ReportError("whatif",
                       Error("model \"" + price->id + "\": no cache rules for provider \"" +
                             price->provider + "\""));
  }
  if (models.empty()) {
    if (auto cheaper = CheaperTier(*sheet, price->id)) models.push_back(*cheaper);
  }

  auto policy = MakeContextPolicy(ContextPolicyParams{});
  if (!policy) return ReportError("whatif", policy.error());
  std::vector<std::vector<Request>> requests;
  for (const Task& t : *tasks) requests.push_back((*policy)->Plan(t));

  ScenarioPricing base;
  base.provider = price->provider;
  base.model = price->id;
  std::vector<Column> columns;
  auto recorded = RecordedColumn(*price, *sheet, *tasks);
  if (!recorded) return ReportError("whatif", recorded.error());
  columns.push_back(std::move(*recorded));
  auto add_replay = [&](const std::string& id, const std::string& meaning,
                        const ScenarioPricing& p) -> Status {
    auto c = ReplayColumn(id, meaning, p, *sheet, *tasks, requests);
    if (!c) return c.error();
    columns.push_back(std::move(*c));
    return OkStatus();
  };
  // The providers of the log's calls: a log of Claude and Codex calls is
  // replayed call by call under each one's own provider's rules.
  std::set<std::string> log_providers = {price->provider};
  for (const Task& t : *tasks) {
    for (const Turn& turn : t.turns) {
      if (turn.model.empty()) continue;
      if (const ModelPrice* m = sheet->Find(turn.model)) log_providers.insert(m->provider);
    }
  }
  const bool mixed = log_providers.size() > 1;
  Status status = add_replay("predicted",
                             mixed ? "each call at its model, under its provider's cache rules"
                                   : price->provider + " cache rules, each call at its model",
                             base);
  if (status && price->provider == "anthropic") {
    ScenarioPricing p = base;
    p.ttl_s = 3600;
    status = add_replay("cache_1h",
                        mixed ? "1-hour cache writes (2x input, refreshed on read) for the "
                                "Anthropic calls; the others as predicted"
                              : "1-hour cache writes (2x input, refreshed on read)",
                        p);
  }
  for (const std::string& m : models) {
    if (!status) break;
    const ModelPrice* other = sheet->Find(m);
    if (other == nullptr) {
      status = Error("--model: no price for model \"" + m + "\"");
      break;
    }
    if (!known_provider(*other)) {
      status = Error("--model: \"" + other->id + "\": no cache rules for provider \"" +
                     other->provider + "\"");
      break;
    }
    const bool repeated = std::any_of(columns.begin(), columns.end(), [&](const Column& c) {
      return c.id == "model:" + other->id;
    });
    if (repeated) continue;
    ScenarioPricing p;
    p.provider = other->provider;
    p.model = other->id;
    p.per_call_models = false;
    status = add_replay("model:" + other->id,
                        other->provider + " cache rules, every call at " + other->id, p);
  }
  if (status) {
    ScenarioPricing p = base;
    p.cache_enabled = false;
    status = add_replay("no_cache", "every prompt token uncached input", p);
  }
  if (!status) return ReportError("whatif", status.error());
  if (!gpu.empty() || !self_model.empty() || !scenario_path.empty() || self_gpus) {
    auto s = SelfHostedScenario(scenario_path, gpu, self_gpus, self_model);
    if (!s) return ReportError("whatif", s.error());
    columns.push_back(SelfHostedColumn(*s, *tasks, requests));
  }

  OJson j;
  j["logs"] = logs;
  j["model"] = price->id;
  j["provider"] = price->provider;
  j["logged_models"] = calls_by_model;
  j["columns"] = OJson::array();
  for (const Column& c : columns) {
    OJson col = {{"id", c.id}, {"meaning", c.meaning}};
    if (!c.error.empty()) col["error"] = c.error;
    if (!c.warnings.empty()) {
      col["warnings"] = WarningsJson(c.warnings);
    }
    j["columns"].push_back(col);
  }
  auto money = [](const Column& c, const std::string& task) -> OJson {
    auto it = c.per_task.find(task);
    if (!c.error.empty() || it == c.per_task.end()) return nullptr;
    return it->second.usd();
  };
  j["tasks"] = OJson::array();
  std::vector<std::string> header = {"task", "requests"};
  for (const Column& c : columns) header.push_back(c.id);
  Table table(header), csv(header);
  std::int64_t requests_total = 0;
  for (const Task& t : *tasks) {
    const int n = static_cast<int>(t.turns.size());
    requests_total += n;
    OJson row = {{"id", t.id}, {"requests", n}, {"cost_usd", OJson::object()}};
    std::vector<std::string> text_row = {t.id, std::to_string(n)};
    std::vector<std::string> csv_row = text_row;
    for (const Column& c : columns) {
      row["cost_usd"][c.id] = money(c, t.id);
      text_row.push_back(Cell(c, t.id));
      auto it = c.per_task.find(t.id);
      csv_row.push_back(!c.error.empty()         ? "n/a"
                        : it == c.per_task.end() ? "unpriced"
                                                 : FormatUsdExact(it->second));
    }
    j["tasks"].push_back(std::move(row));
    table.AddRow(std::move(text_row));
    csv.AddRow(std::move(csv_row));
  }
  OJson total = {
      {"tasks", tasks->size()}, {"requests", requests_total}, {"cost_usd", OJson::object()}};
  std::vector<std::string> text_total = {"total", std::to_string(requests_total)};
  std::vector<std::string> csv_total = text_total;
  for (const Column& c : columns) {
    const bool ok = c.error.empty() && c.total.has_value();
    total["cost_usd"][c.id] = ok ? OJson(c.total->usd()) : OJson(nullptr);
    text_total.push_back(!c.error.empty() ? "n/a" : ok ? FormatUsd(*c.total, 4) : "unpriced");
    csv_total.push_back(!c.error.empty() ? "n/a" : ok ? FormatUsdExact(*c.total) : "unpriced");
  }
  table.AddRow(std::move(text_total));
  csv.AddRow(std::move(csv_total));
  j["total"] = total;
  j["bill"] = {{"cost_usd", bill->total.cost.usd()},
               {"calls", bill->total.calls},
               {"unpriced_calls", bill->total.unpriced_calls}};

  std::ostringstream text;
  if (format == "json") {
    text << j.dump(2) << "\n";
  } else if (format == "csv") {
    text << csv.ToCsv();
  } else {
    text << "what-ifs of " << tasks->size() << " tasks, " << requests_total << " calls; main model "
         << price->id << " (" << price->provider << ")\n\n"
         << table.ToText() << "\n";
    for (const Column& c : columns) {
      text << "  " << c.id << ": " << (c.error.empty() ? c.meaning : "n/a: " + c.error) << "\n";
      for (const auto& [code, message] : c.warnings) {
        text << "    warning [" << code << "]: " << message << "\n";
      }
    }
    if (calls_by_model.size() > 1) {
      text << "\nthe log names " << calls_by_model.size() << " models (";
      bool first = true;
      for (const auto& [model, n] : calls_by_model) {
        text << (first ? "" : ", ") << model << " " << n << (n == 1 ? " call" : " calls");
        if (auto it = assumed_by_model.find(model); it != assumed_by_model.end()) {
          text << " (" << (it->second == n ? "all" : std::to_string(it->second))
               << " assumed: Codex calls naming no model, as bill prices them)";
        }
        first = false;
      }
      text << "); model:M columns price every call at M, the others each call at its model";
      if (any_unnamed) text << " (a call naming none at " << price->id << ")";
      text << "\n";
    }
    text << "\nthe calls as `kvbill bill` prices a log (each call at its own model): "
         << FormatUsd(bill->total.cost, 4) << " for " << bill->total.calls << " calls";
    if (bill->total.unpriced_calls > 0) {
      text << ", " << bill->total.unpriced_calls << " unpriced";
    }
    text << "\n";
  }
  if (auto s = EmitOutput("whatif", text.str(), out); !s) return ReportError("whatif", s.error());
  if (format == "csv") {
    // CSV says "n/a" and "unpriced" in its cells; why, on standard error.
    for (const Column& c : columns) {
      if (!c.error.empty()) std::cerr << "kvbill whatif: " << c.id << ": n/a: " << c.error << "\n";
      WarnOnStandardError("whatif", c.warnings, c.id);
    }
  }
  return 0;
}

}  // namespace kvbill::cli
