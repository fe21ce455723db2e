// API candidates of `kvbill plan` (scenario/plan.h): enumerated from --api,
// priced through API mode, judged against the latency targets only with the
// provider latencies --api-latency gives.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "kvbill/cost/price_sheet.h"
#include "kvbill/cost/provider_cache.h"
#include "kvbill/scenario/plan.h"
#include "kvbill/scenario/run.h"
#include "kvbill/scenario/sweep.h"
#include "kvbill/util/names.h"
#include "kvbill/util/units.h"

namespace kvbill {
namespace {

// The latencies a provider can quote: a request's time to first token and
// per output token. queue_s and completion_s depend on the client's load.
constexpr const char* kApiLatencies[] = {"ttft_s", "tpot_s"};

// "ttft_s" or "ttft_s.p90" (a statistic SloMetricNames knows).
bool IsApiLatencyMetric(const std::string& metric) {
  const std::vector<std::string> slo_names = SloMetricNames();
  for (const char* base : kApiLatencies) {
    if (metric == base) return true;
    if (metric.starts_with(std::string(base) + ".") &&
        std::find(slo_names.begin(), slo_names.end(), metric) != slo_names.end()) {
      return true;
    }
  }
  return false;
}

// The figure given for `metric` ("ttft_s.p90"): its own, else its latency's
// ("ttft_s").
std::optional<double> GivenFigure(const std::map<std::string, double>& given,
                                  const std::string& metric) {
  if (auto it = given.find(metric); it != given.end()) return it->second;
  const std::size_t dot = metric.find('.');
  if (dot == std::string::npos) return std::nullopt;
  if (auto it = given.find(metric.substr(0, dot)); it != given.end()) return it->second;
  return std::nullopt;
}

// What to give for the latency targets `missing` (SLO metrics without a
// figure) of API model `model`: "no figure was given for tpot_s.p90
// (--api-latency deepseek-chat:tpot_s=...)", each target's own latency
// named once; one --api-latency cannot give (queue_s, completion_s) said so.
std::string MissingFigures(const std::vector<std::string>& missing, const std::string& model) {
  auto join = [](const std::vector<std::string>& items, const std::string& sep) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : sep) + item;
    return out;
  };
  std::vector<std::string> give, cannot;  // latency names, in the targets' order
  std::set<std::string> named;
  for (const std::string& m : missing) {
    const std::string latency = m.substr(0, m.find('.'));
    if (!named.insert(latency).second) continue;
    if (IsApiLatencyMetric(latency)) {
      give.push_back(latency + "=...");
    } else {
      cannot.push_back(latency);
    }
  }
  std::string text = "no figure was given for " + join(missing, ", ") + " (";
  if (!give.empty()) text += "--api-latency " + model + ":" + join(give, ",");
  if (!cannot.empty()) {
    text += std::string(give.empty() ? "" : "; ") + "--api-latency gives no " +
            join(cannot, " or ") + ", only ttft_s and tpot_s";
  }
  return text + ")";
}

// Every id and alias of the sheet, for "did you mean".
std::vector<std::string> SheetNames(const PriceSheet& sheet) {
  std::vector<std::string> names;
  for (const ModelPrice& m : sheet.models()) {
    names.push_back(m.id);
    names.insert(names.end(), m.aliases.begin(), m.aliases.end());
  }
  return names;
}

// The sheet's entry for a model named by `flag`, or an error with "did you
// mean".
Result<const ModelPrice*> FindModel(const PriceSheet& sheet, const std::string& flag,
                                    const std::string& model) {
  const ModelPrice* price = sheet.Find(model);
  if (price == nullptr) {
    const std::string hint = DidYouMean(model, SheetNames(sheet));
    return Error("--" + flag + ": no model \"" + model + "\" in the bundled price sheet" +
                 (hint.empty() ? "" : "; " + hint) + " (scenarios/prices.json lists them)");
  }
  return price;
}

}  // namespace

Result<std::vector<PlanCandidate>> ApiCandidates(const PlanSpace& space, std::int64_t first_index) {
  std::vector<PlanCandidate> out;
  if (space.api_models.empty() && space.api_latency.empty()) return out;
  auto sheet = BundledPriceSheet();
  if (!sheet) return sheet.error();
  const std::vector<std::string> providers = ProviderCacheNames();
  std::set<std::string> ids;
  for (const std::string& model : space.api_models) {
    auto price = FindModel(*sheet, "api", model);
    if (!price) return price.error();
    const ModelPrice& p = **price;
    if (!ids.insert(p.id).second) {
      return Error("--api: \"" + model + "\" is " + p.id + ", given twice");
    }
    if (std::find(providers.begin(), providers.end(), p.provider) == providers.end()) {
      return Error("--api: " + p.id + ": provider \"" + p.provider +
                   "\" has no caching rules (docs/billing.md#provider-caching-rules)");
    }
    PlanCandidate c;
    c.index = first_index + std::ssize(out);
    c.tensor_parallel = 0;
    c.expert_parallel = 0;
    c.speculative = "";
    c.api_model = p.id;
    c.provider = p.provider;
    out.push_back(std::move(c));
  }
  for (const auto& [model, figures] : space.api_latency) {
    auto price = FindModel(*sheet, "api-latency", model);
    if (!price) return price.error();
    if (ids.count((*price)->id) == 0) {
      return Error("--api-latency: \"" + model + "\" is not one of the --api models");
    }
  }
  return out;
}

CandidateOutcome DecideApiCandidate(const std::string& text, const Scenario& scenario,
                                    const PlanSpace& space, const WorkloadRate& rate,
                                    const PlanCandidate& c, WorkloadCache& workloads) {
  CandidateOutcome o;
  o.candidate = c;
  o.status = "error";
  // Every call at the candidate's model, through its provider's rules.
  const nlohmann::json pricing = {
      {"provider", c.provider}, {"model", c.api_model}, {"per_call_models", false}};
  auto edited = WithSetting(text, "/pricing", pricing.dump());
  if (!edited) {
    o.reason = edited.error().message();
    return o;
  }
  auto s = ParseScenario(*edited, scenario.source);
  if (!s) {
    o.reason = s.error().message();
    return o;
  }
  auto run = RunScenario(*s, workloads);
  if (!run) {
    o.reason = run.error().message();
    return o;
  }
  const RunSummary& sum = run->summary;
  const double per_day = space.tasks_per_day > 0 ? space.tasks_per_day : rate.tasks_per_day();
  o.priced = true;
  o.usd_per_task =
      sum.tasks > 0 ? static_cast<double>(sum.cost_usd) / static_cast<double>(sum.tasks) : 0;
  if (std::find(rate.warmup.begin(), rate.warmup.end(), true) != rate.warmup.end()) {
    // The busiest hour's warm-up tasks are replayed (they fill the provider's
    // cache) but not measured, as for the deployments: the measured tasks'
    // calls, and their even share of what the bill holds beyond the calls.
    if (run->tasks.size() != rate.warmup.size()) {
      o.reason = "the API replay gave " + std::to_string(run->tasks.size()) +
                 " tasks for a window of " + std::to_string(rate.warmup.size());
      return o;
    }
    double calls = 0, measured = 0;
    std::int64_t count = 0;
    for (std::size_t i = 0; i < run->tasks.size(); ++i) {
      const double cost = static_cast<double>(run->tasks[i].cost_usd);
      calls += cost;
      if (rate.warmup[i]) continue;
      measured += cost;
      ++count;
    }
    const double beyond = static_cast<double>(sum.cost_usd) - calls;
    o.usd_per_task = count > 0 ? measured / static_cast<double>(count) +
                                     beyond / static_cast<double>(run->tasks.size())
                               : 0;
  }
  o.usd_per_day = o.usd_per_task * per_day;
  o.price_source = "the bundled price sheet (" + c.api_model + ")";

  // The figures given for this model (keys as typed: resolve them).
  std::map<std::string, double> given;
  if (auto sheet = BundledPriceSheet()) {
    for (const auto& [model, figures] : space.api_latency) {
      const ModelPrice* p = sheet->Find(model);
      if (p != nullptr && p->id == c.api_model) given = figures;
    }
  }
  if (auto ttft = GivenFigure(given, "ttft_s.p90")) {
    o.ttft_p90_s = *ttft;
    o.ttft_given = true;
  }
  const std::string billed =
      "priced at " + c.api_model + "'s list prices with " + c.provider + "'s caching rules";
  const std::vector<SloTarget>& slo = space.slo.empty() ? scenario.slo : space.slo;
  if (slo.empty()) {
    o.status = "feasible";
    o.reason = billed + "; no latency target";
    return o;
  }
  std::vector<std::string> missing;
  for (const SloTarget& t : slo) {
    const std::optional<double> figure = GivenFigure(given, t.metric);
    if (!figure) {
      missing.push_back(t.metric);
      continue;
    }
    o.slo.push_back({t, *figure, *figure <= t.max, ""});
  }
  if (!missing.empty()) {
    o.status = "slo_not_evaluated";
    o.reason = "SLO not evaluated: an API has no latency model and " +
               MissingFigures(missing, c.api_model) + "; " + billed;
    o.slo.clear();
    return o;
  }
  const bool held =
      std::all_of(o.slo.begin(), o.slo.end(), [](const SloCheck& k) { return k.held; });
  o.status = held ? "feasible" : "slo_not_met";
  if (!held) o.cause = "slo";
  o.reason = std::string(held ? "SLO met" : "SLO not met") +
             " by the given provider latencies: " + SloText(o.slo) + "; " + billed;
  return o;
}

Result<std::map<std::string, std::map<std::string, double>>> ParseApiLatency(
    const std::vector<std::string>& specs) {
  std::map<std::string, std::map<std::string, double>> out;
  for (const std::string& spec : specs) {
    std::string model;
    std::size_t start = 0;
    while (start <= spec.size()) {
      const std::size_t comma = std::min(spec.find(',', start), spec.size());
      const std::string item = spec.substr(start, comma - start);
      start = comma + 1;
      const std::string bad = "--api-latency: \"" + item + "\" in \"" + spec + "\" ";
      const std::size_t eq = item.find('=');
      if (eq == std::string::npos) {
        return Error(bad + "is not [MODEL:]METRIC=SECONDS (e.g. gpt-5:ttft_s=0.8,tpot_s=0.02)");
      }
      // A model name may hold ':' (a Bedrock id): the last one before '='.
      std::string metric = item.substr(0, eq);
      const std::size_t colon = metric.rfind(':');
      if (colon != std::string::npos) {
        model = metric.substr(0, colon);
        metric = metric.substr(colon + 1);
        if (model.empty()) return Error(bad + "names no model before ':'");
      }
      if (model.empty()) {
        return Error(bad + "names no model (MODEL:METRIC=SECONDS, e.g. gpt-5:ttft_s=0.8)");
      }
      if (!IsApiLatencyMetric(metric)) {
        return Error(bad + "has metric \"" + metric +
                     "\": one of ttft_s, tpot_s, alone or with a statistic (ttft_s.p90)");
      }
      const std::string value = item.substr(eq + 1);
      const std::optional<double> v = ParsePositiveNumber(value);
      if (!v) return Error(bad + "has \"" + value + "\", not a positive number of seconds");
      if (!out[model].emplace(metric, *v).second) {
        return Error(bad + "gives " + model + "'s " + metric + " twice");
      }
    }
  }
  return out;
}

}  // namespace kvbill
