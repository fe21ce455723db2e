// Speculative decoding: the methods, the expected advance of a verification
// step, and the iteration cost with a draft (docs/engine.md, "Speculative
// decoding").
//
// A verification step of a sequence runs k + 1 query tokens through the
// model on top of its context (an extend, as a prefill chunk is priced) and
// accepts the draft's tokens up to the first rejected one, plus one token of
// its own. With α_i the chance that position i is accepted given positions
// 1 .. i-1 were, the expected tokens per step are
//
//   E = 1 + α_1 + α_1 α_2 + ... + α_1 ... α_k   (= (1 - α^(k+1)) / (1 - α) for one α)
//
// so 1 <= E <= k + 1. The draft proposes its k tokens one after another
// before the step: k decode steps of the draft over the verifying
// sequences, priced by the draft's own cost model (a model of its own, or one
// decoder layer of the model's shape and the lm_head for EAGLE and MTP
// heads; nothing for n-gram lookup, which runs on the CPU).
#ifndef KVBILL_COST_SPECULATIVE_H_
#define KVBILL_COST_SPECULATIVE_H_

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/cost/cost_model.h"
#include "kvbill/cost/engine_profile.h"
#include "kvbill/cost/operator_cost_model.h"
#include "kvbill/cost/roofline.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/model/model_shape.h"
#include "kvbill/util/result.h"

namespace kvbill {

// A method and its defaults (the sources: docs/engine.md).
struct SpeculativeMethod {
  const char* name;            // "draft_model", "eagle", "eagle3", "mtp", "ngram"
  int num_speculative_tokens;  // default k
  double acceptance_rate;      // default α, every position
  bool draft_layer;            // drafts with one decoder layer of the model (EAGLE, MTP)
  bool own_model;              // drafts with a model of its own (draft_model)
};

// Every method, in the scenario docs' order.
const std::vector<SpeculativeMethod>& SpeculativeMethods();
// The method named `name`, or nullptr.
const SpeculativeMethod* FindSpeculativeMethod(std::string_view name);

// The method a what-if turns on for `model` when the scenario names none
// (compare's lever, plan --speculative on): the model's own MTP layer when
// its checkpoint has one, else an EAGLE-3 head.
const char* DefaultSpeculativeMethod(const ModelShape& model);

// E above for draft length k >= 0: `rates` holds one α (every position) or k
// of them, each in [0, 1). Precondition: rates has 1 or k entries.
long double ExpectedTokensPerStep(std::span<const double> rates, int k);

// The draft of an EAGLE or MTP head: one decoder layer of `model` (its last
// attention layer, with the parameters of an average layer of its kind:
// attention, then a dense MLP, or one MoE layer of an MoE model) and the
// model's embedding and lm_head, stored in the model's dtype.
ModelShape DraftLayerShape(const ModelShape& model);

// The iteration cost of a deployment that speculates: the model's own cost
// model prices every iteration (a verification step is a ScheduledWork with
// verify set: k + 1 tokens after its context, priced as an extend), and each
// iteration with verification steps adds k decode steps of the draft over
// those sequences, sequence i at context c_i + j in draft step j; each
// sequence's share of a draft step is its own time in it plus an equal part
// of the rest. `draft` null: no draft operators (n-gram).
class SpeculativeCostModel final : public CostModel {
 public:
  SpeculativeCostModel(std::shared_ptr<const CostModel> target,
                       std::shared_ptr<const CostModel> draft, int num_speculative_tokens,
                       std::string description);

  Seconds IterationSeconds(std::span<const ScheduledWork> work,
                           std::span<long double> own_s) const override;
  // The model's decode lines (steps without speculation; the engine does not
  // fuse verification steps).
  void DecodeLinesFor(std::span<const Tokens> contexts, Tokens max_steps,
                      DecodeLines* out) const override;
  Seconds RecomputeSeconds(Tokens start, Tokens n) const override;
  std::string name() const override { return target_->name(); }
  CostModelInfo Describe() const override;

  // The draft's time for k steps over sequences at `contexts` (0 without a
  // draft); adds each sequence's share to own_s when given.
  long double DraftSeconds(std::span<const Tokens> contexts, std::span<long double> own_s) const;

 private:
  std::shared_ptr<const CostModel> target_;
  std::shared_ptr<const CostModel> draft_;
  int k_;
  std::string description_;
};

// What a deployment speculates with (deployment.speculative, or an engine's
// flags in a calibration replay).
struct SpeculativeSpec {
  std::string method;                         // a SpeculativeMethods() name
  std::string draft_model;                    // draft_model: catalog name or config.json path
  std::optional<int> num_speculative_tokens;  // nullopt: the method's
  std::vector<double> acceptance_rate;        // empty: the method's; else 1 or k entries
};

// The engine's side of it (engine/simulator.h SpeculativeDecoding) and the
// cost model that adds the draft.
struct SpeculativeSetup {
  int num_speculative_tokens = 0;
  long double expected_tokens = 1;
  long double draft_weight_bytes = 0;        // per GPU
  long double draft_kv_bytes_per_token = 0;  // per GPU
  std::shared_ptr<const CostModel> cost;     // SpeculativeCostModel over `target`
};

// Builds the draft's cost model on `gpu` at tensor parallelism `tp`: with
// `profile`, an operator model whose CPU, launch and streaming times are 0
// (they are the iteration's, already counted by the model's own cost
// model), `options` otherwise; without, the roofline at `roofline`'s
// efficiencies and no overhead. Errors: an unknown method or draft model,
// a rate count other than 1 or k (messages without a location).
Result<SpeculativeSetup> MakeSpeculative(const SpeculativeSpec& spec, const ModelShape& model,
                                         const ElementFormat& kv_format, const GpuSpec& gpu,
                                         std::shared_ptr<const CostModel> target,
                                         const EngineProfile* profile,
                                         const OperatorModelOptions& options,
                                         const RooflineParams& roofline);

}  // namespace kvbill

#endif  // KVBILL_COST_SPECULATIVE_H_
