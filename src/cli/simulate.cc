// kvbill simulate: replay a trace under a scenario; per-task and summary output.
//
// The engine run streams (StreamScenario, scenario/run.h): tasks are read as
// the simulation reaches them and each finished task goes out as a row at
// once, into temporary files (Spool) that make the outputs only when the run
// has succeeded. So memory follows the tasks in flight, not the trace, and a
// failed run writes nothing. The outputs are the bytes the whole document
// would give (nlohmann's dump with indent 2).
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/atomic_output.h"
#include "cli/cli_util.h"
#include "cli/json_number.h"
#include "cli/progress.h"
#include "cli/simulate_api.h"
#include "cli/standard_output.h"
#include "kvbill/cache/prefix_cache.h"
#include "kvbill/metrics/billing.h"
#include "kvbill/report/table.h"
#include "kvbill/scenario/budget.h"
#include "kvbill/scenario/run.h"
#include "kvbill/scenario/warnings.h"
#include "kvbill/util/embedded.h"
#include "kvbill/util/spool.h"

namespace kvbill::cli {
namespace {

using json = nlohmann::ordered_json;

constexpr char kUsage[] =
    "usage: kvbill simulate [--scenario S.json] [--trace T] [--engine event|step]\n"
    "                       [--format table|json|csv] [--requests] [--out DIR]\n\n"
    "Replays a trace (or a generated workload) through the scenario's deployment: continuous\n"
    "batching, block prefix cache, iteration times from the engine's calibrated cost model\n"
    "(docs/engine.md; the spec-sheet roofline on a GPU without kernel tables, or when the\n"
    "scenario sets efficiencies). Reports per task: requests,\n"
    "prompt / cached / prefilled / output tokens, KV bytes read, GPU-seconds, dollars and\n"
    "completion time, and a summary. --scenario default (the default) is the bundled\n"
    "scenarios/default.json. Scenario format: docs/scenario-format.md; engine: docs/engine.md.\n"
    "A scenario with \"pricing\" bills the trace at an API provider's cache rules and list\n"
    "prices instead (docs/billing.md#api-mode).\n";

// The rows of the table format (the rest are counted).
constexpr std::size_t kTableRows = 20;

// An empty sample (no request had a second output token: no TPOT) has no
// statistics: null, not 0.
json SummaryJson(const Summary& s) {
  if (s.count == 0) {
    return {
        {"mean", nullptr}, {"p50", nullptr}, {"p90", nullptr}, {"p99", nullptr}, {"max", nullptr}};
  }
  return {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}};
}

std::string Money(long double usd) { return "$" + FormatFixed(static_cast<double>(usd), 4); }

// "bill $0.0015 = tasks $0.0015 + idle $0.0000": four decimals, or as many
// more (up to ten) as it takes for the printed parts to add up to the
// printed total ($0.0015 = $0.0014 + $0.0000 read as a wrong sum).
std::string BillEquation(long double total, long double tasks, long double idle) {
  int decimals = 4;
  auto cents = [&](long double usd) {
    return std::llround(static_cast<double>(usd) * std::pow(10.0, decimals));
  };
  while (decimals < 10 && cents(total) != cents(tasks) + cents(idle)) ++decimals;
  auto money = [&](long double usd) {
    return "$" + FormatFixed(static_cast<double>(usd), decimals);
  };
  return "bill " + money(total) + " = tasks " + money(tasks) + " + idle " + money(idle) + "\n";
}

// "vllm profile, calibrated (validation median error 21%)" or why not.
std::string CostModelLine(const CostModelInfo& m) {
  if (m.profile == "roofline") return "spec-sheet roofline (uncalibrated)";
  std::string line = m.profile + " profile, ";
  if (!m.calibrated) return line + "uncalibrated";
  line += "calibrated";
  if (m.validation_median_error > 0) {
    line += " (median error " + FormatFixed(m.validation_median_error * 100, 0) +
            "% on published runs, docs/validation" + (m.profile == "sglang" ? "-sglang" : "") +
            ".md)";
  }
  if (const auto& r = m.regime_validation) {
    line += "; in its regime (" + m.regime + ") " + FormatFixed(r->median_error * 100, 0) + "%";
    if (r->lomo_points > 0)
      line += ", " + FormatFixed(r->lomo_median_error * 100, 0) + "% leaving the model out";
  } else if (m.regimes_known) {
    line += "; no published run of its regime (" + m.regime + ") was replayed";
  }
  return line;
}

// summary.cost_model.validation_regime: null for the roofline.
nlohmann::ordered_json RegimeJson(const CostModelInfo& m) {
  if (m.regime.empty()) return nullptr;
  nlohmann::ordered_json j = {{"regime", m.regime}, {"validated", m.regime_validation.has_value()}};
  if (const auto& r = m.regime_validation) {
    j["points"] = r->points;
    j["median_error"] = r->median_error;
    j["lomo_points"] = r->lomo_points;
    j["lomo_median_error"] = r->lomo_median_error;
  }
  // A kernel path none of the regime's runs took: its figures do not vouch
  // for this run (weakly_validated says so).
  j["unreplayed_path"] = m.unreplayed_path.empty() ? nlohmann::ordered_json(nullptr)
                                                   : nlohmann::ordered_json(m.unreplayed_path);
  return j;
}

Result<Scenario> Load(const std::string& name) {
  if (name == "default") {
    auto text = EmbeddedFile("default.json");
    if (!text) return Error("the bundled default scenario is missing");
    return ParseScenario(std::string(*text), "scenarios/default.json");
  }
  return LoadScenario(name);
}

json TaskJson(const TaskMetrics& t) {
  return {{"id", t.id},
          {"requests", t.requests},
          {"prompt_tokens", t.prompt_tokens},
          {"cached_tokens", t.cached_tokens},
          {"offload_hit_tokens", t.offload_hit_tokens},
          {"prefill_tokens", t.prefill_tokens},
          {"output_tokens", t.output_tokens},
          {"kv_read_bytes", JsonNumber(std::round(t.kv_read_bytes))},
          {"gpu_seconds", static_cast<double>(t.gpu_seconds)},
          {"cost_usd", static_cast<double>(t.cost_usd)},
          {"completion_s", t.completion_s},
          {"ttft_mean_s", t.ttft_mean_s ? json(*t.ttft_mean_s) : json(nullptr)},
          {"queue_mean_s", t.queue_mean_s},
          {"preemptions", t.preemptions},
          {"kv_written_bytes", JsonNumber(std::round(t.kv_written_bytes))},
          {"peak_kv_bytes", t.peak_kv_bytes},
          {"cut_short", t.unserved_requests > 0},
          {"unserved_requests", t.unserved_requests}};
}

json RequestJson(const RequestRecord& r) {
  return {{"task", r.task_id},
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
          {"kv_read_bytes", JsonNumber(std::round(r.kv_read_bytes))},
          {"cost_usd", static_cast<double>(r.cost_usd)}};
}

// deployment.billing: the rule and what the idle GPU time cost, whoever paid.
void AddBillingJson(const RunSummary& sum, json* s) {
  (*s)["billing"] = std::string(BillingName(sum.billing));
  (*s)["idle_gpu_usd"] = static_cast<double>(sum.idle_gpu_usd);
}

// The table's line saying how the bill treats idle GPU time.
std::string BillingLine(const RunSummary& sum) {
  const std::string idle = Money(sum.idle_gpu_usd);
  switch (sum.billing) {
    case BillingRule::kBusy:
      return "billing busy: only busy GPU time billed (idle GPU time, " + idle + ", not billed)\n";
    case BillingRule::kAmortized:
      return "billing amortized: idle GPU time (" + idle +
             ") spread over the tasks by their GPU-seconds, in the cost per task\n";
    case BillingRule::kDedicated:
      break;
  }
  return "billing dedicated: GPUs rented around the clock, idle GPU time billed on its own\n";
}

// The latency and model-limit fields of the summary (engine.md#latency).
void AddLatencyJson(const Scenario& scenario, const RunSummary& sum, const SimulationTotals& totals,
                    json* s) {
  (*s)["tpot_s"] = SummaryJson(sum.tpot_s);
  (*s)["tpot_requests"] = sum.tpot_s.count;
  (*s)["longest_sequence_tokens"] = sum.longest_sequence_tokens;
  (*s)["queue_s"] = SummaryJson(sum.queue_s);
  (*s)["frontend_wait_s"] = SummaryJson(sum.frontend_wait_s);
  (*s)["completion_s"] = SummaryJson(sum.completion_s);
  (*s)["slo"] = json::array();
  for (const SloCheck& c : CheckSlo(scenario.slo, sum)) {
    json check = {
        {"metric", c.target.metric}, {"max", c.target.max}, {"actual", c.actual}, {"held", c.held}};
    if (!c.not_measured.empty()) check["not_measured"] = c.not_measured;
    (*s)["slo"].push_back(std::move(check));
  }
  (*s)["max_model_len"] = totals.max_model_len;
  // SGLang's own cap when its pool holds less than max_model_len (0: none).
  (*s)["pool_context_len"] = totals.pool_context_len;
  // The longest prompt plus output the engine served (0: no limit):
  // max_model_len on vLLM, SGLang's max_req_len - 1 on SGLang; and the
  // longest sequence one replica's KV pool holds alone.
  (*s)["request_len_limit"] = totals.request_len_limit;
  // null for an unlimited pool (prefix_cache.capacity_tokens "unlimited").
  (*s)["pool_sequence_tokens"] = totals.pool_sequence_tokens >= kUnlimitedBlocks
                                     ? nlohmann::ordered_json(nullptr)
                                     : nlohmann::ordered_json(totals.pool_sequence_tokens);
  (*s)["rejected_requests"] = totals.rejected_requests;
  (*s)["unsent_requests"] = totals.unsent_requests;
  (*s)["unserved_tasks"] = totals.unserved_tasks;
  (*s)["unserved_task_ids"] = totals.unserved_task_ids;
}

// A latency for people: milliseconds below a second.
std::string Latency(Seconds s) {
  return s < 0.9995 ? FormatFixed(s * 1000, 1) + " ms" : FormatDuration(s);
}

// The table's latency lines: p50/p90/p99 of TTFT, TPOT and queueing delay,
// each target held or violated, refused requests.
std::string LatencyText(const Scenario& scenario, const RunSummary& sum,
                        const SimulationTotals& totals) {
  auto row = [](const char* name, const Summary& s) {
    if (s.count == 0) return std::string(name) + "none, not measured\n";
    return std::string(name) + Latency(s.p50) + ", " + Latency(s.p90) + ", " + Latency(s.p99) +
           "\n";
  };
  std::string text = sum.requests == 0 ? std::string("latency: none, no request was served\n")
                                       : "latency p50, p90, p99:\n" +
                                             row("  time to first token   ", sum.ttft_s) +
                                             row("  time per output token ", sum.tpot_s) +
                                             row("  queueing delay        ", sum.queue_s);
  for (const SloCheck& c : CheckSlo(scenario.slo, sum)) {
    text += "target " + c.target.metric + " <= " + Latency(c.target.max) + ": " +
            (!c.not_measured.empty() ? "NOT MEASURED (" + c.not_measured + ")"
             : c.held                ? "held (" + Latency(c.actual) + ")"
                                     : "VIOLATED (" + Latency(c.actual) + ")") +
            "\n";
  }
  if (totals.rejected_requests > 0) {
    text +=
        FormatWithSeparators(totals.rejected_requests) +
        (totals.rejected_requests == 1 ? " request" : " requests") + " refused over " +
        RequestLimitText(totals.request_len_limit, totals.pool_context_len, totals.max_model_len) +
        (totals.rejected_requests == 1 ? " (its task ends there" : " (their tasks end there") +
        (totals.unsent_requests > 0
             ? "; " + FormatWithSeparators(totals.unsent_requests) +
                   (totals.unsent_requests == 1 ? " later request" : " later requests") +
                   " not sent"
             : std::string()) +
        ")\n";
  }
  return text;
}

// With pin_during_tool_s: how often pins gave way before they expired.
std::string PinsLine(const Scenario& scenario, const SimulationTotals& totals) {
  if (scenario.prefix_cache.pin_during_tool_s <= 0 || totals.pins_yielded == 0) return "";
  return FormatWithSeparators(totals.pins_yielded) + (totals.pins_yielded == 1 ? " pin" : " pins") +
         " gave way before expiring (a replica would have idled with requests waiting)\n";
}

// With deployment.speculative: what it advanced and gained (SpeculationTotals).
std::string SpeculationLine(const Scenario& scenario, const SimulationTotals& totals) {
  if (!scenario.deployment.speculative) return "";
  const SpeculationTotals& spec = totals.speculation;
  if (spec.verification_steps == 0) return "speculation: no verification step ran\n";
  return "speculation: " + FormatWithSeparators(spec.verification_steps) +
         " verification steps of " + FormatFixed(static_cast<double>(spec.MeanBatch()), 1) +
         " sequences on average, " + FormatFixed(static_cast<double>(spec.TokensPerStep()), 2) +
         " tokens a sequence a step; decode " +
         FormatFixed(static_cast<double>(spec.DecodeSpeedup()), 2) +
         "x as fast as without it at these batches\n";
}

json SummaryDoc(const Scenario& scenario, const RunSummary& sum, const SimulationTotals& totals,
                double wall_s, const std::vector<RunWarning>& warnings) {
  json s;
  s["tasks"] = sum.tasks;
  s["requests"] = sum.requests;
  s["prompt_tokens"] = sum.prompt_tokens;
  s["cached_tokens"] = sum.cached_tokens;
  s["hit_rate"] = sum.hit_rate;
  s["kv_read_bytes"] = JsonNumber(std::round(sum.kv_read_bytes));
  s["cost_usd"] = static_cast<double>(sum.cost_usd);
  s["cost_per_task_usd"] = SummaryJson(sum.cost_per_task_usd);
  s["simulated_s"] = sum.simulated_s;
  s["wall_s"] = wall_s;
  s["prefill_tokens"] = sum.prefill_tokens;
  s["offload_hit_tokens"] = sum.offload_hit_tokens;
  s["output_tokens"] = sum.output_tokens;
  s["task_cost_usd"] = static_cast<double>(sum.task_cost_usd);
  s["idle_cost_usd"] = static_cast<double>(sum.idle_usd);
  AddBillingJson(sum, &s);
  s["ttft_s"] = SummaryJson(sum.ttft_s);
  s["preemptions"] = sum.preemptions;
  s["evicted_blocks"] = sum.evicted_blocks;
  if (scenario.prefix_cache.pin_during_tool_s > 0) s["pins_yielded"] = totals.pins_yielded;
  s["kv_pool_blocks_per_replica"] = sum.kv_pool_blocks >= kUnlimitedBlocks
                                        ? nlohmann::ordered_json(nullptr)
                                        : nlohmann::ordered_json(sum.kv_pool_blocks);
  // The block size the run paged in: the scenario's, else the engine's for
  // the model and GPU (docs/engine.md#kv-blocks).
  s["kv_block_tokens"] = scenario.prefix_cache.block_size;
  if (totals.kv_cache_groups > 1) {  // blocks are then pages of one group
    s["kv_cache_groups"] = totals.kv_cache_groups;
  }
  s["iterations"] = totals.iterations;
  s["engine_steps"] = totals.steps_advanced;
  if (const SpeculationTotals& spec = totals.speculation; scenario.deployment.speculative) {
    s["speculation"] = {
        {"verification_steps", spec.verification_steps},
        {"mean_sequences_per_step", static_cast<double>(spec.MeanBatch())},
        {"tokens_per_verification_step", static_cast<double>(spec.TokensPerStep())},
        // No verification step, no speedup to state (a run that
        // served nothing): null, not 1.
        {"decode_speedup", spec.verification_steps > 0
                               ? nlohmann::ordered_json(static_cast<double>(spec.DecodeSpeedup()))
                               : nlohmann::ordered_json(nullptr)}};
  }
  AddLatencyJson(scenario, sum, totals, &s);
  const CostModelInfo& model = totals.cost_model;
  s["cost_model"] = {{"profile", model.profile},
                     {"calibrated", model.calibrated},
                     {"validation_median_error", model.validation_median_error},
                     {"validation_regime", RegimeJson(model)},
                     {"notes", model.notes},
                     {"formats", nlohmann::ordered_json::array()}};
  for (const FormatUse& f : model.formats) {
    s["cost_model"]["formats"].push_back({{"part", f.part},
                                          {"stored", f.stored},
                                          {"computed", f.computed},
                                          {"kernel", f.kernel},
                                          {"timing", f.timing}});
  }
  // Collectives no kernel table measures, each with the assumption that times
  // it (the timing_assumed warning names them too).
  s["cost_model"]["assumed_collectives"] = model.assumed_collectives;
  s["warnings"] = WarningsJson(warnings);
  return s;
}

// v.dump(2) as it reads `depth` levels deep in a document dumped with
// indent 2 (JSON strings hold no raw newline, so every newline is layout).
std::string Nested(const json& v, int depth) {
  const std::string text = v.dump(2);
  const std::string pad(static_cast<std::size_t>(2 * depth), ' ');
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

std::string CsvLine(const std::vector<std::string>& cells) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ",";
    out += CsvCell(cells[i]);
  }
  return out + "\n";
}

const std::vector<std::string> kCsvHeader = {"id",
                                             "requests",
                                             "prompt_tokens",
                                             "cached_tokens",
                                             "prefill_tokens",
                                             "output_tokens",
                                             "kv_read_bytes",
                                             "gpu_seconds",
                                             "cost_usd",
                                             "completion_s",
                                             "unserved_requests"};

// simulate's outputs, made as the run goes: the JSON document's task rows
// and request rows, the CSV rows, the table's first rows. Each is kept only
// when an output needs it. Errors (of the temporary files) are kept and
// returned by Finish.
class SimulateOutput {
 public:
  SimulateOutput(const std::string& format, bool with_requests, const std::string& out_dir,
                 bool amortized)
      : amortized_(amortized),
        format_(format),
        out_dir_(out_dir),
        json_(format == "json" || !out_dir.empty()),
        csv_(format == "csv" || !out_dir.empty()),
        requests_(with_requests && json_) {}

  bool wants_requests() const { return requests_; }

  void AddTask(const TaskMetrics& t) {
    if (format_ == "table" && first_.size() < kTableRows) first_.push_back(t);
    ++tasks_;
    if (!json_ && !csv_) return;
    json j = TaskJson(t);
    if (amortized_) j["idle_share_usd"] = static_cast<double>(t.idle_share_usd);
    if (json_) {
      Append(&task_rows_, (tasks_ > 1 ? ",\n    " : "    ") + Nested(j, 2));
    }
    if (csv_) {
      Append(
          &csv_rows_,
          CsvLine({j["id"].get<std::string>(), j["requests"].dump(), j["prompt_tokens"].dump(),
                   j["cached_tokens"].dump(), j["prefill_tokens"].dump(), j["output_tokens"].dump(),
                   j["kv_read_bytes"].dump(), j["gpu_seconds"].dump(), j["cost_usd"].dump(),
                   j["completion_s"].dump(), j["unserved_requests"].dump()}));
    }
  }

  void AddRequest(const RequestRecord& r) {
    if (!requests_) return;
    ++request_rows_count_;
    Append(&request_rows_,
           (request_rows_count_ > 1 ? ",\n    " : "    ") + Nested(RequestJson(r), 2));
  }

  // Writes simulate.json and tasks.csv into out_dir (when set), then prints
  // the format asked for. Returns the exit status.
  int Finish(const Scenario& scenario, const RunSummary& sum, const SimulationTotals& totals,
             double wall_s) {
    if (!error_.ok()) return ReportError("simulate", error_.error());
    const std::vector<RunWarning> warnings = EngineRunWarnings(scenario, totals, sum);
    const json summary = SummaryDoc(scenario, sum, totals, wall_s, warnings);
    if (!out_dir_.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(out_dir_, ec);
      if (ec) return ReportError("simulate", Error(out_dir_ + ": cannot create: " + ec.message()));
      // Both are written in full before either is renamed in, tasks.csv
      // first: a failure leaves either no new file or a new tasks.csv beside
      // the old simulate.json, never a new simulate.json without its tasks.
      auto json_file = AtomicOutputFile::Create(out_dir_ + "/simulate.json");
      if (!json_file) return ReportError("simulate", json_file.error());
      auto csv_file = AtomicOutputFile::Create(out_dir_ + "/tasks.csv");
      if (!csv_file) return ReportError("simulate", csv_file.error());
      Status written = WriteJson((*json_file)->stream(), scenario, summary);
      if (written.ok()) written = WriteCsv((*csv_file)->stream());
      if (written.ok()) written = (*csv_file)->Commit();
      if (written.ok()) written = (*json_file)->Commit();
      if (!written.ok()) return ReportError("simulate", written.error());
      NoteWritten("simulate", out_dir_ + "/simulate.json");
      NoteWritten("simulate", out_dir_ + "/tasks.csv");
    }
    Status printed = OkStatus();
    if (format_ == "json") {
      printed = WriteJson(std::cout, scenario, summary);
    } else if (format_ == "csv") {
      printed = WriteCsv(std::cout);
    } else {
      std::cout << Text(scenario, sum, totals, warnings);
    }
    // A failed write to standard output is said as main says it, with the
    // reason cli/standard_output.h keeps.
    if (!std::cout) printed = FlushStandardOutput();
    if (!printed.ok()) return ReportError("simulate", printed.error());
    if (format_ == "csv") WarnOnStandardError("simulate", warnings);
    return 0;
  }

 private:
  void Append(std::optional<Spool>* spool, const std::string& text) {
    if (!error_.ok()) return;
    if (!*spool) {
      auto created = Spool::Create();
      if (!created) {
        error_ = created.error();
        return;
      }
      spool->emplace(std::move(*created));
    }
    if (auto s = (*spool)->Append(text); !s) error_ = s;
  }

  Status WriteJson(std::ostream& out, const Scenario& scenario, const json& summary) {
    out << "{\n  \"scenario\": " << json(scenario.name).dump() << ",\n  \"tasks\": ";
    if (task_rows_) {
      out << "[\n";
      if (auto s = task_rows_->CopyTo(out); !s) return s;
      out << "\n  ]";
    } else {
      out << "[]";
    }
    out << ",\n  \"summary\": " << Nested(summary, 1);
    if (requests_) {
      out << ",\n  \"requests\": ";
      if (request_rows_) {
        out << "[\n";
        if (auto s = request_rows_->CopyTo(out); !s) return s;
        out << "\n  ]";
      } else {
        out << "[]";
      }
    }
    out << "\n}\n";
    return out ? OkStatus() : Status(Error("cannot write the output"));
  }

  Status WriteCsv(std::ostream& out) {
    out << CsvLine(kCsvHeader);
    if (csv_rows_) {
      if (auto s = csv_rows_->CopyTo(out); !s) return s;
    }
    return out ? OkStatus() : Status(Error("cannot write the output"));
  }

  std::string Text(const Scenario& scenario, const RunSummary& sum, const SimulationTotals& totals,
                   const std::vector<RunWarning>& warnings) {
    Table t({"task", "requests", "prompt tok", "cached", "prefilled", "output", "KV read", "GPU-s",
             "cost", "done in"});
    bool cut = false;
    for (const TaskMetrics& m : first_) {
      // A task cut short at the model's context: "served of planned".
      std::string requests = std::to_string(m.requests);
      if (m.unserved_requests > 0) {
        requests += " of " + std::to_string(m.requests + m.unserved_requests);
        cut = true;
      }
      t.AddRow({m.id, requests, FormatWithSeparators(m.prompt_tokens),
                FormatWithSeparators(m.cached_tokens), FormatWithSeparators(m.prefill_tokens),
                FormatWithSeparators(m.output_tokens),
                FormatBinaryBytes(static_cast<double>(m.kv_read_bytes)),
                FormatFixed(static_cast<double>(m.gpu_seconds), 2), Money(m.cost_usd),
                FormatDuration(m.completion_s)});
    }
    std::ostringstream text;
    text << "scenario " << scenario.name << " (" << scenario.source << ")\n\n" << t.ToText();
    if (tasks_ > static_cast<std::int64_t>(first_.size())) {
      text << "... " << tasks_ - static_cast<std::int64_t>(first_.size())
           << " more tasks (--format csv for all)\n";
    }
    if (cut) {
      text << "requests \"n of m\": the task was cut short, its request n + 1 beyond the request "
              "length limit (max_model_len; on SGLang also what its pool holds) and the rest never "
              "sent\n";
    }
    text << "\n";
    for (const RunWarning& w : warnings)
      text << "warning [" << w.code << "]: " << w.message << "\n";
    const CostModelInfo& model = totals.cost_model;
    text << FormatWithSeparators(sum.tasks) << (sum.tasks == 1 ? " task" : " tasks")
         << (totals.unserved_tasks > 0
                 ? " (" + FormatWithSeparators(totals.unserved_tasks) + " more refused at " +
                       (totals.unserved_tasks == 1 ? "its" : "their") +
                       " first request, served nothing)"
                 : std::string())
         << ", " << FormatWithSeparators(sum.requests)
         << (sum.requests == 1 ? " request; prompt " : " requests; prompt ")
         << FormatWithSeparators(sum.prompt_tokens) << " tokens, "
         << FormatFixed(sum.hit_rate * 100, 1) << "% from the prefix cache\n"
         << "KV read " << FormatBinaryBytes(static_cast<double>(sum.kv_read_bytes))
         << "; simulated " << FormatDuration(sum.simulated_s) << "; "
         << FormatWithSeparators(sum.preemptions)
         << (sum.preemptions == 1 ? " preemption\n" : " preemptions\n")
         << PinsLine(scenario, totals);
    if (sum.tasks > 0) {
      text << "cost per task: mean " << Money(sum.cost_per_task_usd.mean) << ", p50 "
           << Money(sum.cost_per_task_usd.p50) << ", p90 " << Money(sum.cost_per_task_usd.p90)
           << ", p99 " << Money(sum.cost_per_task_usd.p99) << "\n";
    } else {
      text << "cost per task: none, no task was served\n";
    }
    text << BillEquation(sum.cost_usd, sum.task_cost_usd, sum.idle_usd) << BillingLine(sum)
         << LatencyText(scenario, sum, totals) << SpeculationLine(scenario, totals)
         << "iteration times: " << CostModelLine(model) << "\n";
    for (const std::string& note : model.notes) text << "  note: " << note << "\n";
    return text.str();
  }

  bool amortized_;  // billing "amortized": task rows carry their idle share
  std::string format_;
  std::string out_dir_;
  bool json_, csv_, requests_;
  std::optional<Spool> task_rows_, csv_rows_, request_rows_;
  std::vector<TaskMetrics> first_;  // the table's rows
  std::int64_t tasks_ = 0;
  std::int64_t request_rows_count_ = 0;
  Status error_ = OkStatus();
};

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
  // Per-request records go in the JSON (printed, or in --out's files): with
  // a table or CSV alone they would be dropped without a word.
  if (with_requests && format != "json" && out_dir.empty()) {
    return ReportError("simulate", Error("--requests: the records are JSON; give --format json "
                                         "or --out DIR"));
  }
  if (auto s = CheckTraceFlag(trace); !s) return ReportError("simulate", s.error());
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
  const bool amortized = scenario->deployment.billing == "amortized";
  const auto wall_start = std::chrono::steady_clock::now();
  std::optional<SimulateOutput> output;
  output.emplace(format, with_requests, out_dir, amortized);
  RunObserver observer;
  observer.on_task = [&](const TaskMetrics& t) { output->AddTask(t); };
  if (output->wants_requests()) {
    observer.on_request = [&](const RequestRecord& r) { output->AddRequest(r); };
  }
  // A trace found out of arrival order is read whole and run again: what
  // came so far goes.
  observer.on_restart = [&] { output.emplace(format, with_requests, out_dir, amortized); };
  auto run = [&] {
    ProgressLine progress("simulate", "simulating " + scenario->name);
    return StreamScenario(*scenario, observer);
  }();
  if (!run) return ReportError("simulate", run.error());
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return output->Finish(*scenario, run->summary, run->totals, wall_s);
}

}  // namespace kvbill::cli
