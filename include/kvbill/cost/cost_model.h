// How long one engine iteration takes on one replica, and which part of that
// time each scheduled sequence caused. The engine asks; it never computes a
// time itself. Implementations: RooflineCostModel (roofline_cost_model.h,
// the spec-sheet roofline) and the calibrated operator model.
//
// Contract (every implementation):
// - Pure and deterministic: the same inputs give the same outputs; no I/O.
// - IterationSeconds prices any batch of scheduled work. It fills own_s[i],
//   the time sequence i caused by itself (e.g. reading its own KV); the
//   engine splits the rest of the iteration among the sequences in
//   proportion to the tokens they computed (docs/engine.md, "The bill").
//   0 <= own_s[i] and sum(own_s) <= the returned time.
// - DecodeLines prices a run of decode steps of a fixed batch: every
//   sequence computes one token per step, so sequence i is at context
//   contexts[i] + j in step j. It returns the time of step j, and each
//   sequence's own time in it, as lines in j (t(j) = t0 + t1 j), one per
//   stretch of steps; they must equal IterationSeconds of step j (to
//   rounding), which is what makes the engine's event skipping exact.
#ifndef KVBILL_COST_COST_MODEL_H_
#define KVBILL_COST_COST_MODEL_H_

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kvbill/cost/engine_profile.h"
#include "kvbill/util/units.h"

namespace kvbill {

// One sequence's share of an iteration: `context` tokens already cached
// before it, `tokens` computed now (1 for a decode step).
struct ScheduledWork {
  Tokens context = 0;
  Tokens tokens = 0;
  bool prefill = false;  // a prompt chunk (tokens may still be 1), not a decode step
  // A speculative verification step (cost/speculative.h): `tokens` = k + 1
  // query tokens after `context`, attended as an extend (as a prefill chunk
  // is) with logits at every one of them.
  bool verify = false;
};

// Step time on steps [begin, end) of a decode run: t(j) = t0 + t1 x j, with
// j counted from the first step of the run.
struct StepLine {
  Tokens begin = 0;
  Tokens end = 0;
  long double t0 = 0;
  long double t1 = 0;
};

// Output of CostModel::DecodeLines. own0/own1 hold, per line, one entry per
// sequence: its own time in step j is own0 + own1 x j (line-major: entry
// [line x batch + i]). Buffers are reused by the caller from call to call.
struct DecodeLines {
  std::vector<StepLine> lines;
  std::vector<long double> own0;
  std::vector<long double> own1;
};

// How one part of the model's data is stored and computed in a run
// (hardware/format_support.h), and what times it.
struct FormatUse {
  std::string part;      // "weights", "experts", "embeddings", "kv_cache"
  std::string stored;    // the stored format, e.g. "fp8-e4m3"
  std::string computed;  // e.g. "W8A16", "W8A8 (FP8)", "FP8 attention"
  std::string kernel;    // what the engine runs, e.g. "Marlin (FP8 weight-only)"
  // "measured" (a kernel table of this GPU and format), or how it is
  // derived: "derived: ..." / "assumed: ..." with the reason.
  std::string timing;
};

// What a run's numbers rest on, for its output (summary.cost_model).
struct CostModelInfo {
  std::string profile;  // "vllm", "roofline", ...
  bool calibrated = false;
  // Median |predicted / measured - 1| of the profile's validation
  // (docs/validation.md); 0 when not validated.
  double validation_median_error = 0;
  // The regime of the profile's validation the run falls in (its GPU, a
  // dense or MoE model, one GPU or several: DescribeRegime), empty for the
  // roofline; its figures when published runs of it were replayed;
  // `regimes_known`: the profile lists its regimes (older files do not).
  std::string regime;
  std::optional<ValidationRegime> regime_validation;
  bool regimes_known = false;
  std::vector<std::string> notes;  // formats run as fallbacks, parts assumed
  std::vector<FormatUse> formats;  // one per part (calibrated model only)
  // Layers whose recurrent state (Gated DeltaNet, Mamba) the calibrated
  // model prices without a measured kernel (as traffic at the decode
  // attention kernel's rate); 0 for other models and for the roofline.
  int linear_state_layers = 0;
  // Collectives no kernel table measures (an all-reduce over more GPUs than
  // the tables hold, an all-to-all on a GPU without them), and attention
  // kinds none measures (DeepSeek-V4's compressed layers), each as how it is
  // modelled instead: the timing_assumed warning says so.
  std::vector<std::string> assumed_collectives;
  // A kernel path the run takes that no published run of its regime took
  // (MXFP4 experts on OpenAI's Triton kernels: the calibration data's Hopper
  // gpt-oss runs ran Marlin), as a phrase; empty when none. The regime's
  // figures then do not vouch for it: WeaklyValidated.
  std::string unreplayed_path;
};

// A regime its profile's published runs do not cover, or cover with a
// median miss (DecidingMedianError) above kWeaklyValidatedError. In-sample
// points alone are the fit's, not a check of it (a profile fitted without
// leaving a model out: 14 parameters fit 5 points of one benchmark to 2%).
inline bool RegimeWeaklyValidated(const std::optional<ValidationRegime>& r) {
  return !r || r->lomo_points == 0 || DecidingMedianError(*r) > kWeaklyValidatedError;
}

// A calibrated run in such a regime, or on a kernel path none of the
// regime's runs took: the `weakly_validated` warning, and plan's mark.
inline bool WeaklyValidated(const CostModelInfo& m) {
  if (!m.calibrated || !m.regimes_known || m.regime.empty()) return false;
  return !m.unreplayed_path.empty() || RegimeWeaklyValidated(m.regime_validation);
}

class CostModel {
 public:
  virtual ~CostModel() = default;

  // Time in seconds of one iteration computing `work`; fills own_s (same
  // size as work). Precondition: work is not empty.
  virtual Seconds IterationSeconds(std::span<const ScheduledWork> work,
                                   std::span<long double> own_s) const = 0;

  // The same iteration followed on the GPU by `tail` seconds of work that
  // needs none of the next iteration's inputs (a speculative draft proposing
  // the next step's tokens after this one's are sampled): by default the two
  // add; a model whose engine starts preparing the next iteration as soon as
  // the tokens are sampled overlaps that preparation with the tail.
  virtual Seconds IterationSecondsWithTail(std::span<const ScheduledWork> work,
                                           std::span<long double> own_s, long double tail) const {
    return static_cast<Seconds>(IterationSeconds(work, own_s) + tail);
  }

  // The lines of step time for decode steps j = 0 .. max_steps - 1 of the
  // batch whose sequences are at `contexts` at step 0. Lines cover
  // [0, end) with end <= max_steps and end >= 1 (a model may stop early at a
  // breakpoint of its own; the engine asks again from there).
  virtual void DecodeLinesFor(std::span<const Tokens> contexts, Tokens max_steps,
                              DecodeLines* out) const = 0;

  // Seconds to recompute n prompt tokens after `start` cached ones as one
  // prefill on an otherwise idle replica (offload: reload or recompute).
  virtual Seconds RecomputeSeconds(Tokens start, Tokens n) const = 0;

  // A short name for outputs ("roofline", "vllm/h100-sxm", ...).
  virtual std::string name() const = 0;

  // What the model rests on: profile, calibration, notes.
  virtual CostModelInfo Describe() const = 0;

  // The same deployment without speculative decoding: what an iteration
  // would cost had its verification steps been plain decode steps and no
  // draft run (the engine's measure of what speculation gains). A model
  // that does not speculate is its own.
  virtual const CostModel& WithoutSpeculation() const { return *this; }
};

}  // namespace kvbill

#endif  // KVBILL_COST_COST_MODEL_H_
