#include "cli/plan_doc.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "cli/cli_util.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/report/table.h"
#include "kvbill/util/units.h"

namespace kvbill::cli {
namespace {

using Json = nlohmann::ordered_json;

// The statuses that stop a candidate before any simulation, with the words
// the header counts them in.
const std::map<std::string, std::string>& FilterNames() {
  static const std::map<std::string, std::string> names = {{"format", "format"},
                                                           {"no_fit", "fit"},
                                                           {"uncalibrated", "uncalibrated"},
                                                           {"not_applicable", "not applicable"},
                                                           {"error", "error"}};
  return names;
}

double Num(const Json& row, const char* key) {
  return row.contains(key) && row[key].is_number() ? row[key].get<double>() : 0.0;
}

// What the ranking (RankByCost, ParetoFront) reads of the rows.
std::vector<PlanRankRow> RankRows(const Json& rows) {
  std::vector<PlanRankRow> out;
  out.reserve(rows.size());
  for (const Json& r : rows) {
    PlanRankRow k;
    k.index = r["index"].get<std::int64_t>();
    k.status = r["status"].get<std::string>();
    k.usd_per_task = Num(r, "usd_per_task");
    k.gpus = static_cast<int>(Num(r, "gpus"));
    if (r.contains("ttft_s.p90") && r["ttft_s.p90"].is_number()) {
      k.ttft_p90_s = r["ttft_s.p90"].get<double>();
    }
    out.push_back(std::move(k));
  }
  return out;
}

// The codes of a row's run warnings joined by `sep`; `trust`: only those
// about how far its numbers hold that the label does not already say (the
// status says slo_violated and overloaded, uncalibrated and
// weakly_validated have their own marks; idle_dominant and
// policy_no_effect describe the bill and the policy, not the figures).
std::string WarningList(const Json& row, const char* sep, bool trust) {
  static const std::set<std::string> unmarked = {
      "slo_violated",  "overloaded",       "uncalibrated",        "weakly_validated",
      "idle_dominant", "policy_no_effect", "pricing_model_unused"};
  std::string out;
  if (!row.contains("warnings")) return out;
  for (const Json& w : row["warnings"]) {
    const std::string code = w["code"].get<std::string>();
    if (trust && unmarked.count(code)) continue;
    out += (out.empty() ? "" : sep) + code;
  }
  return out;
}

// What a row's figures assume rather than measure, as its marks say:
// "uncalibrated", "weakly validated" and the run warnings that put a part of
// the cost model on an assumption (a timing without a kernel table of its
// own, a default acceptance rate, unmeasured recurrent-state kernels, host
// waits not timed). Empty for a row that rests on the calibration and its
// validation alone, and for an API row (a price sheet, latency as given).
// Warnings about the workload (window_short, context_limit, ...) are not
// here: they hold for every candidate alike.
std::vector<std::string> AssumedFigures(const Json& row) {
  static const std::set<std::string> cost_model = {
      "timing_assumed", "speculative_acceptance_assumed", "linear_state_unmeasured",
      "speculative_host_waits"};
  std::vector<std::string> out;
  if (row.value("kind", "") == "api") return out;
  if (row.value("uncalibrated", false)) out.push_back("uncalibrated");
  if (row.value("weakly_validated", false)) out.push_back("weakly validated");
  if (row.contains("warnings")) {
    for (const Json& w : row["warnings"]) {
      const std::string code = w["code"].get<std::string>();
      if (cost_model.count(code)) out.push_back("warns " + code);
    }
  }
  return out;
}

// The first of `ranked` whose figures assume nothing (AssumedFigures).
std::optional<std::size_t> CheapestValidated(const Json& rows,
                                             const std::vector<std::size_t>& ranked) {
  for (std::size_t k = 0; k < ranked.size(); ++k) {
    if (AssumedFigures(rows[ranked[k]]).empty()) return k;
  }
  return std::nullopt;
}

// "h100-sxm tp=2 w=auto kv=fp8" (ep and speculative when they are not the
// default); an API candidate: "api gpt-5 (openai)".
std::string Label(const Json& row) {
  if (row.value("kind", "") == "api") {
    return "api " + row["model"].get<std::string>() + " (" + row["provider"].get<std::string>() +
           ")";
  }
  std::string s = row["gpu"].get<std::string>() + " tp=" + row["tensor_parallel"].dump();
  if (row["expert_parallel"].get<int>() > 1) s += " ep=" + row["expert_parallel"].dump();
  s += " w=" + row["weight_format"].get<std::string>() +
       " kv=" + row["kv_format"].get<std::string>();
  if (row["speculative"] != "off") {
    const Json& method = row.value("speculative_method", Json(nullptr));
    s += " spec=" +
         (method.is_string() ? method.get<std::string>() : row["speculative"].get<std::string>());
  }
  if (row["uncalibrated"].get<bool>()) s += " (uncalibrated)";
  if (row.value("weakly_validated", false)) s += " (weakly validated)";
  const std::string warns = WarningList(row, ", ", true);
  if (!warns.empty()) s += " (warns " + warns + ")";
  return s;
}

// Dollars: cents from $100, four places from $0.0001, and below that two
// significant digits, so a task of $0.000024 does not read "$0.0000".
std::string Usd(double v) {
  if (v > 0 && v < 0.00005) {
    const int places = std::min(12, 1 - static_cast<int>(std::floor(std::log10(v))));
    return "$" + FormatFixed(v, places);
  }
  return "$" + FormatFixed(v, v >= 100 ? 2 : 4);
}
// A day's dollars, to the cent in every row (a column that mixed $70.8000
// and $141.60 read as two precisions).
std::string UsdPerDay(double v) { return "$" + FormatFixed(v, 2); }

// A row's field as its table cell, "-" when the row has none (an API
// candidate has no replicas; its TTFT only when --api-latency gives it).
std::string Cell(const Json& row, const char* key) {
  return row.contains(key) ? row[key].dump() : "-";
}

std::string Seconds3(const Json& row, const char* key) {
  return row.contains(key) ? FormatFixed(Num(row, key), 3) + " s" : "-";
}

// The counts partition the candidates: each is in exactly one of api (an
// API candidate), simulated (a self-hosted one simulated at least once,
// whatever its status: a run that failed is "simulated", not "filtered"),
// pruned or filtered (by its status, stopped before any simulation), so
// enumerated = filtered + pruned + simulated + api.
Json Counts(const Json& rows) {
  std::int64_t pruned = 0, simulated = 0, simulations = 0, feasible = 0, slo_not_met = 0, api = 0,
               not_evaluated = 0;
  std::map<std::string, std::int64_t> filtered;
  for (const auto& [status, word] : FilterNames()) filtered[status] = 0;
  for (const Json& r : rows) {
    const std::string status = r["status"].get<std::string>();
    if (status == "feasible") ++feasible;
    if (status == "slo_not_met") ++slo_not_met;
    if (status == "slo_not_evaluated") ++not_evaluated;
    const std::int64_t sims = r["simulations"].get<std::int64_t>();
    simulations += sims;
    if (r.value("kind", "") == "api") {
      ++api;
    } else if (sims > 0) {
      ++simulated;
    } else if (status == "pruned") {
      ++pruned;
    } else if (filtered.count(status)) {
      ++filtered[status];
    }
  }
  Json c;
  c["enumerated"] = rows.size();
  Json f = Json::object();
  for (const auto& [status, n] : filtered) f[status] = n;
  c["filtered"] = f;
  c["pruned"] = pruned;
  c["simulated"] = simulated;
  c["simulations"] = simulations;
  c["feasible"] = feasible;
  c["slo_not_met"] = slo_not_met;
  c["api"] = api;
  c["slo_not_evaluated"] = not_evaluated;
  return c;
}

// The types of a candidate row a shard holds (its keys are there): merge
// ranks by them, so a string where a price belongs must stop it, not rank
// at $0.
Status CheckRowTypes(const Json& r, const std::string& at) {
  auto bad = [&](const char* key, const std::string& what) {
    return Error(at + "/" + key + ": must be " + what + ", got " + r[key].dump());
  };
  for (const char* key : {"gpu", "weight_format", "kv_format", "speculative", "status", "reason"}) {
    if (!r[key].is_string()) return bad(key, "a string");
  }
  // A status plan writes ("feasable" once merged as a row of its own).
  static const std::set<std::string> statuses = {"feasible", "slo_not_met", "slo_not_evaluated",
                                                 "no_fit",   "format",      "uncalibrated",
                                                 "pruned",   "error"};
  if (statuses.count(r["status"].get<std::string>()) == 0) {
    return bad("status",
               "one of feasible, slo_not_met, slo_not_evaluated, no_fit, format, uncalibrated, "
               "pruned, error");
  }
  // A self-hosted row names a GPU of the catalog and formats kvbill reads.
  if (r.value("kind", "") != "api") {
    if (!LookupGpu(r["gpu"].get<std::string>()).ok()) return bad("gpu", "a GPU of the catalog");
    if (!ParseElementFormat(r["kv_format"].get<std::string>()).ok()) {
      return bad("kv_format", "a KV format kvbill reads");
    }
  }
  const bool api = r.value("kind", "") == "api";
  for (const char* key : {"tensor_parallel", "expert_parallel"}) {  // 0 for an API model
    if (!r[key].is_number_integer() || r[key].get<std::int64_t>() < (api ? 0 : 1)) {
      return bad(key, api ? "a non-negative integer" : "a positive integer");
    }
  }
  if (!r["simulations"].is_number_integer() || r["simulations"].get<std::int64_t>() < 0) {
    return bad("simulations", "a non-negative integer");
  }
  if (!r["uncalibrated"].is_boolean()) return bad("uncalibrated", "true or false");
  // Shards written before the field (2026-12) have none.
  if (r.contains("speculative_method") && !r["speculative_method"].is_null() &&
      !r["speculative_method"].is_string()) {
    return bad("speculative_method", "null or a string");
  }
  // Shards written before the field have none.
  if (r.contains("cause") && !r["cause"].is_null()) {
    static const std::set<std::string> causes = {"context_limit", "overloaded", "slo"};
    if (!r["cause"].is_string() || causes.count(r["cause"].get<std::string>()) == 0) {
      return bad("cause", "null or one of context_limit, overloaded, slo");
    }
  }
  if (r.contains("warnings")) {
    if (!r["warnings"].is_array()) return bad("warnings", "an array");
    for (std::size_t k = 0; k < r["warnings"].size(); ++k) {
      const Json& w = r["warnings"][k];
      if (!w.is_object() || !w.contains("code") || !w["code"].is_string() ||
          !w.contains("message") || !w["message"].is_string()) {
        return Error(at + "/warnings/" + std::to_string(k) +
                     ": must be an object with a string code and message, got " + w.dump());
      }
    }
  }
  if (api) {
    for (const char* key : {"provider", "model"}) {
      if (!r.contains(key) || !r[key].is_string()) {
        return Error(at + "/" + key + ": missing (an API candidate's)");
      }
    }
  }
  for (const char* key : {"usd_per_task", "usd_per_day", "ttft_s.p90", "usd_per_gpu_hour",
                          "peak_decode_tokens_per_s", "peak_prefill_tokens_per_s"}) {
    if (r.contains(key) &&
        (!r[key].is_number() || !std::isfinite(r[key].get<double>()) || r[key].get<double>() < 0)) {
      return bad(key, "a non-negative number");
    }
  }
  for (const char* key : {"replicas", "gpus", "min_replicas", "max_replicas"}) {
    if (r.contains(key) && (!r[key].is_number_integer() || r[key].get<std::int64_t>() < 0)) {
      return bad(key, "a non-negative integer");
    }
  }
  // A feasible candidate is ranked: it has its price (and, self-hosted, its
  // replicas and GPUs).
  if (r["status"] == "feasible") {
    for (const char* key : {"usd_per_task", "replicas", "gpus"}) {
      if (api && std::string_view(key) != "usd_per_task") continue;
      if (!r.contains(key)) return Error(at + "/" + key + ": missing (a feasible candidate's)");
    }
  }
  return OkStatus();
}

}  // namespace

Json OutcomeJson(const CandidateOutcome& o) {
  Json r;
  r["index"] = o.candidate.index;
  r["kind"] = o.candidate.api() ? "api" : "self_hosted";
  if (o.candidate.api()) {
    r["provider"] = o.candidate.provider;
    r["model"] = o.candidate.api_model;
  }
  r["gpu"] = o.candidate.gpu;
  r["tensor_parallel"] = o.candidate.tensor_parallel;
  r["expert_parallel"] = o.candidate.expert_parallel;
  r["weight_format"] = o.candidate.weight_format;
  r["kv_format"] = o.candidate.kv_format;
  r["speculative"] = o.candidate.speculative;
  r["speculative_method"] =
      o.candidate.speculative_method.empty() ? Json(nullptr) : Json(o.candidate.speculative_method);
  r["status"] = o.status;
  r["reason"] = o.reason;
  r["cause"] = o.cause.empty() ? Json(nullptr) : Json(o.cause);
  r["uncalibrated"] = o.uncalibrated;
  if (!o.validation_regime.empty()) {
    r["validation_regime"] = o.validation_regime;
    r["validation_median_error"] =
        o.validation_median_error ? Json(*o.validation_median_error) : Json(nullptr);
    r["weakly_validated"] = o.weakly_validated;
  }
  r["usd_per_gpu_hour"] = o.usd_per_gpu_hour;
  r["price_source"] = o.price_source;
  r["min_replicas"] = o.min_replicas;
  r["max_replicas"] = o.max_replicas;
  r["peak_decode_tokens_per_s"] = o.peak_decode_tokens_per_s;
  r["peak_prefill_tokens_per_s"] = o.peak_prefill_tokens_per_s;
  r["simulations"] = o.simulations;
  if (o.simulated()) {
    r["replicas"] = o.replicas;
    r["gpus"] = o.gpus();
    r["usd_per_task"] = o.usd_per_task;
    r["usd_per_day"] = o.usd_per_day;
    r["ttft_s.p90"] = o.ttft_p90_s;
    Json slo = Json::object();
    for (const SloCheck& c : o.slo) {
      slo[c.target.metric] = c.not_measured.empty() ? Json(c.actual) : Json(nullptr);
    }
    r["slo"] = slo;
    r["warnings"] = WarningsJson(o.warnings);
  } else if (o.priced) {
    r["usd_per_task"] = o.usd_per_task;
    r["usd_per_day"] = o.usd_per_day;
    if (o.ttft_given) r["ttft_s.p90"] = o.ttft_p90_s;
    Json slo = Json::object();
    for (const SloCheck& c : o.slo) {
      slo[c.target.metric] = c.not_measured.empty() ? Json(c.actual) : Json(nullptr);
    }
    r["slo"] = slo;
  }
  return r;
}

bool IsPlanDocument(const Json& doc) {
  return doc.is_object() && doc.contains("candidates") && doc.contains("total_candidates");
}

std::string NoFeasibleCandidate(const Json& doc) {
  std::map<std::string, std::int64_t> by_status;
  for (const Json& r : doc["candidates"]) ++by_status[r["status"].get<std::string>()];
  if (by_status.count("feasible")) return "";
  std::string statuses;
  for (const auto& [status, n] : by_status) {
    statuses += (statuses.empty() ? "" : ", ") + std::to_string(n) + " " + status;
  }
  return "no feasible candidate (of " + std::to_string(doc["candidates"].size()) + ": " + statuses +
         "; each one's reason is in the output)";
}

std::string RenderPlan(const Json& doc, const std::string& format) {
  const Json& rows = doc["candidates"];
  const Json counts = Counts(rows);
  const std::vector<PlanRankRow> rank_rows = RankRows(rows);
  const std::vector<std::size_t> ranked = RankByCost(rank_rows), front = ParetoFront(rank_rows),
                                 not_evaluated = RankByCost(rank_rows, "slo_not_evaluated");
  if (format == "json") {
    Json out;
    for (const auto& [key, value] : doc.items()) {
      if (key != "candidates") out[key] = value;
    }
    out["counts"] = counts;
    out["cheapest"] = ranked.empty() ? Json() : rows[ranked[0]]["index"];
    const std::optional<std::size_t> validated = CheapestValidated(rows, ranked);
    out["cheapest_validated"] = validated ? rows[ranked[*validated]]["index"] : Json();
    out["ranking"] = Json::array();
    for (std::size_t i : ranked) out["ranking"].push_back(rows[i]["index"]);
    out["pareto"] = Json::array();
    for (std::size_t i : front) out["pareto"].push_back(rows[i]["index"]);
    out["not_evaluated"] = Json::array();
    for (std::size_t i : not_evaluated) out["not_evaluated"].push_back(rows[i]["index"]);
    out["candidates"] = rows;
    return out.dump(2) + "\n";
  }
  const std::set<std::size_t> on_front(front.begin(), front.end());
  if (format == "csv") {
    Table t({"rank",
             "pareto",
             "index",
             "kind",
             "gpu",
             "tensor_parallel",
             "expert_parallel",
             "weight_format",
             "kv_format",
             "speculative",
             "provider",
             "model",
             "status",
             "replicas",
             "gpus",
             "usd_per_task",
             "usd_per_day",
             "ttft_s.p90",
             "uncalibrated",
             "reason",
             "warnings",
             "speculative_method"});
    auto add = [&](std::size_t i, const std::string& rank) {
      const Json& r = rows[i];
      auto field = [&](const char* key) { return r.contains(key) ? r[key].dump() : ""; };
      auto text = [&](const char* key) { return r.value(key, std::string()); };
      t.AddRow({rank,
                on_front.count(i) ? "true" : "false",
                r["index"].dump(),
                text("kind"),
                r["gpu"].get<std::string>(),
                r["tensor_parallel"].dump(),
                r["expert_parallel"].dump(),
                r["weight_format"].get<std::string>(),
                r["kv_format"].get<std::string>(),
                r["speculative"].get<std::string>(),
                text("provider"),
                text("model"),
                r["status"].get<std::string>(),
                field("replicas"),
                field("gpus"),
                field("usd_per_task"),
                field("usd_per_day"),
                field("ttft_s.p90"),
                r["uncalibrated"].dump(),
                r["reason"].get<std::string>(),
                WarningList(r, ";", false),
                r.contains("speculative_method") && r["speculative_method"].is_string()
                    ? r["speculative_method"].get<std::string>()
                    : std::string()});
    };
    // Feasible (ranked), then SLO not evaluated (cheapest first, unranked),
    // then the rest in index order.
    for (std::size_t k = 0; k < ranked.size(); ++k) add(ranked[k], std::to_string(k + 1));
    for (std::size_t i : not_evaluated) add(i, "");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows[i]["status"] != "feasible" && rows[i]["status"] != "slo_not_evaluated") add(i, "");
    }
    return t.ToCsv();
  }
  std::ostringstream s;
  const Json& w = doc["workload"];
  const Json& win = doc["window"];
  s << "plan for scenario " << doc["scenario"].get<std::string>() << ": ";
  if (win["kind"] == "all") {
    s << "window all: every task of the trace ("
      << FormatWithSeparators(win["tasks"].get<std::int64_t>()) << ")";
  } else {
    s << "window busiest-hour: " << FormatFixed(win["start_s"].get<double>(), 0) << " s to "
      << FormatFixed(win["end_s"].get<double>(), 0) << " s of the run, "
      << FormatWithSeparators(win["tasks"].get<std::int64_t>()) << " of the trace's "
      << FormatWithSeparators(win["trace_tasks"].get<std::int64_t>()) << " tasks, "
      << FormatWithSeparators(win["warmup_tasks"].get<std::int64_t>()) << " of them in the "
      << FormatFixed(win["warmup_s"].get<double>(), 0) << "-s warm-up before it";
  }
  s << ", at trace.load " << FormatFixed(win["load"].get<double>(), 3) << "\n";
  // A rate below 10 a day keeps its digits (3 sessions over 43 days is
  // 0.0465 a day, once printed "0").
  const std::string per_day = FormatRate(w["tasks_per_day"].get<double>());
  s << "workload: " << FormatWithSeparators(w["output_tokens"].get<std::int64_t>())
    << " output tokens in the window; $/day at " << per_day << " tasks a day\n";
  // $/task is not simulate's cost per task under dedicated GPUs: say which.
  const std::string billing = w.value("billing", std::string());
  if (billing == "dedicated") {
    s << "$/task: $/day / " << per_day
      << " (billing dedicated: the replicas rented all day, idle time included; simulate's cost "
         "per task is a task's own GPU time, idle billed apart)\n";
  } else if (!billing.empty()) {
    s << "$/task: the window's bill over its tasks (billing " << billing
      << "), as simulate's cost per task; $/day: that x " << per_day << "\n";
  }
  if (w.contains("warnings") && w["warnings"].is_array()) {
    for (const Json& warning : w["warnings"]) {
      s << "warning [" << warning.value("code", std::string())
        << "]: " << warning.value("message", std::string()) << "\n";
    }
  }
  // A candidate whose own run outlasted the window, or whose day figure a
  // short window leaves unmeasured (its window_short, the cheapest such
  // one's message): the ranking rests on a ramp-up.
  {
    // Feasible ones cheapest first, then the others in candidate order.
    std::vector<const Json*> order;
    for (const Json& row : doc["candidates"]) order.push_back(&row);
    const auto feasible_usd = [](const Json* row) {
      return row->value("status", std::string()) == "feasible" && row->contains("usd_per_task") &&
                     (*row)["usd_per_task"].is_number()
                 ? (*row)["usd_per_task"].get<double>()
                 : std::numeric_limits<double>::infinity();
    };
    std::stable_sort(order.begin(), order.end(), [&](const Json* a, const Json* b) {
      return feasible_usd(a) < feasible_usd(b);
    });
    for (const Json* row : order) {
      if (!row->contains("warnings")) continue;
      const auto found = std::find_if(
          (*row)["warnings"].begin(), (*row)["warnings"].end(),
          [](const Json& x) { return x.value("code", std::string()) == "window_short"; });
      if (found == (*row)["warnings"].end()) continue;
      std::string label = Label(*row);
      label = label.substr(0, label.find(" (warns"));
      s << "warning [window_short] (" << label
        << ", and every candidate it marks): " << found->value("message", std::string()) << "\n";
      break;
    }
  }
  s << "latency targets: ";
  if (doc["slo"].empty()) s << "none";
  bool first = true;
  for (const auto& [metric, max] : doc["slo"].items()) {
    s << (first ? "" : ", ") << metric << " <= " << FormatFixed(max.get<double>(), 3) << " s";
    first = false;
  }
  s << "; at most " << doc["space"]["max_gpus"].dump()
    << (doc["space"]["max_gpus"] == 1 ? " GPU" : " GPUs");
  if (doc["workload"].contains("router")) {
    s << "; replicas share requests by " << doc["workload"]["router"].get<std::string>()
      << " (engine.router)";
  }
  s << "\n";
  s << "candidates: " << counts["enumerated"].dump() << " enumerated";
  std::string filtered;
  std::int64_t filtered_n = 0;
  for (const auto& [status, word] : FilterNames()) {
    const std::int64_t n = counts["filtered"][status].get<std::int64_t>();
    if (n == 0) continue;
    filtered_n += n;
    filtered += (filtered.empty() ? "" : ", ") + word + " " + std::to_string(n);
  }
  s << ", " << filtered_n << " filtered" << (filtered.empty() ? "" : " (" + filtered + ")") << ", "
    << counts["pruned"].dump() << " pruned by a bound, " << counts["simulated"].dump()
    << " simulated (" << counts["simulations"].dump() << " simulations), "
    << counts["feasible"].dump() << " feasible";
  if (counts["api"].get<std::int64_t>() > 0) {
    s << "; " << counts["api"].dump() << " API candidate(s) priced, "
      << counts["slo_not_evaluated"].dump() << " with the SLO not evaluated";
  }
  s << "\n\n";
  if (ranked.empty()) {
    s << "no feasible candidate\n";
  } else {
    s << "feasible, cheapest first:\n";
    Table t({"rank", "candidate", "replicas", "GPUs", "$/task", "$/day", "TTFT p90", "why"});
    for (std::size_t k = 0; k < ranked.size(); ++k) {
      const Json& r = rows[ranked[k]];
      t.AddRow({std::to_string(k + 1), Label(r), Cell(r, "replicas"), Cell(r, "gpus"),
                Usd(Num(r, "usd_per_task")), UsdPerDay(Num(r, "usd_per_day")),
                Seconds3(r, "ttft_s.p90"), r["reason"].get<std::string>()});
    }
    s << t.ToText();
    // The cheapest may rest on assumed figures: say so, and name the
    // cheapest that does not.
    if (const std::vector<std::string> marks = AssumedFigures(rows[ranked[0]]); !marks.empty()) {
      std::string joined;
      for (const std::string& m : marks) joined += (joined.empty() ? "" : ", ") + m;
      s << "\nthe cheapest (rank 1) rests on assumed figures (" << joined << ")";
      if (const std::optional<std::size_t> k = CheapestValidated(rows, ranked)) {
        const Json& r = rows[ranked[*k]];
        s << "; the cheapest on calibrated and validated figures alone is rank " << *k + 1 << ": "
          << Label(r) << ", " << Usd(Num(r, "usd_per_task")) << "/task, "
          << UsdPerDay(Num(r, "usd_per_day")) << "/day\n";
      } else {
        s << "; no feasible candidate rests on calibrated and validated figures alone\n";
      }
    }
    s << "\nPareto front ($/task against TTFT p90), cheapest first:\n";
    Table p({"candidate", "GPUs", "$/task", "TTFT p90"});
    for (std::size_t i : front) {
      const Json& r = rows[i];
      p.AddRow({Label(r), Cell(r, "gpus"), Usd(Num(r, "usd_per_task")), Seconds3(r, "ttft_s.p90")});
    }
    s << p.ToText();
  }
  if (!not_evaluated.empty()) {
    s << "\nSLO not evaluated (API candidates without an --api-latency figure for every latency "
         "target; not ranked with the feasible ones), cheapest first:\n";
    Table t({"candidate", "$/task", "$/day", "why"});
    for (std::size_t i : not_evaluated) {
      const Json& r = rows[i];
      t.AddRow({Label(r), Usd(Num(r, "usd_per_task")), UsdPerDay(Num(r, "usd_per_day")),
                r["reason"].get<std::string>()});
    }
    s << t.ToText();
  }
  if (ranked.size() + not_evaluated.size() < rows.size()) {
    s << "\nnot feasible:\n";
    Table n({"candidate", "verdict", "why"});
    for (const Json& r : rows) {
      if (r["status"] == "feasible" || r["status"] == "slo_not_evaluated") continue;
      n.AddRow({Label(r), r["status"].get<std::string>(), r["reason"].get<std::string>()});
    }
    s << n.ToText();
  }
  return s.str();
}

Result<PlanChartData> PlanChartFromDocument(const Json& doc, const std::string& path) {
  if (!IsPlanDocument(doc) || !doc.contains("ranking") || !doc.contains("pareto") ||
      !doc.contains("counts")) {
    return Error(path + ": not the JSON output of kvbill plan (--format json)");
  }
  for (const char* key : {"ranking", "pareto", "candidates"}) {
    if (!doc[key].is_array()) return Error(path + "#/" + key + ": must be an array");
  }
  std::map<std::int64_t, std::size_t> rows;  // candidate index -> position in "candidates"
  const Json& candidates = doc["candidates"];
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const Json& r = candidates[k];
    if (r.is_object() && r.contains("index") && r["index"].is_number_integer()) {
      rows[r["index"].get<std::int64_t>()] = k;
    }
  }
  std::set<std::int64_t> pareto;
  for (std::size_t k = 0; k < doc["pareto"].size(); ++k) {
    if (!doc["pareto"][k].is_number_integer()) {
      return Error(path + "#/pareto/" + std::to_string(k) + ": must be a candidate index");
    }
    pareto.insert(doc["pareto"][k].get<std::int64_t>());
  }
  PlanChartData data;
  data.source = path;
  data.scenario = doc["scenario"].is_string() ? doc["scenario"].get<std::string>() : "";
  for (std::size_t k = 0; k < doc["ranking"].size(); ++k) {
    const std::string at = path + "#/ranking/" + std::to_string(k);
    const Json& i = doc["ranking"][k];
    if (!i.is_number_integer() || rows.count(i.get<std::int64_t>()) == 0) {
      return Error(at + ": must be the index of a candidate in #/candidates");
    }
    const std::size_t row = rows[i.get<std::int64_t>()];
    const Json& r = candidates[row];
    const std::string where = path + "#/candidates/" + std::to_string(row);
    for (const char* key : {"gpu", "tensor_parallel", "expert_parallel", "weight_format",
                            "kv_format", "speculative", "uncalibrated"}) {
      if (!r.contains(key)) return Error(where + "/" + key + ": missing");
    }
    // A feasible self-hosted candidate has all four; an API one has no
    // replicas or GPUs, and a TTFT only when plan --api-latency gave one.
    const bool api = r.value("kind", "") == "api";
    if (api) {
      for (const char* key : {"provider", "model"}) {
        if (!r.contains(key) || !r[key].is_string()) {
          return Error(where + "/" + key + ": must be a string (an API candidate's)");
        }
      }
    }
    for (const char* key : {"replicas", "gpus", "usd_per_task", "ttft_s.p90"}) {
      const bool needed = !api || std::string_view(key) == "usd_per_task";
      if ((needed || r.contains(key)) && (!r.contains(key) || !r[key].is_number())) {
        return Error(where + "/" + key + ": must be a number (a feasible " +
                     (api ? "API" : "self-hosted") + " candidate's)");
      }
    }
    PlanChartPoint p;
    p.index = i.get<std::int64_t>();
    p.label = Label(r);
    p.api = api;
    if (!api) {
      p.replicas = r["replicas"].get<int>();
      p.gpus = r["gpus"].get<int>();
    }
    p.usd_per_task = r["usd_per_task"].get<double>();
    if (r.contains("ttft_s.p90")) p.ttft_p90_s = r["ttft_s.p90"].get<double>();
    p.pareto = pareto.count(p.index) > 0;
    p.assumed = AssumedFigures(r);
    data.feasible.push_back(std::move(p));
  }
  if (data.feasible.empty()) return Error(path + ": the plan has no feasible candidate to chart");
  const Json& counts = doc["counts"];
  for (const char* key : {"enumerated", "pruned", "simulated"}) {
    if (!counts.contains(key) || !counts[key].is_number_integer()) {
      return Error(path + "#/counts/" + key + ": must be an integer");
    }
  }
  data.enumerated = counts["enumerated"].get<std::int64_t>();
  data.pruned = counts["pruned"].get<std::int64_t>();
  data.simulated = counts["simulated"].get<std::int64_t>();
  data.total_candidates = data.enumerated;
  if (doc.contains("total_candidates")) {
    if (!doc["total_candidates"].is_number_integer() ||
        doc["total_candidates"].get<std::int64_t>() < data.enumerated) {
      return Error(path + "#/total_candidates: must be an integer, at least the candidates listed");
    }
    data.total_candidates = doc["total_candidates"].get<std::int64_t>();
  }
  return data;
}

Result<Json> MergePlanShards(const std::vector<Json>& docs, const std::vector<std::string>& paths) {
  Json merged;
  std::map<std::int64_t, Json> rows;
  for (std::size_t d = 0; d < docs.size(); ++d) {
    const Json& doc = docs[d];
    const std::string& path = paths[d];
    for (const char* key : {"scenario", "window", "slo", "space", "workload", "total_candidates"}) {
      if (!doc.contains(key)) return Error(path + "#/" + key + ": missing");
    }
    if (!doc["total_candidates"].is_number_integer() ||
        doc["total_candidates"].get<std::int64_t>() < 0) {
      return Error(path + "#/total_candidates: must be a non-negative integer");
    }
    if (!doc["candidates"].is_array()) return Error(path + "#/candidates: must be an array");
    // A shard's fingerprint (the scenario's text and the files it reads;
    // shards written before it existed have none) must be the first's.
    const Json fingerprint = doc.value("fingerprint", Json());
    if (!fingerprint.is_null() && !fingerprint.is_string()) {
      return Error(path + "#/fingerprint: must be a string");
    }
    if (merged.is_null()) {
      merged["scenario"] = doc["scenario"];
      if (!fingerprint.is_null()) merged["fingerprint"] = fingerprint;
      for (const char* key : {"window", "slo", "space", "workload", "total_candidates"}) {
        merged[key] = doc[key];
      }
    } else {
      if (fingerprint != merged.value("fingerprint", Json())) {
        return Error(path + "#/fingerprint: from a different plan than " + paths[0] +
                     " (the scenario or a file it reads differs: trace, model config, draft "
                     "model, GPU or profile file)");
      }
      for (const char* key :
           {"scenario", "window", "slo", "space", "workload", "total_candidates"}) {
        if (doc[key] != merged[key]) {
          return Error(path + "#/" + key + ": from a different plan than " + paths[0]);
        }
      }
    }
    const std::int64_t total = doc["total_candidates"].get<std::int64_t>();
    for (std::size_t k = 0; k < doc["candidates"].size(); ++k) {
      const Json& r = doc["candidates"][k];
      const std::string at = path + "#/candidates/" + std::to_string(k);
      for (const char* key :
           {"index", "gpu", "tensor_parallel", "expert_parallel", "weight_format", "kv_format",
            "speculative", "status", "reason", "uncalibrated", "simulations"}) {
        if (!r.is_object() || !r.contains(key)) return Error(at + "/" + key + ": missing");
      }
      if (auto s = CheckRowTypes(r, at); !s) return s.error();
      if (!r["index"].is_number_integer() || r["index"].get<std::int64_t>() < 0 ||
          r["index"].get<std::int64_t>() >= total) {
        return Error(at + "/index: must be an integer in [0, " + std::to_string(total) + ")");
      }
      const std::int64_t index = r["index"].get<std::int64_t>();
      if (!rows.emplace(index, r).second) {
        return Error(path + ": candidate " + std::to_string(index) +
                     " appears in more than one shard");
      }
    }
  }
  const std::int64_t total = merged["total_candidates"].get<std::int64_t>();
  for (std::int64_t k = 0; k < total; ++k) {
    if (rows.count(k) == 0) {
      return Error("candidate " + std::to_string(k) + " of " + std::to_string(total) +
                   " is in no shard");
    }
  }
  merged["candidates"] = Json::array();
  for (auto& [k, r] : rows) merged["candidates"].push_back(r);
  return merged;
}

}  // namespace kvbill::cli
