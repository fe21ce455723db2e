#include "kvbill/calibrate/profile_fit.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>

#include "kvbill/calibrate/least_squares.h"
#include "kvbill/metrics/summary.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/util/file.h"
#include "kvbill/util/units.h"
#include "util/json_input.h"

namespace kvbill {
namespace {

// How Evaluate notes a record's TPOT left out (not a failed replay).
constexpr std::string_view kTpotLeftOut = "tpot_ms_mean left out: ";

std::string Workload(const ReplayPlan& plan) {
  const Measurement& m = *plan.measurement;
  std::string w = m.dataset;
  if (plan.fixed_lengths && m.input_len) {
    w += " " + std::to_string(*m.input_len) + "/" + std::to_string(m.output_len.value_or(0));
  }
  std::size_t requests = 0;  // over all tasks (one request a task)
  for (const auto& r : plan.requests) requests += r.size();
  w += " x" + std::to_string(requests);
  if (m.concurrency) {
    w += ", concurrency " + std::to_string(*m.concurrency);
  } else if (std::isfinite(m.request_rate)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, ", %g req/s", m.request_rate);
    w += buf;
  } else {
    w += ", all at once";
  }
  return w;
}

constexpr double kScale = 0.25;

// Maps a free vector onto bounded parameters: lo + (hi - lo) / (1 + e^-x).
// A start on a bound is moved 0.1% of the range inside it: at the bound the
// logistic's slope vanishes and the parameter could never move.
struct Bounded {
  double lo, hi;
  double To(double x) const { return lo + (hi - lo) / (1.0 + std::exp(-x)); }
  double From(double v) const {
    const double f = std::clamp((v - lo) / (hi - lo), 1e-3, 1 - 1e-3);
    return std::log(f / (1 - f));
  }
};

}  // namespace

ErrorStats Stats(const std::vector<MetricPoint>& points, bool itl) {
  ErrorStats s;
  std::vector<double> err;
  for (const MetricPoint& p : points) {
    if ((p.metric == kItlMetric) != itl) continue;
    if (p.measured > 0 && p.predicted > 0) err.push_back(std::fabs(p.Ratio() - 1));
  }
  s.points = static_cast<std::int64_t>(err.size());
  if (err.empty()) return s;
  const std::size_t n = err.size();
  s.median = Median(err);
  s.within_25 = static_cast<double>(std::count_if(err.begin(), err.end(),
                                                  [](double e) { return e <= 0.25 + 1e-12; })) /
                static_cast<double>(n);
  return s;
}

void FitResiduals(const std::vector<MetricPoint>& layout, const std::vector<MetricPoint>& points,
                  const std::set<std::string>& timings_ignored, Eigen::VectorXd* r) {
  r->setConstant(static_cast<Eigen::Index>(layout.size()), 1.0);  // missing: a large miss
  std::size_t k = 0;
  for (std::size_t i = 0; i < layout.size() && k < points.size(); ++i) {
    const MetricPoint& pt = points[k];
    if (pt.record != layout[i].record || pt.metric != layout[i].metric) continue;
    if (timings_ignored.count(pt.record) > 0) {
      (*r)(static_cast<Eigen::Index>(i)) = 0;  // replayed: its timing does not count
    } else {
      // A Cauchy loss on the log ratio, scale 0.25: misses within the
      // tolerance count as squares, large ones only logarithmically, so a
      // few records no mechanism explains do not drag the rest.
      const double e = std::log(std::max(1e-9, pt.predicted) / pt.measured) / kScale;
      (*r)(static_cast<Eigen::Index>(i)) = kScale * std::copysign(std::sqrt(std::log1p(e * e)), e);
    }
    ++k;
  }
}

bool ExcludedFromFit(const std::string& id, const std::vector<FitExclusion>& exclusions) {
  for (const FitExclusion& e : exclusions) {
    if (id.starts_with(e.records)) return true;
  }
  return false;
}

Result<std::vector<FitExclusion>> ReadFitExclusions(const std::string& path,
                                                    const std::vector<Measurement>& records) {
  auto text = ReadFile(path);
  if (!text) return text.error();
  json_input::Problem problem;
  const auto doc = json_input::Parse(*text, &problem);
  if (!doc) return Error(json_input::Describe(path, *text, problem));
  if (!doc->is_array()) return Error(path + ": must be a list of {\"records\", \"reason\"}");
  std::vector<FitExclusion> out;
  for (std::size_t i = 0; i < doc->size(); ++i) {
    const std::string at = path + "#/" + std::to_string(i);
    const nlohmann::json& e = (*doc)[i];
    if (!e.is_object()) return Error(at + ": must be an object {\"records\", \"reason\"}");
    for (const auto& [key, value] : e.items()) {
      if (key != "records" && key != "reason") {
        return Error(at + "/" + json_input::EscapePointerKey(key) + ": unknown key");
      }
      if (!value.is_string() || value.get<std::string>().empty()) {
        return Error(at + "/" + key + ": must be a non-empty string");
      }
    }
    for (const char* key : {"records", "reason"}) {
      if (!e.contains(key)) return Error(at + "/" + key + ": missing");
    }
    FitExclusion x{e["records"].get<std::string>(), e["reason"].get<std::string>()};
    bool matches = false;
    for (const Measurement& m : records) matches = matches || m.id.starts_with(x.records);
    if (!matches) {
      return Error(at + "/records: no record's id starts with " + json_input::Quote(e["records"]));
    }
    out.push_back(std::move(x));
  }
  return out;
}

namespace {

// Runs `run(i)` for i in [0, n) on all cores. Callers gather results by
// index, so what they make of them does not depend on the thread count.
template <typename F>
void ForEachParallel(std::size_t n, F run) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) run(i);
  };
  const unsigned threads = std::max(
      1u, std::min<unsigned>(std::thread::hardware_concurrency(), static_cast<unsigned>(n)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

}  // namespace

std::vector<MetricPoint> Evaluate(const std::vector<ReplayPlan>& plans,
                                  const EngineProfile& profile,
                                  std::vector<SkippedRecord>* skipped) {
  std::vector<std::optional<Result<ReplayMetrics>>> results(plans.size());
  std::vector<double> itl_ms(plans.size(), 0);  // step-mode median ITL where it compares
  ForEachParallel(plans.size(), [&](std::size_t i) {
    if (ItlComparable(plans[i])) {
      ReplayDetail d;
      results[i] = RunReplay(plans[i], profile, &d);
      itl_ms[i] = d.itl_ms_p50;
    } else {
      results[i] = RunReplay(plans[i], profile);
    }
  });
  std::vector<MetricPoint> out;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const ReplayPlan& plan = plans[i];
    const Measurement& m = *plan.measurement;
    const Result<ReplayMetrics>& r = *results[i];
    if (!r) {
      if (skipped != nullptr) skipped->push_back(SkippedRecord{m.id, r.error().message()});
      continue;
    }
    MetricPoint base;
    base.record = m.id;
    base.model = plan.model_name;
    base.gpu = plan.config.gpu.id;
    base.engine = plan.engine + " " +
                  (m.engine_version.empty() ? "(version not recorded)" : m.engine_version);
    base.workload = Workload(plan);
    base.fixed_lengths = plan.fixed_lengths;
    base.moe = plan.config.model.moe.layers > 0;
    base.several_gpus = plan.config.gpus_per_replica > 1;
    auto add = [&](const char* metric, const std::optional<double>& measured, double predicted) {
      if (!measured || !(*measured > 0)) return;
      MetricPoint p = base;
      p.metric = metric;
      p.measured = *measured;
      p.predicted = predicted;
      out.push_back(p);
    };
    add("duration_s", m.duration_s, r->duration_s);
    add("ttft_ms_mean", m.ttft_ms_mean, r->ttft_ms_mean);
    if (auto bad = TpotInconsistency(m)) {
      if (skipped != nullptr)
        skipped->push_back(SkippedRecord{m.id, std::string(kTpotLeftOut) + *bad});
    } else {
      add("tpot_ms_mean", m.tpot_ms_mean, r->tpot_ms_mean);
    }
    add("e2e_ms_mean", m.e2e_ms_mean, r->e2e_ms_mean);
    if (itl_ms[i] > 0) add(kItlMetric, m.itl_ms_p50, itl_ms[i]);
  }
  return out;
}

std::optional<SerialCeiling> PerSequenceCeiling(const std::vector<const ReplayPlan*>& plans) {
  std::optional<SerialCeiling> best;
  for (const ReplayPlan* p : plans) {
    const Measurement& m = *p->measurement;
    if (p->speculative) continue;
    auto flagged = [&](const char* flag) {
      return std::find(m.quality_flags.begin(), m.quality_flags.end(), flag) !=
             m.quality_flags.end();
    };
    if (flagged("partial_success")) continue;
    // vllm bench serve's peak is the most tokens any second of the run
    // received; guidellm's is not a rate of the whole run.
    const bool peak = m.peak_output_tok_s && p->client == BenchmarkClient::kVllmBench &&
                      !flagged("peak_output_tok_s_implausible");
    const std::optional<double> rate = peak ? m.peak_output_tok_s : m.output_tok_s;
    if (!rate || !(*rate > 0) || !std::isfinite(*rate)) continue;
    if (!best || *rate > best->tokens_per_s) best = SerialCeiling{1.0 / *rate, *rate, m.id};
  }
  return best;
}

FitOutcome FitProfile(const std::vector<ReplayPlan>& plans, const EngineProfile& start,
                      const FitOptions& options) {
  FitOutcome outcome;
  outcome.exclusions = options.exclusions;
  outcome.before = Evaluate(plans, start, &outcome.skipped);
  const auto& table = ProfileParameterTable();
  // Each parameter's range, the per-sequence costs capped by the fastest of
  // `runs` (PerSequenceCeiling).
  auto bounds_for = [&](const std::vector<const ReplayPlan*>& runs) {
    const std::optional<SerialCeiling> ceiling = PerSequenceCeiling(runs);
    std::vector<Bounded> bounds;
    for (const ProfileParameterInfo& info : table) {
      Bounded b{info.lower, info.upper};
      const bool per_sequence = info.field == &ProfileParameters::cpu_per_sequence_s ||
                                info.field == &ProfileParameters::output_per_sequence_s;
      if (per_sequence && ceiling) b.hi = std::clamp(ceiling->seconds, b.lo, b.hi);
      bounds.push_back(b);
    }
    return bounds;
  };

  // Fits on `subset`'s timings. `must_run`'s records (excluded from the fit)
  // count only if they cannot replay: they ran, so a profile that leaves
  // them no room in memory is refused as for any record; their timings do
  // not count.
  auto fit_on = [&](const std::vector<const ReplayPlan*>& subset,
                    const std::vector<const ReplayPlan*>& must_run, const EngineProfile& from) {
    std::vector<ReplayPlan> chosen;
    for (const ReplayPlan* p : subset) chosen.push_back(*p);
    std::set<std::string> timings_ignored;
    for (const ReplayPlan* p : must_run) {
      chosen.push_back(*p);
      timings_ignored.insert(p->measurement->id);
    }
    std::vector<const ReplayPlan*> runs = subset;
    runs.insert(runs.end(), must_run.begin(), must_run.end());
    const std::vector<Bounded> bounds = bounds_for(runs);
    // Residual layout: one per (record, metric) measured, fixed order.
    const std::vector<MetricPoint> probe = Evaluate(chosen, from, nullptr);
    const int count = static_cast<int>(probe.size());
    EngineProfile profile = from;
    auto apply = [&](const Eigen::VectorXd& x, EngineProfile* p) {
      for (std::size_t i = 0; i < table.size(); ++i) {
        p->params.*(table[i].field) = bounds[i].To(x(static_cast<Eigen::Index>(i)));
      }
    };
    auto residuals = [&](const Eigen::VectorXd& x, Eigen::VectorXd* r) {
      EngineProfile p = from;
      apply(x, &p);
      FitResiduals(probe, Evaluate(chosen, p, nullptr), timings_ignored, r);
    };
    Eigen::VectorXd x0(static_cast<Eigen::Index>(table.size()));
    for (std::size_t i = 0; i < table.size(); ++i) {
      x0(static_cast<Eigen::Index>(i)) = bounds[i].From(from.params.*(table[i].field));
    }
    // The grid in the free variable: fractions 0.25%, 4.7%, 18%, 50%, 82%,
    // 95% and 99.75% of each parameter's range.
    const LmResult coarse =
        CoordinateGridSearch(residuals, std::max(count, 1), x0, {-6, -3, -1.5, 0, 1.5, 3, 6},
                             options.grid_rounds, options.progress);
    const LmResult fit = RobustLevenbergMarquardt(residuals, std::max(count, 1), coarse.x, 0.1,
                                                  options.max_evaluations, options.progress);
    apply(fit.x, &profile);
    return profile;
  };

  // Candidates: the records of the fit's kind; fitted: those not excluded.
  std::vector<const ReplayPlan*> candidates, fit_plans, excluded;
  for (const ReplayPlan& p : plans) {
    if (options.fit_fixed_lengths_only && !p.fixed_lengths) continue;
    candidates.push_back(&p);
    (ExcludedFromFit(p.measurement->id, options.exclusions) ? excluded : fit_plans).push_back(&p);
  }
  {
    std::vector<const ReplayPlan*> runs = fit_plans;
    runs.insert(runs.end(), excluded.begin(), excluded.end());
    outcome.ceiling = PerSequenceCeiling(runs);
  }
  if (options.keep_start) {
    outcome.profile = start;
    outcome.after = outcome.before;
  } else {
    outcome.profile = fit_on(fit_plans, excluded, start);
    outcome.profile.calibrated = true;
    outcome.fitted = true;
    outcome.after = Evaluate(plans, outcome.profile, nullptr);
  }

  if (options.leave_one_model_out) {
    // A model's excluded records are predicted with it, never fitted.
    std::set<std::string> models;
    for (const ReplayPlan* p : candidates) models.insert(p->model_name);
    for (const std::string& left_out : models) {
      std::vector<const ReplayPlan*> rest;
      std::vector<ReplayPlan> held;
      for (const ReplayPlan* p : candidates) {
        if (p->model_name == left_out) held.push_back(*p);
      }
      std::vector<const ReplayPlan*> rest_excluded;
      for (const ReplayPlan* p : fit_plans) {
        if (p->model_name != left_out) rest.push_back(p);
      }
      for (const ReplayPlan* p : excluded) {
        if (p->model_name != left_out) rest_excluded.push_back(p);
      }
      if (rest.empty()) continue;
      // A parameter only the left-out model's records identify would keep
      // the value fitted on them: back to its default, so that the model's
      // rows test it. The recurrent-state factor is one (docs/engine.md).
      EngineProfile reset = start;
      if (std::none_of(rest.begin(), rest.end(), [](const ReplayPlan* p) {
            return StateBytesPerSequence(p->config.model, 1) > 0;
          })) {
        reset.params.recurrent_state_factor = ProfileParameters{}.recurrent_state_factor;
      }
      const EngineProfile without = fit_on(rest, rest_excluded, reset);
      std::vector<SkippedRecord> failed;
      for (MetricPoint& pt : Evaluate(held, without, &failed)) outcome.lomo.push_back(pt);
      for (SkippedRecord& f : failed) {
        // Only replays this profile refuses and the starting one ran (the
        // notes on metrics left out come with every evaluation).
        if (f.reason.starts_with(kTpotLeftOut)) continue;
        const bool known = std::any_of(outcome.skipped.begin(), outcome.skipped.end(),
                                       [&](const SkippedRecord& k) { return k.id == f.id; });
        if (!known) outcome.lomo_skipped.push_back(std::move(f));
      }
    }
  }
  const ErrorStats in_sample = Stats(outcome.after);
  const ErrorStats lomo = Stats(outcome.lomo);
  outcome.profile.validation_median_error = in_sample.median;
  outcome.profile.validation_lomo_median_error = lomo.median;
  outcome.profile.validation_points = in_sample.points;
  outcome.profile.validation_regimes = RegimeStats(outcome.after, outcome.lomo);
  return outcome;
}

std::vector<ValidationRegime> RegimeStats(const std::vector<MetricPoint>& in_sample,
                                          const std::vector<MetricPoint>& lomo) {
  using Key = std::tuple<std::string, bool, bool>;
  std::map<Key, std::pair<std::vector<MetricPoint>, std::vector<MetricPoint>>> by;
  for (const MetricPoint& p : in_sample) by[{p.gpu, p.moe, p.several_gpus}].first.push_back(p);
  for (const MetricPoint& p : lomo) by[{p.gpu, p.moe, p.several_gpus}].second.push_back(p);
  std::vector<ValidationRegime> out;
  for (const auto& [key, points] : by) {
    const ErrorStats a = Stats(points.first), b = Stats(points.second);
    if (a.points == 0 && b.points == 0) continue;  // median ITL points only
    ValidationRegime r;
    r.gpu = std::get<0>(key);
    r.moe = std::get<1>(key);
    r.several_gpus = std::get<2>(key);
    r.points = a.points;
    r.median_error = a.median;
    r.lomo_points = b.points;
    r.lomo_median_error = b.median;
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

std::string StatsRow(const std::string& what, const std::vector<MetricPoint>& pts,
                     int fixed /* 1 fixed, 0 sharegpt, -1 all */, bool itl = false) {
  std::vector<MetricPoint> chosen;
  for (const MetricPoint& p : pts) {
    if (fixed < 0 || p.fixed_lengths == (fixed == 1)) chosen.push_back(p);
  }
  const ErrorStats s = Stats(chosen, itl);
  return "| " + what + " | " + std::to_string(s.points) + " | " + FormatFixed(100 * s.median, 1) +
         "% | " + FormatFixed(100 * s.within_25, 0) + "% |\n";
}

std::string PointTable(const std::vector<MetricPoint>& pts, int fixed) {
  std::string out =
      "| record | model | GPU | engine | workload | metric | measured | kvbill | ratio |\n"
      "|---|---|---|---|---|---|---:|---:|---:|\n";
  for (const MetricPoint& p : pts) {
    if (fixed >= 0 && p.fixed_lengths != (fixed == 1)) continue;
    out += "| " + p.record + " | " + p.model + " | " + p.gpu + " | " + p.engine + " | " +
           p.workload + " | " + p.metric + " | " + FormatFixed(p.measured, 2) + " | " +
           FormatFixed(p.predicted, 2) + " | " + FormatFixed(p.Ratio(), 2) + " |\n";
  }
  return out;
}

}  // namespace

std::string ValidationMarkdown(const FitOutcome& outcome, const std::vector<SkippedRecord>& skipped,
                               const std::string& kernel_table, const std::string& effects_table,
                               const std::string& command) {
  const EngineProfile& p = outcome.profile;
  std::string out;
  const bool sglang = p.engine == "sglang";
  out += std::string("# Validation of the cost model: ") + (sglang ? "SGLang" : "vLLM") + "\n\n";
  out += sglang
             ? "The SGLang records; [validation.md](validation.md) has vLLM's.\n\n"
             : "The vLLM records; [validation-sglang.md](validation-sglang.md) has SGLang's.\n\n";
  out += "Generated by `" + command +
         "` (tools/calibrate runs it); do not edit by hand. It replays every usable record of "
         "`shared/data/calibration/measurements.jsonl` (published serving benchmarks, their "
         "sources in each record) through kvbill and compares duration, mean TTFT, mean TPOT "
         "and (where the record gives it) mean end-to-end latency with what was measured. "
         "docs/engine.md#the-calibrated-cost-model describes the model; "
         "the [method](#method) section below says how records are replayed and fitted.\n\n";
  out +=
      "## Summary\n\n| points | n | median \\|ratio − 1\\| | within ±25% |\n|---|---:|---:|---:|\n";
  const std::string as = outcome.fitted ? "fitted (in sample)" : "the profile as shipped";
  out += StatsRow("fixed lengths, starting profile", outcome.before, 1);
  out += StatsRow("fixed lengths, " + as, outcome.after, 1);
  out += StatsRow("fixed lengths, leave one model out", outcome.lomo, 1);
  out += StatsRow("ShareGPT lengths, " + as, outcome.after, 0);
  out += StatsRow("ShareGPT lengths, leave one model out", outcome.lomo, 0);
  out += StatsRow("all, " + as, outcome.after, -1);
  if (!outcome.exclusions.empty()) {
    // The same rows over the records the fit used (see "Records not fitted").
    auto fitted_only = [&](const std::vector<MetricPoint>& pts) {
      std::vector<MetricPoint> kept;
      for (const MetricPoint& pt : pts) {
        if (!ExcludedFromFit(pt.record, outcome.exclusions)) kept.push_back(pt);
      }
      return kept;
    };
    out += StatsRow("fixed lengths, " + as + ", records fitted", fitted_only(outcome.after), 1);
    out += StatsRow("fixed lengths, leave one model out, records fitted", fitted_only(outcome.lomo),
                    1);
    out += StatsRow("all, " + as + ", records fitted", fitted_only(outcome.after), -1);
    out += StatsRow("median ITL, " + as + ", records fitted", fitted_only(outcome.after), -1, true);
    out += StatsRow("median ITL, leave one model out, records fitted", fitted_only(outcome.lomo),
                    -1, true);
  } else {
    out += StatsRow("median ITL, " + as, outcome.after, -1, true);
    out += StatsRow("median ITL, leave one model out", outcome.lomo, -1, true);
  }
  out +=
      "\nThe rows count duration, mean TTFT, mean TPOT and mean end-to-end latency; the median "
      "inter-token latency (ITL) is fitted too, where a record's compares (see "
      "[its section](#inter-token-latency-under-load)), and counted apart.\n";
  out +=
      "\n## By regime\n\n"
      "The same points (every record, fixed-length and ShareGPT alike) by GPU, dense or "
      "mixture-of-experts model, and one GPU a replica or several. The profile file keeps "
      "these figures (`validation.regimes`); a run reports the regime it falls in "
      "(`summary.cost_model.validation_regime`) and warns `weakly_validated` when that "
      "regime's points left out of the fit missed by a median of more than " +
      FormatFixed(100 * kWeaklyValidatedError, 0) +
      "%, or when no published run of it was replayed "
      "([engine.md](engine.md#warnings)).\n\n"
      "| GPU | models | GPUs a replica | points | median \\|ratio − 1\\| | points, leave one "
      "model out | median, leave one model out |\n|---|---|---|---:|---:|---:|---:|\n";
  for (const ValidationRegime& r : p.validation_regimes) {
    out += "| " + r.gpu + " | " + (r.moe ? "mixture of experts" : "dense") + " | " +
           (r.several_gpus ? "several" : "one") + " | " + std::to_string(r.points) + " | " +
           FormatFixed(100 * r.median_error, 1) + "% | " + std::to_string(r.lomo_points) + " | " +
           (r.lomo_points > 0 ? FormatFixed(100 * r.lomo_median_error, 1) + "%" : "—") + " |\n";
  }
  out += "\n## The " + p.name + " profile\n\n";
  out += (outcome.fitted
              ? "Fitted on " + std::to_string(Stats(outcome.after).points) + " metric points and " +
                    std::to_string(Stats(outcome.after, true).points) + " median ITLs"
          : !outcome.lomo.empty()
              ? "Not re-fitted here (--lomo-only): evaluated on " +
                    std::to_string(Stats(outcome.after).points) +
                    " metric points as shipped, and each model's records predicted by the "
                    "profile refitted from it without them (below)"
              : "Not re-fitted here (--no-fit): evaluated on " +
                    std::to_string(Stats(outcome.after).points) +
                    " metric points as shipped; leave-one-model-out needs a fit") +
         "; the parameters (scenarios/profiles/" + p.name +
         ".json):\n\n"
         "| parameter | value | meaning |\n|---|---:|---|\n";
  for (const ProfileParameterInfo& info : ProfileParameterTable()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", p.params.*(info.field));
    out += std::string("| `") + info.name + "` | " + buf + " | " + info.meaning + " |\n";
  }
  out +=
      "\n## Kernel curves\n\nEach operator's curve against the measured kernel table it was "
      "fitted to (shared/data/kernels; `kvbill calibrate kernels`):\n\n" +
      kernel_table +
      "\nThe fused-MoE curves stand in for shapes the table lacks: a model whose own expert "
      "shape the table measured at its tensor-parallel degree is timed by those rows, "
      "interpolated by tokens, and under expert parallelism by the curve scaled to the rows of "
      "its whole experts (docs/engine.md#fused-moe).\n";
  out +=
      "\n## Relative effects\n\nPairs of this engine's published records that differ in one "
      "factor of "
      "formats or parallelism (weight format, KV-cache format, tensor- or expert-parallel "
      "degree) and in nothing else that changes speed, replayed with the fitted profile: the "
      "variant's gain over the base, time(base) / time(variant) − 1, published and predicted, "
      "at the batch and load of the records. A prediction meets the published gain when the "
      "difference is at most max(½ × |published gain|, 3 percentage points).\n\n" +
      effects_table;
  out += "\n## Fixed-length records (fitted profile)\n\n" + PointTable(outcome.after, 1);
  out +=
      "\n## ShareGPT-length records (fitted profile)\n\nLengths drawn to match each record's "
      "totals (see [method](#method)), so these compare a distribution, not the requests "
      "that ran.\n\n" +
      PointTable(outcome.after, 0);
  out +=
      "\n## Leave one model out\n\nEach model's records predicted by a profile fitted without "
      "them.\n\n" +
      PointTable(outcome.lomo, -1);
  if (!outcome.lomo_skipped.empty()) {
    out +=
        "\nNot replayed with the profile fitted without their model (so not in the "
        "leave-one-model-out rows):\n\n";
    for (const SkippedRecord& s : outcome.lomo_skipped) {
      out += "- " + s.id + ": " + s.reason + "\n";
    }
  }
  if (!outcome.exclusions.empty()) {
    out +=
        "\n## Records not fitted\n\nReplayed and reported above (in every table and the first "
        "rows of the summary) but kept out of the fit and of every leave-one-model-out refit "
        "(`--fit-exclusions`): their timings do not count, but they must still replay (they "
        "ran, so a profile whose memory reserve leaves them no room is refused as for any "
        "record):\n\n| records | metric points | reason |\n|---|---:|---|\n";
    for (const FitExclusion& e : outcome.exclusions) {
      std::int64_t n = 0;
      for (const MetricPoint& pt : outcome.after) {
        n += pt.record.starts_with(e.records) && pt.metric != kItlMetric ? 1 : 0;
      }
      out += "| `" + e.records + "*` | " + std::to_string(n) + " | " + e.reason + " |\n";
    }
  }
  out +=
      "\n## Records and metrics left out\n\nRecords kvbill cannot represent, and metrics a "
      "record contradicts itself on (see [method](#method)).\n\n| record | reason |\n|---|---|\n";
  for (const SkippedRecord& s : skipped) out += "| " + s.id + " | " + s.reason + " |\n";
  out += R"(
## Method

- **Replay.** A record becomes a deployment (the catalog model its Hugging Face id names, the
  GPU, tensor parallelism, the engine's flags over its default limits for that GPU: vLLM V1's
  8,192 batched tokens and 1,024 sequences on GPUs of 70 GiB or more other than the A100,
  2,048 and 256 otherwise, both doubled by `--performance-mode throughput` where no flag sets
  them (`--performance-mode interactivity` only captures more CUDA-graph sizes, which kvbill
  does not pad to), `vllm/engine/arg_utils.py`; SGLang's scheduler with its chunk,
  CUDA-graph and memory-fraction defaults, pages of one token and its overlap scheduler,
  [engine.md](engine.md#batching-sglang)) and a workload: fixed lengths for
  `random` datasets (the record's token totals spread evenly over its requests), ShareGPT-like
  lengths otherwise (lognormals of sigma 1.0 scaled to the record's totals, inputs within
  4–1,024 tokens and input + output within 2,048 as the benchmark filters them); released all
  at once, as a Poisson process at the request rate, or by a concurrency cap (`vllm bench
  serve --max-concurrency`: one semaphore, so the next request in order starts when any running
  one finishes). No two requests share a prefix. TTFT is first token minus send time, TPOT
  (end − first token) / (output − 1) over requests with more than one output token, end-to-end
  latency end minus send time, duration the first send to the last finish: as `vllm bench
  serve` reports them.
- **The engine's version** decides what its flags leave to defaults: vLLM schedules
  asynchronously from v0.14 unless told otherwise, and before v0.12.0 runs MXFP4 experts on
  Hopper (gpt-oss) on Marlin rather than OpenAI's Triton kernels, which it did not install
  ([engine.md](engine.md#mxfp4-experts-on-hopper-triton-or-marlin)).
- **guidellm records** (gpustack/benchmark-runner, the Qwen3.5-9B pages) are replayed as
  guidellm v0.5.3 sends and times them ([engine.md](engine.md#replaying-guidellm-records)):
  `--profile constant --rate R` sends request k at k / R, evenly spaced; at most 512 requests
  are in flight, the rest wait at the client and go as requests finish, their latencies
  counted from the send; TPOT is guidellm's, (last token − send) / output tokens.
- **Self-contradicting metrics.** A record's mean TPOT must agree with its own mean end-to-end
  latency and TTFT, TPOT ≈ (E2E − TTFT) / (mean output − 1), for guidellm TPOT ≈ E2E / mean
  output, within ±25%. Where it does not (the benchmark tool timed something else than
  tokens: guidellm counts no chunk of vLLM v0.17.1's reasoning stream, so the TPOT of every
  vLLM Qwen3.5 record is about its TTFT / output, 5–10× below what its end-to-end latency
  implies), the TPOT point is left out and listed above; the record's duration, TTFT and
  end-to-end latency are kept.
- **Fit.** The profile's parameters (each bounded, fitted through a logistic map of its
  range) start with a coordinate search on a grid (each parameter tried at 0.25%, 4.7%, 18%,
  50%, 82%, 95% and 99.75% of its range, the others held, the best kept), because a replay's
  outputs are steps, not slopes, and a parameter at the flat end of its range shows no
  gradient; then Levenberg–Marquardt (forward differences of a fixed step) refines. Both
  minimise the log ratio of predicted to measured duration, mean TTFT, mean TPOT, mean
  end-to-end latency and median inter-token latency (where it measures the decode step: see
  [its section](#inter-token-latency-under-load)), through a Cauchy loss of scale 0.25 so
  that records no mechanism explains weigh little. Every usable record of the engine is fitted, fixed-length and
  ShareGPT alike (the low-concurrency ShareGPT records pin the per-step overheads).
- **Per-sequence ceiling.** Every sequence of an iteration passes through the engine's serial
  host work (the scheduler's time for it, the API server's for its streamed token), so a run
  that streamed R tokens a second bounds `cpu_per_sequence_s` and `output_per_sequence_s` by
  1 / R: the fit's upper end for both is 1 / the fastest rate of its records (the peak output
  tokens a second `vllm bench serve` reports, the most tokens any second of the run received;
  else, for guidellm records or where the data flags the peak `peak_output_tok_s_implausible`,
  the mean; not counting runs that speculate or are flagged `partial_success`; counting the
  excluded ones, which ran on the engine's host like the rest), each leave-one-model-out
  refit's the same over its own records.)";
  if (outcome.ceiling) {
    out += " Here " + FormatFixed(outcome.ceiling->tokens_per_s, 0) + " tokens a second (`" +
           outcome.ceiling->record + "`): " + FormatFixed(outcome.ceiling->seconds * 1e6, 1) +
           " µs.";
  } else {
    out += " No record here gives an output rate: the ranges' own ends hold.";
  }
  out += R"(
- **Leave one model out.** For each model, the profile is fitted without its records and
  predicts them (with `--lomo-only`, refitted from the shipped profile within the command's
  evaluation budget, the shipped profile itself unchanged). When no other model has
  recurrent-state layers, `recurrent_state_factor` starts that refit from 1, its default:
  only such a model's records identify it, so its rows then test the factor too.
- **Relative effects.** Two records pair when they differ in exactly one of the weight format,
  the KV-cache format, the tensor-parallel degree and expert parallelism (on or off over the
  tensor-parallel GPUs), and in nothing else: engine and version, model (a `-FP8` or `-AWQ`
  copy counts as the same model), GPU, workload and every other engine flag but those that
  change neither format nor speed (`--max-model-len`, names, parsers, host and port). Pairs
  kvbill cannot replay (another engine, a setting not modelled) are listed with the reason.
)";
  return out;
}

std::string InterTokenLatencyMarkdown(const std::vector<ReplayPlan>& plans,
                                      const EngineProfile& profile,
                                      const std::vector<FitExclusion>& exclusions) {
  std::vector<const ReplayPlan*> chosen;
  for (const ReplayPlan& plan : plans) {
    if (ItlComparable(plan)) chosen.push_back(&plan);
  }
  std::vector<std::optional<ReplayDetail>> details(chosen.size());
  ForEachParallel(chosen.size(), [&](std::size_t i) {
    ReplayDetail d;
    if (RunReplay(*chosen[i], profile, &d)) details[i] = d;
  });
  std::string rows;
  std::vector<double> small, large, all;  // ratios by the replay's largest batch
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    if (!details[i]) continue;
    const ReplayDetail& d = *details[i];
    const Measurement& m = *chosen[i]->measurement;
    const double ratio = d.itl_ms_p50 / *m.itl_ms_p50;
    const bool fitted = !ExcludedFromFit(m.id, exclusions);
    if (fitted) {
      all.push_back(ratio);
      if (d.peak_batch >= 256) large.push_back(ratio);
      if (d.peak_batch <= 16) small.push_back(ratio);
    }
    const std::string tpot = m.tpot_ms_mean && *m.tpot_ms_mean > 0 && d.metrics.tpot_ms_mean > 0
                                 ? FormatFixed(d.metrics.tpot_ms_mean / *m.tpot_ms_mean, 2)
                                 : std::string("—");
    std::string p99 = "— | — | —";
    if (m.itl_ms_p99 && *m.itl_ms_p99 > 0) {
      p99 = FormatFixed(*m.itl_ms_p99, 1) + " | " + FormatFixed(d.itl_ms_p99, 1) + " | " +
            FormatFixed(d.itl_ms_p99 / *m.itl_ms_p99, 2);
    }
    rows += "| " + m.id + (fitted ? "" : " (not fitted)") + " | " + Workload(*chosen[i]) + " | " +
            std::to_string(d.peak_batch) + " | " + FormatFixed(*m.itl_ms_p50, 1) + " | " +
            FormatFixed(d.itl_ms_p50, 1) + " | " + FormatFixed(ratio, 2) + " | " + tpot + " | " +
            p99 + " |\n";
  }
  auto median = [](const std::vector<double>& v) {
    return v.empty() ? std::string("—") : FormatFixed(Median(v), 2);
  };
  std::string out =
      "\n## Inter-token latency under load\n\n"
      "The median inter-token latency (ITL) `vllm bench serve` reports is the gap between a "
      "request's successive tokens, over all requests; kvbill's is the same gap in a step-mode "
      "replay with the profile: a decode's iteration time plus any prompt-only iterations "
      "since the sequence's previous token. Mean TPOT averages "
      "each request's gaps, stalls behind other requests' prompts included; the median ITL is "
      "mostly the plain decode step, so the two together say whether a fit matched mean TPOT "
      "with the right step time. The fit counts it as one metric more (the summary's ITL rows); "
      "the 99th percentile is shown, not fitted: it is the longest gaps, decodes stalled behind "
      "an iteration with a prompt in it, so it times those iterations, but SGLang streams "
      "several tokens a chunk when its detokenizer lags, and a tail is where one run's "
      "scheduling accidents show; "
      "records of other clients (guidellm), with speculation (a step emits several tokens), "
      "flagged `itl_reported_zero`, or with fewer than " +
      FormatFixed(kItlMinMeanOutput, 0) +
      " output tokens a request on average (their few gaps all fall while the other requests' "
      "prompts are admitted: the median times the admission, not a step) are left out. "
      "\"Largest batch\" is the most sequences in one iteration of kvbill's replay.\n\n"
      "| record | workload | largest batch | ITL median measured, ms | kvbill, ms | ratio | "
      "mean TPOT ratio | ITL p99 measured, ms | kvbill, ms | ratio |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n" +
      rows;
  out += "\nMedian ratio over the records fitted: " + median(all) +
         " (n = " + std::to_string(all.size()) + "); " + median(small) +
         " where the largest batch is at most 16 (n = " + std::to_string(small.size()) + "), " +
         median(large) + " where it is 256 or more (n = " + std::to_string(large.size()) + ").\n";
  return out;
}

}  // namespace kvbill
