// Fitting an engine profile (cost/engine_profile.h) to published serving
// measurements: every usable record is replayed (calibrate/replay.h) and
// the profile's parameters are fitted by Levenberg-Marquardt on the log
// ratios of predicted to measured duration, mean TTFT and mean TPOT.
// Validation: the same statistics in sample and leaving each model out in
// turn (fit on the others, predict its records).
#ifndef KVBILL_CALIBRATE_PROFILE_FIT_H_
#define KVBILL_CALIBRATE_PROFILE_FIT_H_

#include <Eigen/Core>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kvbill/calibrate/replay.h"
#include "kvbill/cost/engine_profile.h"

namespace kvbill {

// The metric of a median inter-token latency point (ItlComparable records).
inline constexpr const char* kItlMetric = "itl_ms_p50";

// One compared number: a record's metric, measured and predicted.
struct MetricPoint {
  std::string record;  // measurement id
  std::string model;
  std::string gpu;
  std::string engine;
  std::string workload;  // e.g. "random 4000/200 x500, all at once"
  // "duration_s", "ttft_ms_mean", "tpot_ms_mean", "e2e_ms_mean", kItlMetric
  std::string metric;
  bool fixed_lengths = false;
  // The validation regime (ValidationRegime): a mixture-of-experts model,
  // on more than one GPU a replica.
  bool moe = false;
  bool several_gpus = false;
  double measured = 0;
  double predicted = 0;
  double Ratio() const { return measured > 0 ? predicted / measured : 0; }
};

// The fit's residuals: one per point of `layout` (a record and metric
// measured, in a fixed order), from `points`, an evaluation that lists the
// same points in the same order less those whose record did not replay. A
// point missing counts as a large miss (1.0), also for a record whose timings
// are ignored (excluded from the fit): it ran, so a profile that leaves it no
// room is refused. An ignored record that replays counts 0; every other point
// a Cauchy loss on its log ratio, scale 0.25.
void FitResiduals(const std::vector<MetricPoint>& layout, const std::vector<MetricPoint>& points,
                  const std::set<std::string>& timings_ignored, Eigen::VectorXd* r);

struct ErrorStats {
  std::int64_t points = 0;
  double median = 0;     // median |ratio - 1|
  double within_25 = 0;  // share with |ratio - 1| <= 0.25
};
// Over the duration and mean-latency points, or (`itl`) over the median
// ITL points only.
ErrorStats Stats(const std::vector<MetricPoint>& points, bool itl = false);

// The error statistics by regime (GPU, dense or MoE, one GPU or several) of
// the duration and mean-latency points, in sample and leaving each model
// out; a regime either list has points in. Ordered by GPU, dense first, one
// GPU first.
std::vector<ValidationRegime> RegimeStats(const std::vector<MetricPoint>& in_sample,
                                          const std::vector<MetricPoint>& lomo);

struct SkippedRecord {
  std::string id;
  std::string reason;
};

// Records replayed and reported but kept out of the fit: every record whose
// id starts with `records`, for `reason` (a published run that contradicts
// the hardware it names, say). The validation page lists them.
struct FitExclusion {
  std::string records;  // id prefix
  std::string reason;
};
bool ExcludedFromFit(const std::string& id, const std::vector<FitExclusion>& exclusions);

// Reads a list of exclusions, `[{"records": "...", "reason": "..."}, ...]`.
// Errors name the file and the entry's JSON pointer: not a list, an unknown
// or missing key, an empty prefix or reason, or a prefix no record of
// `records` starts with (a misspelt one would exclude nothing).
Result<std::vector<FitExclusion>> ReadFitExclusions(const std::string& path,
                                                    const std::vector<Measurement>& records);

// The fastest any of the engine's published runs streamed output: every
// sequence of an iteration passes through the engine's serial host work
// (the scheduler's time for it, the API server's for its streamed token),
// so a run that delivered R tokens a second bounds each per-sequence cost
// (`cpu_per_sequence_s`, `output_per_sequence_s`) by 1 / R. R is the record's
// peak_output_tok_s as `vllm bench serve` reports it (the most tokens any
// second received), else (none, a guidellm record, or flagged
// peak_output_tok_s_implausible) its output_tok_s; records that speculate (a sequence then takes
// several tokens an iteration) or are flagged partial_success do not count. Records excluded from
// the fit count: they ran on the engine's host like any other.
struct SerialCeiling {
  double seconds = 0;       // 1 / tokens_per_s
  double tokens_per_s = 0;  // the fastest rate
  std::string record;       // the record that reached it
};
std::optional<SerialCeiling> PerSequenceCeiling(const std::vector<const ReplayPlan*>& plans);

struct FitOptions {
  int max_evaluations = 200;  // residual evaluations of Levenberg-Marquardt
  // Passes of a coordinate grid search before Levenberg-Marquardt (each
  // tries 7 points of every parameter's range): a parameter started at the
  // flat end of its range moves only this way. 0 = none.
  int grid_rounds = 1;
  bool leave_one_model_out = true;
  // Keep the starting profile as the outcome (no fit of it): only the
  // leave-one-model-out refits run, each from the starting profile, so a
  // shipped profile gets its out-of-sample figures without changing.
  bool keep_start = false;
  // Records used in the fit: only fixed-length ones when true (ShareGPT
  // records are then validated, not fitted). False by default: the
  // low-concurrency ShareGPT records are what pins the per-step overheads.
  bool fit_fixed_lengths_only = false;
  // Records kept out of the fit and of every leave-one-model-out refit; they
  // are still predicted (in sample and left out with their model).
  std::vector<FitExclusion> exclusions;
  // Called after each accepted step with the sum of squares (may be empty).
  std::function<void(int evaluations, double sum_squares)> progress;
};

struct FitOutcome {
  EngineProfile profile;            // fitted (calibrated = true)
  std::vector<MetricPoint> before;  // with the starting profile
  std::vector<MetricPoint> after;   // in sample
  std::vector<MetricPoint> lomo;    // each model predicted by a fit without it
  std::vector<SkippedRecord> skipped;
  // Records the starting profile replays that a leave-one-model-out profile
  // cannot (its memory reserve leaves them no room), with the reason.
  std::vector<SkippedRecord> lomo_skipped;
  std::vector<FitExclusion> exclusions;  // as FitOptions::exclusions
  // The bound the fit put on the per-sequence costs (PerSequenceCeiling of
  // the records it fitted and the excluded ones); none when no record gives
  // an output rate.
  std::optional<SerialCeiling> ceiling;
  bool fitted = false;  // false: the starting profile evaluated as it is (--no-fit)
};

// The metric points of `plans` under `profile` (records whose replay fails
// are skipped with the reason); an ItlComparable record's replay runs in
// step mode and adds its median ITL (kItlMetric).
std::vector<MetricPoint> Evaluate(const std::vector<ReplayPlan>& plans,
                                  const EngineProfile& profile,
                                  std::vector<SkippedRecord>* skipped);

// Fits `start` (its parameters are the starting point) on the plans of
// `engine`. Deterministic.
FitOutcome FitProfile(const std::vector<ReplayPlan>& plans, const EngineProfile& start,
                      const FitOptions& options);

// docs/validation.md: the kernel curves' fit, the profile, the error
// statistics (fixed lengths and ShareGPT apart, in sample and leaving each
// model out), the relative effects (`effects_table`, relative_effects.h),
// every record's metrics and the records not replayed. `command` is the
// command line that regenerates the page.
std::string ValidationMarkdown(const FitOutcome& outcome, const std::vector<SkippedRecord>& skipped,
                               const std::string& kernel_table, const std::string& effects_table,
                               const std::string& command);

// docs/validation.md's inter-token latency section: each ItlComparable
// record's median ITL against kvbill's in a step-mode replay with
// `profile`, with the largest batch and the mean TPOT ratio beside it;
// records the fit leaves out (`exclusions`) are marked and kept out of the
// medians.
std::string InterTokenLatencyMarkdown(const std::vector<ReplayPlan>& plans,
                                      const EngineProfile& profile,
                                      const std::vector<FitExclusion>& exclusions);

}  // namespace kvbill

#endif  // KVBILL_CALIBRATE_PROFILE_FIT_H_
