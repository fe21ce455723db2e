// Relative effects: pairs of published records that differ in one factor
// of formats or parallelism — the weight format, the KV-cache format, the
// tensor-parallel or the expert-parallel degree — with everything else the
// same (engine and version, model, GPU, workload, other engine flags), and
// what kvbill predicts that factor changes against what was measured.
//
// A metric's gain is how much faster the variant is than the base:
// time(base) / time(variant) - 1 for duration, mean TTFT and mean TPOT
// (duration's is the output-throughput gain: both sent the same tokens).
// The base is the BF16 record, the smaller degree, the one without expert
// parallelism. A prediction meets the published gain when
//   |predicted - published| <= max(|published| / 2, 0.03),
// the tolerance of the issue that asked for this check (docs/validation.md).
#ifndef KVBILL_CALIBRATE_RELATIVE_EFFECTS_H_
#define KVBILL_CALIBRATE_RELATIVE_EFFECTS_H_

#include <string>
#include <vector>

#include "kvbill/calibrate/measurements.h"
#include "kvbill/calibrate/profile_fit.h"

namespace kvbill {

struct RelativeEffect {
  std::string factor;  // "weights fp8 vs bf16", "tensor parallel 8 vs 4", ...
  std::string kind;    // "weights", "kv cache", "tensor parallel", "expert parallel"
  std::string base;    // record ids
  std::string variant;
  std::string metric;  // "duration_s", "ttft_ms_mean", "tpot_ms_mean"
  double published = 0;
  double predicted = 0;
  // False when a record of the pair is flagged weights_ambiguous or
  // engine_ambiguous in the data: the pair is listed, not compared (`why`).
  bool comparable = true;
  bool replayed = false;  // both records replayed and comparable; otherwise `why`
  std::string why;

  double Tolerance() const;
  bool Meets() const;
};

// The pairs among `records`, one entry per metric both records publish,
// in record order. `points` are the replays' metric points (Evaluate);
// `skipped` says why a record was not replayed.
std::vector<RelativeEffect> FindRelativeEffects(const std::vector<Measurement>& records,
                                                const std::vector<MetricPoint>& points,
                                                const std::vector<SkippedRecord>& skipped);

// The Markdown table of the effects and a line counting those that meet
// the tolerance.
std::string RelativeEffectsMarkdown(const std::vector<RelativeEffect>& effects);

}  // namespace kvbill

#endif  // KVBILL_CALIBRATE_RELATIVE_EFFECTS_H_
